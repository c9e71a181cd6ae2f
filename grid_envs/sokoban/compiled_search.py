"""The push search's inner loop, compiled: one best-first search over pushes in numba.

:class:`~grid_envs.sokoban.solver.Solver` keeps the plan (which searches run, in what
turns, the packing order and the feature search); this module runs a weighted best-first
search (``weight * h + g``; weight 1 is A*) at machine speed, expanding the same states in
the same order as the pure-Python ``_Search`` of the solver: the pushes are generated in
the same order, the matching bound is computed by the same algorithm with the same ties,
the same freeze test and PI-corral rule prune, and the queue breaks ties alike (tested
state for state on Microban's levels).

The room is flat row-major cells, as the solver's bitboards number them; a room's border
is wall (the level gate makes it so), so a floor cell's four neighbours are always cells.
A search keeps its states in arrays (struct of arrays, grown by the caller when full):

* ``boxes[i]``: the box cells of state ``i`` in the row order of its matching;
* ``player[i]``: the player's cell after the push that made it (the box's old cell);
* ``parent[i]``, ``push[i]`` (``box cell * 4 + direction`` of that push), ``g[i]``, ``h[i]``;
* ``u[i]``, ``v[i]``, ``match[i]``: the optimal matching's potentials and match, which
  the children rework in O(n) or O(n^2) instead of solving the matching again;
* two hash tables: states by (boxes, player's cell), to drop a state reached again at no
  lower cost, and expanded states by (boxes, player's area) (its lowest cell), so no
  position is expanded twice. Keys are Zobrist hashes, and a hit is confirmed on the box
  cells themselves, so a hash collision never merges two positions.

Everything here trusts its inputs: the solver builds them from a level the gate accepted.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from grid_envs.core.jit import compiled
from grid_envs.sokoban.compiled_features import (
    MAX_PUSHES,
    areas,
    cell_pop,
    cell_push,
    entry_g,
    entry_order,
    new_cells,
    packed,
    path_scratch,
    push_path,
)

BIG = 1 << 20  # an unreachable cell's distance; a matching total >= BIG is infeasible
_INF = 1 << 50  # an unset slack in the augmenting path

# what :func:`run` answers
OPEN, SOLVED, EXHAUSTED, FULL = 0, 1, 2, 3

# the counters a search keeps between turns, in one int64 array
(
    N_STATES,  # states stored (the next free row)
    N_HEAP,  # entries in the queue
    EXPANDED,
    GENERATED,
    FOUND,  # the solved state's row, -1 until then
    STAMP,  # the flood's visit stamp
    BEST_H,  # the least bound of any state expanded
    N_POOL,  # pushes stored in the pool of moves of many pushes (feature search)
    NKEYS,  # non-empty cells of the feature search
    TURN,  # the cell whose turn it is
    ASTAMP,  # the area count's visit stamp
    N_COUNTERS,
) = range(12)


# ------------------------------------------------------------------ the matching bound
@compiled
def _augment(cost, u, v, match, i, way, slack, seen):
    """Insert free row ``i`` (1-based) into the matching by one shortest augmenting path,
    as the solver's ``_augment`` does (columns scanned in order, the first least slack
    taken), in integers. ``cost[r - 1, j - 1]``; ``match[j]`` the row of column j."""
    n = cost.shape[0]
    for j in range(n + 1):
        slack[j] = _INF
        seen[j] = 0
        way[j] = 0
    match[0] = i
    j0 = 0
    while True:
        seen[j0] = 1
        r = match[j0]
        best = _INF
        j1 = 0
        for j in range(1, n + 1):
            if seen[j]:
                continue
            cur = cost[r - 1, j - 1] - u[r] - v[j]
            if cur < slack[j]:
                slack[j] = cur
                way[j] = j0
            if slack[j] < best:
                best = slack[j]
                j1 = j
        for j in range(n + 1):
            if seen[j]:
                u[match[j]] += best
                v[j] -= best
            else:
                slack[j] -= best
        j0 = j1
        if match[j0] == 0:
            break
    while j0:
        j1 = way[j0]
        match[j0] = match[j1]
        j0 = j1


@compiled
def _total(cost, match):
    total = 0
    for j in range(1, match.shape[0]):
        total += cost[match[j] - 1, j - 1]
    return total


@compiled
def hungarian(cost, u, v, match):
    """Minimum-cost perfect matching of the square ``cost`` into ``u``, ``v``, ``match``
    (length n + 1, 1-based); returns the total (>= BIG when none is finite)."""
    n = cost.shape[0]
    u[:] = 0
    v[:] = 0
    match[:] = 0
    way = np.zeros(n + 1, np.int64)
    slack = np.zeros(n + 1, np.int64)
    seen = np.zeros(n + 1, np.uint8)
    for i in range(1, n + 1):
        _augment(cost, u, v, match, i, way, slack, seen)
    return _total(cost, match)


@compiled
def cm_goal(match, k):
    """The goal (0-based column) matched to box ``k`` (0-based row)."""
    j = 1
    while match[j] != k + 1:
        j += 1
    return j - 1


@compiled
def _rematch(rows, k, before, u, v, match, way, slack, seen):
    """The matching after box ``k``'s costs changed (``rows[k]`` new, ``before`` old),
    from the optimal one before, in place, as the solver's ``rematch_after_push``: the
    row's potential moved to its least reduced cost, and when its matched goal is still
    tight the matching stands (returns -1: the total moved by the row's change alone);
    otherwise one augmenting path (returns the new total)."""
    n = rows.shape[0]
    r = k + 1
    j = cm_goal(match, k) + 1
    least = _INF
    for q in range(1, n + 1):
        x = rows[k, q - 1] - v[q]
        if x < least:
            least = x
    if rows[k, j - 1] - v[j] == least:
        u[r] = least
        return -1
    u[r] = 0
    match[j] = 0
    _augment(rows, u, v, match, r, way, slack, seen)
    return _total(rows, match)


@compiled
def _rematch_row(rows, k, u, v, match, way, slack, seen):
    """The optimal matching after box ``k``'s row changed, in place, by one augmenting
    path from a zero potential (the solver's ``rematch``, for a move of many pushes);
    returns its total."""
    r = k + 1
    j = cm_goal(match, k) + 1
    u[r] = 0
    match[j] = 0
    _augment(rows, u, v, match, r, way, slack, seen)
    return _total(rows, match)


# ------------------------------------------------------------------ the room's rules
@compiled
def frozen(floor, dead, cols, occupied, cell, seen):
    """The box at ``cell`` can never move again: along each axis a wall, two dead squares
    or a frozen box holds it; boxes under test (``seen``, set on entry and cleared on the
    way out) count as walls. The same test as :func:`grid_envs.sokoban.rules.frozen`,
    which the tests hold it to."""
    seen[cell] = 1
    result = True
    for step in (cols, 1):
        a = cell - step
        b = cell + step
        if not floor[a] or not floor[b] or seen[a] or seen[b]:
            continue
        if dead[a] and dead[b]:
            continue
        if occupied[a] >= 0 and frozen(floor, dead, cols, occupied, a, seen):
            continue
        if occupied[b] >= 0 and frozen(floor, dead, cols, occupied, b, seen):
            continue
        result = False
        break
    seen[cell] = 0
    return result


@compiled
def _freeze_deadlock(floor, dead, goal, cols, occupied, cell, seen):
    """After a push onto ``cell``: a frozen box off its goal there or, when the pushed box
    froze on a goal, beside it (the solver's ``freeze_deadlock``)."""
    if goal[cell] < 0:
        return frozen(floor, dead, cols, occupied, cell, seen)
    if not frozen(floor, dead, cols, occupied, cell, seen):
        return False
    for o in (-cols, cols, -1, 1, -cols - 1, -cols + 1, cols - 1, cols + 1):
        n = cell + o
        if occupied[n] >= 0 and goal[n] < 0 and frozen(floor, dead, cols, occupied, n, seen):
            return True
    return False


@compiled
def _flood(start, floor, occupied, mark, stamp, queue, offsets):
    """The player's area from ``start``: its cells get ``mark == stamp``; returns its
    lowest cell, the area's name in the transposition table."""
    mark[start] = stamp
    queue[0] = start
    head, tail, low = 0, 1, start
    while head < tail:
        c = queue[head]
        head += 1
        for k in range(4):
            n = c + offsets[k]
            if floor[n] and occupied[n] < 0 and mark[n] != stamp:
                mark[n] = stamp
                queue[tail] = n
                tail += 1
                if n < low:
                    low = n
    return low


def corral_scratch(size: int) -> tuple[np.ndarray, ...]:
    """The working arrays of :func:`_corral` for a room of ``size`` cells."""
    return (
        np.full(size, -1, np.int64),  # label: the area off the player's reach of a cell
        np.zeros(size, np.int64),  # cells: those cells, area by area
        np.zeros(size + 1, np.int64),  # start: where each area's cells begin in ``cells``
        np.zeros(size, np.uint8),  # in_area: the areas the corral holds so far
        np.zeros(size, np.uint8),  # grow: the areas it must take in
        np.zeros(4 * size, np.int64),  # tried: the corrals tried, by hash
        np.zeros(size, np.uint8),  # barrier: the boxes fencing the corral
        np.zeros(size, np.int64),  # fence: those boxes' cells
        np.zeros(4 * size, np.int64),  # best_box, best_dir: the best corral's pushes
        np.zeros(4 * size, np.int64),
        np.zeros(size, np.int64),  # zob: a random key for each area
    )


@compiled
def _corral(
    floor, dead, goal, offsets, occupied, mark, stamp, out_box, out_dir, scratch
):  # fmt: skip
    """PI-corral pruning, as the solver's ``_pi_corral``: the pushes of the smallest
    PI-corral into ``out_box``/``out_dir``; returns their count, 0 for a corral deadlock,
    -1 when none applies. ``mark == stamp`` is the player's area. Corrals already tried
    are known by a hash of their areas: a collision can only make a corral count as tried,
    which prunes less, never wrongly."""
    label, cells, start, in_area, grow, tried, barrier, fence, best_box, best_dir, zob = scratch
    size = floor.shape[0]
    # the areas off the player's reach, in order of their lowest cell
    ncomp = 0
    n_cells = 0
    for c in range(size):
        if not floor[c] or occupied[c] >= 0 or mark[c] == stamp or label[c] >= 0:
            continue
        label[c] = ncomp
        start[ncomp] = n_cells
        cells[n_cells] = c
        head = n_cells
        n_cells += 1
        while head < n_cells:
            x = cells[head]
            head += 1
            for k in range(4):
                n = x + offsets[k]
                if floor[n] and occupied[n] < 0 and mark[n] != stamp and label[n] < 0:
                    label[n] = ncomp
                    cells[n_cells] = n
                    n_cells += 1
        ncomp += 1
    start[ncomp] = n_cells
    if ncomp == 0:
        return -1
    x = np.int64(0x2545F4914F6CDD1D)
    for k in range(ncomp):
        x = x * np.int64(6364136223846793005) + np.int64(1442695040888963407)
        zob[k] = x ^ (x >> np.int64(29))
    n_tried = 0
    best_n = -1
    for first in range(ncomp):
        for k in range(ncomp):
            in_area[k] = 0
        in_area[first] = 1
        n = -1
        while True:
            key = np.int64(0)
            for k in range(ncomp):
                if in_area[k]:
                    key ^= zob[k]
            already = False
            for q in range(n_tried):
                if tried[q] == key:
                    already = True
                    break
            if already:
                n = -1
                break
            if n_tried < tried.shape[0]:
                tried[n_tried] = key
                n_tried += 1
            # the fence: the boxes beside the corral, lowest cell first
            n_fence = 0
            for a in range(ncomp):
                if not in_area[a]:
                    continue
                for q in range(start[a], start[a + 1]):
                    for k in range(4):
                        b = cells[q] + offsets[k]
                        if occupied[b] >= 0 and not barrier[b]:
                            barrier[b] = 1
                            fence[n_fence] = b
                            n_fence += 1
            fence[:n_fence].sort()
            n = 0
            for k in range(ncomp):
                grow[k] = 0
            growing = False
            void = False
            for f in range(n_fence):
                b = fence[f]
                for d in range(4):
                    p = b - offsets[d]
                    t = b + offsets[d]
                    if not floor[p] or not floor[t]:
                        continue
                    if barrier[p] or (label[p] >= 0 and in_area[label[p]]):
                        continue  # no player there before the corral opens
                    if mark[p] != stamp and occupied[p] < 0:
                        grow[label[p]] = 1  # the player's square lies in another corral
                        growing = True
                        continue
                    if occupied[t] >= 0:
                        if barrier[t]:
                            continue
                        void = True  # an outside box may leave and free the way out
                        break
                    if dead[t]:
                        continue
                    if label[t] >= 0 and in_area[label[t]]:
                        if mark[p] != stamp:
                            void = True  # possible only after a move elsewhere
                            break
                        out_box[n] = b
                        out_dir[n] = d
                        n += 1
                    elif mark[t] == stamp:
                        void = True  # a push along the fence, not into the corral
                        break
                    else:
                        grow[label[t]] = 1
                        growing = True
                if void:
                    break
            unsolved = False
            if not void and not growing:
                for f in range(n_fence):
                    if goal[fence[f]] < 0:
                        unsolved = True
                for a in range(ncomp):
                    if in_area[a]:
                        for q in range(start[a], start[a + 1]):
                            if goal[cells[q]] >= 0:
                                unsolved = True
            for f in range(n_fence):
                barrier[fence[f]] = 0
            if void:
                n = -1
                break
            if growing:
                for k in range(ncomp):
                    if grow[k]:
                        in_area[k] = 1
                continue
            if not unsolved:
                n = -1
            break
        if n >= 0 and (best_n < 0 or n < best_n):
            best_n = n
            best_box[:n] = out_box[:n]
            best_dir[:n] = out_dir[:n]
            if n == 0:
                break
    for q in range(n_cells):
        label[cells[q]] = -1
    if best_n > 0:
        out_box[:best_n] = best_box[:best_n]
        out_dir[:best_n] = best_dir[:best_n]
    return best_n


# ------------------------------------------------------------------ the queue
# A queue entry is two int64s, compared in order: the priority ``(weight * 10 * h + 10 *
# g) << 24`` with ``G_MASK - g`` in the low bits (the higher g first among equals), then
# the order it was queued in (``seq << 30``) with the state's row in the low bits. Weights
# are kept to a tenth, so priorities are exact integers. A 4-ary heap: its four children
# lie in one cache line, and a pop reads half the levels a binary heap does.
G_MASK = (1 << 24) - 1
ROW_MASK = (1 << 30) - 1


@compiled
def _less(heap, a, b):
    if heap[a, 0] != heap[b, 0]:
        return heap[a, 0] < heap[b, 0]
    return heap[a, 1] < heap[b, 1]


@compiled
def _heap_push(heap, n, first, second):
    while n > 0:
        up = (n - 1) >> 2
        if heap[up, 0] < first or (heap[up, 0] == first and heap[up, 1] < second):
            break
        heap[n, 0] = heap[up, 0]
        heap[n, 1] = heap[up, 1]
        n = up
    heap[n, 0] = first
    heap[n, 1] = second


@compiled
def _heap_pop(heap, n):
    """Take the first of ``n`` entries off the heap, to row ``n - 1`` (read it there)."""
    top_first = heap[0, 0]
    top_second = heap[0, 1]
    n -= 1
    first = heap[n, 0]
    second = heap[n, 1]
    i = 0
    while True:
        c = 4 * i + 1
        if c >= n:
            break
        best = c
        for k in range(c + 1, min(c + 4, n)):
            if heap[k, 0] < heap[best, 0] or (
                heap[k, 0] == heap[best, 0] and heap[k, 1] < heap[best, 1]
            ):
                best = k
        if first < heap[best, 0] or (first == heap[best, 0] and second < heap[best, 1]):
            break
        heap[i, 0] = heap[best, 0]
        heap[i, 1] = heap[best, 1]
        i = best
    heap[i, 0] = first
    heap[i, 1] = second
    heap[n, 0] = top_first
    heap[n, 1] = top_second


# ------------------------------------------------------------------ the hash tables
# A table's slot is (hash, row); row -1 is empty. Probing compares the hashes first, so a
# row's own arrays are read only on a hash match, which is then confirmed on the boxes.
@compiled
def _find(table, where, boxes, occupied, player_of, player):
    """The slot of the state whose (boxes, player) hash to ``where``, whose boxes lie on
    ``occupied`` and whose ``player_of[row]`` is ``player``, or the empty slot where it
    would go (``table[slot, 1] < 0``)."""
    mask = table.shape[0] - 1
    slot = where & mask
    while True:
        row = table[slot, 1]
        if row < 0:
            return slot
        if table[slot, 0] == where and player_of[row] == player:
            same = True
            for k in range(boxes.shape[1]):
                if occupied[boxes[row, k]] < 0:
                    same = False
                    break
            if same:
                return slot
        slot = (slot + 1) & mask


# ------------------------------------------------------------------ the search
@compiled
def _priority(wkey, h, g):
    return ((wkey * h + 10 * g) << 24) | (G_MASK - g)


@compiled
def start(
    cost_of, zob_box, zob_player, cells, player, wkey, counters,
    boxes, player_at, parent, push, g, h, u, v, match, ebox, box_key, gen_table, heap,
):  # fmt: skip
    """Store the start position as state 0, its matching as the first expanded state's,
    and queue it; returns its bound."""
    nb = cells.shape[0]
    key = np.int64(0)
    for k in range(nb):
        boxes[0, k] = cells[k]
        key ^= zob_box[cells[k]]
    rows = np.empty((nb, cost_of.shape[1]), np.int64)
    for k in range(nb):
        rows[k] = cost_of[cells[k]]
    uu = np.zeros(nb + 1, np.int64)
    vv = np.zeros(nb + 1, np.int64)
    mm = np.zeros(nb + 1, np.int64)
    total = hungarian(rows, uu, vv, mm)
    u[0] = uu
    v[0] = vv
    match[0] = mm
    ebox[0] = boxes[0]
    player_at[0] = player
    parent[0] = -1
    push[0] = -1
    g[0] = 0
    h[0] = total
    box_key[0] = key
    where = key ^ zob_player[player]
    slot = where & (gen_table.shape[0] - 1)
    gen_table[slot, 0] = where
    gen_table[slot, 1] = 0
    _heap_push(heap, 0, _priority(wkey, total, 0), 0)
    counters[N_STATES] = 1
    counters[N_HEAP] = 1
    counters[GENERATED] = 0
    counters[EXPANDED] = 0
    counters[FOUND] = -1
    counters[BEST_H] = total
    return total


@compiled
def _store(
    row, i, k, t, b, d, child_g, total, key, boxes, player_at, parent, push, g, h, box_key
):  # fmt: skip
    """State ``row``: the parent ``i``'s boxes with box ``k`` (at ``b``, pushed first in
    direction ``d``) now at ``t``, the player at the last push's cell."""
    for q in range(boxes.shape[1]):
        boxes[row, q] = boxes[i, q]
    boxes[row, k] = t
    player_at[row] = b
    parent[row] = i
    push[row] = b * 4 + d
    g[row] = child_g
    h[row] = total
    box_key[row] = key


@compiled
def _features(floor_cells, floor, occupied, label, counters, queue, offsets, fs, ng, size):
    """The cell of a box layout in the feature search: (goals packed, areas) in order."""
    counters[ASTAMP] += 1
    count = areas(floor_cells, floor, occupied, label, counters[ASTAMP], queue, offsets)
    return (ng - packed(occupied, fs[0], fs[1])) * (size + 1) + count


@compiled
def queue_root_in_cell(floor, offsets, occupied, boxes, counters, fs, cells, ng, h0):
    """Queue the start (row 0) in its cell of the feature search, at cost 1 (a move that
    neither packs nor joins costs one, and the start's features are its own)."""
    floor_cells, label, queue = fs[3], fs[4], fs[5]
    heaps, sizes, keys = cells
    for k in range(boxes.shape[1]):
        occupied[boxes[0, k]] = k
    cell = _features(
        floor_cells, floor, occupied, label, counters, queue, offsets, fs, ng, floor.shape[0]
    )
    for k in range(boxes.shape[1]):
        occupied[boxes[0, k]] = -1
    cell_push(heaps, sizes, keys, counters, NKEYS, TURN, cell, (1 << 32) | h0,
              entry_order(0, 0), 0)  # fmt: skip


@compiled
def run(
    floor, dead, goal, offsets, cols, cost_of, zob_box, zob_player, wkey, budget, counters,
    boxes, player_at, parent, push, g, h, u, v, match, ebox, slot_of, box_key, norm,
    gen_table, closed_table, heap, scratch, corral_scratch,
    feature, fs, cells, macros, paths,
):  # fmt: skip
    """Expand up to ``budget`` states; returns OPEN, SOLVED (``counters[FOUND]``),
    EXHAUSTED, or FULL when the next state's children might not fit (the caller grows the
    arrays and calls again; nothing was lost).

    ``feature`` 0 is a weighted best-first search on ``heap``; 1 the feature search on
    ``cells`` (with goal macros when ``feature & 2``, the packing advice when
    ``feature & 4``), whose moves of many pushes go to ``macros`` (a state's pushes from
    ``mstart`` for ``mlen``; the pool's rows) and whose features come from ``fs``.

    Only expanded states keep their matching (``u``, ``v``, ``match``, in the box order
    ``ebox``, at row ``slot_of[state]``): a state's own is worked out again from its
    parent's when it is expanded, as it was when it was generated, so the many states
    that are generated and never expanded keep only their bound."""
    occupied, mark, queue, seen, out_box, out_dir = scratch
    area_goals, area_start, goal_area, floor_cells, label, fqueue = fs
    heaps, sizes, keys = cells
    mstart, mlen, pool = macros
    marks, stamps, visited, states, pbuf = paths
    nb = boxes.shape[1]
    ng = cost_of.shape[1]
    na = area_start.shape[0] - 1
    size = floor.shape[0]
    cap = boxes.shape[0]
    most_paths = 8 * nb + na + 1
    rows = np.empty((nb, ng), np.int64)
    before = np.empty(ng, np.int64)
    uu = np.empty(nb + 1, np.int64)
    vv = np.empty(nb + 1, np.int64)
    mm = np.empty(nb + 1, np.int64)
    cu = np.empty(nb + 1, np.int64)
    cm = np.empty(nb + 1, np.int64)
    cv = np.empty(nb + 1, np.int64)
    way = np.empty(nb + 1, np.int64)
    slack = np.empty(nb + 1, np.int64)
    colseen = np.empty(nb + 1, np.uint8)
    order = np.empty(nb, np.int64)
    pstart = np.empty(most_paths + 1, np.int64)
    near = np.empty(nb, np.int64)
    entry = np.empty(3, np.int64)
    done = 0
    while done < budget:
        if (counters[NKEYS] if feature else counters[N_HEAP]) == 0:
            return EXHAUSTED
        # room for every child of one state, in the states, the tables, the queue, the pool
        room = counters[N_STATES] + most_paths
        if room >= cap or counters[N_HEAP] + most_paths >= heap.shape[0]:
            return FULL
        if 2 * room >= gen_table.shape[0] or counters[EXPANDED] >= u.shape[0]:
            return FULL
        if feature and counters[N_POOL] + most_paths * MAX_PUSHES >= pool.shape[0]:
            return FULL
        if feature:
            here_cell = cell_pop(heaps, sizes, keys, counters, NKEYS, TURN, entry)
            i = entry[2]
            gi = entry_g(entry[1])
            here_cost = entry[0] >> 32
        else:
            _heap_pop(heap, counters[N_HEAP])
            counters[N_HEAP] -= 1
            i = heap[counters[N_HEAP], 1] & ROW_MASK
            gi = G_MASK - (heap[counters[N_HEAP], 0] & G_MASK)
            here_cell = 0
            here_cost = 0
        if g[i] < gi:
            continue  # reached again at a lower cost since this entry was queued
        for k in range(nb):
            occupied[boxes[i, k]] = k
        counters[STAMP] += 1
        stamp = counters[STAMP]
        low = _flood(player_at[i], floor, occupied, mark, stamp, queue, offsets)
        where = box_key[i] ^ zob_player[low]
        slot = _find(closed_table, where, boxes, occupied, norm, low)
        if closed_table[slot, 1] >= 0:
            for k in range(nb):
                occupied[boxes[i, k]] = -1
            continue
        norm[i] = low
        closed_table[slot, 0] = where
        closed_table[slot, 1] = i
        counters[EXPANDED] += 1
        done += 1
        if h[i] < counters[BEST_H]:
            counters[BEST_H] = h[i]
        # the moves, in the solver's order: a PI-corral's pushes, or every push the
        # player can make (direction, then the target cell); then the goal macros; then
        # the packing advice. Each is a path of pushes in ``pbuf``.
        n_paths = _corral(
            floor, dead, goal, offsets, occupied, mark, stamp, out_box, out_dir, corral_scratch
        )
        if n_paths >= 0:
            for k in range(n_paths):
                pbuf[k] = out_box[k] * 4 + out_dir[k]
        else:
            n_paths = 0
            for k in range(nb):
                order[k] = boxes[i, k]
            order.sort()
            for d in range(4):
                o = offsets[d]
                for k in range(nb):
                    b = order[k]
                    t = b + o
                    if mark[b - o] == stamp and floor[t] and occupied[t] < 0 and not dead[t]:
                        pbuf[n_paths] = b * 4 + d
                        n_paths += 1
        for k in range(n_paths + 1):
            pstart[k] = k
        singles = n_paths
        if feature & 2:  # goal macros: a box entering a goal area goes on to its next slot
            for k in range(singles):
                b = pbuf[k] >> 2
                t = b + offsets[pbuf[k] & 3]
                if goal[t] < 0 or goal_area[b] == goal_area[t]:
                    continue
                a = goal_area[t]
                target = t
                for q in range(area_start[a], area_start[a + 1]):
                    x = area_goals[q]
                    if occupied[x] < 0 or x == b:
                        target = x
                        break
                if target == t:
                    continue
                at = pstart[n_paths]
                pbuf[at] = pbuf[k]
                length = push_path(
                    t, b, b, target, floor, occupied, offsets, marks, stamps, visited, states,
                    pbuf[at + 1:],
                )  # fmt: skip
                if length < 0:
                    continue
                n_paths += 1
                pstart[n_paths] = at + 1 + length
        if feature & 4:  # the packing advice: fill each area's next goal in its order
            for a in range(na):
                first = area_start[a]
                filled = first
                while filled < area_start[a + 1] and occupied[area_goals[filled]] >= 0:
                    filled += 1
                if filled == area_start[a + 1]:
                    continue
                target = area_goals[filled]
                column = goal[target]
                n_near = 0
                for k in range(nb):  # the boxes off the packed goals, nearest first
                    c = boxes[i, k]
                    kept = False
                    for q in range(first, filled):
                        if area_goals[q] == c:
                            kept = True
                    if kept or cost_of[c, column] >= BIG:
                        continue
                    near[n_near] = c
                    n_near += 1
                for x in range(1, n_near):  # by (distance, cell), as sorted() orders them
                    y = x
                    while y > 0 and (
                        cost_of[near[y], column] < cost_of[near[y - 1], column]
                        or (cost_of[near[y], column] == cost_of[near[y - 1], column]
                            and near[y] < near[y - 1])
                    ):  # fmt: skip
                        near[y], near[y - 1] = near[y - 1], near[y]
                        y -= 1
                for x in range(min(n_near, 3)):
                    at = pstart[n_paths]
                    length = push_path(
                        near[x], low, near[x], target, floor, occupied, offsets, marks, stamps,
                        visited, states, pbuf[at:],
                    )  # fmt: skip
                    if length > 0:
                        n_paths += 1
                        pstart[n_paths] = at + length
                        break
        # this state's matching, from its parent's
        e = counters[EXPANDED] - 1
        p = parent[i]
        if p >= 0:
            sp = slot_of[p]
            for k in range(nb):
                rows[k] = cost_of[ebox[sp, k]]
            uu[:] = u[sp]
            vv[:] = v[sp]
            mm[:] = match[sp]
            if mlen[i] > 1:
                b = pool[mstart[i]] >> 2
                last = pool[mstart[i] + mlen[i] - 1]
            else:
                b = push[i] >> 2
                last = push[i]
            k = 0
            while ebox[sp, k] != b:
                k += 1
            before[:] = rows[k]
            rows[k] = cost_of[(last >> 2) + offsets[last & 3]]
            if mlen[i] > 1:
                _rematch_row(rows, k, uu, vv, mm, way, slack, colseen)
            else:
                _rematch(rows, k, before, uu, vv, mm, way, slack, colseen)
            u[e] = uu
            v[e] = vv
            match[e] = mm
            ebox[e] = boxes[i]
        else:
            for k in range(nb):
                rows[k] = cost_of[boxes[i, k]]
            uu[:] = u[e]
            vv[:] = v[e]
            mm[:] = match[e]
        slot_of[i] = e
        h_here = h[i]
        on_goal = 0
        for k in range(nb):
            if goal[boxes[i, k]] >= 0:
                on_goal += 1
        here_packed = ng - here_cell // (size + 1)
        here_areas = here_cell % (size + 1)
        for c in range(n_paths):
            length = pstart[c + 1] - pstart[c]
            b = pbuf[pstart[c]] >> 2
            d = pbuf[pstart[c]] & 3
            last = pbuf[pstart[c + 1] - 1]
            t = (last >> 2) + offsets[last & 3]
            player = last >> 2
            child_g = g[i] + length
            k = occupied[b]
            key = box_key[i] ^ zob_box[b] ^ zob_box[t]
            occupied[b] = -1
            occupied[t] = k
            where = key ^ zob_player[player]
            gslot = _find(gen_table, where, boxes, occupied, player_at, player)
            old = gen_table[gslot, 1]
            skip = old >= 0 and g[old] <= child_g
            solved = on_goal - (goal[b] >= 0) + (goal[t] >= 0) == nb
            if not skip and not solved:
                skip = _freeze_deadlock(floor, dead, goal, cols, occupied, t, seen)
            child_cell = 0
            if feature and not skip and not solved:
                child_cell = _features(
                    floor_cells, floor, occupied, label, counters, fqueue, offsets, fs, ng, size
                )
            occupied[t] = -1
            occupied[b] = k
            if skip:
                continue
            total = 0
            if not solved:  # the child's matching from the parent's: the moved box's row
                before[:] = rows[k]
                rows[k] = cost_of[t]
                cu[:] = uu
                cv[:] = vv
                cm[:] = mm
                if length == 1:
                    total = _rematch(rows, k, before, cu, cv, cm, way, slack, colseen)
                    if total < 0:
                        j = cm_goal(cm, k)
                        total = h_here - before[j] + rows[k, j]
                else:
                    total = _rematch_row(rows, k, cu, cv, cm, way, slack, colseen)
                rows[k] = before
                if total >= BIG:
                    continue
            row = counters[N_STATES] if old < 0 else old
            _store(
                row, i, k, t, b, d, child_g, total, key, boxes, player_at, parent, push, g, h,
                box_key,
            )  # fmt: skip
            player_at[row] = player
            mlen[row] = length
            if length > 1:
                mstart[row] = counters[N_POOL]
                for q in range(length):
                    pool[counters[N_POOL] + q] = pbuf[pstart[c] + q]
                counters[N_POOL] += length
            if old < 0:
                gen_table[gslot, 0] = where
                gen_table[gslot, 1] = row
                counters[N_STATES] += 1
            if solved:
                counters[FOUND] = row
                for q in range(nb):
                    occupied[boxes[i, q]] = -1
                return SOLVED
            counters[GENERATED] += 1
            if feature:
                child_packed = ng - child_cell // (size + 1)
                advised = child_packed > here_packed or child_cell % (size + 1) < here_areas
                cost = here_cost + (0 if advised else 1)
                cell_push(
                    heaps, sizes, keys, counters, NKEYS, TURN, child_cell, (cost << 32) | total,
                    entry_order(child_g, counters[GENERATED]), row,
                )  # fmt: skip
            else:
                _heap_push(
                    heap, counters[N_HEAP], _priority(wkey, total, child_g),
                    (counters[GENERATED] << 30) | row,
                )  # fmt: skip
                counters[N_HEAP] += 1
        for k in range(nb):
            occupied[boxes[i, k]] = -1
    return OPEN


@compiled
def rehash(table, box_key, zob_player, player_of, n):
    """Put rows ``0..n-1`` into an empty ``table`` as :func:`_find` probes for them, by
    their boxes and ``player_of`` (rows whose ``player_of`` is -1 are left out: not
    expanded yet, for the table of expanded states)."""
    mask = table.shape[0] - 1
    for row in range(n):
        if player_of[row] < 0:
            continue
        where = box_key[row] ^ zob_player[player_of[row]]
        slot = where & mask
        while table[slot, 1] >= 0:
            slot = (slot + 1) & mask
        table[slot, 0] = where
        table[slot, 1] = row


# ------------------------------------------------------------------ the Python side
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


class Features(NamedTuple):
    """What the feature search is given: each goal area's goals in the order the packing
    fills them (areas in the order their first goal comes in the packing order), and the
    moves of many pushes it offers."""

    orders: list[list[int]]
    goal_macros: bool
    packing_advice: bool


class CompiledSearch:
    """One best-first search over pushes, run compiled: weighted (``weight * h + g``), or,
    given ``features``, the feature search. The interface of the solver's ``_Search``
    (:meth:`run` answers ``"open"``, ``"solved"`` or ``"exhausted"``; ``expanded``,
    ``generated``, ``best_bound``; :meth:`pushes` the solution's pushes).

    Its arrays start small and double when full; ``memory`` (bytes, shared by the searches
    of one solve as a one-item list of what is left) bounds them: a doubling that would
    pass it raises :class:`MemoryLimit` instead."""

    def __init__(self, room: Room, cells: list[int], player: int, weight: float,
                 memory: list[int], capacity: int = 4096,
                 features: Features | None = None) -> None:  # fmt: skip
        wkey = round(weight * 10)
        if wkey <= 0 or abs(wkey - weight * 10) > 1e-9:
            raise ValueError(f"a search's weight is kept to a tenth, got {weight!r}")
        self.room = room
        self.weight = float(weight)
        self.wkey = wkey
        self.memory = memory
        self.nb = len(cells)
        self.found: int | None = None
        self.counters = np.zeros(N_COUNTERS, np.int64)
        size = room.floor.shape[0]
        self.scratch = (
            np.full(size, -1, np.int64), np.zeros(size, np.int64), np.zeros(size, np.int64),
            np.zeros(size, np.uint8), np.zeros(4 * size, np.int64), np.zeros(4 * size, np.int64),
        )  # fmt: skip
        self.corral = corral_scratch(size)
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
            self.feature = 1 | 2 * features.goal_macros | 4 * features.packing_advice
        ncells = (room.cost_of.shape[1] + 1) * (size + 1) if features is not None else 1
        self.cells = (new_cells(ncells), np.zeros(ncells, np.int64), np.zeros(ncells, np.int64))
        most_paths = self.most_paths = 8 * self.nb + len(orders) + 1
        self.paths = (
            *path_scratch(size),
            np.zeros(most_paths * (MAX_PUSHES + 1) + 8, np.int64),
        )
        self._alloc(capacity)
        if self.nbytes > memory[0]:
            raise MemoryLimit
        memory[0] -= self.nbytes
        h0 = start(
            room.cost_of, room.zob_box, room.zob_player, np.array(cells, np.int64), player,
            wkey, self.counters, self.boxes, self.player_at, self.parent, self.push, self.g,
            self.h, self.u, self.v, self.match, self.ebox, self.box_key, self.gen_table,
            self.heap,
        )  # fmt: skip
        if features is not None:  # its queue is the cells', not the heap
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
    def nbytes(self) -> int:
        """The memory its arrays take (the feature search's cells: 24 bytes a state)."""
        cells = 24 * self.boxes.shape[0] if self.feature else 0
        return sum(a.nbytes for a in self._arrays()) + cells

    def _arrays(self) -> list[np.ndarray]:
        # the state arrays first (rows are states), then the expanded states' (rows are
        # expansions), then the tables, the queue and the pool of moves
        return [
            self.boxes, self.player_at, self.parent, self.push, self.g, self.h, self.slot_of,
            self.box_key, self.norm, self.mstart, self.mlen, self.u, self.v, self.match,
            self.ebox, self.gen_table, self.closed_table, self.heap, self.pool,
        ]  # fmt: skip

    def _alloc(self, cap: int) -> None:
        nb = self.nb
        self.boxes = np.zeros((cap, nb), np.int16)
        self.player_at = np.zeros(cap, np.int32)
        self.parent = np.zeros(cap, np.int64)
        self.push = np.zeros(cap, np.int32)
        self.g = np.zeros(cap, np.int32)
        self.h = np.zeros(cap, np.int32)
        self.slot_of = np.zeros(cap, np.int32)
        self.box_key = np.zeros(cap, np.int64)
        self.norm = np.full(cap, -1, np.int32)
        self.mstart = np.zeros(cap, np.int64)
        self.mlen = np.ones(cap, np.int32)
        # expanded states are a fraction of those stored (a fifth or less, measured)
        expanded = max(cap // 4, 16)
        self.u = np.zeros((expanded, nb + 1), np.int32)
        self.v = np.zeros((expanded, nb + 1), np.int32)
        self.match = np.zeros((expanded, nb + 1), np.int16)
        self.ebox = np.zeros((expanded, nb), np.int16)
        slots = 1 << (2 * cap - 1).bit_length()  # at most half full: a state a slot or less
        self.gen_table = np.full((slots, 2), -1, np.int64)
        self.closed_table = np.full((slots, 2), -1, np.int64)
        self.heap = np.zeros((cap, 2), np.int64)
        # moves of many pushes: room for one expansion's worth, and more as they come
        most = self.most_paths * (MAX_PUSHES + 1)
        self.pool = np.zeros(most + cap if self.feature else 8, np.int64)

    def _grow(self) -> None:
        """Double every array, keeping what is stored (the tables are filled again)."""
        old = self._arrays()
        if self.nbytes > self.memory[0]:  # the doubled arrays take twice what these do
            raise MemoryLimit
        self.memory[0] -= self.nbytes
        n = int(self.counters[N_STATES])
        e = int(self.counters[EXPANDED])
        self._alloc(2 * self.boxes.shape[0])
        for new, was in zip(self._arrays()[:11], old[:11], strict=True):
            new[:n] = was[:n]
        for new, was in zip(self._arrays()[11:15], old[11:15], strict=True):
            new[:e] = was[:e]
        entries = int(self.counters[N_HEAP])
        self.heap[:entries] = old[-2][:entries]
        used = int(self.counters[N_POOL])
        self.pool[:used] = old[-1][:used]
        room = self.room
        rehash(self.gen_table, self.box_key, room.zob_player, self.player_at, n)
        rehash(self.closed_table, self.box_key, room.zob_player, self.norm, n)

    def run(self, budget: int) -> str:
        room = self.room
        stop = self.expanded + budget
        while True:
            outcome = run(
                room.floor, room.dead, room.goal, room.offsets, room.cols, room.cost_of,
                room.zob_box, room.zob_player, self.wkey, stop - self.expanded, self.counters,
                self.boxes, self.player_at, self.parent, self.push, self.g, self.h, self.u,
                self.v, self.match, self.ebox, self.slot_of, self.box_key, self.norm,
                self.gen_table, self.closed_table, self.heap, self.scratch, self.corral,
                self.feature, self.fs, self.cells, (self.mstart, self.mlen, self.pool),
                self.paths,
            )  # fmt: skip
            if outcome != FULL:
                break
            self._grow()
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
            at, length = int(self.mstart[row]), int(self.mlen[row])
            moves = self.pool[at : at + length].tolist() if length > 1 else [int(self.push[row])]
            out.extend(divmod(int(m), 4) for m in reversed(moves))
            row = int(self.parent[row])
        return out[::-1]
