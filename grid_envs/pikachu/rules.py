"""Pikachu (Onet) rules on a board (no gymnasium here): pairs, gravity, shuffles, boards."""

from __future__ import annotations

import math

import numpy as np

from grid_envs.pikachu.paths import (
    RemovablePairs,
    connects,
    exposed,
    may_connect,
    removable_pairs,
)
from grid_envs.pikachu.state import EMPTY


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


def legal_mask(board: np.ndarray, finder: RemovablePairs | None = None) -> np.ndarray:
    """The exact (n_pairs,) mask of the removable pairs: :func:`batch_legal_masks` for one
    board, found on bit fields (:class:`RemovablePairs`; pass the one that saw the board
    before the last removal to update it rather than start again)."""
    cells = board.size
    mask = np.zeros(n_pairs(cells), dtype=bool)
    pairs = (finder or RemovablePairs()).pairs(board)
    mask[[pair_to_action(i, j, cells) for i, j in pairs]] = True
    return mask


def batch_legal_masks(boards: np.ndarray) -> np.ndarray:
    """:func:`legal_mask` for a batch of boards (k, rows, cols): (k, n_pairs) bool.

    The tiles of each board are sorted by kind (cells ascending inside a kind), so equal
    tiles sit side by side and every candidate pair is a position ``t`` and ``t + d``; the
    pairs of all boards are then checked for a path in one call."""
    k, rows, cols = boards.shape
    cells = rows * cols
    flat = boards.reshape(k, cells)
    order = np.argsort(flat, axis=1, kind="stable")
    kinds = np.take_along_axis(flat, order, axis=1)
    envs, firsts, seconds = [], [], []
    for d in range(1, cells):
        same = (kinds[:, :-d] == kinds[:, d:]) & (kinds[:, d:] != EMPTY)
        at = np.flatnonzero(same)  # 2-d np.nonzero is several times slower
        env = at // (cells - d)
        t = at - env * (cells - d)
        if not len(env):
            break  # no kind has more than d tiles
        envs.append(env)
        firsts.append(order[env, t])
        seconds.append(order[env, t + d])
    mask = np.zeros((k, n_pairs(cells)), dtype=bool)
    if not envs:
        return mask
    env, i, j = np.concatenate(envs), np.concatenate(firsts), np.concatenate(seconds)
    keep = may_connect(exposed(boards), env, i, j, cols)
    env, i, j = env[keep], i[keep], j[keep]
    a = np.stack([i // cols, i % cols], axis=1)
    b = np.stack([j // cols, j % cols], axis=1)
    ok = connects(boards, a, b, env)
    i, j = i[ok], j[ok]
    mask[env[ok], pairs_to_actions(i, j, cells)] = True
    return mask


def apply_gravity(board: np.ndarray, gravity: str) -> None:
    """Slide the tiles toward one side, in place (the real game's later levels)."""
    if gravity == "none":
        return
    view = {"down": board.T, "up": board.T, "right": board, "left": board}[gravity]
    to_end = gravity in ("down", "right")
    for line in view:  # each column (down/up) or row (left/right)
        tiles = line[line != EMPTY]
        line[:] = EMPTY
        if len(tiles):
            if to_end:
                line[len(line) - len(tiles) :] = tiles
            else:
                line[: len(tiles)] = tiles


def check_board(board: np.ndarray) -> None:
    kinds, counts = np.unique(board[board != EMPTY], return_counts=True)
    odd = kinds[counts % 2 == 1]
    if len(odd):
        raise ValueError(
            f"every tile kind must occur an even number of times; kind(s) "
            f"{', '.join(str(int(k)) for k in odd)} occur an odd number of times"
        )


def random_board(rows: int, cols: int, kinds: int, rng: np.random.Generator) -> np.ndarray:
    """Each kind ``rows * cols / kinds`` times (an even number), shuffled."""
    cells = rows * cols
    if kinds < 1 or cells % kinds or (cells // kinds) % 2:
        raise ValueError(
            f"{rows}x{cols} = {cells} cells cannot hold {kinds} kinds an even number of "
            f"times each; choose kinds so that cells / kinds is even"
        )
    tiles = np.repeat(np.arange(1, kinds + 1, dtype=np.int16), cells // kinds)
    return rng.permutation(tiles).reshape(rows, cols)


def shuffle(board: np.ndarray, rng: np.random.Generator, tries: int = 20) -> bool:
    """Reshuffle the remaining tiles in place so that a move exists, if any layout has one.

    Random reshuffles first; if none of ``tries`` leaves a move, two equal tiles are put on
    two cells that connect whatever the tiles are, and the rest is shuffled around them.
    Returns False (board unchanged) when no layout of these cells allows a move.
    """
    cells = np.flatnonzero(board.ravel() != EMPTY)
    tiles = board.ravel()[cells].copy()
    flat = board.reshape(-1)
    for _ in range(tries):
        flat[cells] = rng.permutation(tiles)
        if RemovablePairs().pairs(board, first=True):  # is there a move at all
            return True
    kinds, counts = np.unique(tiles, return_counts=True)
    if not (counts >= 2).any():
        flat[cells] = tiles
        return False
    geometry = np.where(board != EMPTY, 1, EMPTY)  # every tile alike: which cells connect?
    spots = removable_pairs(geometry)
    if not spots:
        flat[cells] = tiles
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
