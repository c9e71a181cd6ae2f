"""The feature search's parts, compiled: FESS's features, its cells and its advice.

The solver's ``_FeatureSearch`` (after FESS, Shoham and Schaeffer 2020) files states in
cells by two features, *packing* (goals filled in the packing order, area by area) and
*areas* (how many areas the boxes cut the floor into), serves the non-empty cells in turn,
and besides every push offers moves of many pushes: goal macros and the packing advice.
These are those parts for :mod:`grid_envs.sokoban.compiled.loop`, computed as the
Python search computes them (the same features, the same cell order, the same push paths),
so that the compiled feature search expands the same states in the same order:

* :func:`areas` and :func:`packed`: the two features of a box layout;
* :func:`push_path`: the fewest pushes that take one box to a cell, the others fixed
  (a breadth-first search over the box's cell and the player's area), which both the goal
  macros and the packing advice use;
* :func:`cell_push` and :func:`cell_pop`: one binary heap per cell, in a typed list, and
  the sorted list of the non-empty cells served in turn.
"""

from __future__ import annotations

import numpy as np
from numba.typed import List

from grid_envs.core.jit import compiled
from grid_envs.sokoban.compiled.pruning import flood

PATH_LIMIT = 2000  # a push path's search stops after the level that passes this many states
MAX_PUSHES = 512  # a longer push path is not offered (the Python search's bound too)


@compiled
def areas(floor_cells, floor, occupied, label, stamp, queue, offsets):
    """How many separate areas the boxes (``occupied >= 0``) cut the floor into; ``label``
    is a scratch array whose cells this call marks with ``stamp``."""
    count = 0
    for c in floor_cells:
        if occupied[c] < 0 and label[c] != stamp:
            count += 1
            flood(c, floor, occupied, label, stamp, queue, offsets)
    return count


@compiled
def packed(occupied, area_goals, area_start):
    """The goals filled in packing order: in each goal area, the leading goals of its order
    that hold a box."""
    total = 0
    for a in range(area_start.shape[0] - 1):
        for q in range(area_start[a], area_start[a + 1]):
            if occupied[area_goals[q]] < 0:
                break
            total += 1
    return total


@compiled
def _region(start, skip, box, floor, occupied, mark, stamp, queue, offsets):
    """Flood from ``start`` over the floor free of the boxes (but ``skip``) and of
    ``box``; marks it with ``stamp``; returns its lowest cell."""
    mark[start] = stamp
    queue[0] = start
    head, tail, low = 0, 1, start
    while head < tail:
        c = queue[head]
        head += 1
        for k in range(4):
            n = c + offsets[k]
            if not floor[n] or n == box or mark[n] == stamp:
                continue
            if occupied[n] >= 0 and n != skip:
                continue
            mark[n] = stamp
            queue[tail] = n
            tail += 1
            if n < low:
                low = n
    return low


@compiled
def _path_to(states, last, out):
    """The pushes that led to state ``last``, first to last, into ``out``; their count, or
    -1 past :data:`MAX_PUSHES`."""
    length = 0
    t = last
    while states[t, 2] >= 0:
        length += 1
        t = states[t, 2]
    if length > MAX_PUSHES:
        return -1
    t = last
    for j in range(length - 1, -1, -1):
        out[j] = states[t, 3]
        t = states[t, 2]
    return length


@compiled
def push_path(
    box, player, skip, target, floor, occupied, offsets, marks, stamps, visited, states, out
):  # fmt: skip
    """The fewest pushes that take the box at ``box`` to ``target``, the player starting at
    ``player`` and every other box (``occupied``, less the one at ``skip``) fixed: written
    to ``out`` as ``cell * 4 + direction``; returns their count, or -1 when the search
    passes :data:`PATH_LIMIT` states, runs out, or finds only a path of more than
    :data:`MAX_PUSHES` pushes. As the solver's ``push_path``: level by
    level, the pushes of each state in direction order, a state known by the box's cell
    and the lowest cell of the player's area.

    ``marks`` holds two flood scratch arrays and ``visited`` (size x size) the states seen;
    ``stamps`` their three stamps; ``states`` four columns (box cell, area's lowest cell,
    the state it came from, the push)."""
    size = floor.shape[0]
    region_mark = marks[0]
    moved_mark = marks[1]
    queue = marks[2]
    stamps[2] += 1
    seen = stamps[2]
    stamps[0] += 1
    low = _region(player, skip, box, floor, occupied, region_mark, stamps[0], queue, offsets)
    visited[box * size + low] = seen
    states[0, 0] = box
    states[0, 1] = low
    states[0, 2] = -1
    states[0, 3] = -1
    n_states = 1
    level_start, level_end = 0, 1
    while level_start < level_end and n_states < PATH_LIMIT:
        for s in range(level_start, level_end):
            x = states[s, 0]
            stamps[0] += 1
            here = stamps[0]
            _region(states[s, 1], skip, x, floor, occupied, region_mark, here, queue, offsets)
            for d in range(4):
                p = x - offsets[d]
                q = x + offsets[d]
                if region_mark[p] != here or not floor[q]:
                    continue
                if occupied[q] >= 0 and q != skip:
                    continue
                stamps[1] += 1
                low = _region(x, skip, q, floor, occupied, moved_mark, stamps[1], queue, offsets)
                if visited[q * size + low] == seen:
                    continue
                visited[q * size + low] = seen
                states[n_states, 0] = q
                states[n_states, 1] = low
                states[n_states, 2] = s
                states[n_states, 3] = x * 4 + d
                n_states += 1
                if q == target:
                    return _path_to(states, n_states - 1, out)
        level_start, level_end = level_end, n_states
    return -1


def path_scratch(size: int) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray, np.ndarray]:
    """The working arrays of :func:`push_path` for a room of ``size`` cells."""
    marks = (np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size, np.int64))
    # a level can add four states for each of the last one's: room for the one that
    # passes the limit
    states = np.zeros((5 * PATH_LIMIT + 8, 4), np.int64)
    return marks, np.zeros(3, np.int64), np.zeros(size * size, np.int64), states


# ------------------------------------------------------------------ the cells' queues
# An entry of a cell's heap is three int64s: (cost << 32 | bound), then the higher g
# first and among equals the newest first (``(G - g) << 40 | (S - seq)``), then the row.
_G = (1 << 22) - 1
_S = (1 << 40) - 1


@compiled
def entry_order(g, seq):
    return ((_G - g) << 40) | (_S - seq)


@compiled
def entry_g(second):
    return _G - (second >> 40)


@compiled
def _above(heap, a, first, second):
    return heap[a, 0] < first or (heap[a, 0] == first and heap[a, 1] < second)


@compiled
def cell_push(heaps, sizes, keys, counters, nkeys_at, turn_at, cell, first, second, row):
    """Queue an entry in ``cell``'s heap (a new non-empty cell joins ``keys`` in order)."""
    heap = heaps[cell]
    n = sizes[cell]
    if n == heap.shape[0]:
        bigger = np.empty((2 * n, 3), np.int64)
        bigger[:n] = heap
        heaps[cell] = bigger
        heap = bigger
    if n == 0:  # insert in the sorted list of non-empty cells, as bisect.insort does
        nkeys = counters[nkeys_at]
        at = nkeys
        while at > 0 and keys[at - 1] > cell:
            keys[at] = keys[at - 1]
            at -= 1
        keys[at] = cell
        counters[nkeys_at] = nkeys + 1
    while n > 0:
        up = (n - 1) >> 1
        if _above(heap, up, first, second):
            break
        heap[n] = heap[up]
        n = up
    heap[n, 0] = first
    heap[n, 1] = second
    heap[n, 2] = row
    sizes[cell] += 1


@compiled
def cell_pop(heaps, sizes, keys, counters, nkeys_at, turn_at, out):
    """Take the first entry of the cell whose turn it is into ``out`` (its three words);
    returns the cell. The turn passes to the next cell, or stays where an emptied cell
    leaves the list, as the Python search's ``_next``."""
    nkeys = counters[nkeys_at]
    turn = counters[turn_at] % nkeys
    cell = keys[turn]
    heap = heaps[cell]
    out[0] = heap[0, 0]
    out[1] = heap[0, 1]
    out[2] = heap[0, 2]
    n = sizes[cell] - 1
    sizes[cell] = n
    first = heap[n, 0]
    second = heap[n, 1]
    row = heap[n, 2]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _above(heap, c + 1, heap[c, 0], heap[c, 1]):
            c += 1
        if not _above(heap, c, first, second):
            break
        heap[i] = heap[c]
        i = c
    if n > 0:
        heap[i, 0] = first
        heap[i, 1] = second
        heap[i, 2] = row
        counters[turn_at] = turn + 1
    else:
        for k in range(turn, nkeys - 1):
            keys[k] = keys[k + 1]
        counters[nkeys_at] = nkeys - 1
        counters[turn_at] = turn
    return cell


@compiled
def new_cells(count):
    """``count`` empty cell heaps."""
    heaps = List()
    for _ in range(count):
        heaps.append(np.empty((4, 3), np.int64))
    return heaps
