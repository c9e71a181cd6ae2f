"""The push search's loop, compiled: one best-first search over pushes, weighted or in
feature space, expanding states, making their moves and queueing their children.

The room is flat row-major cells, as the solver's bitboards number them; a room's border
is wall (the level gate makes it so), so a floor cell's four neighbours are always cells.
A search keeps its states in arrays (struct of arrays, grown by the caller when full):

* ``boxes[i]``: the box cells of state ``i`` in the row order of its matching;
* ``low_of[i]``: the lowest cell of the player's area (the state's name, and where the
  search of the area starts when the state is expanded);
* ``parent[i]``, ``push[i]`` (``box cell * 4 + direction``; -1 for the start), ``g[i]``,
  ``h[i]``; a move of many pushes keeps them in a pool, ``push[i]`` then ``-2 - at``
  with the count at ``pool[at]`` and the pushes after it (:func:`_move`);
* for expanded states only, their matching (:func:`run` says why), kept at row
  ``slot_of[i]`` (-1 until the state is expanded) of arrays that grow on their own;
* a hash table of the states by (boxes, player's area), to drop a position reached again
  at no lower cost; a position is one row, so ``slot_of`` tells whether it was expanded
  and none is expanded twice. Keys are Zobrist hashes, and a hit is confirmed on the box cells
  themselves, so a hash collision never merges two positions.

A row holds only what the search cannot work out again: a state's hash is worked out from
its boxes when it is expanded (the table keeps its top bits), and the player's area is
searched from its lowest cell, so neither is stored: memory, more than time, bounds how
far a long search gets.
"""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import compiled, inlined, uncounted
from grid_envs.sokoban.compiled.areas import (
    SIZE,
    areas,
    areas_after,
    child_low,
    number_areas,
    search_area,
)
from grid_envs.sokoban.compiled.features import (
    MAX_PUSHES,
    cell_pop,
    cell_push,
    entry_g,
    entry_order,
    packed,
    push_path,
)
from grid_envs.sokoban.compiled.fences import any_lost
from grid_envs.sokoban.compiled.matching import (
    BIG,
    hungarian,
    matched_goal,
    rematch,
    rematch_row,
)
from grid_envs.sokoban.compiled.pairs import pair_deadlock
from grid_envs.sokoban.compiled.pruning import (
    OUT_BOX,
    OUT_DIR,
    corral,
    flood,
    freeze_deadlock,
    sort_few,
)
from grid_envs.sokoban.compiled.queue import N_BUCKETS, queue_pop, queue_push

# what :func:`run` answers
OPEN, SOLVED, EXHAUSTED, FULL, FULL_EXPANDED = 0, 1, 2, 3, 4

# the counters a search keeps between turns, in one int64 array
(
    N_STATES,  # states stored (the next free row)
    N_HEAP,  # entries in the queue
    EXPANDED,
    GENERATED,
    FOUND,  # the solved state's row, -1 until then
    STAMP,  # the player's area's visit stamp
    BEST_H,  # the least bound of any state expanded
    N_POOL,  # entries used in the pool of moves of many pushes (feature search)
    NKEYS,  # non-empty cells of the feature search
    TURN,  # the cell whose turn it is
    ASTAMP,  # the last stamp the area counts and the children's areas marked ``label`` with
    BEST_PACKED,  # the most goals packed in order of any state expanded (feature search)
    N_COUNTERS,
) = range(13)


# ------------------------------------------------------------------ the queue
# A queue entry (:mod:`.queue`) is two int64s, compared in order: the priority ``(weight *
# 10 * h + 10 * g) << 24`` with ``G_MASK - g`` in the low bits (the higher g first among
# equals), then the order it was queued in (``seq << 30``) with the state's row in the low
# bits. Weights are kept to a tenth, so priorities are exact integers.
G_MASK = (1 << 24) - 1
ROW_MASK = (1 << 30) - 1


# ------------------------------------------------------------------ the hash tables
# A table's slot is one int64: the state's hash with its low ``ROW_BITS`` bits replaced by
# its row + 1 (0 is empty), so that a table takes 8 bytes a slot and a new one is zeros,
# which the system hands over untouched. A table of ``2**L`` slots puts a state at the slot
# that its hash's top ``L`` bits name, so that a table twice the size puts the state of slot
# ``s`` at ``2 * s`` or ``2 * s + 1`` (or on past the slots taken before it): a table grows from
# the one before in one pass in slot order, without reading a state (:func:`retable`).
# Probing compares the hashes' top bits first, so a row's own arrays are read only on a
# match, which the boxes and the player then confirm.
ROW_BITS = 31  # a row + 1 is at most 2**30 (the queue's ``ROW_MASK`` + 1)
ROW_FIELD = (1 << ROW_BITS) - 1


@compiled
def table_shift(table):
    """How far a hash is shifted right to leave the top bits that name its slot in
    ``table`` (a power of two of slots)."""
    bits = 0
    while (1 << bits) < table.shape[0]:
        bits += 1
    return 64 - bits


@compiled
def _home(where, shift, mask):
    """The slot a hash (or a slot's value) goes to first: its top bits."""
    return (where >> shift) & mask


@uncounted
def _find(table, shift, where, boxes, occupied, player_of, player):
    """The slot of the state whose (boxes, player) hash to ``where``, whose boxes lie on
    ``occupied`` and whose ``player_of[row]`` is ``player``, or the empty slot where it
    would go (``table[slot] == 0``)."""
    mask = table.shape[0] - 1
    slot = _home(where, shift, mask)
    high = where >> ROW_BITS
    while True:
        entry = table[slot]
        if entry == 0:
            return slot
        if entry >> ROW_BITS == high:
            row = (entry & ROW_FIELD) - 1
            if player_of[row] == player:
                same = True
                for k in range(boxes.shape[1]):
                    if occupied[boxes[row, k]] < 0:
                        same = False
                        break
                if same:
                    return slot
        slot = (slot + 1) & mask


@uncounted
def _box_key(zob_box, boxes, row):
    """The Zobrist key of state ``row``'s boxes (a state's key in the table adds its
    player's area's): worked out when it is needed, not stored."""
    key = np.int64(0)
    for k in range(boxes.shape[1]):
        key ^= zob_box[boxes[row, k]]
    return key


@compiled
def _entry(where, row):
    """A table slot's value: the state's hash ``where`` above ``row + 1``."""
    return (where & ~ROW_FIELD) | (row + 1)


@compiled
def _row_in(entry):
    """The row a table slot holds, -1 for an empty one."""
    return (entry & ROW_FIELD) - 1


# ------------------------------------------------------------------ the search
@compiled
def _priority(wkey, h, g):
    return ((wkey * h + 10 * g) << 24) | (G_MASK - g)


@compiled
def start(
    cost_of, zob_box, zob_player, cells, low, wkey, counters,
    boxes, parent, push, g, h, u, match, low_of, gen_table, queue,
):  # fmt: skip
    """Store the start position as state 0 (``low``: its player's area's lowest cell),
    its matching as the first expanded state's, and queue it; returns its bound."""
    nb = cells.shape[0]
    for k in range(nb):
        boxes[0, k] = cells[k]
    key = _box_key(zob_box, boxes, 0)
    rows = np.empty((nb, cost_of.shape[1]), np.int64)
    for k in range(nb):
        rows[k] = cost_of[cells[k]]
    uu = np.zeros(nb + 1, np.int64)
    vv = np.zeros(nb + 1, np.int64)
    mm = np.zeros(nb + 1, np.int64)
    total = hungarian(rows, uu, vv, mm)
    u[0] = uu
    match[0] = mm
    parent[0] = -1
    push[0] = -1
    g[0] = 0
    h[0] = total
    low_of[0] = low
    where = key ^ zob_player[low]
    mask = gen_table.shape[0] - 1
    gen_table[_home(where, table_shift(gen_table), mask)] = _entry(where, 0)
    entries, buckets, order, index, kept = queue
    queue_push(entries, buckets, order, index, kept, _priority(wkey, total, 0), 0)
    counters[N_STATES] = 1
    counters[N_HEAP] = 1
    counters[GENERATED] = 0
    counters[EXPANDED] = 0
    counters[FOUND] = -1
    counters[BEST_H] = total
    return total


@uncounted
def _store(
    row, i, k, t, child_g, total, boxes, parent, g, h, slot_of
):  # fmt: skip
    """State ``row``: the parent ``i``'s boxes with box ``k`` now at ``t`` (its move in
    ``push``, set by the caller). An expanded state reached again at a lower cost keeps
    its boxes' order: the matching kept for it, which its children's start from, is in
    that order."""
    if slot_of[row] < 0:
        for q in range(boxes.shape[1]):
            boxes[row, q] = boxes[i, q]
        boxes[row, k] = t
    parent[row] = i
    g[row] = child_g
    h[row] = total


@uncounted
def _move(push, pool, i):
    """State ``i``'s move: (its first push, its last, how many), each push ``box cell *
    4 + direction``."""
    p = push[i]
    if p >= 0:
        return p, p, 1
    at = -2 - p
    return pool[at + 1], pool[at + pool[at]], pool[at]


@uncounted
def _cell(count, occupied, fs, ng, size):
    """The cell of a box layout of ``count`` areas: (goals packed, areas) in order."""
    return (ng - packed(occupied, fs[0], fs[1])) * (size + 1) + count


@inlined
def _features(floor_cells, floor, occupied, label, counters, queue, offsets, fs, ng, size):
    """The cell of a box layout in the feature search: (goals packed, areas) in order."""
    counters[ASTAMP] += 1
    count = areas(floor_cells, floor, occupied, label, counters[ASTAMP], queue, offsets)
    return _cell(count, occupied, fs, ng, size)


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


@uncounted
def _pushes(
    floor, dead, goal, offsets, occupied, mark, stamp, low, work, fences, cells, order, pbuf,
    last, left,
):  # fmt: skip
    """A PI-corral's pushes, or every push the player (``mark == stamp``, lowest cell
    ``low``) can make, in the solver's order (direction, then the target cell), into
    ``pbuf``; returns their count, 0 where a corral is lost (:mod:`.fences`, with
    ``fences`` its working array; ``last`` the cell where the state's own move left its
    box, -1 for none; ``left`` the free cells off the player's reach, where the corral's
    labelling of the room stops). ``work`` is the corral's working array."""
    n = corral(floor, dead, goal, offsets, occupied, mark, stamp, work, left)
    if n != 0 and any_lost(low, floor, dead, goal, offsets, work, fences, occupied, last):
        return 0
    if n >= 0:
        for k in range(n):
            pbuf[k] = work[OUT_BOX, k] * 4 + work[OUT_DIR, k]
        return n
    nb = cells.shape[0]
    for q in range(nb):
        order[q] = cells[q]
    sort_few(order, nb)
    n = 0
    for d in range(4):
        o = offsets[d]
        for q in range(nb):
            b = order[q]
            t = b + o
            if mark[b - o] == stamp and floor[t] and occupied[t] < 0 and not dead[t]:
                pbuf[n] = b * 4 + d
                n += 1
    return n


@uncounted
def _goal_macros(n_paths, goal, offsets, floor, occupied, fs, paths, pstart):
    """After the pushes, a goal macro for each push that takes a box into a goal area from
    outside it: the box goes on to the slot the area fills next, where it can get there
    (the solver's ``goal_macro``). Returns the paths' count."""
    area_goals, area_start, goal_area = fs[0], fs[1], fs[2]
    marks, stamps, visited, states, pbuf = paths
    for k in range(n_paths):
        b = pbuf[k] >> 2
        t = b + offsets[pbuf[k] & 3]
        if goal[t] < 0 or goal_area[b] == goal_area[t]:
            continue
        a = goal_area[t]
        target = t
        for q in range(area_start[a], area_start[a + 1]):
            x = area_goals[q]
            if occupied[x] < 0 or x == b:  # free once the box has left b for t
                target = x
                break
        if target == t:
            continue
        at = pstart[n_paths]
        pbuf[at] = pbuf[k]
        length = push_path(
            t, b, b, target, floor, occupied, offsets, marks, stamps, visited, states,
            pbuf[at + 1 :],
        )  # fmt: skip
        if length >= 0:
            n_paths += 1
            pstart[n_paths] = at + 1 + length
    return n_paths


@uncounted
def _rank(near, n_near, cost_of, column, mine):
    """Order the boxes ``near[:n_near]`` as the advice tries them: by (distance to goal
    ``column``, cell), as the solver's ``sorted()`` orders them, then the box on ``mine``
    (the one the matching gives that goal; -1: none) moved to the front."""
    for x in range(1, n_near):
        y = x
        while y > 0 and (
            cost_of[near[y], column] < cost_of[near[y - 1], column]
            or (cost_of[near[y], column] == cost_of[near[y - 1], column]
                and near[y] < near[y - 1])
        ):  # fmt: skip
            near[y], near[y - 1] = near[y - 1], near[y]
            y -= 1
    for x in range(n_near):
        if near[x] == mine:
            for y in range(x, 0, -1):
                near[y] = near[y - 1]
            near[0] = mine
            return


@uncounted
def _packing_advice(
    n_paths, cells, low, goal, offsets, floor, occupied, cost_of, fs, paths, pstart, near,
    mark, stamp, match,
):  # fmt: skip
    """For each goal area, the move that fills its next goal in the packing order: the
    three boxes nearest it in pushes (those on the area's packed goals aside) are tried in
    turn, the others standing still (the solver's ``fill_path``); with ``match`` (the
    state's matching, empty: none) the box it gives that goal comes first. Returns the
    paths' count. A box beside no cell of the player's area (``mark == stamp``) has no
    path, and is passed over before the path's search (docs/sokoban-solver.md says how
    often)."""
    area_goals, area_start = fs[0], fs[1]
    marks, stamps, visited, states, pbuf = paths
    for a in range(area_start.shape[0] - 1):
        first = area_start[a]
        filled = first
        while filled < area_start[a + 1] and occupied[area_goals[filled]] >= 0:
            filled += 1
        if filled == area_start[a + 1]:
            continue
        target = area_goals[filled]
        column = goal[target]
        n_near = 0
        for c in cells:
            kept = False
            for q in range(first, filled):
                if area_goals[q] == c:
                    kept = True
            if not kept and cost_of[c, column] < BIG:
                near[n_near] = c
                n_near += 1
        mine = cells[match[column + 1] - 1] if match.shape[0] > 0 else -1
        _rank(near, n_near, cost_of, column, mine)
        for x in range(min(n_near, 3)):
            if not _beside_area(near[x], mark, stamp, offsets):
                continue
            at = pstart[n_paths]
            length = push_path(
                near[x], low, near[x], target, floor, occupied, offsets, marks, stamps,
                visited, states, pbuf[at:],
            )  # fmt: skip
            if length > 0:
                n_paths += 1
                pstart[n_paths] = at + length
                break
    return n_paths


@uncounted
def _beside_area(c, mark, stamp, offsets):
    """Whether a cell of the player's area (``mark == stamp``) is beside ``c``."""
    n = 0
    for k in range(4):
        n += mark[c + offsets[k]] == stamp
    return n > 0


# Row copies written out: an uncounted function may not make the temporary arrays that
# numba's array assignment can, and a row view made in ``run`` counts a reference.
@uncounted
def _get_row(dst, src, at):
    """``dst[:] = src[at]``."""
    for q in range(dst.shape[0]):
        dst[q] = src[at, q]


@uncounted
def _put_row(dst, row, src):
    """``dst[row] = src``."""
    for q in range(src.shape[0]):
        dst[row, q] = src[q]


@uncounted
def _goal_potentials(rows, uu, mm, vv):
    """The goals' potentials ``vv`` of a matching (``uu``, ``mm``) of ``rows``, which are
    not kept: the matching is tight (each box's potential and its goal's add up to the
    push distance between them), so a goal's is its box's distance less the box's. The
    dummy column 0 is only ever written, and starts at 0."""
    vv[0] = 0
    for j in range(1, vv.shape[0]):
        r = mm[j]
        vv[j] = rows[r - 1, j - 1] - uu[r]


@uncounted
def _own_matching(
    i, e, parent, slot_of, u, match, pool, push, boxes, cost_of,
    offsets, rows, before, uu, vv, mm, way, slack, seen,
):  # fmt: skip
    """State ``i``'s matching into ``rows``, ``uu``, ``vv``, ``mm``, worked out from its
    parent's as it was when ``i`` was generated, and kept at expansion row ``e`` (the
    start's is there already). The parent's rows are its boxes, in their order."""
    nb = boxes.shape[1]
    p = parent[i]
    sp = e if p < 0 else slot_of[p]  # where the matching to start from is kept
    for k in range(nb):
        _get_row(rows[k], cost_of, boxes[i, k] if p < 0 else boxes[p, k])
    _get_row(uu, u, sp)
    _get_row(mm, match, sp)
    _goal_potentials(rows, uu, mm, vv)
    slot_of[i] = e
    if p < 0:
        return
    first, last, length = _move(push, pool, i)
    k = 0
    while boxes[p, k] != first >> 2:
        k += 1
    _get_row(before, rows, k)
    _get_row(rows[k], cost_of, (last >> 2) + offsets[last & 3])
    if length > 1:
        rematch_row(rows, k, uu, vv, mm, way, slack, seen)
    else:
        rematch(rows, k, before, uu, vv, mm, way, slack, seen)
    _put_row(u, e, uu)
    _put_row(match, e, mm)


@uncounted
def _child_bound(
    k, t, length, h_here, cost_of, rows, before, uu, vv, mm, cu, cv, cm, way, slack, seen
):  # fmt: skip
    """A child's bound from its parent's matching (``rows``, ``uu``, ``vv``, ``mm``, left
    as they were): the moved box ``k``'s row is now its costs from ``t``, and only that
    row is matched again (in ``cu``, ``cv``, ``cm``). BIG where no matching is finite."""
    _get_row(before, rows, k)
    _get_row(rows[k], cost_of, t)
    for q in range(uu.shape[0]):
        cu[q] = uu[q]
        cv[q] = vv[q]
        cm[q] = mm[q]
    if length == 1:
        total = rematch(rows, k, before, cu, cv, cm, way, slack, seen)
        if total < 0:  # the old matching stands: the total moves by the box's own cost
            j = matched_goal(cm, k)
            total = h_here - before[j] + rows[k, j]
    else:
        total = rematch_row(rows, k, cu, cv, cm, way, slack, seen)
    _put_row(rows, k, before)
    return total


@compiled
def run(
    floor, dead, goal, offsets, cols, cost_of, zob_box, zob_player, wkey, budget, counters,
    boxes, parent, push, g, h, u, match, slot_of, low_of,
    gen_table, queue, scratch, corral_work,
    feature, fs, cells, pool, paths, pairs, fences,
):  # fmt: skip
    """Expand up to ``budget`` states; returns OPEN, SOLVED (``counters[FOUND]``),
    EXHAUSTED, FULL when the next state's children might not fit, or FULL_EXPANDED when
    the expanded states' matchings are full (the caller grows those arrays and calls again;
    nothing was lost).

    ``feature`` 0 is a weighted best-first search on ``queue`` (:mod:`.queue`); 1 the
    feature search on ``cells`` (with goal macros when ``feature & 2``, the packing advice
    when ``feature & 4``, a push of the box the state's own move pushed costing nothing
    when ``feature & 8``, the advice's matched box first when ``feature & 32``, and with
    ``feature & 16`` every push that is not advised costing one more: pushes counted as
    well as box moves), whose moves of many pushes go to ``pool`` (:func:`_move`) and
    whose features come from ``fs``.
    ``pairs`` is the room's table of two-box deadlocks (:mod:`.pairs`; empty: none),
    ``fences`` the corral deadlock test's working array (:mod:`.fences`; empty: none). A
    state with no push (a lost corral) gets no move of many pushes either.

    Only expanded states keep their matching (the boxes' potentials ``u`` and ``match``,
    in the order of their boxes, at row ``slot_of[state]``; the goals' follow from them,
    :func:`_goal_potentials`): a state's own is worked out again from its parent's when it
    is expanded, as it was when it was generated, so the many states that are generated
    and never expanded keep only their bound."""
    occupied, mark, tree, seen = scratch
    entries, buckets, ranked, index, kept = queue
    area_start, floor_cells, label, fqueue = fs[1], fs[3], fs[4], fs[5]
    heaps, sizes, keys = cells
    pbuf = paths[4]
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
    area_of = np.full(size, -1, np.int64)  # walls stay -1
    other = np.empty(size, np.int64)  # a second flood's queue
    shift = table_shift(gen_table)
    n_areas = 0
    done = 0
    while done < budget:
        if (counters[NKEYS] if feature else counters[N_HEAP]) == 0:
            return EXHAUSTED
        # room for every child of one state, in the states, the tables, the queue, the pool
        room = counters[N_STATES] + most_paths
        if room >= cap:
            return FULL
        if not feature and (
            counters[N_HEAP] + most_paths >= entries.shape[0]
            or kept[N_BUCKETS] + most_paths >= buckets.shape[0]
        ):
            return FULL
        if 2 * room >= gen_table.shape[0]:
            return FULL
        if feature and counters[N_POOL] + most_paths * (MAX_PUSHES + 1) >= pool.shape[0]:
            return FULL
        if counters[EXPANDED] >= u.shape[0]:
            return FULL_EXPANDED
        if feature:
            here_cell = cell_pop(heaps, sizes, keys, counters, NKEYS, TURN, entry)
            i = entry[2]
            gi = entry_g(entry[1])
            here_cost = entry[0] >> 32
        else:
            first, second = queue_pop(entries, buckets, ranked, kept)
            counters[N_HEAP] -= 1
            i = second & ROW_MASK
            gi = G_MASK - (first & G_MASK)
            here_cell = 0
            here_cost = 0
        if g[i] < gi or slot_of[i] >= 0:
            continue  # reached again at a lower cost since this entry was queued, or expanded
        for k in range(nb):
            occupied[boxes[i, k]] = k
        key_here = _box_key(zob_box, boxes, i)
        counters[STAMP] += 1
        stamp = counters[STAMP]
        low = search_area(low_of[i], floor, occupied, mark, stamp, offsets, tree)
        counters[EXPANDED] += 1
        done += 1
        if h[i] < counters[BEST_H]:
            counters[BEST_H] = h[i]
        # the moves, in the solver's order: a PI-corral's pushes, or every push the
        # player can make; then the goal macros; then the packing advice. Each is a path
        # of pushes in ``pbuf`` (from ``pstart[k]`` to ``pstart[k + 1]``).
        last = -1  # where this state's move left its box
        if push[i] != -1:
            _, end, _ = _move(push, pool, i)
            last = (end >> 2) + offsets[end & 3]
        # the free cells off the player's reach: the room's, less the boxes and his area
        left = floor_cells.shape[0] - nb - tree[SIZE, low_of[i]]
        n_paths = _pushes(
            floor, dead, goal, offsets, occupied, mark, stamp, low, corral_work, fences,
            boxes[i], order, pbuf, last, left,
        )  # fmt: skip
        for k in range(n_paths + 1):
            pstart[k] = k
        if feature & 2:
            n_paths = _goal_macros(n_paths, goal, offsets, floor, occupied, fs, paths, pstart)
        # this state's matching, from its parent's (the advice reads it)
        e = counters[EXPANDED] - 1
        _own_matching(
            i, e, parent, slot_of, u, match, pool, push, boxes,
            cost_of, offsets, rows, before, uu, vv, mm, way, slack, colseen,
        )  # fmt: skip
        if feature & 4 and n_paths > 0:
            n_paths = _packing_advice(
                n_paths, boxes[i], low, goal, offsets, floor, occupied, cost_of, fs, paths,
                pstart, near, mark, stamp, mm if feature & 32 else mm[:0],
            )  # fmt: skip
        h_here = h[i]
        on_goal = 0
        for k in range(nb):
            if goal[boxes[i, k]] >= 0:
                on_goal += 1
        here_packed = ng - here_cell // (size + 1)
        if feature and here_packed > counters[BEST_PACKED]:
            counters[BEST_PACKED] = here_packed
        here_areas = here_cell % (size + 1)
        # the parent's areas, which each child's player's area and count start from
        n_areas = number_areas(floor_cells, mark, stamp, corral_work, area_of)
        # counting box moves, a push of that box goes on with the state's move
        moved = last if feature & 8 else -1
        for c in range(n_paths):
            length = pstart[c + 1] - pstart[c]
            b = pbuf[pstart[c]] >> 2
            d = pbuf[pstart[c]] & 3
            last = pbuf[pstart[c + 1] - 1]
            t = (last >> 2) + offsets[last & 3]
            player = last >> 2
            child_g = g[i] + length
            k = occupied[b]
            key = key_here ^ zob_box[b] ^ zob_box[t]
            occupied[b] = -1
            occupied[t] = k
            # five fresh stamps for ``label``: three to name the child's area, two to count
            # its areas
            astamp = counters[ASTAMP] + 1
            counters[ASTAMP] += 5
            if length == 1:
                low_here = child_low(
                    b, t, low, floor, occupied, area_of, corral_work, label, astamp, fqueue,
                    other, offsets, mark, stamp, tree,
                )  # fmt: skip
            else:
                low_here = flood(player, floor, occupied, label, astamp, fqueue, offsets)
            where = key ^ zob_player[low_here]
            gslot = _find(gen_table, shift, where, boxes, occupied, low_of, low_here)
            old = _row_in(gen_table[gslot])
            skip = old >= 0 and g[old] <= child_g
            solved = on_goal - (goal[b] >= 0) + (goal[t] >= 0) == nb
            if not skip and not solved:
                skip = freeze_deadlock(floor, dead, goal, cols, occupied, t, seen)
            if not skip and not solved:
                skip = pair_deadlock(pairs[0], pairs[1], boxes, i, b, t, player)
            child_cell = 0
            if feature and not skip and not solved:
                count = areas_after(
                    n_areas, b, t, floor, occupied, area_of, label, astamp + 3, fqueue,
                    other, offsets, mark, stamp, tree,
                )  # fmt: skip
                child_cell = _cell(count, occupied, fs, ng, size)
            occupied[t] = -1
            occupied[b] = k
            if skip:
                continue
            total = 0
            if not solved:
                total = _child_bound(
                    k, t, length, h_here, cost_of, rows, before, uu, vv, mm, cu, cv, cm, way,
                    slack, colseen,
                )  # fmt: skip
                if total >= BIG:
                    continue
            row = counters[N_STATES] if old < 0 else old
            _store(row, i, k, t, child_g, total, boxes, parent, g, h, slot_of)
            low_of[row] = low_here
            if length == 1:
                push[row] = b * 4 + d
            else:
                at = counters[N_POOL]
                push[row] = -2 - at
                pool[at] = length
                for q in range(length):
                    pool[at + 1 + q] = pbuf[pstart[c] + q]
                counters[N_POOL] += length + 1
            if old < 0:
                gen_table[gslot] = _entry(where, row)
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
                # not advised: one unless the same box goes on, and one more for any push
                # where pushes are counted too
                extra = (b != moved) + (feature >> 4 & 1)
                cost = here_cost if advised else here_cost + extra
                cell_push(
                    heaps, sizes, keys, counters, NKEYS, TURN, child_cell, (cost << 32) | total,
                    entry_order(child_g, counters[GENERATED]), row,
                )  # fmt: skip
            else:
                queue_push(
                    entries, buckets, ranked, index, kept, _priority(wkey, total, child_g),
                    (counters[GENERATED] << 30) | row,
                )  # fmt: skip
                counters[N_HEAP] += 1
        for k in range(nb):
            occupied[boxes[i, k]] = -1
    return OPEN


@compiled
def retable(table, old):
    """Put the states of ``old`` into the empty ``table`` (as large or larger) where
    :func:`_find` probes for them. Taken in slot order, the states go to slots in order
    too, but for a run of taken slots that wraps past the end, so the pass reads and writes
    memory in order; a state's rows are not read (its slot's value holds the top bits of
    its hash)."""
    mask = table.shape[0] - 1
    shift = table_shift(table)
    for s in range(old.shape[0]):
        entry = old[s]
        if entry == 0:
            continue
        slot = _home(entry, shift, mask)
        while table[slot] != 0:
            slot = (slot + 1) & mask
        table[slot] = entry
