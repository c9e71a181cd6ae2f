"""The compiled push search as the solver drives it: a room's tables, and one search whose
states live in numpy arrays that grow on demand within a memory bound."""

from __future__ import annotations

import math
import threading
import time
from functools import cached_property
from typing import NamedTuple

import numpy as np

from grid_envs.sokoban.compiled.areas import tree_scratch
from grid_envs.sokoban.compiled.features import MAX_PUSHES, new_cells, path_scratch
from grid_envs.sokoban.compiled.fences import fence_work
from grid_envs.sokoban.compiled.loop import (
    BEST_H,
    BEST_PACKED,
    EXHAUSTED,
    EXPANDED,
    FOUND,
    FULL,
    FULL_EXPANDED,
    GENERATED,
    N_COUNTERS,
    N_HEAP,
    ROW_MASK,
    SOLVED,
    queue_root_in_cell,
    retable,
    run,
    start,
)
from grid_envs.sokoban.compiled.matching import BIG
from grid_envs.sokoban.compiled.pairs import pair_table
from grid_envs.sokoban.compiled.pruning import corral_scratch, flood
from grid_envs.sokoban.compiled.queue import N_BUCKETS, N_KEPT, reindex
from grid_envs.sokoban.python_search import weight_key

# the most floor cells a room's table of two-box deadlocks is worked out for: its size and
# time grow as the cube of the cells (n^3 / 8 bytes: 8 MB for 400)
PAIR_CELLS = 400


class MemoryLimit(Exception):
    """A search's arrays would pass the memory the caller allowed."""


class Room:
    """A room's tables as the compiled search reads them (flat row-major cells)."""

    def __init__(self, floor: np.ndarray, dead: np.ndarray, goal_cells: list[int],
                 cost_row: list[list[int]]) -> None:  # fmt: skip
        rows, cols = floor.shape
        size = rows * cols
        self.cols = cols
        self.floor = np.ascontiguousarray(floor.ravel(), dtype=np.uint8)
        self.dead = np.ascontiguousarray(dead.ravel(), dtype=np.uint8)
        self.goal = np.full(size, -1, np.int64)  # the goal's index, -1 off the goals
        for k, c in enumerate(goal_cells):
            self.goal[c] = k
        self.offsets = np.array([-cols, cols, -1, 1], np.int64)
        self.cost_of = np.array(cost_row, np.int64).reshape(size, len(goal_cells))
        keys = np.random.default_rng(0x5EED).integers(-(2**63), 2**63 - 1, (2, size), np.int64)
        self.zob_box, self.zob_player = keys[0].copy(), keys[1].copy()
        self.goal_cells = np.array(goal_cells, np.int64)
        # the table that finds no two-box deadlock, for searches that go without one
        self.no_pairs = (np.zeros(size, np.int64), np.zeros((0, 0, 1), np.uint64))

    @cached_property
    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The room's table of two-box deadlocks (:mod:`.pairs`), worked out when a search
        first asks for it; none for a room of one goal or too large for one."""
        if len(self.goal_cells) < 2 or int(self.floor.sum()) > PAIR_CELLS:
            return self.no_pairs
        return pair_table(self.floor, self.goal_cells, self.offsets)


class Features(NamedTuple):
    """What the feature search is given: each goal area's goals in the order the packing
    fills them (areas in the order their first goal comes in the packing order), the
    moves of many pushes it offers, whether it counts box moves (a push of the box that
    the state's own move pushed costs nothing) and whether it counts pushes as well (with
    ``pushes``, a push that is not advised costs one more: one for the box the state's own
    move pushed, two for another box). With ``matched`` the packing advice tries first the
    box the state's matching of boxes to goals gives the goal to fill."""

    orders: list[list[int]]
    goal_macros: bool
    packing_advice: bool
    box_moves: bool = True
    pushes: bool = False
    matched: bool = True


# what an array holds where no state is stored yet, where it is not 0: ``slot_of`` -1 (not
# expanded)
FILLS = {"slot_of": -1}
# the memory bound is one count that the searches of a solve draw on, from several threads
# where the solver runs them so: each draw is checked and taken under this lock
_DRAW = threading.Lock()


def _draw(memory: list[int], nbytes: int) -> None:
    """Take ``nbytes`` from the memory bound, or raise :class:`MemoryLimit` where they are
    not left."""
    with _DRAW:
        if nbytes > memory[0]:
            raise MemoryLimit
        memory[0] -= nbytes


# the most states a search holds: a queue entry keeps a state's row in 30 bits
MAX_STATES = ROW_MASK + 1


def _lowest_reached(room: Room, cells: list[int], player: int) -> int:
    """The lowest cell of the player's area among the boxes on ``cells``: the name of
    that area in the search's tables."""
    size = room.floor.shape[0]
    occupied = np.full(size, -1, np.int64)
    occupied[cells] = np.arange(len(cells))
    mark, queue = np.zeros(size, np.int64), np.empty(size, np.int64)
    return int(flood(player, room.floor, occupied, mark, 1, queue, room.offsets))


class CompiledSearch:
    """One best-first search over pushes, run compiled: weighted (``weight * h + g``), or,
    given ``features``, the feature search. The interface of the solver's ``_Search``
    (:meth:`run` answers ``"open"``, ``"solved"`` or ``"exhausted"``; ``expanded``,
    ``generated``, ``best_bound``; :meth:`pushes` the solution's pushes).

    Its arrays start small and grow when full (:meth:`_grow`; given a deadline, only where
    the growth would end before it, else :meth:`run` answers ``"full"``); ``memory`` (bytes,
    shared by the searches of one solve as a one-item list of what is left) bounds them:
    growth that would pass it raises :class:`MemoryLimit` instead, and :meth:`release` hands
    a stopped search's bytes back. ``fences`` turns the corral deadlock test
    (:mod:`.fences`) on or off, or is its working array, which the searches of one solve
    that take turns on one thread share (and its table of answers so)."""

    def __init__(self, room: Room, cells: list[int], player: int, weight: float,
                 memory: list[int], capacity: int = 4096, features: Features | None = None,
                 pairs: bool = True, fences: bool | np.ndarray = True) -> None:  # fmt: skip
        wkey = weight_key(weight)
        self.room = room
        self.pairs = room.pairs if pairs else room.no_pairs
        self.weight = float(weight)
        self.wkey = wkey
        self.memory = memory
        self.nb = len(cells)
        self.found: int | None = None
        self.released = False
        self._grew = [0.0, 0.0]  # the seconds its last growth took: states, matchings' rows
        self.counters = np.zeros(N_COUNTERS, np.int64)
        size = room.floor.shape[0]
        self.scratch = (
            np.full(size, -1, np.int64), np.zeros(size, np.int64), tree_scratch(size),
            np.zeros(size, np.uint8),
        )  # fmt: skip
        self.corral, self.fences = corral_scratch(size), fence_work(size, fences)
        orders = features.orders if features is not None else []
        goal_area = np.full(size, -1, np.int64)
        for a, goals in enumerate(orders):
            goal_area[goals] = a
        self.fs = (
            np.array([c for goals in orders for c in goals], np.int64),
            np.cumsum([0] + [len(goals) for goals in orders], dtype=np.int64),
            goal_area,
            np.flatnonzero(room.floor).astype(np.int64),
            np.zeros(size, np.int64),
            np.zeros(size, np.int64),
        )
        self.feature = 0
        if features is not None:
            self.feature = (
                1 | 2 * features.goal_macros | 4 * features.packing_advice
                | 8 * features.box_moves | 16 * features.pushes | 32 * features.matched
            )  # fmt: skip
        ncells = (room.cost_of.shape[1] + 1) * (size + 1) if features is not None else 1
        self.cells = (new_cells(ncells), np.zeros(ncells, np.int64), np.zeros(ncells, np.int64))
        most_paths = self.most_paths = 8 * self.nb + len(orders) + 1
        self.paths = (
            *path_scratch(size),
            np.zeros(most_paths * (MAX_PUSHES + 1) + 8, np.int64),
        )
        self._alloc(capacity)
        _draw(memory, self.nbytes)
        h0 = start(
            room.cost_of, room.zob_box, room.zob_player, np.array(cells, np.int64),
            _lowest_reached(room, cells, player), wkey, self.counters, self.boxes,
            self.parent, self.push, self.g, self.h, self.u, self.match, self.low_of,
            self.gen_table, self._queue(),
        )  # fmt: skip
        if features is not None:  # its queue is the cells', not the buckets
            self.counters[N_HEAP] = 0
            queue_root_in_cell(
                room.floor, room.offsets, self.scratch[0], self.boxes, self.counters, self.fs,
                self.cells, room.cost_of.shape[1], h0,
            )  # fmt: skip

    @property
    def expanded(self) -> int:
        return int(self.counters[EXPANDED])

    @property
    def generated(self) -> int:
        return int(self.counters[GENERATED])

    @property
    def best_bound(self) -> int:
        """The least bound of any state expanded: how near the search has come."""
        return int(self.counters[BEST_H])

    @property
    def best_packed(self) -> int:
        """The most goals any state expanded had filled in the packing order (0 for a
        weighted search)."""
        return int(self.counters[BEST_PACKED])

    @property
    def nbytes(self) -> int:
        """The memory its arrays take, the feature search's cells included."""
        return sum(a.nbytes for a in self._arrays()) + self._cell_bytes(self.boxes.shape[0])

    @property
    def capacity(self) -> tuple[int, int]:
        """The states its arrays hold, and the expanded states' matchings."""
        return self.boxes.shape[0], self.u.shape[0]

    def _arrays(self) -> list[np.ndarray]:
        # the state arrays first (rows are states), then the expanded states' (rows are
        # expansions), then the tables, the queue and the pool of moves
        return [
            self.boxes, self.parent, self.push, self.g, self.h, self.slot_of, self.low_of,
            self.u, self.match, self.gen_table, self.entries, self.buckets,
            self.order, self.index, self.pool,
        ]  # fmt: skip

    def _shapes(self, cap: int, expanded: int) -> dict[str, tuple[int, ...]]:
        """Each kept array's shape for ``cap`` states and ``expanded`` expanded ones (the
        tables, made anew at each size, are not among them)."""
        nb = self.nb
        # moves of many pushes (a count, then the pushes): room for one expansion's worth,
        # and more as they come
        pool = self.most_paths * (MAX_PUSHES + 2) + cap if self.feature else 8
        # the weighted searches' queue (the feature search's is its cells): an entry a
        # state, and fewer priorities than states
        entries = 1 if self.feature else cap
        buckets = 1 if self.feature else max(cap // 4, 64)
        return {
            "boxes": (cap, nb), "parent": (cap,), "push": (cap,), "g": (cap,), "h": (cap,),
            "slot_of": (cap,), "low_of": (cap,), "u": (expanded, nb + 1),
            "match": (expanded, nb + 1), "entries": (entries, 2),
            "buckets": (buckets, 4), "order": (buckets,), "pool": (pool,),
        }  # fmt: skip

    def _alloc(self, cap: int) -> None:
        # expanded states are a fraction of those stored, a fraction that differs from
        # level to level and search to search: the two kinds of rows grow apart
        shape = self._shapes(cap, max(cap // 4, 16))
        self.boxes = np.zeros(shape["boxes"], np.int16)
        self.parent = np.zeros(shape["parent"], np.int32)
        self.push = np.zeros(shape["push"], np.int32)
        self.g = np.zeros(shape["g"], np.int32)
        self.h = np.zeros(shape["h"], np.int32)
        self.slot_of = np.full(shape["slot_of"], FILLS["slot_of"], np.int32)
        self.low_of = np.zeros(shape["low_of"], np.int32)
        self.u = np.zeros(shape["u"], np.int32)
        self.match = np.zeros(shape["match"], np.int16)
        self.entries = np.zeros(shape["entries"], np.int64)
        self.buckets = np.zeros(shape["buckets"], np.int64)
        self.order = np.zeros(shape["order"], np.int64)
        self.kept = np.zeros(N_KEPT, np.int64)
        self.pool = np.zeros(shape["pool"], np.int64)
        self._tables(cap)

    @staticmethod
    def _table_slots(cap: int, buckets: int) -> tuple[int, int]:
        """The slots of the hash table for ``cap`` states and of the bucket index for
        ``buckets`` rows: powers of two, at most half full (a state a slot or less)."""
        return 1 << (2 * cap - 1).bit_length(), 1 << (2 * buckets - 1).bit_length()

    def _tables(self, cap: int) -> None:
        slots, index = self._table_slots(cap, self.buckets.shape[0])
        self.gen_table = np.zeros(slots, np.int64)
        self.index = np.zeros(index, np.int64)

    def _bytes(self, cap: int, expanded: int) -> int:
        """What :attr:`nbytes` becomes once the arrays hold ``cap`` states and
        ``expanded`` expanded ones."""
        shapes = self._shapes(cap, expanded)
        kept = sum(
            math.prod(shape) * getattr(self, name).itemsize for name, shape in shapes.items()
        )
        slots, index = self._table_slots(cap, shapes["buckets"][0])
        return kept + 8 * (slots + index) + self._cell_bytes(cap)

    def _cell_bytes(self, cap: int) -> int:
        """The feature search's cells for ``cap`` states: 24 bytes a state (an entry)."""
        return 24 * cap if self.feature else 0

    def _grow(self, expanded: bool = False) -> None:
        """Grow the state arrays, or with ``expanded`` the expanded states' matchings,
        keeping what is stored: double them, or where that would pass the memory bound
        grow them by a half or a quarter (the last states a bound allows are searched, not
        given up). The kept arrays grow in place (the allocator moves their pages: what
        they hold is not copied); with the states, the hash table is made anew from the
        old one (:func:`.loop.retable`) and the queue's bucket index filled again."""
        cap, rows_e = self.capacity
        old = rows_e if expanded else cap
        with _DRAW:
            for new in (2 * old, old + old // 2, old + old // 4):
                size = (cap, new) if expanded else (new, rows_e)
                more = self._bytes(*size) - self.nbytes
                if more <= self.memory[0] and size[0] <= MAX_STATES:
                    break
            else:
                raise MemoryLimit
            self.memory[0] -= more
        for name, shape in self._shapes(*size).items():
            array = getattr(self, name)
            rows = array.shape[0]
            if shape == array.shape:
                continue
            array.resize(shape, refcheck=False)  # nothing else holds these arrays
            if name in FILLS:
                array[rows:] = FILLS[name]
        if expanded:
            return
        table = self.gen_table
        self._tables(size[0])
        retable(self.gen_table, table)
        reindex(self.index, self.buckets, int(self.kept[N_BUCKETS]))

    def release(self) -> None:
        """Hand the memory of its arrays back to the other searches of the solve (the
        solver calls this when the search stops for good: the near-greedy one after its
        first seconds). Its counts stay; it cannot run again."""
        if self.released:
            return
        self.released = True
        with _DRAW:
            self.memory[0] += self.nbytes
        for name in self._shapes(0, 0):
            array = getattr(self, name)
            setattr(self, name, np.zeros((0, *array.shape[1:]), array.dtype))
        self.gen_table = self.index = np.zeros(0, np.int64)
        if self.feature:
            self.cells = (new_cells(1), np.zeros(1, np.int64), np.zeros(1, np.int64))

    def _queue(self) -> tuple[np.ndarray, ...]:
        return self.entries, self.buckets, self.order, self.index, self.kept

    def run(self, budget: int, deadline: float = math.inf) -> str:
        """Expand up to ``budget`` states: "open", "solved" or "exhausted". Arrays that
        fill up are grown and the turn goes on, unless the growth would not end by
        ``deadline`` (a ``time.perf_counter`` time): a growth of millions of states takes
        seconds, and one twice the last of its kind is expected to take twice as long.
        The search then answers "full" (nothing is lost; it can go on with more time)."""
        if self.released:
            raise RuntimeError("a search whose memory was released cannot run again")
        room = self.room
        stop = self.expanded + budget
        while True:
            outcome = run(
                room.floor, room.dead, room.goal, room.offsets, room.cols, room.cost_of,
                room.zob_box, room.zob_player, self.wkey, stop - self.expanded, self.counters,
                self.boxes, self.parent, self.push, self.g, self.h, self.u,
                self.match, self.slot_of, self.low_of, self.gen_table, self._queue(),
                self.scratch, self.corral, self.feature, self.fs, self.cells, self.pool,
                self.paths, self.pairs, self.fences,
            )  # fmt: skip
            if outcome not in (FULL, FULL_EXPANDED):
                break
            expanded = outcome == FULL_EXPANDED
            began = time.perf_counter()
            if began + 2 * self._grew[expanded] > deadline:
                return "full"
            self._grow(expanded=expanded)
            self._grew[expanded] = time.perf_counter() - began
        if outcome == SOLVED:
            self.found = int(self.counters[FOUND])
            return "solved"
        return "exhausted" if outcome == EXHAUSTED else "open"

    def pushes(self) -> list[tuple[int, int]]:
        """The pushes (box cell, direction) from the start to the solved state."""
        out: list[tuple[int, int]] = []
        row = self.found
        assert row is not None
        while self.parent[row] >= 0:
            move = int(self.push[row])
            if move >= 0:
                moves = [move]
            else:  # a move of many pushes: their count in the pool, then the pushes
                at = -2 - move
                moves = self.pool[at + 1 : at + 1 + int(self.pool[at])].tolist()
            out.extend(divmod(int(m), 4) for m in reversed(moves))
            row = int(self.parent[row])
        return out[::-1]


_warmed: list[bool] = []


def warm_up() -> None:
    """Compile the searches (or load them from numba's disk cache) once a process, on a
    corridor of one box, so that a solve's time limit measures its search and not the
    compiler: the same level, limit and machine give the same answer in a fresh process
    as in a warm one."""
    if _warmed:
        return
    _warmed.append(True)
    floor = np.zeros((3, 5), bool)
    floor[1, 1:4] = True  # the player at (1, 1), the box at (1, 2), the goal at (1, 3)
    dead = np.zeros_like(floor)
    dead[1, 1] = True
    cost = [[BIG]] * 15
    cost[7], cost[8] = [1], [0]
    room = Room(floor, dead, [8], cost)
    pair_table(room.floor, np.array([7, 8], np.int64), room.offsets)  # one goal: no table
    plan = Features([[8]], True, True)
    for features in (None, plan):
        CompiledSearch(room, [7], 6, 1.0, [1 << 40], capacity=16, features=features).run(8)
    search = CompiledSearch(room, [7], 6, 1.0, [1 << 40], capacity=16)
    retable(np.zeros(2 * search.gen_table.shape[0], np.int64), search.gen_table)
