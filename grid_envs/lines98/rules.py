"""Lines98's rules: free-path moves (BFS), lines of five, spawns, and the score.

A move takes a ball to an empty cell joined to it by a 4-connected path of empty cells
(announced balls do not block: their cells are still empty). Cells are flat indices
``r * cols + c`` and an action is ``source * n + target`` with ``n = rows * cols``.

The rules are compiled (:mod:`grid_envs.core.jit`), each written once over one game as
arrays: the board (flat int8), the announced balls in the order they were announced
(``ann_cell``, ``ann_colour``) and the counters (:data:`state.COUNTERS`). A
:class:`Lines98State` is those arrays, which the single env's calls below hand to the
rules as they are; the batched env keeps every game as rows of such arrays and calls the
same rules in a compiled loop (:func:`play_batch`, :func:`batch_legal_masks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from grid_envs.core.jit import below, choice_without_replacement, compiled, lone
from grid_envs.lines98.state import CLEARED, EMPTY, LAST, MOVES, N_ANN, SCORE, Lines98State

LINE_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # horizontal, vertical, both diagonals
_DR = np.array([d[0] for d in LINE_DIRECTIONS], dtype=np.int64)
_DC = np.array([d[1] for d in LINE_DIRECTIONS], dtype=np.int64)


def move_to_action(source: int, target: int, n: int) -> int:
    return source * n + target


def action_to_move(action: int, n: int) -> tuple[int, int]:
    return divmod(int(action), n)


@dataclass(frozen=True)
class Rewards:
    """What a move pays beyond the points it scores (the env's reward settings,
    :class:`grid_envs.lines98.env.Lines98Env`): ``step_reward`` every move, ``win_reward``
    when the score reaches the target, ``loss_reward`` when the board fills."""

    loss_reward: float
    step_reward: float = 0.0
    win_reward: float = 0.0

    def as_array(self) -> np.ndarray:
        """(step, win, loss) float64, as the compiled step reads them."""
        return np.array([self.step_reward, self.win_reward, self.loss_reward])


# ------------------------------------------------------------------ compiled, one game
@compiled
def _root(parent: np.ndarray, label: int) -> int:
    """The root of ``label`` in the union-find forest ``parent``."""
    while parent[label] != label:
        label = parent[label]
    return label


@compiled
def _regions(
    board: np.ndarray, rows: int, cols: int, region: np.ndarray, labels: np.ndarray
) -> int:
    """Label the 4-connected regions of empty cells 1, 2, ... in ``region`` (0 on balls),
    numbered in the order of their first cells; the number of regions. ``labels``: (2, n
    + 1) scratch.

    One pass over the cells joins each empty cell to its empty neighbours above and to
    the left (union-find over provisional labels, ``labels[0]`` their parents, a root the
    smallest label of its region); a second numbers the roots in order."""
    parent, number = labels[0], labels[1]
    made = 0
    for cell in range(rows * cols):
        if board[cell] != EMPTY:
            region[cell] = 0
            continue
        left = region[cell - 1] if cell % cols else 0
        up = region[cell - cols] if cell >= cols else 0
        if left and up:
            a, b = _root(parent, left), _root(parent, up)
            region[cell] = parent[a] = parent[b] = min(a, b)
        elif left or up:
            region[cell] = left or up
        else:
            made += 1
            parent[made] = region[cell] = made
    count = 0
    for label in range(1, made + 1):  # a root comes before every label joined to it
        if parent[label] == label:
            count += 1
            number[label] = count
        else:
            number[label] = number[_root(parent, label)]
    number[0] = 0
    for cell in range(rows * cols):
        region[cell] = number[region[cell]]
    return count


@compiled
def _scratch(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The working arrays of :func:`_mask_into` for a board of ``n`` cells, made once for
    a whole batch: region labels, :func:`_regions`' scratch, a row of flags a region (row
    0: none)."""
    region = np.empty(n, dtype=np.int64)
    return region, np.empty((2, n + 1), dtype=np.int64), np.zeros((n + 1, n), dtype=np.uint8)


@compiled
def _mask_into(
    board: np.ndarray, rows: int, cols: int, out: np.ndarray, region: np.ndarray,
    labels: np.ndarray, cells_of: np.ndarray,
) -> bool:  # fmt: skip
    """Write the (n * n,) legal mask into ``out``: a ball on the source, the target an empty
    cell of a region beside it. Whether any move is legal (the other arguments:
    :func:`_scratch`).

    Each region's cells are one row of flags (row 0 none); a source's row of the mask is
    the OR of the rows of the distinct regions beside it. The mask is cleared whole and
    only the balls' rows are written: on a roomy board most sources are empty cells."""
    n = rows * cols
    count = _regions(board, rows, cols, region, labels)
    cells_of[: count + 1] = 0
    for cell in range(n):
        cells_of[region[cell], cell] = 1
    cells_of[0] = 0  # the balls belong to no region
    flags = out.view(np.uint8)
    flags[:] = 0
    legal = False
    for source in range(n):
        if board[source] == EMPTY:
            continue
        r, c = source // cols, source % cols
        a = region[source - cols] if r > 0 else 0
        b = region[source + cols] if r < rows - 1 and region[source + cols] != a else 0
        d = region[source - 1] if c > 0 else 0
        d = 0 if d in (a, b) else d
        e = region[source + 1] if c < cols - 1 else 0
        e = 0 if e in (a, b, d) else e
        if a + b + d + e == 0:
            continue
        legal = True
        base = source * n
        if int(a > 0) + int(b > 0) + int(d > 0) + int(e > 0) == 1:  # one region beside it
            one = a + b + d + e
            for t in range(n):
                flags[base + t] = cells_of[one, t]
        else:
            for t in range(n):
                flags[base + t] = cells_of[a, t] | cells_of[b, t] | cells_of[d, t] | cells_of[e, t]
    return legal


@compiled
def _run(board: np.ndarray, rows: int, cols: int, cell: int, d: int) -> tuple[int, int]:
    """The balls of ``cell``'s colour that run on from it in direction ``d`` of
    :data:`LINE_DIRECTIONS`: (how many behind it, how many ahead)."""
    colour = board[cell]
    r, c = cell // cols, cell % cols
    dr, dc = _DR[d], _DC[d]
    back = 0
    rr, cc = r - dr, c - dc
    while 0 <= rr < rows and 0 <= cc < cols and board[rr * cols + cc] == colour:
        back += 1
        rr, cc = rr - dr, cc - dc
    ahead = 0
    rr, cc = r + dr, c + dc
    while 0 <= rr < rows and 0 <= cc < cols and board[rr * cols + cc] == colour:
        ahead += 1
        rr, cc = rr + dr, cc + dc
    return back, ahead


@compiled
def _makes_line(board: np.ndarray, rows: int, cols: int, cell: int, line_length: int) -> bool:
    """Whether a line of ``line_length`` or more balls of one colour runs through ``cell``."""
    if board[cell] == EMPTY:
        return False
    for d in range(4):
        back, ahead = _run(board, rows, cols, cell, d)
        if back + ahead + 1 >= line_length:
            return True
    return False


@compiled
def _lines_through(
    board: np.ndarray, rows: int, cols: int, cell: int, line_length: int, lines: np.ndarray,
    found: int,
) -> int:  # fmt: skip
    """Add to ``lines`` (rows of direction, first cell, length) each line of
    ``line_length`` or more balls of one colour through ``cell`` not already there; the
    number of lines now."""
    if board[cell] == EMPTY:
        return found
    for d in range(4):
        back, ahead = _run(board, rows, cols, cell, d)
        length = back + ahead + 1
        if length < line_length:
            continue
        first = cell - back * (_DR[d] * cols + _DC[d])
        new = True
        for t in range(found):
            if lines[t, 0] == d and lines[t, 1] == first:
                new = False
        if new:
            lines[found, 0], lines[found, 1], lines[found, 2] = d, first, length
            found += 1
    return found


@compiled
def _clear(
    board: np.ndarray, rows: int, cols: int, cells: np.ndarray, line_length: int,
    counters: np.ndarray, cleared: np.ndarray,
) -> int:  # fmt: skip
    """Clear every line through ``cells``, counting the score, the balls cleared and the
    cleared cells (appended to ``cleared`` in order); the points: 2 a cleared ball (a ball
    on two crossing lines counts once) plus 2 for every ball a line has beyond
    ``line_length`` (a line of 6 scores 14, of 7 18). Most calls find no line, and
    return before they allocate anything."""
    for cell in cells:
        if _makes_line(board, rows, cols, cell, line_length):
            break
    else:
        return 0
    lines = np.empty((4 * len(cells), 3), dtype=np.int64)
    found = 0
    for cell in cells:
        found = _lines_through(board, rows, cols, cell, line_length, lines, found)
    if found == 0:
        return 0
    gone = np.zeros(rows * cols, dtype=np.bool_)
    beyond = 0
    for t in range(found):
        step = _DR[lines[t, 0]] * cols + _DC[lines[t, 0]]
        for k in range(lines[t, 2]):
            gone[lines[t, 1] + k * step] = True
        beyond += lines[t, 2] - line_length
    balls = 0
    for cell in range(rows * cols):
        if gone[cell]:
            board[cell] = EMPTY
            cleared[counters[LAST]] = cell
            counters[LAST] += 1
            balls += 1
    gained = 2 * balls + 2 * beyond
    counters[SCORE] += gained
    counters[CLEARED] += balls
    return gained


@compiled
def _balls(board: np.ndarray) -> int:
    """How many balls are on the board."""
    count = 0
    for cell in range(len(board)):
        count += board[cell] != EMPTY
    return count


@compiled
def _free(board: np.ndarray, ann_cell: np.ndarray, held: int) -> np.ndarray:
    """Empty cells that no announced ball has claimed, in order."""
    cells = np.empty(len(board), dtype=np.int64)
    m = 0
    for cell in range(len(board)):
        if board[cell] != EMPTY:
            continue
        claimed = False
        for s in range(held):
            claimed |= ann_cell[s] == cell
        if not claimed:
            cells[m] = cell
            m += 1
    return cells[:m]


@compiled
def _announce(
    board: np.ndarray, ann_cell: np.ndarray, ann_colour: np.ndarray, counters: np.ndarray,
    rngs: Any, at: int, count: int, colours: int,
) -> None:  # fmt: skip
    """Announce ``count`` balls (fewer only if fewer free cells are left), each on a cell
    drawn uniformly from the free ones, with a uniform colour, drawn by ``rngs[at]`` (the
    compiled rules take a generator as a list and an index: :func:`lone`)."""
    cells = _free(board, ann_cell, counters[N_ANN])
    picked = choice_without_replacement(rngs[at], len(cells), min(count, len(cells)))
    for k in picked:
        held = counters[N_ANN]
        ann_cell[held] = cells[k]
        ann_colour[held] = below(rngs[at], colours) + 1
        counters[N_ANN] = held + 1


@compiled
def _spawn(
    board: np.ndarray, rows: int, cols: int, ann_cell: np.ndarray, ann_colour: np.ndarray,
    counters: np.ndarray, cleared: np.ndarray, line_length: int,
) -> int:  # fmt: skip
    """Put the announced balls on the board, clear the lines they complete; the points."""
    held = counters[N_ANN]
    for s in range(held):
        board[ann_cell[s]] = ann_colour[s]
    counters[N_ANN] = 0
    return _clear(board, rows, cols, ann_cell[:held], line_length, counters, cleared)


@compiled
def _new_game(
    board: np.ndarray, rows: int, cols: int, ann_cell: np.ndarray, ann_colour: np.ndarray,
    counters: np.ndarray, cleared: np.ndarray, rngs: Any, at: int, colours: int, initial: int,
    count: int, line_length: int,
) -> None:  # fmt: skip
    board[:] = EMPTY
    counters[:] = 0
    _announce(board, ann_cell, ann_colour, counters, rngs, at, initial, colours)
    _spawn(board, rows, cols, ann_cell, ann_colour, counters, cleared, line_length)
    counters[SCORE] = counters[CLEARED] = counters[LAST] = 0  # a starting line: not scored
    _announce(board, ann_cell, ann_colour, counters, rngs, at, count, colours)


@compiled
def _play(
    board: np.ndarray, rows: int, cols: int, ann_cell: np.ndarray, ann_colour: np.ndarray,
    counters: np.ndarray, cleared: np.ndarray, source: int, target: int, rngs: Any,
    at: int, count: int, colours: int, line_length: int,
) -> int:  # fmt: skip
    """Play a legal move in place; the points it scores (see :func:`play`)."""
    counters[LAST] = 0
    counters[MOVES] += 1
    board[target], board[source] = board[source], EMPTY
    held = counters[N_ANN]
    for s in range(held):
        if ann_cell[s] == target:  # the announcement moves on, to the end of the order
            colour = ann_colour[s]
            for t in range(s, held - 1):
                ann_cell[t], ann_colour[t] = ann_cell[t + 1], ann_colour[t + 1]
            counters[N_ANN] = held - 1
            cells = _free(board, ann_cell, held - 1)
            if len(cells):
                ann_cell[held - 1] = cells[below(rngs[at], len(cells))]
                ann_colour[held - 1] = colour
                counters[N_ANN] = held
            break
    moved = np.full(1, target, dtype=np.int64)
    gained = _clear(board, rows, cols, moved, line_length, counters, cleared)
    if gained == 0 or _balls(board) == 0:
        gained += _spawn(board, rows, cols, ann_cell, ann_colour, counters, cleared, line_length)
        _announce(board, ann_cell, ann_colour, counters, rngs, at, count, colours)
    return gained


@compiled
def _step(
    board: np.ndarray, rows: int, cols: int, ann_cell: np.ndarray, ann_colour: np.ndarray,
    counters: np.ndarray, cleared: np.ndarray, action: int, rngs: Any, at: int, count: int,
    colours: int, line_length: int, target_score: int, rewards: np.ndarray,
) -> tuple[float, bool, bool]:  # fmt: skip
    """An env step of a legal ``action``: (reward, terminated, won); ``target_score`` 0
    for none, ``rewards`` :meth:`Rewards.as_array`."""
    n = rows * cols
    gained = _play(board, rows, cols, ann_cell, ann_colour, counters, cleared, action // n,
                   action % n, rngs, at, count, colours, line_length)  # fmt: skip
    reward = gained + rewards[0]
    if target_score > 0 and counters[SCORE] >= target_score:
        return reward + rewards[1], True, True
    if _balls(board) == n:
        return reward + rewards[2], True, False
    return reward, False, False


@compiled
def _mask_one(board: np.ndarray, rows: int, cols: int, out: np.ndarray) -> bool:
    """:func:`_mask_into` with its own scratch: one game's mask into ``out``; whether any
    move is legal."""
    region, labels, cells_of = _scratch(rows * cols)
    return _mask_into(board, rows, cols, out, region, labels, cells_of)


# ------------------------------------------------------------------ compiled, a batch
@compiled
def play_batch(
    boards: np.ndarray, ann_cell: np.ndarray, ann_colour: np.ndarray, counters: np.ndarray,
    cleared: np.ndarray, idx: np.ndarray, actions: np.ndarray, rngs: Any, rows: int,
    cols: int, count: int, colours: int, line_length: int, target_score: int,
    pays: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`_step` for the games ``idx`` of a batch (rows of the arrays, ``rngs`` their
    generators; ``pays``: :meth:`Rewards.as_array`): (rewards, terminated, won)."""
    k = len(idx)
    rewards = np.empty(k, dtype=np.float64)
    terminated = np.empty(k, dtype=np.bool_)
    won = np.empty(k, dtype=np.bool_)
    for j in range(k):
        i = idx[j]
        rewards[j], terminated[j], won[j] = _step(
            boards[i], rows, cols, ann_cell[i], ann_colour[i], counters[i], cleared[i],
            actions[j], rngs, i, count, colours, line_length, target_score, pays,
        )  # fmt: skip
    return rewards, terminated, won


@compiled
def new_games_batch(
    boards: np.ndarray, ann_cell: np.ndarray, ann_colour: np.ndarray, counters: np.ndarray,
    cleared: np.ndarray, idx: np.ndarray, rngs: Any, rows: int, cols: int, colours: int,
    initial: int, count: int, line_length: int,
) -> None:  # fmt: skip
    """:func:`new_game` for the games ``idx`` of a batch, each with its own generator."""
    for i in idx:
        _new_game(boards[i], rows, cols, ann_cell[i], ann_colour[i], counters[i], cleared[i],
                  rngs, i, colours, initial, count, line_length)  # fmt: skip


@compiled
def masks_batch(
    boards: np.ndarray, idx: np.ndarray, rows: int, cols: int, out: np.ndarray
) -> np.ndarray:
    """Write the legal masks of the boards ``idx`` (rows of ``boards``, flat) into the same
    rows of ``out``; whether each has a legal move."""
    region, labels, cells_of = _scratch(rows * cols)
    legal = np.empty(len(idx), dtype=np.bool_)
    if rows == cols == 9:  # the registered board: its size as constants, which the compiler
        # folds into the cell arithmetic, a quarter off the time of the masks
        for j in range(len(idx)):
            legal[j] = _mask_into(boards[idx[j]], 9, 9, out[idx[j]], region, labels, cells_of)
        return legal
    for j in range(len(idx)):
        legal[j] = _mask_into(boards[idx[j]], rows, cols, out[idx[j]], region, labels, cells_of)
    return legal


# ------------------------------------------------------------- over a Lines98State
def empty_regions(board: np.ndarray) -> np.ndarray:
    """Label the 4-connected regions of empty cells 1, 2, ... (0 on balls), by BFS."""
    rows, cols = board.shape
    region, labels, _ = _scratch(board.size)
    _regions(np.ascontiguousarray(board).ravel(), rows, cols, region, labels)
    return region.reshape(rows, cols).astype(np.int32)


def legal_mask(board: np.ndarray) -> np.ndarray:
    """The exact (n * n,) mask: ball on source, target an empty cell its region reaches."""
    rows, cols = board.shape
    out = np.empty(board.size**2, dtype=bool)
    _mask_one(np.ascontiguousarray(board).reshape(-1), rows, cols, out)
    return out


def batch_legal_masks(boards: np.ndarray) -> np.ndarray:
    """:func:`legal_mask` for a batch of boards (k, rows, cols): (k, n * n) bool."""
    k, rows, cols = boards.shape
    out = np.empty((k, (rows * cols) ** 2), dtype=bool)
    flat = np.ascontiguousarray(boards).reshape(k, rows * cols)
    masks_batch(flat, np.arange(k), rows, cols, out)
    return out


def reachable(board: np.ndarray, source: int) -> np.ndarray:
    """Flat bool mask of the empty cells the ball on ``source`` can move to."""
    n = board.size
    return legal_mask(board).reshape(n, n)[source]


def mask_to_moves(mask: np.ndarray, n: int) -> np.ndarray:
    """The legal moves of an (n * n,) mask as (M, 2) flat (source, target) cells."""
    legal = np.flatnonzero(mask)
    return np.stack([legal // n, legal % n], axis=1)


def lines_through(board: np.ndarray, cell: int, line_length: int) -> list[list[int]]:
    """The lines of ``line_length`` or more balls of one colour through ``cell``."""
    rows, cols = board.shape
    lines = np.empty((4, 3), dtype=np.int64)
    found = _lines_through(np.ascontiguousarray(board).ravel(), rows, cols, cell, line_length,
                           lines, 0)  # fmt: skip
    out = []
    for d, first, length in lines[:found].tolist():
        step = LINE_DIRECTIONS[d][0] * cols + LINE_DIRECTIONS[d][1]
        out.append(sorted(first + k * step for k in range(length)))
    return out


_Arrays = tuple[np.ndarray, int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _game(state: Lines98State) -> _Arrays:
    """The compiled rules' arrays of ``state`` (written in place)."""
    rows, cols = state.board.shape
    return (state.flat, rows, cols, state.ann_cell, state.ann_colour, state.counters,
            state.cleared)  # fmt: skip


def clear_lines(state: Lines98State, cells: list[int], line_length: int) -> int:
    """Clear every line through ``cells``; update the score; return the points."""
    state.counters[LAST] = 0
    flat, rows, cols, _, _, counters, cleared = _game(state)
    return int(_clear(flat, rows, cols, np.array(cells, dtype=np.int64), line_length, counters,
                      cleared))  # fmt: skip


def free_cells(state: Lines98State) -> list[int]:
    """Empty cells that no announced ball has claimed."""
    return _free(state.flat, state.ann_cell, state.held).tolist()


def announce(state: Lines98State, rng: np.random.Generator, count: int, colours: int) -> None:
    """Announce ``count`` balls (fewer only if fewer free cells are left), each on a cell
    drawn uniformly from the free ones, with a uniform colour."""
    _announce(state.flat, state.ann_cell, state.ann_colour, state.counters, lone(rng), 0,
              count, colours)  # fmt: skip


def spawn(state: Lines98State, line_length: int) -> int:
    """Put the announced balls on the board, clear the lines they complete; the points."""
    state.counters[LAST] = 0
    return int(_spawn(*_game(state), line_length))


def new_game(
    rng: np.random.Generator, rows: int, cols: int, colours: int, initial: int, count: int,
    line_length: int,
) -> Lines98State:  # fmt: skip
    """Exactly ``initial`` balls on uniformly drawn cells, then ``count`` announced."""
    state = Lines98State(
        np.zeros((rows, cols), dtype=np.int8), line_length=line_length, colours=colours
    )
    _new_game(*_game(state), lone(rng), 0, colours, initial, count, line_length)
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
    return int(_play(*_game(state), source, target, lone(rng), 0, count, colours, line_length))
