"""Minesweeper's rules on a :class:`MinesweeperState` (no gymnasium here), for one board and
for a batch: the single env and the batched env both play by this module.

Revealing a cell with no adjacent mine opens its whole zero region and the numbered border
(8-neighbourhood), as the source article's recursive "loang" does, but without recursion.
The flood comes in the forms its callers need, all tested equal to a plain BFS:

* one board of up to ``BITS_BOARD`` cells is one Python integer (a bit per cell) and the
  region grows by whole-board dilations, shifts and ORs (:func:`opened_by`; several times
  faster than the runs search below on such boards, docs/compiled.md);
* a larger board is searched breadth-first over *runs* (horizontal stretches of zero
  cells, :func:`zero_region`), so a 1000x1000 board opens in a fraction of a second;
* a batch of boards up to 64 columns wide grows every clicked region together on rows
  packed into integers (:class:`PackedRows`). On one board this is slower than
  the single integer, which is why one board does not use it; a batch of wider boards
  opens each region with :func:`opened_by`.

A reveal's reward is :func:`reveal_reward`; the observation's planes are named here
(:data:`HIDDEN_PLANE`, :func:`number_plane`, :data:`FLAG_PLANE`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from grid_envs.core.grid import flat_neighbour_table
from grid_envs.minesweeper.state import FIRST_CLICK_RULES, Cell, MinesweeperState

BITS_BOARD = 4096  # cells: up to this, a flood dilates the whole board as one integer
PRESETS = {"beginner": (9, 9, 10), "intermediate": (16, 16, 40), "expert": (16, 30, 99)}

# the observation planes: hidden, revealed 0 .. 8, and flagged (with flags allowed)
HIDDEN_PLANE = 0
N_NUMBER_PLANES = 9
FLAG_PLANE = 1 + N_NUMBER_PLANES


def n_planes(allow_flags: bool) -> int:
    return FLAG_PLANE + int(allow_flags)


def number_plane(n: Any) -> Any:
    """The plane of a revealed cell with ``n`` mines around it (a number or an array)."""
    return 1 + n


@dataclass(frozen=True)
class Rewards:
    """What a move pays (the env's reward settings,
    :class:`grid_envs.minesweeper.env.MinesweeperEnv`): ``step_reward`` every legal move,
    ``progress_reward`` shared out over the safe cells as they open, ``win_reward`` when the
    last one opens, ``loss_reward`` on a mine (the episode ends)."""

    progress_reward: float
    win_reward: float
    loss_reward: float
    step_reward: float = 0.0


def reveal_reward(settings: Rewards, opened: Any, safe_cells: int, won: Any) -> Any:
    """The reward of a safe reveal that opened ``opened`` cells (numbers for one board,
    arrays for a batch)."""
    progress = settings.progress_reward * opened / safe_cells + won * settings.win_reward
    return settings.step_reward + progress


def mine_reward(settings: Rewards) -> float:
    """The reward of revealing a mine."""
    return settings.step_reward + settings.loss_reward


def flag_reward(settings: Rewards) -> float:
    """The reward of putting a flag on or off (a move like any other)."""
    return settings.step_reward


def max_mines(rows: int, cols: int, first_click: str) -> int:
    """The most mines a board holds while the first-click rule can still be honoured."""
    if first_click not in FIRST_CLICK_RULES:
        raise ValueError(f"first_click must be one of {FIRST_CLICK_RULES}, got {first_click!r}")
    keep_free = {"any": 0, "safe": 1, "zero": min(9, rows * cols)}[first_click]
    return rows * cols - keep_free


def check_board(rows: int, cols: int, mines: int, first_click: str) -> None:
    if rows < 1 or cols < 1:
        raise ValueError(f"the board needs at least one row and column, got {rows}x{cols}")
    most = max_mines(rows, cols, first_click)
    if not 1 <= mines <= most:
        raise ValueError(
            f"mines={mines} do not fit: a {rows}x{cols} board with first_click="
            f"{first_click!r} holds between 1 and {most} mines"
        )


def neighbour_counts(mines: np.ndarray) -> np.ndarray:
    """Mines among each cell's 8 neighbours, uint8; ``mines`` is (rows, cols) or a batch
    (k, rows, cols). Summed with the board axes first, so that numpy's inner loops run along
    the batch (faster than along a row of a few cells)."""
    rows, cols = mines.shape[-2:]
    board_first = np.moveaxis(mines, (-2, -1), (0, 1)).view(np.uint8)  # (rows, cols, ...)
    padded = np.zeros((rows + 2, cols + 2, *mines.shape[:-2]), dtype=np.uint8)
    padded[1:-1, 1:-1] = board_first
    across = padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]  # 3 columns
    counts = across[:-2] + across[1:-1] + across[2:] - board_first  # 3x3 - self
    return np.moveaxis(counts, (0, 1), (-2, -1))


def draw_mines(
    keys: np.ndarray, firsts: np.ndarray, num_mines: int, first_click: str
) -> np.ndarray:
    """Mine layouts from uniform keys, the first click kept free as its rule says.

    ``keys``: (k, rows, cols) uniform draws, one per cell, from each game's generator;
    ``firsts``: (k, rows, cols) bool, the first click (all False when there is none). The
    ``num_mines`` allowed cells with the smallest keys get the mines: a uniform layout. The
    batched env draws with this and the single env's :func:`place_mines` draws the same
    layout from the same keys (tested), so the same seed gives the same board.
    """
    k, rows, cols = keys.shape
    blocked = {"any": np.zeros_like(firsts), "safe": firsts}.get(first_click)
    if blocked is None:  # "zero": the click and its neighbours
        blocked = dilate(firsts)
    keys = keys.reshape(k, rows * cols).copy()
    keys[blocked.reshape(k, rows * cols)] = 2.0  # a boolean assignment: faster than np.where
    if not num_mines:
        return np.zeros((k, rows, cols), dtype=bool)
    # the num_mines smallest keys: those up to the num_mines-th (a partition; keys tie with
    # probability about cells**2 / 2**53, and a board where they do is drawn by index)
    mines = keys <= np.partition(keys, num_mines - 1, axis=1)[:, num_mines - 1 : num_mines]
    tied = np.flatnonzero(mines.sum(axis=1) != num_mines)
    if len(tied):
        chosen = np.argpartition(keys[tied], num_mines - 1, axis=1)[:, :num_mines]
        mines[tied] = False
        mines[tied[:, None], chosen] = True
    return mines.reshape(k, rows, cols)


def place_mines(state: MinesweeperState, rng: np.random.Generator, first: Cell | None) -> None:
    """Draw the mines and derive the counts (the zero cells wait for the first flood).

    The layout is :func:`draw_mines`'s for the same keys (the batched env draws with that),
    found for one board with fewer numpy calls: the ``num_mines`` allowed cells with the
    smallest keys, by one ``argpartition``, which is also what :func:`draw_mines` falls back
    on when keys tie; the counts add up each mine's neighbours (a cached table)."""
    rows, cols, n = state.rows, state.cols, state.rows * state.cols
    keys = rng.random(n)  # the same draw as rng.random((1, rows, cols))
    if first is not None and state.first_click != "any":
        clicked = int(first[0]) * cols + int(first[1])
        keys[clicked] = 2.0
        if state.first_click == "zero":  # and the click's neighbours
            keys[list(flat_neighbour_table((rows, cols), 8)[clicked])] = 2.0
    chosen = np.argpartition(keys, state.num_mines - 1)[: state.num_mines]
    mines = np.zeros(n, dtype=bool)
    mines[chosen] = True
    table = _neighbour_array(rows, cols)
    counts = np.bincount(table[chosen].ravel(), minlength=n + 1)[:n].astype(np.uint8)
    state.mines, state.counts = mines.reshape(rows, cols), counts.reshape(rows, cols)
    state.runs = None
    state.zero_bits = None
    state.placed = True


@lru_cache(maxsize=16)
def _neighbour_array(rows: int, cols: int) -> np.ndarray:
    """(cells, 8) flat neighbours of each cell, padded with ``cells`` (a dummy index)."""
    n = rows * cols
    table = np.full((n, 8), n, dtype=np.intp)
    for cell, near in enumerate(flat_neighbour_table((rows, cols), 8)):
        table[cell, : len(near)] = near
    return table


def zero_bits(counts: np.ndarray, mines: np.ndarray) -> int:
    """The safe zero cells as one integer, bit ``r * cols + c`` a cell (the flood's room
    on small boards, :func:`opened_by`)."""
    return _to_bits((counts == 0) & ~mines)


def zero_runs(zero: np.ndarray, mines: np.ndarray) -> tuple[list[list[int]], list[list[int]]]:
    """Per row, the starts and (exclusive) ends of the stretches of safe zero cells."""
    rows, _cols = zero.shape
    z = np.zeros((rows, _cols + 2), dtype=np.int8)
    z[:, 1:-1] = zero & ~mines
    edges = np.diff(z, axis=1)
    starts: list[list[int]] = [[] for _ in range(rows)]
    ends: list[list[int]] = [[] for _ in range(rows)]
    for out, edge in ((starts, 1), (ends, -1)):
        rs, cs = np.nonzero(edges == edge)
        for r, c in zip(rs.tolist(), cs.tolist(), strict=True):
            out[r].append(c)
    return starts, ends


def zero_region(state: MinesweeperState, cell: Cell) -> np.ndarray:
    """The 8-connected region of zero cells that contains ``cell`` (a zero cell), bool mask."""
    if state.runs is None:
        state.runs = zero_runs(state.counts == 0, state.mines)
    starts, ends = state.runs
    r, c = cell
    i = bisect_right(starts[r], c) - 1
    region = np.zeros((state.rows, state.cols), dtype=bool)
    seen = {(r, i)}
    queue = deque([(r, i)])
    while queue:
        row, k = queue.popleft()
        s, e = starts[row][k], ends[row][k]
        region[row, s:e] = True
        for rr in (row - 1, row + 1):
            if 0 <= rr < state.rows:
                row_starts, row_ends = starts[rr], ends[rr]
                j = bisect_right(row_ends, s - 1)  # first run ending right of s - 1
                while j < len(row_starts) and row_starts[j] <= e:  # touches [s - 1, e]
                    if (rr, j) not in seen:
                        seen.add((rr, j))
                        queue.append((rr, j))
                    j += 1
    return region


@lru_cache(maxsize=16)
def _bit_layout(rows: int, cols: int) -> tuple[int, int, int]:
    """(row width in bits, the board's bits, bytes) of a board as one integer: cell (r, c)
    is bit ``r * width + c``, and each row ends in a spare zero bit so that a shift along
    the row never carries a cell into the next row."""
    width = cols + 1
    board = sum(((1 << cols) - 1) << (r * width) for r in range(rows))
    return width, board, (rows * width + 7) // 8


def _to_bits(mask: np.ndarray) -> int:
    rows, cols = mask.shape
    width = _bit_layout(rows, cols)[0]
    padded = np.zeros((rows, width), dtype=bool)
    padded[:, :cols] = mask
    return int.from_bytes(np.packbits(padded, bitorder="little").tobytes(), "little")


def _from_bits(bits: int, rows: int, cols: int) -> np.ndarray:
    width, _, size = _bit_layout(rows, cols)
    flat = np.frombuffer(bits.to_bytes(size, "little"), dtype=np.uint8)
    cells = np.unpackbits(flat, count=rows * width, bitorder="little").view(bool)
    return cells.reshape(rows, width)[:, :cols]


def opened_by(state: MinesweeperState, cell: Cell) -> np.ndarray:
    """What a click on the zero cell ``cell`` opens: its 8-connected zero region and the
    region's border, (rows, cols) bool (revealed cells included)."""
    rows, cols = state.rows, state.cols
    if rows * cols > BITS_BOARD:
        return dilate(zero_region(state, cell))
    if state.zero_bits is None:  # static once the mines are placed
        state.zero_bits = zero_bits(state.counts, state.mines)
    width, board, _ = _bit_layout(rows, cols)
    zero, region = state.zero_bits, 1 << (int(cell[0]) * width + int(cell[1]))
    while True:  # grow by one cell in the 8 directions, kept to zero cells, until it stops
        grown = region | (region << 1) | (region >> 1)
        grown = (grown | (grown << width) | (grown >> width)) & zero
        if grown == region:
            break
        region = grown
    border = region | (region << 1) | (region >> 1)
    return _from_bits((border | (border << width) | (border >> width)) & board, rows, cols)


def dilate(mask: np.ndarray) -> np.ndarray:
    """The mask grown by one cell in all 8 directions (rows, then columns); ``mask`` is
    (rows, cols) or a batch (k, rows, cols)."""
    out = mask.copy()
    out[..., 1:, :] |= mask[..., :-1, :]
    out[..., :-1, :] |= mask[..., 1:, :]
    grown = out.copy()
    grown[..., 1:] |= out[..., :-1]
    grown[..., :-1] |= out[..., 1:]
    return grown


def legal_reveals(state: MinesweeperState) -> np.ndarray:
    """(rows, cols) bool: hidden cells without a flag."""
    return ~state.revealed & ~state.flags


def reveal(state: MinesweeperState, cell: Cell, rng: np.random.Generator) -> int:
    """Reveal ``cell`` (legal: hidden, unflagged); return how many safe cells opened.

    Returns -1 when the cell holds a mine (``state.exploded`` is set). The first reveal
    places the mines when the rule is ``safe`` or ``zero``.
    """
    if not state.placed:
        place_mines(state, rng, cell)
    if state.mines[cell]:
        state.exploded = cell
        return -1
    if state.counts[cell] > 0:
        state.revealed[cell] = True
        return 1
    opened = opened_by(state, cell)
    already = int(np.count_nonzero(state.revealed & opened))
    # flags inside the opened region are lifted: those cells are proved safe
    state.flags &= ~opened
    state.revealed |= opened
    return int(np.count_nonzero(opened)) - already


def is_won(state: MinesweeperState) -> bool:
    return int(np.count_nonzero(state.revealed)) == state.safe_cells


def toggle_flag(state: MinesweeperState, cell: Cell) -> None:
    state.flags[cell] = not state.flags[cell]


class PackedRows:
    """Board rows packed into integers (up to 64 columns; bit c is column c), so that a
    dilation is a few shifts and ORs on (k, rows) integers instead of (k, rows, cols)
    booleans."""

    def __init__(self, cols: int) -> None:
        self.cols = cols
        self.kind = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64)
                         if np.iinfo(t).bits >= cols)  # fmt: skip
        self.dtype = np.dtype(self.kind).newbyteorder("<")  # column c: byte c // 8, bit c % 8
        self.one = self.kind(1)
        self.board = self.kind((1 << cols) - 1)  # the columns inside the board
        self.bits = np.array([1 << c for c in range(cols)], dtype=self.kind)  # bit c: 1 << c

    def pack(self, mask: np.ndarray) -> np.ndarray:
        # each row's cells times their bits, summed: an integer product (exact), several times
        # faster than np.packbits along a short last axis
        return np.matmul(mask.view(np.uint8), self.bits)

    def unpack(self, bits: np.ndarray) -> np.ndarray:
        as_bytes = bits.astype(self.dtype)[..., None].view(np.uint8)  # (k, rows, bytes)
        return np.unpackbits(as_bytes, axis=-1, count=self.cols, bitorder="little").astype(bool)

    def dilate(self, bits: np.ndarray, inside: bool = True) -> np.ndarray:
        """One cell more in the 8 directions, for rows laid out (rows, k); ``inside=False``
        leaves the bits past the last column (for a caller that masks the result with
        cells of the board)."""
        wide = bits | (bits << self.one) | (bits >> self.one)  # along the row
        if inside:
            wide &= self.board
        grown = wide.copy()
        grown[1:] |= wide[:-1]
        grown[:-1] |= wide[1:]
        return grown

    def grow(self, work: np.ndarray, space: np.ndarray, rounds: int = 4) -> np.ndarray:
        """What clicks open on a batch of packed boards (k, rows): the 8-connected regions
        of ``space`` (the zero cells) holding ``work`` (the clicks), with their border.

        Worked on (rows, k): numpy's inner loops then run along the boards, not along a
        board's few rows. Whether a board still grows is looked at
        every ``rounds`` dilations, the boards that stopped set aside then: on beginner
        boards under random play that is faster than looking after each (a few
        wasted dilations cost less than the look)."""
        work, space = np.ascontiguousarray(work.T), np.ascontiguousarray(space.T)
        ids, region = np.arange(work.shape[1]), np.zeros_like(work)
        while len(ids):
            for _ in range(rounds - 1):
                work = self.dilate(work, inside=False) & space
            grown = self.dilate(work, inside=False) & space
            changed = (grown != work).any(axis=0)
            region[:, ids[~changed]] = grown[:, ~changed]
            ids, work, space = ids[changed], grown[:, changed], space[:, changed]
        return self.dilate(region).T
