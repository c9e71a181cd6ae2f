"""Planning a full clear of a Pikachu board.

Without gravity, removing tiles only ever frees cells, so a pair that connects now still
connects after any other removal. Two kinds of move therefore can never hurt and are made at
once, without branching (the *closure*): a pair whose two tiles are fixed partners (or a
kind's last two tiles), and all the tiles of a kind when they can all be paired off by pairs
that connect now. What is left to decide is who pairs with whom inside larger kinds.

A position is judged by an optimistic relaxation (a tile leaves as soon as it connects to
the cell of a possible partner): a tile stuck there is stuck for real. At the root every
open choice ("this tile with that partner") is *probed*: fixed for a moment and judged by
the relaxation, replayed only from the first round where the fix can change it. Choices that
fail are banned, and a kind left with one choice is fixed, which can make more moves safe;
many stuck boards are proved at the root this way. Then a tenth of the time goes to random
playouts that respect the bans (a cheap clear), and the rest to the exact search over
pairings of :mod:`grid_envs.pikachu.pairings`, which learns from every lock it meets and
either clears the board or proves it cannot be cleared. Boards with a kind of more than
eight tiles (too many pairings to list) get the older depth-first search on partners
instead, which settles every child the same way, tries one playout from it and remembers
dead positions.

With gravity, tiles slide and a removal can block others: nothing is safe, and a plain
depth-first search over every removable pair (with memoised boards) is used instead.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from grid_envs.pikachu import pairings
from grid_envs.pikachu.paths import connects_flat, removable_pairs, removable_with_lengths
from grid_envs.pikachu.rules import apply_gravity, batch_legal_masks, tiles_by_kind
from grid_envs.pikachu.state import EMPTY, PikachuState


@dataclass(frozen=True)
class PlanResult:
    status: str  # "cleared", "unsolvable" (search exhausted) or "gave_up" (a limit)
    moves: tuple[tuple[int, int], ...]  # flat cell pairs, in order ("cleared" only)
    nodes: int
    seconds: float

    @property
    def cleared(self) -> bool:
        return self.status == "cleared"


def safety_ranks(board: np.ndarray, pairs: list[tuple[int, int]]) -> list[int]:
    """For each of the removable ``pairs``: 0 where it holds its kind's last two tiles, 1
    where the kind's other two tiles make a removable pair too (the kind pairs off now),
    else 2. Without gravity a pair ranked 0 or 1 cannot spoil a clear."""
    tiles = tiles_by_kind(board)
    flat = board.ravel()
    available = set(pairs)
    ranks = []
    for i, j in pairs:
        kind_tiles = tiles[int(flat[i])]
        if len(kind_tiles) == 2:
            ranks.append(0)
            continue
        others = tuple(c for c in kind_tiles if c not in (i, j))
        ranks.append(1 if len(others) == 2 and others in available else 2)
    return ranks


def ordered_moves(board: np.ndarray) -> list[tuple[int, int]]:
    """The removable pairs in the order the planner tries them (see the module doc)."""
    pairs, lengths = removable_with_lengths(board)
    if not pairs:
        return []
    ranks = safety_ranks(board, pairs)
    keyed = sorted(zip(ranks, lengths, pairs, strict=True))
    return [pair for _, _, pair in keyed]


def remove(board: np.ndarray, pair: tuple[int, int], gravity: str) -> np.ndarray:
    child = board.copy()
    flat = child.reshape(-1)
    flat[pair[0]] = flat[pair[1]] = EMPTY
    apply_gravity(child, gravity)
    return child


Partners = dict[int, int]  # tile -> the tile it must be removed with (both directions)
Banned = frozenset[tuple[int, int]]  # pairs (t < u) proved never to be partners


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


def force_last_pairs(
    board: np.ndarray, fixed: Partners, groups: Iterable[list[int]] | None = None
) -> Partners:
    """Fix the two unfixed tiles of a kind to each other: they have no one else left.

    ``groups``: the tiles of the kinds to look at (by default every kind on ``board``).
    """
    out = dict(fixed)
    for tiles in tiles_by_kind(board).values() if groups is None else groups:
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
        for tiles in tiles_by_kind(board).values():
            ready = [
                (t, fixed[t]) for t in tiles if fixed.get(t, -1) > t and (t, fixed[t]) in available
            ]
            made += ready or (_match_all(tiles, available, fixed) or [])
        if not made:
            return board, done
        for i, j in made:
            flat[i] = flat[j] = EMPTY
        done += made


def _candidate_pairs(
    kinds: dict[int, list[int]], fixed: Partners, banned: Banned
) -> list[tuple[int, int]]:
    """Pairs (t < u) of one kind that may still be removed together, given what is known."""
    pairs = []
    for tiles in kinds.values():
        for k, t in enumerate(tiles):
            pairs += [(t, u) for u in tiles[k + 1 :] if _allowed((t, u), fixed, banned)]
    return pairs


def _allowed(pair: tuple[int, int], fixed: Partners, banned: Banned) -> bool:
    t, u = pair
    return fixed.get(t, u) == u and fixed.get(u, t) == t and pair not in banned


class Relaxation:
    """An optimistic game: a necessary condition for clearing the board.

    In the relaxation a tile leaves on its own as soon as a path joins it to the cell of a
    tile it may pair with (its fixed partner, or a tile of its kind not fixed to another),
    whether that tile is still there or not. Tiles leave the relaxed board at least as early
    as the real one, and fewer tiles never block a path, so a tile stuck here (``ok`` False)
    is stuck in the real game too. A path joins two cells both ways, so each candidate pair
    is checked once per round and frees both of its tiles.

    The run is kept round by round, so that ``allows`` can answer "and with this tile fixed
    to that partner?" by replaying only from the first round where the answer can differ.
    """

    def __init__(self, board: np.ndarray, fixed: Partners, banned: Banned = frozenset()) -> None:
        self.kinds = tiles_by_kind(board)  # kind -> its tiles, for every probe
        pairs = _candidate_pairs(self.kinds, fixed, banned)
        self.fixed = fixed
        self.board = board
        self.rounds: list[tuple[np.ndarray, np.ndarray]] = []  # (board, candidates) per round
        self.left_in: dict[int, int] = {}  # tile -> the round it left in
        self.fired: dict[int, set[tuple[int, int]]] = {}  # tile -> the pairs that freed it
        if len({t for pair in pairs for t in pair}) < int((board != EMPTY).sum()):
            self.ok = False  # a tile with no possible partner at all
            return
        cand = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        self.ok = self._run(board.copy(), cand, record=True)

    def _run(self, work: np.ndarray, cand: np.ndarray, record: bool, first: int = 0) -> bool:
        flat = work.reshape(-1)
        step = first
        while (flat != EMPTY).any():
            if record:
                self.rounds.append((work.copy(), cand))
            if not len(cand):
                return False
            ok = connects_flat(work, cand[:, 0], cand[:, 1])
            if not ok.any():
                return False
            if record:
                for t, u in cand[ok].tolist():
                    for x in (t, u):
                        if flat[x] != EMPTY:
                            self.left_in[x] = step
                            self.fired.setdefault(x, set()).add((t, u))
            flat[cand[ok].ravel()] = EMPTY
            cand = cand[~ok]
            cand = cand[(flat[cand[:, 0]] != EMPTY) | (flat[cand[:, 1]] != EMPTY)]
            step += 1
        return True

    def allows(self, t: int, u: int) -> bool:
        """Does the relaxation still clear the board once ``t`` is fixed to ``u``?"""
        if not self.ok:
            return False
        same = self.kinds[int(self.board.ravel()[t])]  # only this kind's pairs change
        fixed = force_last_pairs(self.board, {**self.fixed, t: u, u: t}, [same])
        banned = {
            (x, y)
            for k, x in enumerate(same)
            for y in same[k + 1 :]
            if not _allowed((x, y), fixed, frozenset())
        }
        # the first round where one of the kind's tiles left only through a banned pair
        diverge = [self.left_in[x] for x in same if self.fired[x] <= banned]
        if not diverge:
            return True  # the same run, round for round
        first = min(diverge)
        work, cand = self.rounds[first]
        keep = [(x, y) not in banned for x, y in cand.tolist()]
        return self._run(work.copy(), cand[np.array(keep, dtype=bool)], record=False, first=first)


def _open_tiles(board: np.ndarray, fixed: Partners) -> list[list[int]]:
    """Per kind with a pairing still to choose, its tiles without a fixed partner."""
    out = []
    for tiles in tiles_by_kind(board).values():
        free = [t for t in tiles if t not in fixed]
        if len(free) > 2:
            out.append(free)
    return out


@dataclass
class _Node:
    """A search position after the safe moves and the probes (see ``_settle``)."""

    board: np.ndarray
    fixed: Partners
    banned: Banned
    moves: list[tuple[int, int]]  # the safe moves made to get here
    decisions: list[tuple[int, list[int]]]  # per open kind: a tile, its possible partners


class _OutOfTime(Exception):
    pass


def _settle(
    board: np.ndarray,
    fixed: Partners,
    banned: Banned,
    dead: set,
    deadline: float = float("inf"),
) -> _Node | None:
    """Make the safe moves, probe every open choice, fix what the probes force; repeat.

    A probe fixes one tile of an open kind to one partner and asks the relaxation; a choice
    it rejects is banned (it stays impossible below this position, since later positions
    only add fixes). A kind left with one choice is fixed, which can make more moves safe.
    Returns None when the position is proved dead (and remembers it in ``dead``).
    """
    moves: list[tuple[int, int]] = []
    while True:
        if time.perf_counter() > deadline:
            raise _OutOfTime
        board, made = closure(board, force_last_pairs(board, fixed))
        moves += made
        if not (board != EMPTY).any():
            return _Node(board, fixed, banned, moves, [])
        flat = board.ravel()
        fixed = force_last_pairs(board, {t: u for t, u in fixed.items() if flat[t] != EMPTY})
        key = (board.tobytes(), frozenset((t, u) for t, u in fixed.items() if t < u))
        if key in dead:
            return None
        relaxed = Relaxation(board, fixed, banned)
        decisions = []
        forced: Partners = {}
        for free in _open_tiles(board, fixed) if relaxed.ok else []:
            t = free[0]
            options = [u for u in free[1:] if (t, u) not in banned and relaxed.allows(t, u)]
            banned |= {(t, u) for u in free[1:] if u not in options}
            if not options:
                break
            if len(options) == 1:
                forced |= {t: options[0], options[0]: t}
            decisions.append((t, options))
        else:
            if not relaxed.ok or not decisions:
                dead.add(key)
                return None
            if not forced:
                return _Node(board, fixed, banned, moves, decisions)
            fixed = {**fixed, **forced}
            continue
        dead.add(key)  # a kind with no possible pairing left
        return None


def proved_dead_after(board: np.ndarray, pair: tuple[int, int], max_seconds: float = 1.0) -> bool:
    """Whether removing ``pair`` leaves a board proved impossible to clear (no gravity): the
    safe moves and the probes of the planner's root (``_settle``) find no pairing left.

    Sound, not complete: False also where the proof needs a deeper search, or more than
    ``max_seconds`` seconds."""
    child = remove(board, pair, "none")
    try:
        return _settle(child, {}, frozenset(), set(), time.perf_counter() + max_seconds) is None
    except _OutOfTime:
        return False


def _plan_partners(
    root: _Node,
    dead: set,
    deadline: float,
    node_limit: int | None,
    start: float,
    rng: np.random.Generator | None = None,
) -> PlanResult:
    """Depth-first search on partners from a settled position (see the module doc).

    With ``rng``, every position also gets one random playout that respects its fixes and
    bans: a cheap witness deep in the tree, where the search alone may take long.
    """
    nodes = 0

    def search(node: _Node) -> list[tuple[int, int]] | None:
        nonlocal nodes
        nodes += 1
        if time.perf_counter() > deadline or (node_limit is not None and nodes > node_limit):
            raise _OutOfTime
        if not node.decisions:
            return node.moves  # cleared
        if rng is not None:
            found = playout(node.board, rng, node.fixed, node.banned, guided=True)
            if found is not None:
                return node.moves + found
        available = set(removable_pairs(node.board))

        def rank(choice: tuple[int, list[int]]) -> tuple[int, bool, int]:
            t, options = choice
            live = sum((min(t, u), max(t, u)) in available for u in options)
            return len(options), live == 0, -live

        t, options = min(node.decisions, key=rank)
        options = sorted(options, key=lambda u: (min(t, u), max(t, u)) not in available)
        banned = node.banned
        for u in options:
            child = _settle(node.board, {**node.fixed, t: u, u: t}, banned, dead, deadline)
            found = search(child) if child is not None else None
            if found is not None:
                return node.moves + found
            banned |= {(t, u)}
        return None

    try:
        found = search(root)
    except _OutOfTime:
        return PlanResult("gave_up", (), nodes, time.perf_counter() - start)
    if found is None:
        return PlanResult("unsolvable", (), nodes, time.perf_counter() - start)
    return PlanResult("cleared", tuple(found), nodes, time.perf_counter() - start)


def playout(
    board: np.ndarray,
    rng: np.random.Generator,
    fixed: Partners | None = None,
    banned: Banned = frozenset(),
    guided: bool = False,
) -> list[tuple[int, int]] | None:
    """One randomised game: the safe closure, then a pair whenever a choice is left.

    The pair is drawn uniformly, or with ``guided`` the one that leaves the most removable
    pairs (mobility; ties and one choice in ``GUIDED_NOISE`` drawn at random), which clears
    hard deals far more often for a few times the cost. Pairs against the fixed partners or
    proved impossible (``banned``) are never picked. Returns the moves when it clears the
    board (a witness that it can be cleared).
    """
    moves: list[tuple[int, int]] = []
    fixed = dict(fixed or {})
    while True:
        board, forced = closure(board, force_last_pairs(board, fixed))
        moves += forced
        if not (board != EMPTY).any():
            return moves
        options = [p for p in removable_pairs(board) if _allowed(p, fixed, banned)]
        if not options:
            return None
        if guided and len(options) > 1 and rng.random() >= GUIDED_NOISE:
            children = np.stack([remove(board, p, "none") for p in options])
            mobility = batch_legal_masks(children).sum(axis=1) + rng.random(len(options))
            pick = options[int(np.argmax(mobility))]
        else:
            pick = options[int(rng.integers(len(options)))]
        moves.append(pick)
        board = remove(board, pick, "none")


GUIDED_NOISE = 0.2  # share of a guided playout's choices made at random


PLAYOUT_SHARE = 0.1  # of the time limit, spent on random playouts before the exact search


def plan(
    board: np.ndarray,
    gravity: str = "none",
    max_seconds: float | None = 1.0,
    node_limit: int | None = None,
    prior: np.ndarray | None = None,
) -> PlanResult:
    """Search for a sequence of removals that clears ``board`` (no reshuffles).

    Without gravity: the root is settled first (safe moves and probes, which prove many
    stuck boards at once); then a share of the time goes to random playouts that respect
    what the probes found (cheap witnesses; seeded by the board, so repeatable); the rest to
    the exact search over pairings, which also proves boards unsolvable (see the module
    doc). Without a time limit, or with a ``node_limit``, the exact search runs alone.
    ``prior`` (a score per pair of cells, in action order) orders the pairings that search
    tries (:class:`~grid_envs.pikachu.pairings.PairingSearch`); with gravity it is unused.
    """
    start = time.perf_counter()
    deadline = start + max_seconds if max_seconds is not None else float("inf")
    if gravity != "none":
        return _plan_moves(board, gravity, deadline, node_limit, start)
    dead: set = set()
    try:
        root = _settle(board, {}, frozenset(), dead, deadline)
    except _OutOfTime:
        return PlanResult("gave_up", (), 1, time.perf_counter() - start)
    if root is None:
        return PlanResult("unsolvable", (), 1, time.perf_counter() - start)
    rng = None
    if max_seconds is not None and node_limit is None and root.decisions:
        rng = np.random.default_rng(int.from_bytes(board.tobytes()[:8].ljust(8, b"\0"), "little"))
        stop = time.perf_counter() + PLAYOUT_SHARE * max_seconds
        tries = 0
        while time.perf_counter() < stop:
            tries += 1
            found = playout(root.board, rng, root.fixed, root.banned, guided=tries % 2 == 0)
            if found is not None:
                moves = tuple(root.moves + found)
                return PlanResult("cleared", moves, tries, time.perf_counter() - start)
    if not pairings.fits(root.board):
        return _plan_partners(root, dead, deadline, node_limit, start, rng)
    search = pairings.PairingSearch(root.board, root.fixed, root.banned, prior)
    try:
        found = search.solve(deadline, node_limit)
    except pairings.OutOfBudget:
        return PlanResult("gave_up", (), search.nodes, time.perf_counter() - start)
    if found is None:
        return PlanResult("unsolvable", (), search.nodes, time.perf_counter() - start)
    return PlanResult(
        "cleared", tuple(root.moves + found), search.nodes, time.perf_counter() - start
    )


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


def mobility_potential(state: PikachuState) -> float:
    """Shaping potential ``"mobility"``: how many pairs can be removed now (a board with more
    moves is further from being stuck)."""
    return float(len(removable_pairs(state.board)))
