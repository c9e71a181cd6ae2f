"""Pikachu (Onet) rules on a board (no gymnasium here): pairs, gravity, shuffles, boards.

The rules an env step runs are compiled (:mod:`grid_envs.core.jit`), each written once over
one game's arrays (its flat board, the counters :data:`COUNTERS`, its last path's corners):
the mask, a removal with its path and the gravity, the reshuffles of a stuck board. The
single env calls :func:`_play` in its own compiled step (with the observation planes), then
:func:`unstick` for a stuck board, and :func:`legal_mask`; the batched env keeps every game
as rows of the same arrays and calls them in a compiled loop (:func:`play_batch`,
:func:`masks_batch`). A reshuffle that 20 random layouts do not unstick falls back to
:func:`shuffle`'s placement in Python (rare), for both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from grid_envs.core.jit import FIRST_ROW, compiled, lone, over_threads
from grid_envs.pikachu.paths import (
    check_side,
    connect_one,
    corners_into,
    flat_board,
    geometry,
    mask_into,
    removable_pairs,
)
from grid_envs.pikachu.state import (  # noqa: F401 (the counters' layout, for the batch)
    COUNTERS,
    EMPTY,
    GRAVITY,
    PATH,
    REMOVED,
    SHUFFLES,
    TOTAL,
    PikachuState,
)

SHUFFLE_TRIES = 20


def n_pairs(cells: int) -> int:
    return cells * (cells - 1) // 2


def tiles_by_kind(board: np.ndarray) -> dict[int, list[int]]:
    """Each kind on ``board`` and its tiles' flat cells, in board order."""
    flat = board.ravel()
    out: dict[int, list[int]] = {}
    for cell in np.flatnonzero(flat != EMPTY).tolist():
        out.setdefault(int(flat[cell]), []).append(cell)
    return out


def pair_to_action(i: int, j: int, cells: int) -> int:
    """Action index of the unordered pair of flat cells ``i`` and ``j`` (any order)."""
    if i == j or not (0 <= i < cells and 0 <= j < cells):
        raise ValueError(f"a pair needs two different cells in [0, {cells}), got {i}, {j}")
    i, j = min(i, j), max(i, j)
    return i * (2 * cells - i - 1) // 2 + (j - i - 1)


def action_to_pair(action: int, cells: int) -> tuple[int, int]:
    """The flat cells (i < j) of a pair action: the inverse of :func:`pair_to_action`."""
    if not 0 <= action < n_pairs(cells):
        raise ValueError(f"action {action} is outside [0, {n_pairs(cells)})")
    # i is the largest row of the triangle whose first index does not pass the action
    i = (2 * cells - 1 - math.isqrt((2 * cells - 1) ** 2 - 8 * action)) // 2
    while pair_to_action(i, i + 1, cells) > action:
        i -= 1
    while i + 1 < cells - 1 and pair_to_action(i + 1, i + 2, cells) <= action:
        i += 1
    return i, action - pair_to_action(i, i + 1, cells) + i + 1


def pairs_to_actions(i: np.ndarray, j: np.ndarray, cells: int) -> np.ndarray:
    """:func:`pair_to_action` for arrays of pairs of flat cells, ``i < j`` (unchecked)."""
    return i * (2 * cells - i - 1) // 2 + (j - i - 1)


def actions_to_pairs(actions: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`action_to_pair` for an array of legal actions: the flat cells (i, j), i < j.

    ``i`` is the largest row of the triangle whose first action does not pass the action;
    the square root in floating point can be one off near a row's start, which the
    comparisons after it mend."""
    actions = np.asarray(actions, dtype=np.int64)
    width = 2 * cells - 1
    i = ((width - np.sqrt(width * width - 8.0 * actions)) // 2).astype(np.int64)
    start = i * (width - i) // 2  # the action of the pair (i, i + 1)
    i -= start > actions
    i += (i + 1) * (width - i - 1) // 2 <= actions
    j = actions - i * (width - i) // 2 + i + 1
    return i, j


def legal_mask(board: np.ndarray) -> np.ndarray:
    """The exact (n_pairs,) mask of the removable pairs of ``board`` (rows, cols)."""
    flat, rows, cols = flat_board(board)
    mask = np.empty(n_pairs(board.size), dtype=bool)
    mask_into(flat, rows, cols, mask)
    return mask


def batch_legal_masks(boards: np.ndarray) -> np.ndarray:
    """:func:`legal_mask` for a batch of boards (k, rows, cols): (k, n_pairs) bool."""
    k, rows, cols = boards.shape
    check_side(rows, cols)
    masks = np.empty((k, n_pairs(rows * cols)), dtype=bool)
    flat = np.ascontiguousarray(boards).reshape(k, rows * cols)
    masks_batch(flat, np.arange(k), rows, cols, masks)
    return masks


def apply_gravity(board: np.ndarray, gravity: str) -> None:
    """Slide the tiles toward one side, in place (the real game's later levels)."""
    rows, cols = board.shape
    work = np.ascontiguousarray(board)  # the board itself, unless it is a strided view
    _gravity(work.reshape(-1), rows, cols, GRAVITY.index(gravity))
    if work is not board:
        board[...] = work


def random_board(rows: int, cols: int, kinds: int, rng: np.random.Generator) -> np.ndarray:
    """Each kind ``rows * cols / kinds`` times (an even number), shuffled."""
    cells = rows * cols
    if kinds < 1 or cells % kinds or (cells // kinds) % 2:
        raise ValueError(
            f"{rows}x{cols} = {cells} cells cannot hold {kinds} kinds an even number of "
            f"times each; choose kinds so that cells / kinds is even"
        )
    board = np.empty(cells, dtype=np.int16)
    _random_tiles(board, kinds, lone(rng), 0)
    return board.reshape(rows, cols)


def deal(
    board: np.ndarray, rows: int, cols: int, kinds: int, rng: np.random.Generator,
    mask: np.ndarray,
) -> None:  # fmt: skip
    """A new random deal into ``board`` (flat, int16; :func:`random_board`), its mask into
    ``mask``: a deal with no move is reshuffled (:func:`shuffle`, no penalty: the deal
    itself was stuck)."""
    if not _deal(board, rows, cols, kinds, lone(rng), 0, SHUFFLE_TRIES, mask):
        settle_deal(board, rows, cols, rng, mask)


def settle_deal(
    board: np.ndarray, rows: int, cols: int, rng: np.random.Generator, mask: np.ndarray
) -> None:  # fmt: skip
    """A deal that no random layout unstuck (``board`` flat, a view): the placed shuffle,
    its mask into ``mask``."""
    square = board.reshape(rows, cols)
    _placed_shuffle(square, rng)
    mask[:] = legal_mask(square)


def shuffle(board: np.ndarray, rng: np.random.Generator, tries: int = SHUFFLE_TRIES) -> bool:
    """Reshuffle the remaining tiles in place so that a move exists, if any layout has one.

    Random reshuffles first; if none of ``tries`` leaves a move, two equal tiles are put on
    two cells that connect whatever the tiles are, and the rest is shuffled around them.
    Returns False (board unchanged) when no layout of these cells allows a move.
    """
    _, rows, cols = flat_board(board)
    work = np.ascontiguousarray(board)  # the board itself, unless it is a strided view
    mask = np.empty(n_pairs(board.size), dtype=bool)
    unstuck = _shuffle_tries(work.reshape(-1), rows, cols, lone(rng), 0, tries, mask)
    if not unstuck:
        unstuck = _placed_shuffle(work, rng)
    if work is not board:
        board[...] = work
    return unstuck


def _placed_shuffle(board: np.ndarray, rng: np.random.Generator) -> bool:
    """:func:`shuffle` after its random tries failed (the board as it was): two equal tiles
    on two cells that connect whatever the tiles are, the rest shuffled around them."""
    cells = np.flatnonzero(board.ravel() != EMPTY)
    tiles = board.ravel()[cells].copy()
    flat = board.reshape(-1)
    kinds, counts = np.unique(tiles, return_counts=True)
    if not (counts >= 2).any():
        return False
    geometry_only = np.where(board != EMPTY, 1, EMPTY)  # every tile alike: which cells connect?
    spots = removable_pairs(geometry_only)
    if not spots:
        return False
    p, q = spots[int(rng.integers(len(spots)))]
    kind = kinds[counts >= 2][int(rng.integers(int((counts >= 2).sum())))]
    rest = list(tiles)
    rest.remove(kind)
    rest.remove(kind)
    others = [c for c in cells if c not in (p, q)]
    flat[others] = rng.permutation(np.array(rest, dtype=board.dtype)) if rest else []
    flat[p] = flat[q] = kind
    return True


@dataclass(frozen=True)
class Rewards:
    """What a move pays (the env's reward settings, :class:`grid_envs.pikachu.env.PikachuEnv`):
    ``step_reward`` every move, ``pair_reward`` for each pair removed (None: 1 / the pairs of
    the deal, so a cleared board pays 1 in all), ``win_reward`` when the board is cleared,
    ``shuffle_reward`` for each reshuffle of a stuck board, ``loss_reward`` when a stuck
    board ends the episode."""

    pair_reward: float | None
    win_reward: float
    shuffle_reward: float
    loss_reward: float
    step_reward: float = 0.0


# ------------------------------------------------------------------ compiled, one game
@compiled
def _gravity(board: np.ndarray, rows: int, cols: int, gravity: int) -> None:
    """Slide the tiles of ``board`` (flat) toward one side (:data:`GRAVITY`'s index), in
    order."""
    if gravity == 0:
        return
    across = gravity >= 3  # left, right: along rows; down, up: along columns
    lines, length = (rows, cols) if across else (cols, rows)
    to_end = gravity in (1, 4)
    tiles = np.empty(length, dtype=board.dtype)
    for line in range(lines):
        count = 0
        for k in range(length):
            cell = line * cols + k if across else k * cols + line
            if board[cell] != EMPTY:
                tiles[count] = board[cell]
                count += 1
            board[cell] = EMPTY
        at = length - count if to_end else 0
        for t in range(count):
            k = at + t
            board[line * cols + k if across else k * cols + line] = tiles[t]


@compiled
def _pair_of(action: int, n: int) -> tuple[int, int]:
    """:func:`action_to_pair`."""
    i = 0
    while (i + 1) * (2 * n - i - 2) // 2 <= action:
        i += 1
    return i, action - i * (2 * n - i - 1) // 2 + i + 1


@compiled
def _remove(
    board: np.ndarray, rows: int, cols: int, i: int, j: int, gravity: int, path: np.ndarray
) -> int:  # fmt: skip
    """Remove the tiles on ``i`` and ``j`` (their shortest path's corners into ``path``),
    then let the tiles slide; the number of corners."""
    _, kind, pivot = connect_one(geometry(board, rows, cols), i, j, cols, False)
    points = corners_into(i // cols, i % cols, j // cols, j % cols, kind, pivot, path)
    board[i] = EMPTY
    board[j] = EMPTY
    _gravity(board, rows, cols, gravity)
    return points


@compiled
def _shuffle_tries(
    board: np.ndarray, rows: int, cols: int, rngs: Any, at: int, tries: int, mask: np.ndarray
) -> bool:  # fmt: skip
    """Up to ``tries`` random layouts of the tiles until one has a move (its mask then in
    ``mask``); else the board as it was, and False."""
    cells = np.flatnonzero(board != EMPTY)
    tiles = board[cells].copy()
    for _ in range(tries):
        board[cells] = rngs[at].permutation(tiles)
        if mask_into(board, rows, cols, mask):
            return True
    board[cells] = tiles
    return False


@compiled
def _random_tiles(board: np.ndarray, kinds: int, rngs: Any, at: int) -> None:
    """Each of ``kinds`` kinds ``len(board) / kinds`` times, shuffled into the flat
    ``board`` (numpy's ``permutation``, the same draws)."""
    per = len(board) // kinds
    tiles = np.empty(len(board), dtype=board.dtype)
    for k in range(kinds):
        tiles[k * per : (k + 1) * per] = k + 1
    board[:] = rngs[at].permutation(tiles)


@compiled
def _deal(
    board: np.ndarray, rows: int, cols: int, kinds: int, rngs: Any, at: int, tries: int,
    mask: np.ndarray,
) -> bool:  # fmt: skip
    """A new random deal into ``board`` (flat), its mask into ``mask``; a deal with no
    move gets up to ``tries`` random layouts. False: still stuck (the placed shuffle
    decides, :func:`deal`)."""
    _random_tiles(board, kinds, rngs, at)
    if mask_into(board, rows, cols, mask):
        return True
    return _shuffle_tries(board, rows, cols, rngs, at, tries, mask)


@compiled
def _cleared(board: np.ndarray) -> bool:
    """Whether no tile is left (stops at the first tile)."""
    for cell in range(len(board)):  # noqa: SIM110 (a loop numba compiles)
        if board[cell] != EMPTY:
            return False
    return True


@compiled
def _play(
    board: np.ndarray, rows: int, cols: int, counters: np.ndarray, path: np.ndarray,
    action: int, gravity: int, reshuffle: bool, fixed: bool, pair_reward: float,
    win_reward: float, loss_reward: float, step_reward: float, mask: np.ndarray,
) -> tuple[float, bool, bool, bool]:  # fmt: skip
    """An env step of a legal ``action``, the board's mask after it into ``mask``:
    (reward, terminated, won, stuck); stuck: no move is left and the board is to be
    reshuffled (:func:`_unstick`, which draws: this part does not)."""
    i, j = _pair_of(action, rows * cols)
    counters[PATH] = _remove(board, rows, cols, i, j, gravity, path)
    path[counters[PATH] :] = -1
    counters[REMOVED] += 1
    reward = step_reward + (pair_reward if fixed else 1.0 / counters[TOTAL])
    if _cleared(board):
        mask[:] = False
        return reward + win_reward, True, True, False
    if mask_into(board, rows, cols, mask):
        return reward, False, False, False
    if not reshuffle:
        return reward + loss_reward, True, False, False
    return reward, False, False, True


@compiled
def _unstick(
    board: np.ndarray, rows: int, cols: int, counters: np.ndarray, rngs: Any, at: int,
    tries: int, shuffle_reward: float, mask: np.ndarray,
) -> tuple[float, bool]:  # fmt: skip
    """The rest of a step that left the board stuck (:func:`_play`): up to ``tries``
    random layouts (:func:`_shuffle_tries`), a reshuffle counted and paid if one has a move.
    (the reward it adds, undecided); undecided: none had, the placed shuffle decides."""
    if _shuffle_tries(board, rows, cols, rngs, at, tries, mask):
        counters[SHUFFLES] += 1
        return shuffle_reward, False
    return 0.0, True


# ------------------------------------------------------------------ compiled, a batch
@compiled
def play_batch(
    boards: np.ndarray, counters: np.ndarray, paths: np.ndarray, idx: np.ndarray,
    actions: np.ndarray, rngs: Any, rows: int, cols: int, gravity: int, reshuffle: bool,
    tries: int, fixed: bool, pair_reward: float, win_reward: float, shuffle_reward: float,
    loss_reward: float, step_reward: float, masks: np.ndarray,
) -> tuple[np.ndarray, ...]:  # fmt: skip
    """:func:`_play` (and :func:`_unstick`) for the games ``idx`` of a batch (rows of the
    arrays, ``rngs`` their generators), each game's mask into its row of ``masks``:
    (rewards, terminated, won, undecided)."""
    k = len(idx)
    rewards = np.empty(k, dtype=np.float64)
    terminated = np.empty(k, dtype=np.bool_)
    won = np.empty(k, dtype=np.bool_)
    undecided = np.empty(k, dtype=np.bool_)
    for t in range(k):
        i = idx[t]
        rewards[t], terminated[t], won[t], stuck = _play(
            boards[i], rows, cols, counters[i], paths[i], actions[t], gravity, reshuffle,
            fixed, pair_reward, win_reward, loss_reward, step_reward, masks[i],
        )  # fmt: skip
        undecided[t] = False
        if stuck:
            extra, undecided[t] = _unstick(boards[i], rows, cols, counters[i], rngs, i, tries,
                                           shuffle_reward, masks[i])  # fmt: skip
            rewards[t] += extra
    return rewards, terminated, won, undecided


@compiled
def deal_batch(
    boards: np.ndarray, idx: np.ndarray, rngs: Any, rows: int, cols: int, kinds: int,
    tries: int, masks: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """:func:`_deal` for the games ``idx`` of a batch (rows of ``boards`` and ``masks``,
    ``rngs`` their generators); whether each is still stuck (:func:`deal` settles it)."""
    stuck = np.empty(len(idx), dtype=np.bool_)
    for t in range(len(idx)):
        i = idx[t]
        stuck[t] = not _deal(boards[i], rows, cols, kinds, rngs, i, tries, masks[i])
    return stuck


@compiled
def masks_batch(
    boards: np.ndarray, idx: np.ndarray, rows: int, cols: int, out: np.ndarray
) -> np.ndarray:  # fmt: skip
    """Write the masks of the boards ``idx`` (rows of ``boards``, flat) into the same rows
    of ``out``; whether each has a removable pair."""
    legal = np.empty(len(idx), dtype=np.bool_)
    for t in range(len(idx)):
        legal[t] = mask_into(boards[idx[t]], rows, cols, out[idx[t]])
    return legal


def planes(boards: np.ndarray, kinds: int, rows: int, cols: int) -> np.ndarray:
    """The observation planes (k, kinds, rows, cols) uint8 of a batch of flat boards (k,
    cells): plane t holds the tiles of kind t + 1. Allocated by numpy, which asks the
    kernel for huge pages for a large array (a fresh 21 MB array for 4,096 classic boards a
    step costs a third of what numba's allocation of it does, page faults and all), and
    filled by a compiled loop split over the cores (:func:`over_threads`)."""
    k = len(boards)
    out = np.empty((k, kinds, rows, cols), dtype=np.uint8)
    flat = out.reshape(k, kinds * rows * cols)
    if k == 1:  # a single env's
        _planes_into(boards, FIRST_ROW, flat)
    else:
        over_threads(lambda part: _planes_into(boards, part, flat), np.arange(k))
    return out


@compiled
def _planes_into(boards: np.ndarray, idx: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:func:`planes` of the boards ``idx`` into the same rows of ``out`` (k, kinds *
    cells); ``idx``."""
    n = boards.shape[1]
    for b in idx:
        out[b] = 0
        for cell in range(n):
            tile = boards[b, cell]
            if tile != EMPTY:
                out[b, (tile - 1) * n + cell] = 1
    return idx


# ------------------------------------------------------------- over a PikachuState
def contiguous_board(state: PikachuState) -> np.ndarray:
    """A flat view of the state's board (made contiguous first where it is not)."""
    if not state.board.flags.c_contiguous:
        state.board = np.ascontiguousarray(state.board)
    return state.board.reshape(-1)


def unstick(
    state: PikachuState, reward: float, rng: np.random.Generator, rewards: Rewards,
    mask: np.ndarray, tries: int = SHUFFLE_TRIES,
) -> tuple[float, bool, bool]:  # fmt: skip
    """The rest of a step that left the board stuck, the only part that draws: up to
    ``tries`` random layouts, then :func:`settle`; (reward, terminated, won)."""
    rows, cols = state.board.shape
    extra, undecided = _unstick(state.board.reshape(-1), rows, cols, state.counters, lone(rng),
                                0, tries, float(rewards.shuffle_reward), mask)  # fmt: skip
    if undecided:
        return settle(state, reward + extra, rng, rewards, mask)
    return reward + extra, False, False


def settle(
    state: PikachuState, reward: float, rng: np.random.Generator, rewards: Rewards,
    mask: np.ndarray,
) -> tuple[float, bool, bool]:  # fmt: skip
    """A stuck board that no random layout unstuck: the placed shuffle, or the end; (reward,
    terminated, won), the board's mask into ``mask``."""
    unstuck = _placed_shuffle(state.board, rng)
    mask[:] = legal_mask(state.board)
    if unstuck:
        state.shuffles += 1
        return reward + rewards.shuffle_reward, False, False
    return reward + rewards.loss_reward, True, False
