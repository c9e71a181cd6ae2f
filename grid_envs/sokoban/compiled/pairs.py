"""Two-box deadlocks, worked out once a room: a table of the box pairs that can still
reach two goals, by the player's cell, looked up by the search after each move.

Boxes only ever stand in each other's way: remove every box but two from a position and
the two can do anything they could before (a solution's pushes of those two boxes, its
walks included, are still legal). So where two boxes, alone in the room with the player,
can no longer both reach goals, the position with all its boxes is lost too. This is a
deadlock table in the sense of Junghanns and Schaeffer's Rolling Stone, worked out for
the whole room rather than for small patterns around a box: one search backwards from
every pair of goals, by pulls, finds every position of two boxes and the player's area
from which both boxes can still be brought home; every other one is dead. It catches
what the freeze test, the dead squares and the matching do not: two boxes that block
each other's only way, a box that must leave a corridor after another, the player shut
on the wrong side of a pair.

``live[i, j, p >> 6] >> (p & 63) & 1`` holds when boxes on floor cells ``i`` and ``j``
(numbered by ``index``, -1 off the floor) can both reach goals, the player on floor cell
``p``; it holds for (i, j) and (j, i) alike. About n^3 / 8 bytes for n floor cells: 2 MB
for 250.
"""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import compiled, uncounted


@compiled
def _mark_area(start, a, b, floor, offsets, index, live, mark, stamp, queue):
    """Mark every cell of the player's area from ``start`` (boxes on ``a`` and ``b``, no
    other box) as live for the pair, both ways round; the area is ``queue[:size]``;
    returns its size."""
    i, j = index[a], index[b]
    mark[start] = stamp
    queue[0] = start
    head, tail = 0, 1
    while head < tail:
        c = queue[head]
        head += 1
        p = index[c]
        bit = np.uint64(1) << np.uint64(p & 63)
        live[i, j, p >> 6] |= bit
        live[j, i, p >> 6] |= bit
        for k in range(4):
            x = c + offsets[k]
            if floor[x] and x != a and x != b and mark[x] != stamp:
                mark[x] = stamp
                queue[tail] = x
                tail += 1
    return tail


@uncounted
def _is_live(live, index, a, b, player):
    p = index[player]
    return (live[index[a], index[b], p >> 6] >> np.uint64(p & 63)) & np.uint64(1) != 0


@compiled
def _queued(todo, tail, a, b, c):
    """``todo`` with (a, b, c) in row ``tail`` (doubled first where full)."""
    if tail == todo.shape[0]:
        bigger = np.empty((2 * tail, 3), np.int64)
        bigger[:tail] = todo
        todo = bigger
    todo[tail, 0] = a
    todo[tail, 1] = b
    todo[tail, 2] = c
    return todo


@compiled
def pair_table(floor, goal_cells, offsets):
    """The room's table of live pairs (the module's doc): ``(index, live)``. A search by
    pulls from every pair of goals with the player in each of its areas; a position is
    queued by one cell of its area, which is flooded again when it is taken."""
    size = floor.shape[0]
    index = np.full(size, -1, np.int64)
    n = 0
    for c in range(size):
        if floor[c]:
            index[c] = n
            n += 1
    live = np.zeros((n, n, (n + 63) >> 6), np.uint64)
    here = np.zeros(size, np.int64)  # the area of the position taken
    mark = np.zeros(size, np.int64)  # the areas of the positions it leads to
    queue = np.empty(size, np.int64)
    todo = np.empty((max(n * n, 16), 3), np.int64)
    tail, stamp = 0, 0
    for x in range(goal_cells.shape[0]):
        for y in range(x + 1, goal_cells.shape[0]):
            a, b = goal_cells[x], goal_cells[y]
            for c in range(size):
                if floor[c] and c != a and c != b and not _is_live(live, index, a, b, c):
                    stamp += 1
                    _mark_area(c, a, b, floor, offsets, index, live, mark, stamp, queue)
                    todo = _queued(todo, tail, a, b, c)
                    tail += 1
    head = 0
    while head < tail:  # each position is queued once
        a, b = todo[head, 0], todo[head, 1]
        _mark_area(todo[head, 2], a, b, floor, offsets, index, live, here, head + 1, queue)
        for side in range(2):
            box, other = (a, b) if side == 0 else (b, a)
            for k in range(4):
                p = box + offsets[k]  # the player here steps back to q; the box follows to p
                q = p + offsets[k]
                if here[p] != head + 1 or not floor[q] or q == other:
                    continue
                if _is_live(live, index, p, other, q):
                    continue
                stamp += 1
                _mark_area(q, p, other, floor, offsets, index, live, mark, stamp, queue)
                todo = _queued(todo, tail, p, other, q)
                tail += 1
        head += 1
    return index, live


@uncounted
def pair_deadlock(index, live, boxes, i, moved, t, player):
    """After a move of state ``i`` (box cells ``boxes[i]``) that took the box from
    ``moved`` to ``t``, the player on ``player``: whether ``t`` and another box are a dead
    pair. Only pairs with the moved box can have died: in a pair of boxes that stood
    still, the player's area still holds its walk. An empty table (``live`` of no rows)
    finds none."""
    if live.shape[0] == 0:
        return False
    for q in range(boxes.shape[1]):
        c = boxes[i, q]
        if c != moved and not _is_live(live, index, t, c, player):
            return True
    return False
