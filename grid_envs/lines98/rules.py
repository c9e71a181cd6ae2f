"""Lines98's rules: free-path moves (BFS), lines of five, spawns, and the score.

A move takes a ball to an empty cell joined to it by a 4-connected path of empty cells
(announced balls do not block: their cells are still empty). Cells are flat indices
``r * cols + c`` and an action is ``source * n + target`` with ``n = rows * cols``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from grid_envs.core.grid import flat_neighbour_table
from grid_envs.lines98.state import EMPTY, Lines98State

LINE_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # horizontal, vertical, both diagonals


def move_to_action(source: int, target: int, n: int) -> int:
    return source * n + target


def action_to_move(action: int, n: int) -> tuple[int, int]:
    return divmod(int(action), n)


def empty_regions(board: np.ndarray) -> np.ndarray:
    """Label the 4-connected regions of empty cells 1, 2, ... (0 on balls), by BFS."""
    rows, cols = board.shape
    labels, _, _ = _regions(board)
    return np.array([bit.bit_length() for bit in labels], dtype=np.int32).reshape(rows, cols)


def _regions(board: np.ndarray) -> tuple[list[int], list[int], int]:
    """One BFS over the empty cells: for each cell the bit of its region (``1 << k`` for
    the k-th region found, 0 on balls), for each ball the bits of the regions beside it,
    and the number of regions."""
    rows, cols = board.shape
    n = rows * cols
    free = (board.ravel() == EMPTY).tolist()
    near = flat_neighbour_table((rows, cols))
    region = [0] * n
    beside = [0] * n
    bit = 1
    for start in range(n):
        if not free[start] or region[start]:
            continue
        region[start] = bit
        queue = [start]
        for cell in queue:
            for nb in near[cell]:
                if not free[nb]:
                    beside[nb] |= bit
                elif not region[nb]:
                    region[nb] = bit
                    queue.append(nb)
        bit <<= 1
    return region, beside, bit.bit_length() - 1


def reachable(board: np.ndarray, source: int) -> np.ndarray:
    """Flat bool mask of the empty cells the ball on ``source`` can move to."""
    n = board.size
    return legal_mask(board).reshape(n, n)[source]


_BIT_TYPES = ((8, np.uint8), (16, np.uint16), (32, np.uint32), (64, np.uint64))


def legal_mask(board: np.ndarray) -> np.ndarray:
    """The exact (n * n,) mask: ball on source, target an empty cell its region reaches.

    One BFS gives each empty cell its region's bit and each ball the bits of the regions
    beside it; the mask is the AND of the sources' bits with the targets'."""
    region, beside, count = _regions(board)
    for bits, dtype in _BIT_TYPES:
        if count <= bits:
            src = np.array(beside, dtype=dtype)
            dst = np.array(region, dtype=dtype)
            return np.bitwise_and(src[:, None], dst).astype(bool).ravel()
    labels = np.array([bit.bit_length() for bit in region], dtype=np.int32)
    return _mask_by_labels(board[None], labels.reshape(1, *board.shape))[0]


def batch_region_labels(boards: np.ndarray) -> np.ndarray:
    """Region labels for a batch of boards (k, rows, cols): on every empty cell the largest
    ``flat index + 1`` of its 4-connected empty region, 0 on balls. The labels spread one
    cell a round over all boards at once until none changes."""
    k, rows, cols = boards.shape
    empty = boards == EMPTY
    dtype = np.int16 if rows * cols < 2**15 else np.int32
    labels = np.where(empty, np.arange(1, rows * cols + 1).reshape(rows, cols), 0).astype(dtype)
    pad = np.zeros((k, rows + 2, cols + 2), dtype=dtype)
    inner = pad[:, 1:-1, 1:-1]
    while True:
        inner[...] = labels
        grown = np.maximum(
            np.maximum(pad[:, :-2, 1:-1], pad[:, 2:, 1:-1]),
            np.maximum(pad[:, 1:-1, :-2], pad[:, 1:-1, 2:]),
        )
        np.maximum(grown, labels, out=grown)
        grown[~empty] = 0
        if np.array_equal(grown, labels):
            return labels
        labels = grown


def batch_legal_masks(boards: np.ndarray) -> np.ndarray:
    """:func:`legal_mask` for a batch of boards (k, rows, cols): (k, n * n) bool, from
    :func:`batch_region_labels` renumbered 1..K on each board."""
    k, rows, cols = boards.shape
    n = rows * cols
    labels = batch_region_labels(boards).reshape(k, n)
    ordered = np.sort(labels, axis=1)
    first = np.ones((k, n), dtype=bool)
    first[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    rank = np.cumsum(first & (ordered > 0), axis=1)  # 1..K for regions, 0 for balls
    table = np.zeros((k, n + 1), dtype=np.int64)
    table[np.arange(k)[:, None], ordered] = rank
    region = table[np.arange(k)[:, None], labels]  # (k, n): 1..K, 0 on balls
    return masks_from_regions(boards, region.reshape(k, rows, cols))


def masks_from_regions(boards: np.ndarray, region: np.ndarray) -> np.ndarray:
    """Masks (k, n * n) of boards (k, rows, cols) whose empty regions are numbered 1..K
    on each board (0 on balls).

    Each region gets a bit; a ball's bits are those of the regions beside it, so the mask
    is one AND of the sources' bits with the targets'. Wide bit fields cost more than
    comparing numbers over a batch, so past 16 regions (64 on one board) the regions
    beside each ball are compared with every target's instead."""
    k, rows, cols = boards.shape
    n = rows * cols
    most = int(region.max(initial=0))
    if most > (64 if k == 1 else 16):
        return _mask_by_labels(boards, region)
    dtype = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if np.iinfo(t).bits >= most)
    bit_of = np.array([0] + [1 << b for b in range(most)], dtype=dtype)  # region -> its bit
    pad = np.zeros((k, rows + 2, cols + 2), dtype=dtype)
    pad[:, 1:-1, 1:-1] = bit_of[region].reshape(k, rows, cols)
    beside = pad[:, :-2, 1:-1] | pad[:, 2:, 1:-1] | pad[:, 1:-1, :-2] | pad[:, 1:-1, 2:]
    beside[boards == EMPTY] = 0  # only balls move
    targets = bit_of[region].reshape(k, 1, n)
    return ((beside.reshape(k, n, 1) & targets) != 0).reshape(k, n * n)


def _mask_by_labels(boards: np.ndarray, labels: np.ndarray) -> np.ndarray:
    k, rows, cols = boards.shape
    n = rows * cols
    pad = np.zeros((k, rows + 2, cols + 2), dtype=labels.dtype)
    pad[:, 1:-1, 1:-1] = labels
    target = labels.reshape(k, 1, n)
    mask = np.zeros((k, n, n), dtype=bool)
    for side in (pad[:, :-2, 1:-1], pad[:, 2:, 1:-1], pad[:, 1:-1, :-2], pad[:, 1:-1, 2:]):
        mask |= side.reshape(k, n, 1) == target  # the region next to the source, 0 if none
    mask &= (target > 0) & (boards.reshape(k, n, 1) != EMPTY)
    return mask.reshape(k, n * n)


def mask_to_moves(mask: np.ndarray, n: int) -> np.ndarray:
    """The legal moves of an (n * n,) mask as (M, 2) flat (source, target) cells."""
    legal = np.flatnonzero(mask)
    return np.stack([legal // n, legal % n], axis=1)


@lru_cache(maxsize=32)
def _rays(rows: int, cols: int) -> tuple[tuple[tuple[tuple[int, ...], tuple[int, ...]], ...], ...]:
    """For each flat cell and each line direction, the cells walking away from it one way
    and the other (nearest first): the cells a line through it can take."""
    table = []
    for r in range(rows):
        for c in range(cols):
            per_direction = []
            for dr, dc in LINE_DIRECTIONS:
                ways = []
                for sign in (1, -1):
                    ray = []
                    rr, cc = r + sign * dr, c + sign * dc
                    while 0 <= rr < rows and 0 <= cc < cols:
                        ray.append(rr * cols + cc)
                        rr, cc = rr + sign * dr, cc + sign * dc
                    ways.append(tuple(ray))
                per_direction.append((ways[0], ways[1]))
            table.append(tuple(per_direction))
    return tuple(table)


def lines_through(board: np.ndarray, cell: int, line_length: int) -> list[list[int]]:
    """The lines of ``line_length`` or more balls of one colour through ``cell``."""
    return _lines_at(board.ravel().tolist(), cell, _rays(*board.shape), line_length)


def _lines_at(
    flat: list[int], cell: int, rays: tuple[Any, ...], line_length: int
) -> list[list[int]]:
    """:func:`lines_through` on the board as a flat list, along the cached ``_rays``."""
    colour = flat[cell]
    if colour == EMPTY:
        return []
    found = []
    for ahead, behind in rays[cell]:
        if len(ahead) + len(behind) + 1 < line_length:
            continue
        line = [cell]
        for other in ahead:
            if flat[other] != colour:
                break
            line.append(other)
        for other in behind:
            if flat[other] != colour:
                break
            line.append(other)
        if len(line) >= line_length:
            found.append(sorted(line))
    return found


def points(lines: list[list[int]], line_length: int) -> int:
    """2 points a cleared ball (a ball on two crossing lines counts once), plus 2 points
    for every ball a line has beyond ``line_length`` (a line of 6 scores 14, of 7 18)."""
    balls = {cell for line in lines for cell in line}
    return 2 * len(balls) + 2 * sum(len(line) - line_length for line in lines)


def clear_lines(state: Lines98State, cells: list[int], line_length: int) -> int:
    """Clear every line through ``cells``; update the score; return the points."""
    flat, rays = state.board.ravel().tolist(), _rays(*state.board.shape)
    lines = []
    for cell in cells:
        for line in _lines_at(flat, cell, rays, line_length):
            if line not in lines:
                lines.append(line)
    if not lines:
        return 0
    gained = points(lines, line_length)
    gone = sorted({cell for line in lines for cell in line})
    state.board.ravel()[gone] = EMPTY
    state.score += gained
    state.balls_cleared += len(gone)
    state.last_cleared += tuple(gone)
    return gained


def free_cells(state: Lines98State) -> list[int]:
    """Empty cells that no announced ball has claimed."""
    free = state.board.ravel() == EMPTY
    if state.announced:
        free[list(state.announced)] = False
    return np.flatnonzero(free).tolist()


def announce(state: Lines98State, rng: np.random.Generator, count: int, colours: int) -> None:
    """Announce ``count`` balls (fewer only if fewer free cells are left), each on a cell
    drawn uniformly from the free ones, with a uniform colour."""
    cells = free_cells(state)
    picked = rng.choice(len(cells), size=min(count, len(cells)), replace=False)
    for k in picked.tolist():
        state.announced[cells[k]] = int(rng.integers(colours)) + 1


def spawn(state: Lines98State, line_length: int) -> int:
    """Put the announced balls on the board, clear the lines they complete; the points."""
    placed = list(state.announced)
    for cell, colour in state.announced.items():
        state.board.ravel()[cell] = colour
    state.announced = {}
    return clear_lines(state, placed, line_length)


def new_game(
    rng: np.random.Generator, rows: int, cols: int, colours: int, initial: int, count: int,
    line_length: int,
) -> Lines98State:  # fmt: skip
    """Exactly ``initial`` balls on uniformly drawn cells, then ``count`` announced."""
    state = Lines98State(
        np.zeros((rows, cols), dtype=np.int8), line_length=line_length, colours=colours
    )
    announce(state, rng, initial, colours)
    spawn(state, line_length)
    state.score = state.balls_cleared = 0  # a starting line (rare) is cleared but not scored
    state.last_cleared = ()
    announce(state, rng, count, colours)
    return state


def play(
    state: Lines98State, source: int, target: int, rng: np.random.Generator, count: int,
    colours: int, line_length: int,
) -> int:  # fmt: skip
    """Play a legal move in place; return the points it scores (lines and spawned lines).

    A ball moved onto an announced cell sends that announcement to a uniformly drawn free
    cell (none left: it is dropped). When the move clears nothing, the announced balls
    appear (their lines are cleared too) and ``count`` new ones are announced; when the
    move empties the board, they appear as well, so the game can go on.
    """
    flat = state.board.ravel()
    state.last_cleared = ()
    state.moves += 1
    flat[target], flat[source] = flat[source], EMPTY
    if target in state.announced:
        colour = state.announced.pop(target)
        cells = free_cells(state)
        if cells:
            state.announced[cells[int(rng.integers(len(cells)))]] = colour
    gained = clear_lines(state, [target], line_length)
    if gained == 0 or not (flat != EMPTY).any():
        gained += spawn(state, line_length)
        announce(state, rng, count, colours)
    return gained
