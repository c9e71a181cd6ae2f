"""Push search: the source article's solver, made strong.

The source article's idea is kept: search over *pushes* only, the player walking freely in between.
A search state is the set of box cells plus the player's reachable region, named by its
lowest cell from the moment the state is generated, so positions that differ only by a walk
are one state; a transposition table of those keys means no state is stored or expanded
twice.

* The searches run compiled (:mod:`grid_envs.sokoban.compiled`, the default engine); the
  search classes here are the same searches in pure Python (``engine="python"``), which
  expand the same states in the same order and serve as their reference. In them board
  sets are Python integers used as bitboards (bit ``r * cols + c``): the player's region
  is a bit-parallel flood fill and all pushes in one direction come out of two shifts.
  This module keeps the plan either way: the portfolio and its turns, the packing order.
* Lower bound: a minimum-cost perfect matching of boxes to goals (Hungarian algorithm) on
  push distances that ignore other boxes. It is admissible and consistent (one push changes
  one box's distance by at most one), so ``optimal`` mode (A*) returns the fewest pushes.
  No finite matching means a bipartite deadlock and the state is dropped. A child's
  matching comes from its parent's: the pushed box's row gets its least reduced cost as
  potential, and where its matched goal is still tight the old matching stays optimal
  (O(n), which is most rematches: docs/sokoban-solver.md);
  otherwise one augmenting path restores it (O(n^2)).
* Deadlocks: dead squares (no goal reachable by pushing), freeze deadlocks (a box that can
  move along neither axis, 2x2 blocks included), bipartite deadlocks (above), and two-box
  deadlocks: a pair of boxes that could not both reach goals were they alone in the room
  with the player (a table worked out once a room, :mod:`grid_envs.sokoban.compiled.pairs`),
  and corral deadlocks: an area the player cannot reach whose fence of boxes, searched
  alone, can bring neither every fence box onto a goal nor the player in
  (:mod:`grid_envs.sokoban.compiled.fences`).
* PI-corral pruning (Junghanns and Schaeffer; used by YASS and JSoko): when the player cannot
  reach an area fenced by boxes whose only possible pushes go *into* that area, and the
  player can do all those pushes now, some of them must come first in every solution, and
  doing one first never costs a push; the search then tries only those pushes. If such a
  fenced area holds unsolved work but allows no push, the state is a deadlock. The checks are
  conservative: a push that a move elsewhere could enable voids the corral.

Modes: ``optimal`` (A*, fewest pushes) and ``fast`` (a portfolio of weighted best-first
searches on the same bound with the same pruning, interleaved, and two searches in
feature space after FESS with packing advice and goal macros: moves of many pushes that
fill the goal areas in a packing order worked out backwards along the routes the boxes
can come in by; one counts box moves, not pushes, as FESS does, the other pushes as well;
solutions need not be shortest; each technique can be left out, :data:`TECHNIQUES`; the
near-greedy search and the feature searches take two turns to the A*-like search's one;
after a few seconds the near-greedy search stops, and where feature searches run, the
A*-like one too). Both honour a time and a node limit and answer ``solved``,
``unsolvable`` (the space was exhausted; every pruning rule is sound) or ``gave_up`` (a
time, node or memory limit, or Ctrl-C). With ``threads`` above one the compiled searches
are dealt out to that many threads, each taking turns among its own: they release the GIL
while they expand states, so on as many free cores every search runs as often as in a
portfolio of its thread's size. How the searches take turns, on one thread or several, is
:mod:`grid_envs.sokoban.portfolio`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Collection
from functools import lru_cache
from typing import Any

import numpy as np

from grid_envs.core.machine import available_bytes
from grid_envs.sokoban import portfolio
from grid_envs.sokoban.compiled import CompiledSearch, Features, MemoryLimit, warm_up
from grid_envs.sokoban.compiled import Room as CompiledRoom
from grid_envs.sokoban.compiled.features import MAX_PUSHES
from grid_envs.sokoban.compiled.fences import (
    FENCE_BOXES,
    FENCE_STATES,
    RING_STATES,
    fence_scratch,
)
from grid_envs.sokoban.levels import check_level
from grid_envs.sokoban.matching import (  # noqa: F401 (the solver's public names)
    BIG,
    Matching,
    hungarian,
    rematch,
    rematch_after_push,
)
from grid_envs.sokoban.portfolio import SolveProgress, SolveResult
from grid_envs.sokoban.python_search import _FeatureSearch, _Search, each_order
from grid_envs.sokoban.rules import LURD, Room, bit_cells, frozen, solves
from grid_envs.sokoban.state import Level, SokobanState

MODES = ("optimal", "fast")
# ``fast`` mode interleaves best-first searches ordered by weight * h + g: a near-greedy one
# and a weighted A* one. Which weight cracks a level first varies wildly from level to
# level, so running two side by side is far steadier than betting on one; each search more
# in the portfolio costs every level its turns, so there are no more.
FAST_WEIGHTS = (8.0, 1.2)
# what the searches add to plain best-first search (pair- and corral-deadlocks: both
# modes; the rest: ``fast``), each of which can be left out
TECHNIQUES = (
    "feature-search", "second-feature-search", "goal-macros", "packing-advice", "box-moves",
    "box-routes", "matched-advice", "pair-deadlocks", "corral-deadlocks", "corral-rings",
)  # fmt: skip
# the weighted searches run compiled (the default) or in pure Python: the same states in
# the same order, the second kept to measure the first against and to check it
ENGINES = ("compiled", "python")


PROGRESS_EVERY = 5.0  # seconds between two progress reports of a long solve
LOST_KEPT = 1 << 16  # corral_lost's answers kept before the table starts again


def default_memory() -> int:
    """The memory a solve may take by default: a quarter of what the machine has free."""
    return available_bytes() // 4


# the 8 cells around a cell, clockwise from the one above: each is a side neighbour of the
# next, so free cells in a row of this ring are joined without the cell in the middle
_RING = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))


def _ring_joined(ring: int) -> bool | None:
    """For the free cells around a cell (bit k of ``ring`` for ``_RING[k]``): True when
    its free side neighbours (k even) all lie in one run of free cells round the ring,
    False when it has none, None when they lie in more than one (a flood must tell)."""
    free = [(ring >> k) & 1 for k in range(8)]
    sides = [k for k in (0, 2, 4, 6) if free[k]]
    if not sides:
        return False
    if all(free):
        return True
    start = free.index(0)  # runs read from a blocked cell on never wrap
    run, runs_with_side = 0, set()
    for i in range(1, 9):
        k = (start + i) % 8
        if not free[k]:
            run += 1
        elif k in sides:
            runs_with_side.add(run)
    return True if len(runs_with_side) == 1 else None


_RING_JOINED = [_ring_joined(ring) for ring in range(256)]


class Solver:
    """Push search on one room (floor and goals); solve any box layout and player in it."""

    def __init__(self, floor: np.ndarray, goals: np.ndarray) -> None:
        rows, cols = floor.shape
        self.rows, self.cols = rows, cols
        self.size = rows * cols
        self.offsets = (-cols, cols, -1, 1)  # up, down, left, right
        flat_floor = floor.ravel()
        self.floor_bb = _bits(np.flatnonzero(flat_floor))
        goal_cells = [int(i) for i in np.flatnonzero((goals & floor).ravel())]
        self.goal_cells = goal_cells
        self.goal_index = {g: k for k, g in enumerate(goal_cells)}
        self.goal_bb = _bits(goal_cells)
        self.is_floor = flat_floor.tolist()
        # dist[g][cell]: pushes that bring a lone box from cell to goal g (a pull search)
        self.dist = [self._pull_distances(g) for g in goal_cells]
        self.cost_row = [
            [self.dist[k][c] for k in range(len(goal_cells))] for c in range(self.size)
        ]
        nearest = [min(row) if row else BIG for row in self.cost_row]
        self.dead_bb = _bits(c for c in range(self.size) if self.is_floor[c] and nearest[c] >= BIG)
        self.room = Room(self.is_floor, self.dead_bb, cols, self.goal_bb)
        # pushes_at[b]: each push of a box on b whose player and target cells are floor,
        # as (direction, player cell's bit, target cell's bit)
        self.pushes_at = [
            [
                (d, 1 << (b - o), 1 << (b + o))
                for d, o in enumerate(self.offsets)
                if 0 <= b - o < self.size and 0 <= b + o < self.size
                and self.is_floor[b - o] and self.is_floor[b + o]
            ] if self.is_floor[b] else []
            for b in range(self.size)
        ]  # fmt: skip
        # ring[c]: the bits of the 8 cells around c, clockwise from the one above (0 off the
        # board), for :meth:`areas_after`
        self.ring = [
            [
                1 << ((r + dr) * cols + c + dc) if 0 <= r + dr < rows and 0 <= c + dc < cols else 0
                for dr, dc in _RING
            ]
            for r in range(rows)
            for c in range(cols)
        ]
        self._compiled_room: CompiledRoom | None = None
        self._lost: dict[tuple[int, int, int, int], bool] = {}  # corral_lost's answers
        # goal areas: the 4-connected groups of goals; area_of[goal] is its area's bitboard
        self.area_of: dict[int, int] = {}
        rest = self.goal_bb
        while rest:
            area = self._flood(rest & -rest, rest)
            for g in bit_cells(area):
                self.area_of[g] = area
            rest &= ~area

    # ----------------------------------------------------------- tables
    def _pull_distances(self, goal: int) -> list[int]:
        dist = [BIG] * self.size
        dist[goal] = 0
        queue = deque([goal])
        is_floor, offsets = self.is_floor, self.offsets
        while queue:
            c = queue.popleft()
            for o in offsets:
                b, p = c + o, c + 2 * o  # box pulled from c to b, puller steps on to p
                if 0 <= p < self.size and is_floor[b] and is_floor[p] and dist[b] == BIG:
                    dist[b] = dist[c] + 1
                    queue.append(b)
        return dist

    # ------------------------------------------------------- bitboards
    def _shift(self, x: int, d: int) -> int:
        if d == 0:
            return x >> self.cols
        if d == 1:
            return x << self.cols
        if d == 2:
            return x >> 1
        return x << 1

    def _flood(self, seed: int, free: int) -> int:
        cols = self.cols
        region = seed
        while True:
            grown = (
                region | (region << 1) | (region >> 1) | (region << cols) | (region >> cols)
            ) & free
            if grown == region:
                return region
            region = grown

    def _around(self, x: int) -> int:
        cols = self.cols
        return (x << 1) | (x >> 1) | (x << cols) | (x >> cols)

    # ------------------------------------------------------- deadlocks
    def lower_bound(self, boxes: int) -> int:
        """Matching lower bound on pushes; >= BIG when no assignment works (deadlock)."""
        return hungarian([self.cost_row[c] for c in bit_cells(boxes)])[0]

    def pair_deadlock(self, boxes: int, cell: int, player: int) -> bool:
        """After a move onto ``cell``, the player on ``player``: whether the box there and
        another of ``boxes`` could no longer both reach goals were they alone in the room
        (the room's table, :mod:`grid_envs.sokoban.compiled.pairs`)."""
        index, live = self.compiled_room().pairs
        if live.shape[0] == 0:
            return False
        i, p = index[cell], int(index[player])
        word, bit = p >> 6, np.uint64(p & 63)
        return any(not (live[i, index[c], word] >> bit) & 1 for c in bit_cells(boxes) if c != cell)

    def dead_pair(self, boxes: int, player: int) -> bool:
        """Whether any two of ``boxes`` are a dead pair, the player on ``player`` (a
        position the search starts from: its moves check only the moved box)."""
        return any(self.pair_deadlock(boxes, c, player) for c in bit_cells(boxes))

    def freeze_deadlock(self, boxes: int, cell: int) -> bool:
        """After a push onto ``cell``: a frozen box off its goal there or beside it."""
        goal_bb = self.goal_bb
        if not (goal_bb >> cell) & 1:
            return frozen(self.room, boxes, cell)
        if not frozen(self.room, boxes, cell):
            return False
        # the pushed box is frozen on a goal: a neighbour off goal may be frozen with it
        for o in (
            -self.cols,
            self.cols,
            -1,
            1,
            -self.cols - 1,
            -self.cols + 1,
            self.cols - 1,
            self.cols + 1,
        ):
            n = cell + o
            if (boxes >> n) & 1 and not (goal_bb >> n) & 1 and frozen(self.room, boxes, n):
                return True
        return False

    # ------------------------------------------------------- PI-corrals
    def corrals(self, reach: int, free: int) -> list[int]:
        """The areas of ``free`` floor off the player's area ``reach``, lowest cell first:
        what :meth:`_pi_corral` and :meth:`corrals_lost` test (worked out once a state)."""
        rest, comps = free & ~reach, []
        while rest:
            comp = self._flood(rest & -rest, rest)
            comps.append(comp)
            rest &= ~comp
        return comps

    def _pi_corral(self, boxes: int, reach: int, comps: list[int]) -> list[tuple[int, int]] | None:
        """Pushes of the smallest PI-corral among the areas ``comps`` (:meth:`corrals`);
        [] for a corral deadlock; None if none applies."""
        if not comps:
            return None
        best: list[tuple[int, int]] | None = None
        tried: set[int] = set()
        for comp in comps:
            pushes = self._corral_pushes(comp, comps, boxes, reach, tried)
            if pushes is not None and (best is None or len(pushes) < len(best)):
                best = pushes
                if not best:
                    return best  # deadlock: nothing can ever resolve this corral
        return best

    def _corral_pushes(
        self, area: int, comps: list[int], boxes: int, reach: int, tried: set[int]
    ) -> list[tuple[int, int]] | None:
        pushes_at, dead_bb = self.pushes_at, self.dead_bb
        outside = reach | boxes  # a player cell off these lies in another corral
        while True:
            if area in tried:
                return None
            tried.add(area)
            barrier = self._around(area) & boxes
            pushes: list[tuple[int, int]] = []
            grow = 0
            shut = area | barrier
            for b in bit_cells(barrier):
                for d, pb, tb in pushes_at[b]:
                    if shut & pb:
                        continue  # the player cannot stand there before the corral opens
                    if not outside & pb:
                        grow |= pb  # the player square lies in another corral: merge it
                        continue
                    if tb & boxes:
                        if tb & barrier:
                            continue  # blocked until the corral opens
                        return None  # an outside box may leave and free the way out
                    if tb & dead_bb:
                        continue
                    if tb & area:
                        if not pb & reach:
                            return None  # possible only after a move elsewhere
                        pushes.append((b, d))
                    elif tb & reach:
                        return None  # a push along the fence, not into the corral
                    else:
                        grow |= tb  # into another corral: merge it
            if grow:
                for comp in comps:
                    if comp & grow:
                        area |= comp
                continue
            unsolved = (barrier & ~self.goal_bb) or (area & self.goal_bb)
            return pushes if unsolved else None

    def corrals_lost(
        self, boxes: int, reach: int, comps: list[int], last: int = -1, rings: bool = True
    ) -> bool:
        """Whether one of the areas ``comps`` off the player's area ``reach``
        (:meth:`corrals`) is a lost corral (:meth:`corral_lost`), its fence alone or, with
        ``rings``, with the boxes beside it where the box on ``last`` (the state's own
        move's; -1: none) is among them (:mod:`grid_envs.sokoban.compiled.fences`)."""
        low = (reach & -reach).bit_length() - 1
        for area in comps:
            fence = self._around(area) & boxes
            if self.corral_lost(area, fence, low, FENCE_STATES):
                return True
            ring = fence | (self._around(fence) & boxes)
            if not rings or ring == fence or fence.bit_count() > FENCE_BOXES:
                continue
            if (last < 0 or (ring >> last) & 1) and self.corral_lost(
                area, ring, low, RING_STATES
            ):  # fmt: skip
                return True
        return False

    def corral_lost(self, area: int, fence: int, low: int, limit: int) -> bool:
        """Whether the corral ``area`` is lost: a search of the pushes of the boxes
        ``fence`` (those beside it, or more) alone, the player's area's lowest cell being
        ``low``, brings neither every one onto a goal nor the player in
        (:mod:`grid_envs.sokoban.compiled.fences` says why that is a proof, and is this
        search compiled). False where every one is on a goal, they are more than
        ``FENCE_BOXES``, or the search stops undecided after ``limit`` positions. Answers
        are kept (a bounded table)."""
        if not fence & ~self.goal_bb or fence.bit_count() > FENCE_BOXES:
            return False
        key = (fence, low, area, limit)
        answer = self._lost.get(key)
        if answer is None:
            if len(self._lost) >= LOST_KEPT:
                self._lost.clear()
            answer = self._fence_search(area, bit_cells(fence), low, limit)
            self._lost[key] = answer
        return answer

    def _fence_search(self, area: int, cells: list[int], low: int, limit: int) -> bool:
        """:meth:`corral_lost`'s breadth-first search over (the boxes' cells, the lowest
        cell of the player's area); True where it runs out of positions."""
        floor, goal_bb, dead_bb, offsets = self.floor_bb, self.goal_bb, self.dead_bb, self.offsets
        start = self._flood(1 << low, floor & ~_bits(cells))
        if start & area:
            return False
        positions = [(cells, (start & -start).bit_length() - 1)]
        seen = {(_bits(cells), positions[0][1])}
        head = 0
        while head < len(positions):
            cells, player = positions[head]
            head += 1
            bx = _bits(cells)
            free = floor & ~bx
            reach = self._flood(1 << player, free)
            for z, b in enumerate(cells):
                for o in offsets:
                    t = b + o
                    if not (reach >> (b - o)) & 1 or not (free >> t) & 1 or (dead_bb >> t) & 1:
                        continue
                    nb = bx ^ (1 << b) ^ (1 << t)
                    if not nb & ~goal_bb:
                        return False  # every fence box on a goal
                    if self.freeze_deadlock(nb, t):
                        continue
                    inner = self._flood(1 << b, floor & ~nb)
                    if inner & area:
                        return False  # the player gets in
                    key = (nb, (inner & -inner).bit_length() - 1)
                    if key in seen:
                        continue
                    if len(positions) == limit:
                        return False  # undecided
                    seen.add(key)
                    positions.append(([*cells[:z], t, *cells[z + 1 :]], key[1]))
        return True

    # ---------------------------------------------------------- features
    def areas(self, boxes: int) -> int:
        """How many separate areas the boxes cut the free floor into."""
        rest = self.floor_bb & ~boxes
        n = 0
        while rest:
            rest &= ~self._flood(rest & -rest, rest)
            n += 1
        return n

    def areas_after(self, boxes: int, reach: int, after: int, areas: int) -> int:
        """:meth:`areas` of ``after``, a layout where one box of ``boxes`` moved, when
        ``boxes`` cut the floor into ``areas`` areas and the player's area was ``reach``.

        Only the areas the move touches are counted again. Filling the cell the box reached
        cuts its area into as many pieces as the free cells beside it fall into: one when
        those are joined round the cell (no flood needed), none when there are none. The
        cell the box left then joins the areas beside it into one; those are known when
        they are the player's area or the pieces just counted, and a full count is made
        otherwise."""
        left, reached = boxes & ~after, after & ~boxes
        if not reached or reached & (reached - 1) or not left or left & (left - 1):
            return self.areas(after)  # not one box moved
        free = self.floor_bb & ~boxes
        rest = free & ~reached
        ring = 0
        for k, bit in enumerate(self.ring[reached.bit_length() - 1]):
            if free & bit:
                ring |= 1 << k
        joined = _RING_JOINED[ring]
        pieces: list[int] = []
        if joined is None:
            for cell in bit_cells(self._around(reached) & rest):
                if not any(piece >> cell & 1 for piece in pieces):
                    pieces.append(self._flood(1 << cell, rest))
            count = areas + len(pieces) - 1
        elif joined:
            count = areas
            pieces = [reach & ~reached] if reach & reached else []
        else:
            count = areas - 1
        # the areas of ``rest`` known whole: the pieces, and the player's area if untouched
        known = pieces if reach & reached else [reach, *pieces]
        beside = self._around(left) & rest
        if not beside:
            return count + 1  # walled in: an area of its own
        touched = 0
        for area in known:
            if area & beside:
                touched += 1
                beside &= ~area
        return count - touched + 1 if not beside else self.areas(after)

    def packing_order(self, player: int, boxes: int = 0, limit: int = 4000) -> list[int] | None:
        """An order to fill the goals in, worked out backwards (as goal-room packing in
        FESS and YASS does): from all goals filled, take out again and again the box that
        can be *pulled* off the goals in the fewest pulls, the other goal boxes in place.
        Filling the goals in the reverse order never walls a goal in. A box counts as out
        when it is back on a cell where one of ``boxes`` (the start's) stands off the goals
        and the player's area holds ``player``: the route a box really comes in by. Where
        no box gets that far (or ``boxes`` is 0), any cell off the goals on the player's
        side will do. None when at some point no box comes out (or the room is too large
        to try). A player on a goal (a level that starts so, or a game in progress just
        after a push into a goal room) would stand on a box in the pulls, which start with
        every goal filled: the cell of his area nearest him off the goals stands in."""
        player = self._off_goals(player, boxes)
        sources = boxes & ~self.goal_bb
        remaining = self.goal_bb
        removed: list[int] = []
        while remaining:
            best: tuple[int, int] | None = None
            for to in (sources, self.floor_bb) if sources else (self.floor_bb,):
                for b in bit_cells(remaining):
                    pulls = self._pull_out(b, remaining & ~(1 << b), player, to, limit)
                    if pulls is not None and (best is None or pulls < best[0]):
                        best = (pulls, b)
                if best is not None:
                    break
            if best is None:
                return None
            removed.append(best[1])
            remaining &= ~(1 << best[1])
        return removed[::-1]

    def _off_goals(self, player: int, boxes: int) -> int:
        """``player``'s cell, or where it is a goal the nearest cell off the goals that he
        can walk to past ``boxes`` (the lowest of the nearest; his own cell where there is
        none): his area grown a step at a time, as :meth:`_flood` grows it."""
        free, seen = self.floor_bb & ~boxes, 1 << player
        layer = seen
        while layer:
            off = layer & ~self.goal_bb
            if off:
                return (off & -off).bit_length() - 1
            layer = self._around(layer) & free & ~seen
            seen |= layer
        return player

    def _pull_out(self, box: int, others: int, player: int, to: int, limit: int) -> int | None:
        """The fewest pulls that take the box at ``box`` to a cell of ``to`` off the goals
        from which the player's area holds ``player``, with the boxes ``others`` fixed."""
        offsets, floor = self.offsets, self.floor_bb & ~others
        targets = to & ~self.goal_bb
        frontier = []
        seen: set[tuple[int, int]] = set()
        for o in offsets:
            p = box + o
            if (floor >> p) & 1:
                region = self._flood(1 << p, floor & ~(1 << box))
                key = (box, region & -region)
                if key not in seen:
                    seen.add(key)
                    frontier.append((box, region))
        pulls = 0
        while frontier and len(seen) < limit:
            pulls += 1
            following = []
            for x, region in frontier:
                for o in offsets:
                    p, q = x + o, x + 2 * o  # the player at p steps back to q, the box follows
                    if not (region >> p) & 1 or not (floor >> q) & 1:
                        continue
                    moved = self._flood(1 << q, floor & ~(1 << p))
                    if (targets >> p) & 1 and (moved >> player) & 1:
                        return pulls
                    key = (p, moved & -moved)
                    if key not in seen:
                        seen.add(key)
                        following.append((p, moved))
            frontier = following
        return None

    def area_orders(self, order: list[int]) -> dict[int, list[int]]:
        """The packing order split by goal area: each goal's cell -> its area's goals in
        the order they are filled."""
        by_area: dict[int, list[int]] = {}
        for goal in order:
            by_area.setdefault(self.area_of[goal], []).append(goal)
        return {g: by_area[self.area_of[g]] for g in order}

    def goal_macro(
        self, boxes: int, cell: int, player: int, orders: dict[int, list[int]]
    ) -> list[tuple[int, int]] | None:
        """A goal macro (Junghanns and Schaeffer's Rolling Stone; FESS and YASS pack goal
        rooms the same way): the box just pushed onto goal ``cell`` from outside its goal
        area goes on to the slot of that area the packing order fills next. Returns the
        pushes that take it there (the other boxes stay put), or None when that slot is
        ``cell`` itself or out of reach."""
        others = boxes & ~(1 << cell)
        target = next((g for g in orders[cell] if not (others >> g) & 1), cell)
        if target == cell:
            return None
        return self.push_path(cell, player, others, target)

    def fill_path(
        self, boxes: int, reach: int, target: int, keep: int = 0, tries: int = 3,
        first: int = -1,
    ) -> tuple[tuple[int, int], ...] | None:  # fmt: skip
        """The pushes, as (box cell, direction) pairs, that bring a box to the empty goal
        ``target`` with the other boxes fixed, the player's area being ``reach``: the
        ``tries`` boxes nearest to it in pushes (those on ``keep`` excepted) are tried in
        turn, the box on ``first`` (the one a matching gives the goal) before them wherever
        it stands among the candidates (off ``keep``, a goal within reach), as the compiled
        advice orders them. None when none of them gets there. FESS's packing advisor
        proposes such moves."""
        dist = self.dist[self.goal_index[target]]
        near = [
            c for _, c in sorted((dist[c], c) for c in bit_cells(boxes & ~keep) if dist[c] < BIG)
        ]
        if first in near:
            near.remove(first)
            near.insert(0, first)
        player = (reach & -reach).bit_length() - 1
        for box in near[:tries]:
            path = self.push_path(box, player, boxes & ~(1 << box), target)
            if path is not None:
                return tuple(path)
        return None

    def push_path(
        self, box: int, player: int, others: int, target: int, limit: int = 2000
    ) -> list[tuple[int, int]] | None:
        """The fewest pushes, as (box cell, direction) pairs, that take one box from
        ``box`` to ``target`` with the player starting at ``player`` and the boxes
        ``others`` fixed; None when none is found within ``limit`` states (or only one of
        more than ``MAX_PUSHES``, the bound the compiled search keeps too)."""
        offsets, floor = self.offsets, self.floor_bb & ~others
        region = self._flood(1 << player, floor & ~(1 << box))
        start = (box, region & -region)
        back: dict[tuple[int, int], tuple[tuple[int, int], int, int] | None] = {start: None}
        frontier = [(box, region)]
        while frontier and len(back) < limit:
            following = []
            for x, region in frontier:
                here = (x, region & -region)
                for d in range(4):
                    p, q = x - offsets[d], x + offsets[d]
                    if not (region >> p) & 1 or not (floor >> q) & 1:
                        continue
                    moved = self._flood(1 << x, floor & ~(1 << q))
                    key = (q, moved & -moved)
                    if key in back:
                        continue
                    back[key] = (here, x, d)
                    if q == target:
                        pushes = []
                        link = back[key]
                        while link is not None:
                            pushes.append((link[1], link[2]))
                            link = back[link[0]]
                        return pushes[::-1] if len(pushes) <= MAX_PUSHES else None
                    following.append((q, moved))
            frontier = following
        return None

    # ----------------------------------------------------------- search
    def solve(
        self,
        boxes: int,
        player: int,
        mode: str = "fast",
        max_seconds: float | None = 10.0,
        node_limit: int | None = None,
        without: Collection[str] = (),
        engine: str = "compiled",
        memory: int | None = None,
        progress: Callable[[SolveProgress], None] | None = None,
        progress_every: float | None = None,
        threads: int = 1,
    ) -> SolveResult:
        """Solve from this box layout and player cell. ``without`` names techniques of
        ``fast`` mode to leave out (:data:`TECHNIQUES`), to measure what each buys.
        ``engine`` runs the weighted searches compiled or in pure Python (the same states
        in the same order); ``memory`` bounds the compiled searches' tables in bytes
        (default :func:`default_memory`): a search that would pass it gives up with the
        reason "memory limit". ``progress`` is called every ``progress_every`` seconds
        (default :data:`PROGRESS_EVERY`) with a :class:`SolveProgress`. Ctrl-C
        (KeyboardInterrupt) ends the search with what it knows: ``gave_up`` for the reason
        "interrupted". ``threads`` runs the compiled searches on that many threads (one
        corral table each): a solve with one expands the same states on every run (under a
        node limit), with more which search finishes first depends on timing."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        unknown = sorted(set(without) - set(TECHNIQUES))
        if unknown:
            raise ValueError(f"unknown techniques {unknown}; known: {', '.join(TECHNIQUES)}")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a whole number of at least 1, got {threads!r}")
        threads = threads if engine == "compiled" else 1  # Python searches hold the GIL
        # before the clock starts: a time limit measures the search (the Python engine
        # reads the room's compiled tables too: the two-box deadlocks)
        warm_up()
        start = time.perf_counter()
        deadline = start + max_seconds if max_seconds is not None else float("inf")
        if boxes & self.goal_bb == self.goal_bb:
            return SolveResult("solved", "", 0, 0, 0, 0, 0.0, mode)
        h0 = self.lower_bound(boxes)
        pairs = "pair-deadlocks" not in without
        if h0 >= BIG or boxes & self.dead_bb or (pairs and self.dead_pair(boxes, player)):
            return SolveResult("unsolvable", "", 0, 0, 0, 1, time.perf_counter() - start, mode)
        limit = memory if memory is not None else default_memory()
        try:
            searches = self._searches(boxes, player, h0, mode, without, engine, limit, threads)
        except MemoryLimit:
            return self._gave_up(portfolio.memory_reason(limit), mode, 0, 0, start)
        every = PROGRESS_EVERY if progress_every is None else progress_every
        return self._portfolio(
            searches, boxes, player, mode, portfolio.Race(searches, start, deadline, node_limit),
            limit, progress, every, threads,
        )  # fmt: skip

    def _searches(
        self, boxes: int, player: int, h0: int, mode: str, without: Collection[str],
        engine: str, memory: int, threads: int = 1,
    ) -> list[_Search | CompiledSearch]:  # fmt: skip
        """The searches of a mode: the weighted ones, then (``fast``) the feature searches,
        compiled or in pure Python; the compiled ones share ``memory`` bytes. Of the two
        feature searches the first counts box moves, the second pushes as well: which
        solves a level first differs from level to level, as with the weights."""
        weights = FAST_WEIGHTS if mode == "fast" else (1.0,)
        starts = 0 if "box-routes" in without else boxes
        order = self.packing_order(player, starts) if mode == "fast" else None
        areas = self.area_orders(order) if order is not None else None
        # goal macros and packing advice in the feature search only: in the weighted
        # searches macros only widened the tree (Microban 111: twice the states)
        macros = None if "goal-macros" in without else areas
        fill = None if "packing-advice" in without else areas
        pairs = "pair-deadlocks" not in without
        fences = "corral-deadlocks" not in without
        rings = "corral-rings" not in without
        box_moves = "box-moves" not in without
        matched = "matched-advice" not in without
        # the feature searches, by whether they count pushes as well as box moves
        counts: tuple[bool, ...] = ()
        if areas is not None and "feature-search" not in without:
            counts = (False,) if "second-feature-search" in without else (False, True)
        packing = areas or {}
        if engine == "python":
            searches: list[_Search | CompiledSearch] = [
                _Search(self, boxes, player, h0, w, pairs=pairs, fences=fences, rings=rings)
                for w in weights
            ]
            # last: where the others solve a level as fast, theirs is shorter
            searches += [
                _FeatureSearch(
                    self, boxes, player, h0, packing, macros, fill, pairs, box_moves, fences, p,
                    matched, rings,
                )
                for p in counts
            ]  # fmt: skip
            return searches
        # the searches of a thread share a corral table; the memory bound counts them all
        on = portfolio.thread_of([False] * len(weights) + [True] * len(counts), threads)
        tables = [fence_scratch(self.size, fences, rings, memory) for _ in set(on)]
        left, room = [memory - sum(x.nbytes for x in tables)], self.compiled_room()
        cells, n = bit_cells(boxes), len(weights)
        searches = [
            CompiledSearch(room, cells, player, w, left, pairs=pairs, fences=tables[on[k]])
            for k, w in enumerate(weights)
        ]
        searches += [
            CompiledSearch(
                room, cells, player, 1.0, left, pairs=pairs, fences=tables[on[n + k]],
                features=Features(
                    each_order(packing), macros is not None, fill is not None, box_moves, p,
                    matched,
                ),
            )
            for k, p in enumerate(counts)
        ]  # fmt: skip
        return searches

    def _portfolio(
        self, searches: list[_Search | CompiledSearch], boxes: int, player: int, mode: str,
        race: portfolio.Race, memory: int, progress: Callable[[SolveProgress], None] | None,
        every: float, threads: int,
    ) -> SolveResult:  # fmt: skip
        """Run the searches in turns, on one thread or dealt out to ``threads``
        (:func:`~grid_envs.sokoban.portfolio.thread_of`), until one solves the level or
        proves it unsolvable, or a limit (time, nodes, memory, Ctrl-C) ends the solve."""
        shown = [race.start]

        def tick() -> None:
            now = time.perf_counter()
            if progress is not None and now - shown[0] >= every:
                shown[0] = now
                progress(portfolio.progress_of(searches, now - race.start, len(self.goal_cells)))

        dealt = portfolio.thread_of([search.feature > 0 for search in searches], threads)
        groups = [[x for x, t in zip(searches, dealt, strict=True) if t == k] for k in set(dealt)]
        try:
            if len(groups) == 1:
                portfolio.take_turns(searches, race, tick)
            else:
                portfolio.in_threads(groups, race, tick)
        except KeyboardInterrupt:
            race.end("interrupted")
        expanded = sum(x.expanded for x in searches)
        generated = sum(x.generated for x in searches)
        ended: tuple[str, Any] = race.outcome or ("interrupted", None)
        kind, search = ended
        if kind == "solved":
            pushes = search.pushes()
            return self._finish(boxes, player, pushes, mode, expanded, generated, race.start)
        if kind == "exhausted":  # every pruning rule is sound: no solution
            elapsed = time.perf_counter() - race.start
            return SolveResult("unsolvable", "", 0, 0, expanded, generated, elapsed, mode)
        why = portfolio.memory_reason(memory) if kind == "memory limit" else kind
        return self._gave_up(why, mode, expanded, generated, race.start)

    def compiled_room(self) -> CompiledRoom:
        """The room's tables as the compiled search reads them (made once)."""
        if self._compiled_room is None:
            dead = np.array([(self.dead_bb >> c) & 1 for c in range(self.size)], bool)
            floor = np.array(self.is_floor, bool).reshape(self.rows, self.cols)
            self._compiled_room = CompiledRoom(
                floor, dead.reshape(self.rows, self.cols), self.goal_cells, self.cost_row
            )
        return self._compiled_room

    def _gave_up(
        self, why: str, mode: str, expanded: int, generated: int, start: float
    ) -> SolveResult:
        return SolveResult(
            "gave_up", "", 0, 0, expanded, generated, time.perf_counter() - start, mode, why
        )

    def _finish(
        self,
        boxes: int,
        player: int,
        pushes: list[tuple[int, int]],
        mode: str,
        expanded: int,
        generated: int,
        start: float,
    ) -> SolveResult:
        lurd = self.pushes_to_lurd(boxes, player, pushes)
        return SolveResult(
            "solved", lurd, len(pushes), len(lurd), expanded, generated,
            time.perf_counter() - start, mode,
        )  # fmt: skip

    def pushes_to_lurd(self, boxes: int, player: int, pushes: list[tuple[int, int]]) -> str:
        """Expand a push list into LURD with the walks in between (shortest walks)."""
        out: list[str] = []
        offsets, is_floor = self.offsets, self.is_floor
        for b, d in pushes:
            goal = b - offsets[d]
            prev = {player: -1}
            queue = deque([player])
            while queue and goal not in prev:
                c = queue.popleft()
                for k in range(4):
                    n = c + offsets[k]
                    if n not in prev and is_floor[n] and not (boxes >> n) & 1:
                        prev[n] = k
                        queue.append(n)
            if goal not in prev:
                raise RuntimeError("internal error: a planned push is out of the player's reach")
            walk = []
            c = goal
            while prev[c] != -1:
                walk.append(LURD[prev[c]])
                c -= offsets[prev[c]]
            out.extend(reversed(walk))
            out.append(LURD[d].upper())
            boxes ^= (1 << b) | (1 << (b + offsets[d]))
            player = b
        return "".join(out)


# how a search state was reached: (parent boxes, parent player, the pushes as (box cell, direction))
def _bits(cells: object) -> int:
    x = 0
    for c in cells:  # type: ignore[attr-defined]
        x |= 1 << int(c)
    return x


@lru_cache(maxsize=64)
def _solver_for(shape: tuple[int, int], floor: bytes, goals: bytes) -> Solver:
    f = np.frombuffer(floor, dtype=bool).reshape(shape)
    g = np.frombuffer(goals, dtype=bool).reshape(shape)
    return Solver(f, g)


def solver_for(floor: np.ndarray, goals: np.ndarray) -> Solver:
    """A (cached) solver for a room: levels replayed many times share their tables."""
    return _solver_for(floor.shape, floor.tobytes(), goals.tobytes())


def solve(
    level: Level | SokobanState,
    mode: str = "fast",
    max_seconds: float | None = 10.0,
    node_limit: int | None = None,
    without: Collection[str] = (),
    engine: str = "compiled",
    memory: int | None = None,
    progress: Callable[[SolveProgress], None] | None = None,
    progress_every: float | None = None,
    threads: int = 1,
) -> SolveResult:
    """Solve a level (or a game in progress) and return the LURD solution and statistics.

    ``without`` leaves techniques of ``fast`` mode out (:data:`TECHNIQUES`); ``engine``,
    ``memory``, ``progress`` and ``threads`` as :meth:`Solver.solve` takes them. The level passes
    Sokoban's gate first (:func:`~grid_envs.sokoban.levels.check_level`: the compiled
    search trusts a room walled in), a ``ValueError`` naming what is wrong otherwise. A
    solution is played through the rules from the level before it is returned: one that
    does not solve it raises ``RuntimeError`` (the search has a bug) instead of reaching
    the caller."""
    if isinstance(level, SokobanState):
        game = Level(~level.floor, level.floor, level.goals, level.boxes, level.player)
        check_level(game, "the game", solved_ok=True)
    else:
        check_level(level, solved_ok=True)
    floor, goals = level.floor, level.goals
    solver = solver_for(floor, goals)
    cols = floor.shape[1]
    boxes = _bits(np.flatnonzero((level.boxes & floor).ravel()))
    player = level.player[0] * cols + level.player[1]
    result = solver.solve(
        boxes, player, mode=mode, max_seconds=max_seconds, node_limit=node_limit,
        without=without, engine=engine, memory=memory, progress=progress,
        progress_every=progress_every, threads=threads,
    )  # fmt: skip
    if result.solved and not solves(level, result.solution):
        raise RuntimeError(
            f"the {result.mode} search's answer ({result.pushes} pushes) does not solve the "
            "level: a bug in the solver"
        )
    return result


def _cap(solver: Solver) -> int:
    """A finite stand-in for 'no solution': more than any solvable position needs."""
    finite = [d for row in solver.dist for d in row if d < BIG]
    return len(solver.goal_cells) * (max(finite, default=0) + 1)


def matching_potential(state: SokobanState) -> float:
    """Shaping potential: minus the matching lower bound on the pushes still needed.

    A deadlocked position (no finite matching) gets minus a cap larger than any bound.
    """
    solver = solver_for(state.floor, state.goals)
    bound = solver.lower_bound(_bits(np.flatnonzero((state.boxes & state.floor).ravel())))
    return -float(min(bound, _cap(solver)))


@lru_cache(maxsize=100_000)
def _optimal_pushes(
    shape: tuple[int, int], floor: bytes, goals: bytes, boxes: bytes, player: int
) -> int | None:
    solver = _solver_for(shape, floor, goals)
    b = _bits(np.flatnonzero(np.frombuffer(boxes, dtype=bool)))
    r = solver.solve(b, player, mode="optimal", max_seconds=0.5)
    if r.solved:
        return r.pushes
    if r.status == "unsolvable":
        return _cap(solver)
    return None


def solver_potential(state: SokobanState) -> float:
    """Shaping potential: minus the optimal number of pushes left (small levels).

    Exact when the optimal search finishes within its time budget (results are cached);
    otherwise the matching lower bound stands in.
    """
    cols = state.floor.shape[1]
    pushes = _optimal_pushes(
        state.floor.shape, state.floor.tobytes(), state.goals.tobytes(),
        (state.boxes & state.floor).tobytes(), state.player[0] * cols + state.player[1],
    )  # fmt: skip
    return -float(pushes) if pushes is not None else matching_potential(state)
