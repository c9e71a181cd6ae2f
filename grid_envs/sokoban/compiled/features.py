"""The feature search's parts, compiled: FESS's features, its cells and its advice.

The solver's ``_FeatureSearch`` (after FESS, Shoham and Schaeffer 2020) files states in
cells by two features, *packing* (goals filled in the packing order, area by area) and
*areas* (how many areas the boxes cut the floor into), serves the non-empty cells in turn,
and besides every push offers moves of many pushes: goal macros and the packing advice.
These are those parts for :mod:`grid_envs.sokoban.compiled.loop`, computed as the
Python search computes them (the same features, the same cell order, the same push paths),
so that the compiled feature search expands the same states in the same order:

* :func:`packed`: the packing feature (the areas are :mod:`.areas`');
* :func:`push_path`: the fewest pushes that take one box to a cell, the others fixed
  (a breadth-first search over the box's cell and the player's area), which both the goal
  macros and the packing advice use;
* :func:`cell_push` and :func:`cell_pop`: one binary heap per cell, in a typed list, and
  the sorted list of the non-empty cells served in turn.
"""

from __future__ import annotations

import numpy as np
from numba.typed import List

from grid_envs.core.jit import compiled, inlined, uncounted

PATH_LIMIT = 2000  # a push path's search stops after the level that passes this many states
MAX_PUSHES = 512  # a longer push path is not offered (the Python search's bound too)


@uncounted
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


@uncounted
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


@uncounted
def _in_room(c, skip, floor, occupied):
    """Whether the box being moved could stand on ``c``: floor free of the other boxes."""
    return floor[c] and (occupied[c] < 0 or c == skip)


@uncounted
def _blocks(root, skip, floor, occupied, offsets, scratch, stamp, top):
    """Label each edge of ``root``'s part of the room (the floor less every box but the
    one at ``skip``) with its block, the biconnected component it lies in (Hopcroft and
    Tarjan's depth-first search, without recursion): ``eblock[c * 4 + d]`` for the edge
    from ``c`` in direction ``d``, both ways (``offsets`` come in opposite pairs, so
    ``d ^ 1`` is ``d`` reversed). With the box standing on a cell, two of its
    neighbours stay connected exactly when their edges to it share a block, so the
    player's area around the box is one look-up instead of a flood. ``top`` gets each
    cell's ancestor among ``root``'s neighbours in the search's tree: with a box on
    ``root``, two cells are on the same side of it exactly when their ``top`` is the same."""
    mark, disc, low, it, vstack, estack, eblock = scratch
    mark[root] = stamp
    disc[root] = low[root] = it[root] = 0
    vstack[0] = root
    sp, ep, n_blocks, clock = 1, 0, 0, 1
    while sp > 0:
        v = vstack[sp - 1]
        d = it[v]
        if d < 4:
            it[v] = d + 1
            w = v + offsets[d]
            if not _in_room(w, skip, floor, occupied):
                continue
            if mark[w] != stamp:  # a tree edge: go down
                estack[ep] = v * 4 + d
                ep += 1
                mark[w] = stamp
                disc[w] = low[w] = clock
                clock += 1
                top[w] = w if v == root else top[v]
                it[w] = 0
                vstack[sp] = w
                sp += 1
            elif disc[w] < disc[v] and (sp < 2 or w != vstack[sp - 2]):  # a back edge
                estack[ep] = v * 4 + d
                ep += 1
                low[v] = min(low[v], disc[w])
            continue
        sp -= 1  # v is done: its block closes at its parent u where nothing climbs over u
        if sp == 0:
            break
        u = vstack[sp - 1]
        low[u] = min(low[u], low[v])
        if low[v] >= disc[u]:
            while True:
                ep -= 1
                e = estack[ep]
                a, k = e >> 2, e & 3
                eblock[e] = n_blocks
                eblock[(a + offsets[k]) * 4 + (k ^ 1)] = n_blocks
                if a == u and a + offsets[k] == v:
                    break
            n_blocks += 1
    return n_blocks


@uncounted
def _side(x, block, skip, floor, occupied, offsets, eblock):
    """The first direction from ``x`` whose edge lies in ``block``: with the box on ``x``,
    it names the player's area (a state's key)."""
    for k in range(4):
        n = x + offsets[k]
        if _in_room(n, skip, floor, occupied) and eblock[x * 4 + k] == block:
            return k
    return -1


@uncounted
def _start_block(box, player, skip, floor, occupied, offsets, marks, stamps):
    """The room's blocks (:func:`_blocks`) for a path, and the block of the edge from the
    box to the player's side of it; -1 where the player cannot reach the box."""
    stamps[1] += 1
    _blocks(box, skip, floor, occupied, offsets, marks[1:8], stamps[1], marks[0])
    if marks[1][player] != stamps[1]:
        return -1
    for k in range(4):
        if box + offsets[k] == marks[0][player]:
            return marks[7][box * 4 + k]
    return -1


@uncounted
def _could_reach(box, skip, target, floor, occupied, offsets, mark, stamp, queue):
    """Whether the box at ``box`` could reach ``target`` if the player stood wherever a
    push needs him: every push between two free cells allowed. A path of real pushes is
    one of these, so where none exists there is no path, and the search for one (the
    room's blocks first) is skipped: most of the paths the advice asks for are such."""
    mark[box] = stamp
    queue[0] = box
    head, tail = 0, 1
    while head < tail:
        x = queue[head]
        head += 1
        for d in range(4):
            q = x + offsets[d]
            if mark[q] == stamp or not _in_room(q, skip, floor, occupied):
                continue
            if not _in_room(x - offsets[d], skip, floor, occupied):
                continue
            if q == target:
                return True
            mark[q] = stamp
            queue[tail] = q
            tail += 1
    return False


@uncounted
def push_path(
    box, player, skip, target, floor, occupied, offsets, marks, stamps, visited, states, out
):  # fmt: skip
    """The fewest pushes that take the box at ``box`` to ``target``, the player starting at
    ``player`` and every other box (``occupied``, less the one at ``skip``) fixed: written
    to ``out`` as ``cell * 4 + direction``; returns their count, or -1 when the search
    passes :data:`PATH_LIMIT` states, runs out, or finds only a path of more than
    :data:`MAX_PUSHES` pushes. As the solver's ``push_path``: level by level, the pushes of
    each state in direction order, a state known by the box's cell and the player's area.

    The player's area around the box is read from the room's blocks (:func:`_blocks`,
    worked out once a call) rather than flooded at every state: a state holds the block of
    the edge from the box to the player, and the area's key is the box's cell and its first
    side in that block. ``marks`` holds each cell's side of the box (``top``) and the
    blocks' seven arrays, then :func:`_could_reach`'s mark; ``visited`` (size x 4 or more)
    the states seen, ``stamps`` :func:`_could_reach`'s, the blocks' and the states' stamps,
    ``states`` four
    columns (box cell, block, the state it came from, the push)."""
    eblock = marks[7]
    stamps[0] += 1
    if not _could_reach(box, skip, target, floor, occupied, offsets, marks[8], stamps[0],
                        marks[5]):  # fmt: skip
        return -1
    stamps[2] += 1
    seen = stamps[2]
    block = _start_block(box, player, skip, floor, occupied, offsets, marks, stamps)
    if block < 0:  # the player cannot reach the box
        return -1
    visited[box * 4 + _side(box, block, skip, floor, occupied, offsets, eblock)] = seen
    states[0] = (box, block, -1, -1)
    n_states = 1
    level_start, level_end = 0, 1
    while level_start < level_end and n_states < PATH_LIMIT:
        for s in range(level_start, level_end):
            x = states[s, 0]
            block = states[s, 1]
            for d in range(4):
                back = d ^ 1  # the direction from the box to the player behind it
                p = x - offsets[d]
                q = x + offsets[d]
                if not _in_room(p, skip, floor, occupied) or eblock[x * 4 + back] != block:
                    continue
                if not _in_room(q, skip, floor, occupied):
                    continue
                moved = eblock[q * 4 + back]  # the edge from q back to x, where the player is
                key = q * 4 + _side(q, moved, skip, floor, occupied, offsets, eblock)
                if visited[key] == seen:
                    continue
                visited[key] = seen
                states[n_states] = (q, moved, s, x * 4 + d)
                n_states += 1
                if q == target:
                    return _path_to(states, n_states - 1, out)
        level_start, level_end = level_end, n_states
    return -1


def path_scratch(size: int) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray, np.ndarray]:
    """The working arrays of :func:`push_path` for a room of ``size`` cells: each cell's
    side of the box, the blocks' mark, discovery times, lows, next directions, stack of cells,
    stack of edges and the edges' blocks, and :func:`_could_reach`'s mark."""
    cells = [np.zeros(size, np.int64) for _ in range(6)]
    edges = [np.zeros(4 * size, np.int64) for _ in range(2)]
    marks = (*cells, *edges, np.zeros(size, np.int64))
    # a level can add four states for each of the last one's: room for the one that
    # passes the limit
    states = np.zeros((5 * PATH_LIMIT + 8, 4), np.int64)
    return marks, np.zeros(3, np.int64), np.zeros(4 * size, np.int64), states


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


@inlined
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
