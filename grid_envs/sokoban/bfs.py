"""Exact breadth-first searches: the fewest pushes, and the fewest moves from every position.

:func:`min_pushes` finds the fewest pushes (not moves) that solve a level, pruning only dead
squares, which is sound, so its answer is exact. It is slow on big levels on purpose: it is
the oracle that the generator's difficulty report and the solver's tests are checked
against.

:func:`move_distances` gives every position of a room its fewest moves to the solution in
one backward search, in numpy: the table that the ``optimal`` agent plays and teaches from.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from grid_envs.sokoban import rules
from grid_envs.sokoban.state import Level, SokobanState


def min_pushes(level: Level, max_states: int = 2_000_000) -> int | None:
    """Fewest pushes that solve ``level``; None if unsolvable; raise if over ``max_states``."""
    _rows, cols = level.shape
    floor = level.floor.ravel().tolist()
    dead = rules.dead_squares(level.floor, level.goals).ravel().tolist()
    goals = frozenset(int(i) for i in level.goals.ravel().nonzero()[0])
    offsets = (-cols, cols, -1, 1)
    start_boxes = frozenset(int(i) for i in level.boxes.ravel().nonzero()[0])
    player = level.player[0] * cols + level.player[1]

    def region(boxes: frozenset[int], start: int) -> tuple[int, list[int]]:
        seen = {start}
        stack = [start]
        while stack:
            i = stack.pop()
            for o in offsets:
                j = i + o
                if j not in seen and floor[j] and j not in boxes:
                    seen.add(j)
                    stack.append(j)
        return min(seen), list(seen)

    key0 = region(start_boxes, player)[0]
    if start_boxes == goals:
        return 0
    seen_states = {(start_boxes, key0)}
    queue = deque([(start_boxes, player, 0)])
    while queue:
        boxes, p, depth = queue.popleft()
        _, cells = region(boxes, p)
        reach = set(cells)
        for b in boxes:
            for o in offsets:
                if b - o in reach:
                    t = b + o
                    if floor[t] and t not in boxes and not dead[t]:
                        nb = (boxes - {b}) | {t}
                        if nb == goals:
                            return depth + 1
                        key = (nb, region(nb, b)[0])
                        if key not in seen_states:
                            if len(seen_states) >= max_states:
                                raise RuntimeError(f"BFS passed {max_states} states")
                            seen_states.add(key)
                            queue.append((nb, b, depth + 1))
    return None


def position_key(boxes: int, player: int, cells: int) -> int:
    """One int for a position: the boxes' bitboard and the player's flat cell."""
    return boxes * cells + player


# A table numbers a position by the set of floor cells its boxes stand on (its rank among
# all such sets, in the combinatorial number system) and the player's floor cell; it gives
# up on rooms where that numbering passes MAX_SPACE
MAX_SPACE = 1 << 25


class _Room:
    """A room's floor cells numbered 0..F-1, their neighbours, and the numbering of
    positions with ``boxes`` boxes: ``rank(box cells) * F + player cell``."""

    def __init__(self, floor: np.ndarray, boxes: int) -> None:
        cols = floor.shape[1]
        self.cells = floor.size
        self.flat = np.flatnonzero(floor.ravel())
        self.floor = len(self.flat)
        self.index = np.full(floor.size, -1, dtype=np.int64)
        self.index[self.flat] = np.arange(self.floor)
        # per floor cell and direction (up, down, left, right), the floor neighbour, -1 for a
        # wall; a last row of -1 stands for the wall, so that beyond a wall reads as wall too
        self.near = np.full((self.floor + 1, 4), -1, dtype=np.int64)
        for d, o in enumerate((-cols, cols, -1, 1)):
            self.near[:-1, d] = self.index[self.flat + o]
        self.boxes = boxes
        # the numbering's size in Python's exact integers: C(floor, boxes) passes an int64 on
        # large rooms, and a table that wrapped round would pass the size check
        self.space = math.comb(self.floor, boxes) * self.floor
        self.binom = np.zeros((self.floor + 1, boxes + 1), dtype=np.int64)  # C(n, k)
        self.binom[:, 0] = 1
        if self.space <= MAX_SPACE:  # only then read, and only then within an int64
            for n in range(1, self.floor + 1):
                self.binom[n, 1:] = self.binom[n - 1, 1:] + self.binom[n - 1, :-1]

    def number(self, cells: np.ndarray, player: np.ndarray) -> np.ndarray:
        """The numbers of positions whose boxes stand on ``cells`` (n, boxes; each row in
        increasing order) with the player on ``player`` (n,)."""
        rank = np.zeros(len(cells), dtype=np.int64)
        for i in range(self.boxes):
            rank += self.binom[cells[:, i], i + 1]
        return rank * self.floor + player


def _holds(cells: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Whether row k of ``cells`` (n, boxes) holds ``at[k]``: a column at a time, faster
    than a comparison of the whole array reduced along its short axis."""
    out = np.zeros(len(cells), dtype=bool)
    for i in range(cells.shape[1]):
        out |= cells[:, i] == at
    return out


class MoveTable:
    """Fewest moves to the solution from every position of one room (its floor, goals and
    number of boxes): ``table[position_key(...)]`` reads them, -1 where the position can
    no longer be solved. ``len(table)`` is the number of positions that can be.

    Only those positions are kept, as numbers (:class:`_Room`), sorted, beside their
    distances: a look-up is a binary search.
    """

    def __init__(self, room: _Room, numbers: np.ndarray, dist: np.ndarray) -> None:
        self._room, self._numbers, self._dist = room, numbers, dist

    def __getitem__(self, key: int) -> int:
        """Moves to the solution from the position ``key``; -1 where it cannot be solved.
        A key that is no position of this room (a box or the player off the floor,
        another number of boxes) raises KeyError."""
        room = self._room
        boxes, player = divmod(key, room.cells)
        if not 0 <= boxes < 1 << room.cells:
            raise KeyError(key)
        cells = rules.bit_cells(boxes)
        if len(cells) != room.boxes:
            raise KeyError(key)
        floor = room.index[[*cells, player]]
        if (floor < 0).any() or floor[-1] in floor[:-1]:
            raise KeyError(key)
        number = int(room.number(floor[None, :-1], floor[-1:])[0])
        row = int(np.searchsorted(self._numbers, number))
        hit = row < len(self._numbers) and self._numbers[row] == number
        return int(self._dist[row]) if hit else -1

    def __len__(self) -> int:
        return len(self._numbers)


def move_distances(state: SokobanState, max_states: int = 1_000_000) -> MoveTable | None:
    """Fewest moves (walk steps and pushes alike) that solve ``state``'s level from any
    position of its room, as a :class:`MoveTable`. None where more than ``max_states``
    positions can be solved, or where the room's numbering of positions passes
    :data:`MAX_SPACE` (many boxes in a large room).

    One breadth-first search backward from the solved positions, by reverse moves and
    pulls, a layer at a time in numpy over the positions' numbers. A pulled box never
    lands on a dead square, and the solved positions are where the game ends, so every
    distance is exact; a position it never meets cannot be solved.
    """
    room = _Room(state.floor, int(state.boxes.sum()))
    if room.space > MAX_SPACE:
        return None
    goals = room.index[np.flatnonzero(state.goals.ravel())]
    if len(goals) != room.boxes:
        raise ValueError(f"the level has {room.boxes} boxes and {len(goals)} goals")
    free = np.setdiff1d(np.arange(room.floor), goals)
    cells = np.repeat(goals[None], len(free), axis=0)  # the frontier's boxes, row by row
    frontier = room.number(cells, free)
    dist = np.full(room.space, -1, dtype=np.int32)
    dist[frontier] = 0
    scratch = np.zeros(room.space, dtype=np.int64)  # for removing repeats in linear time
    found = len(frontier)
    depth = 0
    while len(frontier):
        depth += 1
        player = frontier % room.floor
        base = frontier - player  # the number with the player on floor cell 0
        # the player stepped here from the cell behind (d ^ 1 is the opposite of d), pushing
        # the box ahead (direction d) or not: undo the step, then the push too
        cells, player, base = np.tile(cells, (4, 1)), np.tile(player, 4), np.tile(base, 4)
        d = np.repeat(np.arange(4), len(frontier))
        behind, ahead = room.near[player, d ^ 1], room.near[player, d]
        ok = (behind >= 0) & ~_holds(cells, behind)
        push = ok & _holds(cells, ahead)
        pulled = np.sort(np.where(cells[push] == ahead[push, None], player[push, None],
                                  cells[push]), axis=1)  # fmt: skip
        before = np.concatenate([base[ok] + behind[ok], room.number(pulled, behind[push])])
        cells = np.concatenate([cells[ok], pulled])
        new = dist[before] < 0
        before, cells = before[new], cells[new]
        scratch[before] = np.arange(len(before))
        first = scratch[before] == np.arange(len(before))
        frontier, cells = before[first], cells[first]
        dist[frontier] = depth
        found += len(frontier)
        if found > max_states:
            return None
    numbers = np.flatnonzero(dist >= 0)
    return MoveTable(room, numbers, dist[numbers])
