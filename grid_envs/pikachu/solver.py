"""Planning a full clear of a Pikachu board.

Without gravity, removing tiles only ever frees cells, so a pair that connects now still
connects after any other removal. Two kinds of move therefore can never hurt and are made at
once, without branching (the *closure*): a pair whose two tiles are fixed partners (or a
kind's last two tiles), and all the tiles of a kind when they can all be paired off by pairs
that connect now. What is left to decide is who pairs with whom inside larger kinds: the
search picks one free tile (the one with the fewest partners it connects to now) and branches
on its partner. A position is dropped when an optimistic relaxation (a tile leaves as soon
as it connects to the cell of a possible partner) already leaves tiles stuck, and every
dead position is remembered, so an exhausted search proves that the board cannot be
cleared. A share of the time first goes to random playouts over the closure, which find
easy clears fast.

With gravity, tiles slide and a removal can block others: nothing is safe, and a plain
depth-first search over every removable pair (with memoised boards) is used instead.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from grid_envs.pikachu.paths import connect_pairs, removable_pairs, removable_with_lengths
from grid_envs.pikachu.rules import apply_gravity
from grid_envs.pikachu.state import EMPTY


@dataclass(frozen=True)
class PlanResult:
    status: str  # "cleared", "unsolvable" (search exhausted) or "gave_up" (a limit)
    moves: tuple[tuple[int, int], ...]  # flat cell pairs, in order ("cleared" only)
    nodes: int
    seconds: float

    @property
    def cleared(self) -> bool:
        return self.status == "cleared"


def _tiles_by_kind(board: np.ndarray) -> dict[int, list[int]]:
    flat = board.ravel()
    out: dict[int, list[int]] = {}
    for cell in np.flatnonzero(flat != EMPTY).tolist():
        out.setdefault(int(flat[cell]), []).append(cell)
    return out


def ordered_moves(board: np.ndarray) -> list[tuple[int, int]]:
    """The removable pairs in the order the planner tries them (see the module doc)."""
    pairs, lengths = removable_with_lengths(board)
    if not pairs:
        return []
    tiles = _tiles_by_kind(board)
    flat = board.ravel()
    available = set(pairs)
    keyed = []
    for (i, j), length in zip(pairs, lengths, strict=True):
        kind_tiles = tiles[int(flat[i])]
        if len(kind_tiles) == 2:
            rank = 0
        else:
            others = tuple(c for c in kind_tiles if c not in (i, j))
            rank = 1 if len(others) == 2 and others in available else 2
        keyed.append((rank, length, i, j))
    keyed.sort()
    return [(i, j) for _, _, i, j in keyed]


def remove(board: np.ndarray, pair: tuple[int, int], gravity: str) -> np.ndarray:
    child = board.copy()
    flat = child.reshape(-1)
    flat[pair[0]] = flat[pair[1]] = EMPTY
    apply_gravity(child, gravity)
    return child


Partners = dict[int, int]  # tile -> the tile it must be removed with (both directions)


def _match_all(
    tiles: list[int], available: set[tuple[int, int]], fixed: Partners
) -> list[tuple[int, int]] | None:
    """Pairs, all connecting now, that remove every tile of ``tiles`` (respecting fixes)."""
    if not tiles:
        return []
    t, rest = tiles[0], tiles[1:]
    for u in [fixed[t]] if t in fixed else rest:
        pair = (min(t, u), max(t, u))
        if u in rest and pair in available and (u not in fixed or fixed[u] == t):
            sub = _match_all([x for x in rest if x != u], available, fixed)
            if sub is not None:
                return [pair, *sub]
    return None


def force_last_pairs(board: np.ndarray, fixed: Partners) -> Partners:
    """Fix the two unfixed tiles of a kind to each other: they have no one else left."""
    out = dict(fixed)
    for tiles in _tiles_by_kind(board).values():
        free = [t for t in tiles if t not in out]
        if len(free) == 2:
            out[free[0]], out[free[1]] = free[1], free[0]
    return out


def closure(board: np.ndarray, fixed: Partners) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Make every move that cannot hurt, given the partners fixed so far (no gravity).

    Removed at once: a fixed pair that connects, and every tile of a kind when all of them
    can be paired off by pairs that connect now (for a kind's last two tiles, that is just
    their pair). Removals only free cells, so none of these can block a solution.
    """
    board = board.copy()
    flat = board.reshape(-1)
    done: list[tuple[int, int]] = []
    while True:
        available = set(removable_pairs(board))
        if not available:
            return board, done
        made: list[tuple[int, int]] = []
        for tiles in _tiles_by_kind(board).values():
            ready = [
                (t, fixed[t]) for t in tiles if fixed.get(t, -1) > t and (t, fixed[t]) in available
            ]
            made += ready or (_match_all(tiles, available, fixed) or [])
        if not made:
            return board, done
        for i, j in made:
            flat[i] = flat[j] = EMPTY
        done += made


def relaxed_clearable(board: np.ndarray, fixed: Partners) -> bool:
    """A necessary condition for clearing: every tile can leave in an optimistic game.

    In the relaxation a tile leaves on its own as soon as a path joins it to the cell of a
    tile it may pair with (its fixed partner, or a tile of its kind not fixed to another),
    whether that tile is still there or not. Tiles leave the relaxed board at least as early
    as the real one, and fewer tiles never block a path, so a tile stuck here is stuck.
    """
    cols = board.shape[1]
    work = board.copy()
    flat = work.reshape(-1)
    partners: dict[int, list[int]] = {}
    for tiles in _tiles_by_kind(board).values():
        for t in tiles:
            partners[t] = (
                [fixed[t]] if t in fixed else [u for u in tiles if u != t and u not in fixed]
            )
    left = set(partners)
    while left:
        firsts = [t for t in left for _ in partners[t]]
        seconds = [u for t in left for u in partners[t]]
        if not firsts:
            return False
        a = np.array([[t // cols, t % cols] for t in firsts])
        b = np.array([[u // cols, u % cols] for u in seconds])
        ok = connect_pairs(work, a, b)[0]
        gone = {firsts[k] for k in np.flatnonzero(ok).tolist()}
        if not gone:
            return False
        for t in gone:
            flat[t] = EMPTY
        left -= gone
    return True


def _plan_partners(board: np.ndarray, deadline: float, node_limit: int | None) -> PlanResult:
    """Branch on one tile's partner; close the rest (see the module doc)."""
    start = time.perf_counter()
    dead: set[tuple[bytes, frozenset[tuple[int, int]]]] = set()
    nodes = 0

    class OutOfTime(Exception):
        pass

    def search(b: np.ndarray, fixed: Partners) -> list[tuple[int, int]] | None:
        nonlocal nodes
        nodes += 1
        if time.perf_counter() > deadline or (node_limit is not None and nodes > node_limit):
            raise OutOfTime
        b, moves = closure(b, force_last_pairs(b, fixed))
        if not (b != EMPTY).any():
            return moves
        flat = b.ravel()
        fixed = force_last_pairs(b, {t: u for t, u in fixed.items() if flat[t] != EMPTY})
        key = (b.tobytes(), frozenset((t, u) for t, u in fixed.items() if t < u))
        if key in dead:
            return None
        if not relaxed_clearable(b, fixed):
            dead.add(key)
            return None
        available = set(removable_pairs(b))
        # the open decision: a free tile of a kind with more than two free tiles, and its
        # partner; tiles whose pair connects now come first, fewest such options first
        choices = []
        for tiles in _tiles_by_kind(b).values():
            free = [t for t in tiles if t not in fixed]
            if len(free) <= 2:
                continue
            for t in free:
                options = [u for u in free if u != t]
                live = [u for u in options if (min(t, u), max(t, u)) in available]
                if live:
                    rest = [u for u in options if u not in live]
                    choices.append((len(live), t, live + rest))
        if choices:
            _, t, options = min(choices)
            for u in options:
                found = search(b, {**fixed, t: u, u: t})
                if found is not None:
                    return moves + found
        dead.add(key)
        return None

    try:
        found = search(board, {})
    except OutOfTime:
        return PlanResult("gave_up", (), nodes, time.perf_counter() - start)
    if found is None:
        return PlanResult("unsolvable", (), nodes, time.perf_counter() - start)
    return PlanResult("cleared", tuple(found), nodes, time.perf_counter() - start)


def playout(board: np.ndarray, rng: np.random.Generator) -> list[tuple[int, int]] | None:
    """One randomised game: the safe closure, then a random pair whenever a choice is left.

    Returns the moves when it clears the board (a witness that it can be cleared).
    """
    moves: list[tuple[int, int]] = []
    while True:
        board, forced = closure(board, {})
        moves += forced
        if not (board != EMPTY).any():
            return moves
        options = removable_pairs(board)
        if not options:
            return None
        pick = options[int(rng.integers(len(options)))]
        moves.append(pick)
        board = remove(board, pick, "none")


PLAYOUT_SHARE = 0.3  # of the time limit, spent on random playouts before the exact search


def plan(
    board: np.ndarray,
    gravity: str = "none",
    time_limit: float | None = 1.0,
    node_limit: int | None = None,
) -> PlanResult:
    """Search for a sequence of removals that clears ``board`` (no reshuffles).

    Without gravity: a share of the time goes to random playouts over the safe closure
    (cheap witnesses for easy boards; seeded by the board, so repeatable), the rest to the
    exact search on partners, which also proves boards unsolvable.
    """
    start = time.perf_counter()
    deadline = start + time_limit if time_limit is not None else float("inf")
    if gravity == "none":
        if time_limit is not None and node_limit is None:
            rng = np.random.default_rng(
                int.from_bytes(board.tobytes()[:8].ljust(8, b"\0"), "little")
            )
            stop = start + PLAYOUT_SHARE * time_limit
            tries = 0
            while time.perf_counter() < stop:
                tries += 1
                found = playout(board, rng)
                if found is not None:
                    return PlanResult("cleared", tuple(found), tries, time.perf_counter() - start)
        return _plan_partners(board, deadline, node_limit)
    return _plan_moves(board, gravity, deadline, node_limit, start)


def _plan_moves(
    board: np.ndarray, gravity: str, deadline: float, node_limit: int | None, start: float
) -> PlanResult:
    """With gravity: depth-first search over every removable pair, memoised boards.

    Sliding tiles can block others, so nothing can be decided without branching.
    """
    seen: set[bytes] = {board.tobytes()}
    # each frame: (board, its moves in order, the index of the next move to try)
    stack: list[tuple[np.ndarray, list[tuple[int, int]], int]] = [(board, ordered_moves(board), 0)]
    nodes = 1
    while stack:
        current, moves, k = stack[-1]
        if k >= len(moves):
            stack.pop()
            continue
        stack[-1] = (current, moves, k + 1)
        child = remove(current, moves[k], gravity)
        key = child.tobytes()
        if key in seen:
            continue
        seen.add(key)
        nodes += 1
        if not (child != EMPTY).any():
            route = tuple(frame[1][frame[2] - 1] for frame in stack)
            return PlanResult("cleared", route, nodes, time.perf_counter() - start)
        if time.perf_counter() > deadline or (node_limit is not None and nodes > node_limit):
            return PlanResult("gave_up", (), nodes, time.perf_counter() - start)
        child_moves = ordered_moves(child)
        if child_moves:
            stack.append((child, child_moves, 0))
    return PlanResult("unsolvable", (), nodes, time.perf_counter() - start)
