"""The solver's searches in pure Python: the reference the compiled ones are held to.

:class:`_Search` is one best-first search over pushes; :class:`_FeatureSearch` the search
in feature space after FESS. They expand the same states in the same order as
:mod:`grid_envs.sokoban.compiled` (tested state for state), which the solver runs by
default; ``solve(..., engine="python")`` runs these.
"""

from __future__ import annotations

import bisect
import heapq
from typing import Protocol

from grid_envs.sokoban.matching import BIG, Matching, hungarian, rematch, rematch_after_push
from grid_envs.sokoban.rules import bit_cells


class Solver(Protocol):
    """What these searches read of :class:`grid_envs.sokoban.solver.Solver`, which builds
    them (named here, not imported: the solver imports this module). Bitboards are ints,
    a bit a cell."""

    offsets: tuple[int, int, int, int]  # a cell's step up, down, left and right
    floor_bb: int
    goal_bb: int
    dead_bb: int
    cost_row: list[list[int]]  # cost_row[cell][goal]: the pushes from cell to goal
    area_of: dict[int, int]  # a goal's area, by its cell
    goal_index: dict[int, int]  # a goal's column in the matching, by its cell

    def _shift(self, x: int, d: int) -> int: ...

    def _flood(self, seed: int, free: int) -> int: ...
    def _around(self, x: int) -> int: ...

    def corrals(self, reach: int, free: int) -> list[int]: ...

    def _pi_corral(
        self, boxes: int, reach: int, comps: list[int]
    ) -> list[tuple[int, int]] | None: ...

    def corrals_lost(
        self, boxes: int, reach: int, comps: list[int], last: int = -1, rings: bool = True
    ) -> bool: ...

    def freeze_deadlock(self, boxes: int, cell: int) -> bool: ...

    def pair_deadlock(self, boxes: int, cell: int, player: int) -> bool: ...

    def goal_macro(
        self, boxes: int, cell: int, player: int, orders: dict[int, list[int]]
    ) -> list[tuple[int, int]] | None: ...

    def fill_path(
        self, boxes: int, reach: int, target: int, keep: int = 0, tries: int = 3,
        first: int = -1,
    ) -> tuple[tuple[int, int], ...] | None: ...  # fmt: skip

    def areas(self, boxes: int) -> int: ...

    def areas_after(self, boxes: int, reach: int, after: int, areas: int) -> int: ...


_Link = tuple[int, int, tuple[tuple[int, int], ...]]


def weight_key(weight: float) -> int:
    """A weighted search's weight in tenths, the integer both engines rank states by
    (``weight_key * h + 10 * g``): a float ``weight * h + g`` ranks two states of equal
    priority by their rounding (1.2 times one bound plus its cost may come out a hair
    above 1.2 times another plus its own), and the two engines would part ways there.
    Weights are kept to a tenth; any other is refused."""
    key = round(weight * 10)
    if key <= 0 or abs(key - weight * 10) > 1e-9:
        raise ValueError(f"a search's weight is kept to a tenth, got {weight!r}")
    return key


class _Search:
    """One best-first search over pushes, ordered by ``weight * h + g`` (weight 1: A*).

    :meth:`run` expands a slice of states and returns ``"open"``, ``"solved"`` (the goal
    state is in ``found``) or ``"exhausted"``; the solver interleaves several of these.
    With ``orders`` (:meth:`Solver.area_orders`) a push into a goal area also yields a
    goal macro (:meth:`Solver.goal_macro`) where one applies: one step of several pushes.
    With ``fill`` (area orders too) each state also yields the moves of the packing
    advice (:meth:`_macros`). ``pairs`` prunes the two-box deadlocks
    (:meth:`Solver.pair_deadlock`), ``fences`` the lost corrals (:meth:`Solver.corrals_lost`,
    with ``rings`` a fence searched again with the boxes beside it): a state with one gets
    no move at all.
    """

    feature = 0  # not the feature search (the solver's turns tell them apart)
    matched = False  # the advice's matched box first (the feature search's)
    # the cell (minus the goals packed in order, the areas) and cost of the state being
    # expanded: the feature search's; a weighted search packs nothing
    current: tuple[tuple[int, int], int] = ((0, 0), 0)

    def __init__(
        self,
        solver: Solver,
        boxes: int,
        player: int,
        h0: int,
        weight: float,
        orders: dict[int, list[int]] | None = None,
        fill: dict[int, list[int]] | None = None,
        pairs: bool = True,
        fences: bool = True,
        rings: bool = True,
    ) -> None:
        self.s = solver
        area = solver._flood(1 << player, solver.floor_bb & ~boxes)
        player = (area & -area).bit_length() - 1  # a state names its area by the lowest cell
        self.weight = weight
        self.wkey = weight_key(weight)
        self.pairs = pairs
        self.fences = fences
        self.rings = rings
        self.orders = orders
        self.fill = _prefixes(fill or {})
        self.parent: dict[tuple[int, int], _Link | None] = {(boxes, player): None}
        self.best_g = {(boxes, player): 0}
        # the optimal box-goal matching of each open state (and the box order it was
        # built in), reused by its children
        self.matchings: dict[tuple[int, int], tuple[list[int], Matching, int]] = {}
        self.closed: set[tuple[int, int]] = set()
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.generated = 0
        self.expanded = 0
        self.found: tuple[int, int] | None = None
        self.best_bound = h0  # the least bound of any state expanded
        self.best_packed = 0  # the most goals packed in order of any state expanded
        self.expanding: tuple[int, int] | None = None  # boxes and player's area of the state
        self._add(h0, 0, boxes, player)

    def release(self) -> None:
        """Drop the search's tables: the solver calls this when the search stops for good
        (the near-greedy one after its first seconds), so that its memory goes to the
        searches still running. Its counts stay."""
        self.parent.clear()
        self.best_g.clear()
        self.matchings.clear()
        self.closed.clear()
        self.heap.clear()

    def _macros(
        self, boxes: int, reach: int, cells: list[int], match: list[int]
    ) -> list[tuple[tuple[int, int], ...]]:
        """For each goal area, the push sequence that fills its next goal in the packing
        order, where a box can get there (:meth:`Solver.fill_path`); with ``matched`` the
        box the state's matching (``match`` over ``cells``) gives that goal is tried first."""
        paths: list[tuple[tuple[int, int], ...]] = []
        index = self.s.goal_index
        for prefixes in self.fill:
            done = _filled(prefixes, boxes)
            if done == len(prefixes):
                continue
            packed = prefixes[done - 1] if done else 0
            goal = (prefixes[done] & ~packed).bit_length() - 1
            first = cells[match[index[goal] + 1] - 1] if self.matched else -1
            path = self.s.fill_path(boxes, reach, goal, keep=packed, first=first)
            if path is not None:
                paths.append(path)
        return paths

    def pushes(self) -> list[tuple[int, int]]:
        """The pushes (box cell, direction) from the start to the solved state."""
        pushes: list[tuple[int, int]] = []
        key = self.found
        assert key is not None
        link = self.parent[key]
        while link is not None:
            pushes.extend(reversed(link[2]))
            link = self.parent[(link[0], link[1])]
        return pushes[::-1]

    def _lowest(
        self, boxes: int, reach: int, low: int, pushes: tuple[tuple[int, int], ...], player: int
    ) -> int:
        """The lowest cell of the player's area in a child (``boxes``), the name of its
        area in the search's tables, so that positions that differ only in where the player
        stands within one area are one state from the moment they are generated. After one
        push that leaves the parent's area (``reach``, lowest cell ``low``) whole, where
        the cell the box left touches no other area, it is that area plus that cell;
        otherwise a flood."""
        s = self.s
        free = s.floor_bb & ~boxes
        if len(pushes) == 1:
            b, d = pushes[0]
            t = b + s.offsets[d]
            if not (reach >> t) & 1 and not s._around(1 << b) & free & ~reach:
                return min(low, b)
        area = s._flood(1 << player, free)
        return (area & -area).bit_length() - 1

    def _last(self, boxes: int, player: int) -> int:
        """The cell where the move that reached this state left its box; -1 at the start."""
        link = self.parent[(boxes, player)]
        if link is None:
            return -1
        box, d = link[2][-1]
        return box + self.s.offsets[d]

    # the queue: the one thing the searches of the portfolio do differently
    def _add(self, h: int, g: int, boxes: int, player: int) -> None:
        heapq.heappush(self.heap, (self.wkey * h + 10 * g, -g, self.generated, boxes, player))

    def _next(self) -> tuple[int, int, int] | None:
        """(g, boxes, player) of the next state to expand; None when none is left."""
        if not self.heap:
            return None
        _, neg_g, _, boxes, player = heapq.heappop(self.heap)
        return -neg_g, boxes, player

    def run(self, budget: int) -> str:
        s = self.s
        offsets, floor_bb, goal_bb, dead_bb = s.offsets, s.floor_bb, s.goal_bb, s.dead_bb
        parent, best_g, closed, matchings = self.parent, self.best_g, self.closed, self.matchings
        orders, area_of = self.orders, s.area_of
        stop = self.expanded + budget
        while True:
            if self.expanded >= stop:
                return "open"
            picked = self._next()
            if picked is None:
                return "exhausted"
            g, bx, pl = picked  # pl: the lowest cell of the player's area
            if best_g.get((bx, pl), g) < g or (bx, pl) in closed:
                continue
            free = floor_bb & ~bx
            reach = s._flood(1 << pl, free)
            closed.add((bx, pl))
            self.expanding = (bx, reach)
            self.expanded += 1
            self.best_packed = max(self.best_packed, -self.current[0][0])
            corrals = s.corrals(reach, free)
            restricted = s._pi_corral(bx, reach, corrals)
            if restricted != [] and self.fences and s.corrals_lost(
                bx, reach, corrals, self._last(bx, pl), self.rings
            ):  # fmt: skip
                restricted = []
            if restricted is not None:
                paths: list[tuple[tuple[int, int], ...]] = [((b, d),) for b, d in restricted]
            else:
                paths = []
                for d in range(4):
                    movers = s._shift(reach, d) & bx
                    targets = s._shift(movers, d) & free & ~dead_bb
                    for t in bit_cells(targets):
                        paths.append(((t - offsets[d], d),))
            stored = matchings.pop((bx, pl), None)
            if stored is None:
                cells = bit_cells(bx)
                rows = [s.cost_row[c] for c in cells]
                h_here, u, v, match = hungarian(rows)
                parent_match: Matching = (u, v, match)
            else:
                cells, parent_match, h_here = stored
                rows = [s.cost_row[c] for c in cells]
            self.best_bound = min(self.best_bound, h_here)
            if orders:  # goal macros, besides the pushes themselves (the search stays complete)
                for ((b, d),) in paths[:]:
                    t = b + offsets[d]
                    if (goal_bb >> t) & 1 and not (area_of[t] >> b) & 1:
                        macro = s.goal_macro(bx ^ (1 << b) ^ (1 << t), t, b, orders)
                        if macro is not None:
                            paths.append(((b, d), *macro))
            if paths:  # a state with no push (a lost corral) gets no advice either
                paths += self._macros(bx, reach, cells, parent_match[2])
            for pushes in paths:
                b, d = pushes[0]
                last, last_d = pushes[-1]
                t = last + offsets[last_d]
                nb = bx ^ (1 << b) ^ (1 << t)
                player = last
                child = (nb, self._lowest(nb, reach, pl, pushes, player))
                child_g = g + len(pushes)
                if child in parent and best_g.get(child, 1 << 60) <= child_g:
                    continue
                if nb & goal_bb == goal_bb:
                    parent[child] = (bx, pl, pushes)
                    self.found = child
                    return "solved"
                if s.freeze_deadlock(nb, t) or (self.pairs and s.pair_deadlock(nb, t, player)):
                    continue
                k = cells.index(b)
                child_rows = rows[:]
                child_rows[k] = s.cost_row[t]
                if len(pushes) == 1:
                    h, child_match = rematch_after_push(
                        child_rows, parent_match, k, rows[k], h_here
                    )
                else:
                    h, child_match = rematch(child_rows, parent_match, k)
                if h >= BIG:
                    continue
                child_cells = cells[:]
                child_cells[k] = t
                matchings[child] = (child_cells, child_match, h)
                parent[child] = (bx, pl, pushes)
                best_g[child] = child_g
                self.generated += 1
                self._add(h, child_g, nb, child[1])


class _FeatureSearch(_Search):
    """A search in feature space, after FESS (Shoham and Schaeffer 2020): states are filed
    in cells by two features, *packing* (how far the goal areas are filled in the packing
    order, :meth:`Solver.packing_order`) and *connectivity* (how many areas the boxes cut
    the floor into), and the search takes its next state from each non-empty cell in
    turn. A push that packs a box or joins two areas is advised and costs nothing, any
    other push costs one; in each cell the state reached at the lowest cost comes first
    (then the lowest matching bound), so advised lines are followed deep at once while
    cycling through the cells keeps other directions alive where one best-first queue
    sinks into a plateau. With ``box_moves`` the search counts box moves, as FESS does,
    not pushes: a push of the box the state's own move pushed goes on with that move and
    costs nothing, so a box taken several cells out of the way costs what one push does.
    With ``pushes`` it counts pushes as well: a push that is not advised costs one more
    (one for the box the state's own move pushed, two for another), so a box taken ``k``
    cells costs ``k + 1``."""

    feature = 1

    def __init__(
        self,
        solver: Solver,
        boxes: int,
        player: int,
        h0: int,
        packing: dict[int, list[int]],
        orders: dict[int, list[int]] | None = None,
        fill: dict[int, list[int]] | None = None,
        pairs: bool = True,
        box_moves: bool = True,
        fences: bool = True,
        pushes: bool = False,
        matched: bool = True,
        rings: bool = True,
    ) -> None:
        self.prefixes = _prefixes(packing)
        self.matched = matched
        self.box_moves = box_moves
        self.count_pushes = pushes
        self.moved = -1  # the cell where the expanding state's move left its box
        self.cells: dict[tuple[int, int], list[tuple[int, int, int, int, int, int]]] = {}
        self.keys: list[tuple[int, int]] = []  # the non-empty cells' keys, best first
        self.turn = 0
        self.s = solver
        self.expanding = None
        # the features and cost of the state being expanded, passed on to its children
        self.current = (self.features(boxes), 0)
        super().__init__(solver, boxes, player, h0, 1.0, orders, fill, pairs, fences, rings)

    def features(self, boxes: int) -> tuple[int, int]:
        """(minus the goals packed in order, the areas): the key of the state's cell. A
        child's areas come from its parent's (:meth:`Solver.areas_after`)."""
        packed = sum(_filled(prefixes, boxes) for prefixes in self.prefixes)
        if self.expanding is None:
            return -packed, self.s.areas(boxes)
        parent, reach = self.expanding
        return -packed, self.s.areas_after(parent, reach, boxes, self.current[0][1])

    def _add(self, h: int, g: int, boxes: int, player: int) -> None:
        key = self.features(boxes)
        (packed, areas), cost = self.current
        if not (key[0] < packed or key[1] < areas):  # not advised: neither packs nor joins
            same_box = self.moved >= 0 and not (boxes >> self.moved) & 1
            cost += (not same_box) + self.count_pushes
        cell = self.cells.get(key)
        if cell is None:
            cell = self.cells[key] = []
            bisect.insort(self.keys, key)
        heapq.heappush(cell, (cost, h, -g, -self.generated, boxes, player))

    def _next(self) -> tuple[int, int, int] | None:
        if not self.keys:
            return None
        self.turn %= len(self.keys)
        key = self.keys[self.turn]
        cell = self.cells[key]
        cost, _, neg_g, _, boxes, player = heapq.heappop(cell)
        if cell:
            self.turn += 1
        else:
            del self.cells[key]
            del self.keys[self.turn]
        self.current = (key, cost)
        self.moved = self._last(boxes, player) if self.box_moves else -1
        return -neg_g, boxes, player


def each_order(orders: dict[int, list[int]]) -> list[list[int]]:
    """Each goal area's packing order once, from :meth:`Solver.area_orders` (which gives
    every goal its area's order, one list an area)."""
    return list({id(goals): goals for goals in orders.values()}.values())


def _prefixes(orders: dict[int, list[int]]) -> list[list[int]]:
    """Per goal area, the goals filled after 1, 2, ... steps of its packing order."""
    out = []
    for goals in each_order(orders):
        filled, prefixes = 0, []
        for goal in goals:
            filled |= 1 << goal
            prefixes.append(filled)
        out.append(prefixes)
    return out


def _filled(prefixes: list[int], boxes: int) -> int:
    """How many goals of an area (its :func:`_prefixes`) ``boxes`` fill in packing order."""
    done = 0
    while done < len(prefixes) and boxes & prefixes[done] == prefixes[done]:
        done += 1
    return done
