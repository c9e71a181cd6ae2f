"""Lines98's heuristic: lines in the making, for the agents and as a shaping potential.

Every window of ``line_length`` cells in a row, column or diagonal whose balls are all of
one colour is worth ``4 ** balls - 1`` (a full window, a line that clears, far more).
``move_gains`` scores every legal move at once: only the windows through a move's source
or target change, so all moves cost one numpy pass. ``best_gain`` finds the best move's
gain faster, from a table of what lifting each ball and dropping each colour on each empty
cell is worth (``cell_gains``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from grid_envs.lines98 import rules
from grid_envs.lines98.state import Lines98State

CLEAR_BONUS = 3000.0


@lru_cache(maxsize=16)
def windows(rows: int, cols: int, length: int) -> np.ndarray:
    """Every run of ``length`` cells in a line direction, (W, length) flat cells."""
    out = []
    for dr, dc in rules.LINE_DIRECTIONS:
        for r in range(rows):
            for c in range(cols):
                cells = [(r + k * dr, c + k * dc) for k in range(length)]
                if all(0 <= rr < rows and 0 <= cc < cols for rr, cc in cells):
                    out.append([rr * cols + cc for rr, cc in cells])
    return np.array(out, dtype=np.int64).reshape(-1, length)


@lru_cache(maxsize=16)
def cell_windows(rows: int, cols: int, length: int) -> np.ndarray:
    """(cells, K): the windows each cell lies in, padded with the index W (no window)."""
    w = windows(rows, cols, length)
    lists: list[list[int]] = [[] for _ in range(rows * cols)]
    for k, cells in enumerate(w.tolist()):
        for cell in cells:
            lists[cell].append(k)
    width = max(len(x) for x in lists)
    return np.array([x + [len(w)] * (width - len(x)) for x in lists], dtype=np.int64)


@lru_cache(maxsize=16)
def shared_window(rows: int, cols: int, length: int) -> np.ndarray:
    """(cells, cells) bool: whether two cells lie in a window together."""
    inside = incidence(rows, cols, length)[:, :-1].astype(np.int64)
    return (inside @ inside.T) > 0


@lru_cache(maxsize=16)
def incidence(rows: int, cols: int, length: int) -> np.ndarray:
    """(cells, W + 1) bool: whether the cell lies in the window (never in the padding)."""
    w = windows(rows, cols, length)
    inc = np.zeros((rows * cols, len(w) + 1), dtype=bool)
    for k, cells in enumerate(w.tolist()):
        inc[cells, k] = True
    return inc


def window_values(length: int) -> np.ndarray:
    """The worth of a one-colour window holding k balls (k = 0..length).

    ``4 ** k - 1``, and a full window (a line that clears: five balls off the board and no
    spawn) is worth ``CLEAR_BONUS`` more.
    """
    values = 4.0 ** np.arange(length + 1) - 1
    values[length] += CLEAR_BONUS
    return values


def window_counts(board: np.ndarray, length: int, colours: int) -> np.ndarray:
    """(W + 1, colours + 1): per window, how many cells are empty and hold each colour.

    The last row is a padding window (all empty) that ``cell_windows`` points at.
    """
    w = windows(*board.shape, length)
    slots = board.ravel()[w].astype(np.int64) + (colours + 1) * np.arange(len(w))[:, None]
    counts = np.bincount(slots.ravel(), minlength=(len(w) + 1) * (colours + 1))
    counts = counts.reshape(len(w) + 1, colours + 1)
    counts[len(w), 0] = length
    return counts


def potential(board: np.ndarray, length: int, colours: int) -> float:
    """The sum of the one-colour windows' worth on ``board``."""
    counts = window_counts(board, length, colours)
    total = length - counts[:, 0]
    pure = counts[:, 1:].max(axis=1) == total
    return float(window_values(length)[total][pure].sum())


def lines_potential(state: Lines98State) -> float:
    """Shaping potential ``"lines"``: the lines in the making, a window one ball short of a
    line worth about 2 points (a line of 5 scores 10)."""
    length = state.line_length
    return 2.0 * potential(state.board, length, state.colours) / 4.0 ** (length - 1)


def window_summary(
    board: np.ndarray, length: int, colours: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per window: its counts, its balls, its largest and second colour counts, its worth
    (``potential`` is the sum of the worths). The gain functions take it as ``summary``."""
    counts = window_counts(board, length, colours)
    total = length - counts[:, 0]
    ranked = np.sort(counts[:, 1:], axis=1)
    top = ranked[:, -1]
    second = ranked[:, -2] if colours > 1 else np.zeros_like(top)
    old = np.where(top == total, window_values(length)[total], 0.0)
    return counts, total, top, second, old


def cell_gains(
    board: np.ndarray, length: int, colours: int, summary: tuple[np.ndarray, ...] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """What each cell's part of a move is worth: ``drop`` (cells, colours), the change of
    ``potential`` from putting a ball of colour c + 1 on the empty cell (0 on balls), and
    ``lift`` (cells,), the change from taking its ball away (0 on empty cells). A move whose
    ends share no window gains ``lift[source] + drop[target, colour - 1]``. ``summary``:
    ``window_summary`` of the board, if the caller has it."""
    rows, cols = board.shape
    values = window_values(length)
    counts, total, top, second, old = summary or window_summary(board, length, colours)
    table = cell_windows(rows, cols, length)  # (cells, K), padded with the window W
    colour = board.ravel().astype(np.int64)
    empty, balls = np.flatnonzero(colour == 0), np.flatnonzero(colour)
    drop = np.zeros((rows * cols, colours))
    k = table[empty]  # (E, K): drops only onto the empty cells
    held = counts[k, 1:]  # (E, K, colours)
    new = np.where(total[k][..., None] == held, values[np.minimum(held + 1, length)], 0.0)
    new -= old[k][..., None]
    new[k == len(counts) - 1] = 0.0  # the padding window
    drop[empty] = new.sum(axis=1)
    lift = np.zeros(rows * cols)
    k = table[balls]  # (B, K): lifts only of the balls
    mine = counts[k, colour[balls, None]]  # balls of the lifted ball's own colour
    others = total[k] - mine
    biggest_other = np.where(mine == top[k], second[k], top[k])
    left = np.where(
        others == 0,
        values[np.maximum(mine - 1, 0)],
        np.where((mine == 1) & (biggest_other == others), values[others], 0.0),
    )
    left -= old[k]
    left[k == len(counts) - 1] = 0.0
    lift[balls] = left.sum(axis=1)
    return drop, lift


def table_gains(
    board: np.ndarray, moves: np.ndarray, drop: np.ndarray, lift: np.ndarray
) -> np.ndarray:
    """``lift[source] + drop[target, colour - 1]`` for every move: from :func:`cell_gains`'s
    tables, each move's gain, exact where its two ends share no window."""
    colour = board.ravel()[moves[:, 0]].astype(np.int64) - 1
    return lift[moves[:, 0]] + drop[moves[:, 1], colour]


def move_gains(
    board: np.ndarray, moves: np.ndarray, length: int, colours: int,
    summary: tuple[np.ndarray, ...] | None = None,
) -> np.ndarray:  # fmt: skip
    """For every move (source, target), the change of ``potential`` it makes (no spawn).

    Only the windows through the source or the target change, and only in the moved
    colour: a window gains the ball if it holds the target, loses it if it holds the
    source (both: no change), and is worth something only while one colour fills it.
    Most moves join cells that share no window: their gain is ``lift[source] +
    drop[target, colour]`` from the per-cell tables (``cell_gains``); the others are worked
    out window by window. ``summary``: ``window_summary`` of the board, if the caller has it.
    """
    summary = summary or window_summary(board, length, colours)
    if len(moves) < 64:  # the tables cost more than a few moves worked out one by one
        return _window_gains(board, moves, length, colours, summary)
    gain = table_gains(board, moves, *cell_gains(board, length, colours, summary))
    near = np.flatnonzero(shared_window(*board.shape, length)[moves[:, 0], moves[:, 1]])
    gain[near] = _window_gains(board, moves[near], length, colours, summary)
    return gain


def _window_gains(
    board: np.ndarray, moves: np.ndarray, length: int, colours: int,
    summary: tuple[np.ndarray, ...],
) -> np.ndarray:  # fmt: skip
    """:func:`move_gains` worked out on the windows through each move's two ends."""
    rows, cols = board.shape
    w = windows(rows, cols, length)
    values = window_values(length)
    # the padding window never changes
    counts, total, top, second, old = summary
    src, dst = moves[:, 0], moves[:, 1]
    m = len(moves)
    # both ends of every move at once: the source's windows lose the ball, the target's
    # gain it (a window holding both ends keeps it)
    ends, other = np.concatenate([src, dst]), np.concatenate([dst, src])
    sign = np.repeat(np.array([-1, 1]), m)[:, None]
    colour = np.tile(board.ravel()[src].astype(np.int64), 2)[:, None]
    k = cell_windows(rows, cols, length)[ends]  # (2M, K) windows through each end
    inside_other = incidence(rows, cols, length)[other[:, None], k]
    delta = np.where(inside_other | (k == len(w)), 0, sign)
    mine = counts[k, colour]
    others = total[k] - mine
    biggest_other = np.where(mine == top[k], second[k], top[k])
    new_mine = np.clip(mine + delta, 0, length)
    new = np.where(
        others == 0,
        values[new_mine],
        np.where((new_mine == 0) & (biggest_other == others), values[others], 0.0),
    )
    change = (new - old[k]).sum(axis=1)
    return change[:m] + change[m:]


def best_gain(board: np.ndarray, moves: np.ndarray, length: int, colours: int,
              shortlist: int = 16,
              summary: tuple[np.ndarray, ...] | None = None) -> float:  # fmt: skip
    """The largest ``move_gains`` among ``moves`` (at least one) as far as a shortlist
    shows: the ``shortlist`` moves that ``cell_gains`` ranks first, worked out exactly.

    ``lift[source] + drop[target, colour]`` is a move's exact gain unless its two ends share
    a window (that window is then counted twice), so only a move of a ball along its own
    lines can be ranked out of the shortlist wrongly; the result is then a lower bound.
    ``summary``: ``window_summary`` of the board, if the caller has it.
    """
    summary = summary or window_summary(board, length, colours)
    if len(moves) > shortlist:
        rough = table_gains(board, moves, *cell_gains(board, length, colours, summary))
        moves = moves[np.argpartition(-rough, shortlist)[:shortlist]]
    return float(move_gains(board, moves, length, colours, summary).max())
