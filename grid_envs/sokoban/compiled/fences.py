"""Corral deadlocks, compiled: a search of the pushes of one corral's fence alone.

An area of free floor the player cannot reach (a *corral*) is fenced by boxes. Take every
other box away, which can only free the fence, and search the fence's pushes, the player
walking round them: where no line of pushes brings every fence box onto a goal or lets the
player into the area, the position is lost. Any solution, read for the fence's pushes
only, is such a line (with fewer boxes the player reaches more, and a box frozen or on a
dead square among fewer boxes is so among more), so the rule is sound; it is the corral
deadlock test of YASS and Sokolution. The search is a breadth-first search over (the
fence's cells, the lowest cell of the player's area), cut at :data:`FENCE_STATES`
positions, where it decides nothing. :func:`corral_lost` answers for one area, from the
labelling of :func:`grid_envs.sokoban.compiled.pruning.corral`, and keeps its answers in
a table (a position's hash, confirmed on its cells), since the same corral comes back in
state after state while boxes elsewhere move. The solver's ``corral_lost`` is the same
search in pure Python.

A fence can look free only because the boxes taken away were the ones that hold it: a box
beside a fence box stands where the player must stand to push it, or where it must go.
Where the fence alone is not lost, :func:`any_lost` searches it again with every box
beside it, its *ring* (the proof holds for any set of boxes kept, the success being all of
them on goals or the player in), cut at :data:`RING_STATES` positions, and only where the
state's own move put a box in that ring: the move that may have closed it, at a fraction
of the cost of searching every ring of every state.
"""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import uncounted
from grid_envs.sokoban.compiled.areas import pieces_of_two, sides
from grid_envs.sokoban.compiled.pruning import (
    AREA_FENCE,
    CELLS,
    FENCE_START,
    START,
    flood,
    freeze_deadlock,
    sort_few,
)

FENCE_BOXES = 16  # a corral fenced by more boxes is not searched
FENCE_STATES = 1024  # the search gives up, deciding nothing, past this many positions
RING_STATES = 128  # the same for a fence searched with the boxes beside it
WIDTH = 1 << 14  # a row of the working array: FENCE_STATES * FENCE_BOXES
ENTRY = 32  # a table entry: hash, answer + 1, player, area, count, cells (FENCE_BOXES)
TABLE_ROWS = 1024  # the most rows that hold the table of answers (a room's: fence_scratch)
ROW_SLOTS = WIDTH // ENTRY

# the rows of the working array (:func:`fence_scratch`); MARK and CHILD_MARK keep their
# visit stamp in their last entry
(
    OCC,  # the fence box on a cell, -1 for none
    MARK,  # the player's area of the position being expanded
    CHILD_MARK,  # a child's area
    QUEUE,  # the floods' queue
    OTHER,  # a second one, for two floods in step
    ZOB,  # a random key a cell
    STATES,  # the positions' cells, FENCE_BOXES a position
    LOWS,  # the positions' lowest cells of the player's area
    SEEN,  # the positions by hash, as position + 1 (0: empty), ...
    KEYS,  # ... their hashes,
    USED,  # ... and the slots filled, cleared after each search
    FROZEN,  # the freeze test's marks
    RING,  # a fence and the boxes beside it; its last entry 1 where rings are searched
    TABLE,  # the answers kept, ENTRY entries a slot, from here to the last row
) = range(14)


def fence_scratch(
    size: int, on: bool = True, rings: bool = True, memory: int | None = None
) -> np.ndarray:
    """The working array of :func:`corral_lost` for a room of ``size`` cells; with
    ``on`` False an empty one, which turns the test off, and with ``rings`` False one
    that searches no fence again with the boxes beside it. Its table of answers takes at
    most an eighth of ``memory`` bytes where that is given."""
    if not on:
        return np.zeros((TABLE, 0), np.int64)
    # the table of answers grows with the room, to the power of two rows (512 answers
    # each) at or above its cells: the same corrals come back all through a long search,
    # and every answer the table keeps is a search saved. Its pages are written only as
    # answers land in them, so a short solve pays for the answers it keeps, not the rows.
    rows, width = 2, max(size + 1, WIDTH)
    while rows < TABLE_ROWS and rows < size:
        rows *= 2
    while memory is not None and rows > 2 and (TABLE + rows) * width * 8 > memory // 8:
        rows //= 2
    work = np.zeros((TABLE + rows, width), np.int64)
    work[OCC] = -1
    work[ZOB, :size] = np.random.default_rng(20261204).integers(1, 1 << 62, size)
    work[RING, -1] = rings
    return work


def fence_work(size: int, fences: bool | np.ndarray) -> np.ndarray:
    """A search's working array: ``fences`` itself where it is one (shared), else
    :func:`fence_scratch` on or off."""
    return fences if isinstance(fences, np.ndarray) else fence_scratch(size, fences)


@uncounted
def _reach(start, floor, occ, mark, stamp, queue, offsets, cells, n_cells):
    """Flood the player's area from ``start`` among the fence boxes (``occ``), marking it
    ``stamp``: its lowest cell, or -1 where it holds a cell of the corral
    (``cells[:n_cells]``), ``start`` included (a push from the fence leaves the player on
    the cell its box left)."""
    low = flood(start, floor, occ, mark, stamp, queue, offsets)
    for q in range(n_cells):
        if mark[cells[q]] == stamp:
            return -1
    return low


@uncounted
def _child_low(b, t, low, floor, occ, mark, stamp, offsets, cells, n_cells):
    """:func:`_reach` of the child whose box went from ``b`` to ``t`` (``occ`` is the
    child's), without a flood where its parent's area (``mark == stamp``, lowest cell
    ``low``) settles it; -2 where it does not. The player, on ``b``, is in the corral if
    ``b`` or a free cell beside it is one of its cells; else, where every free cell
    beside ``b`` was in the parent's area, the child's area is that area with ``b`` and
    without ``t``, which a box on ``t`` cuts nowhere else where the cells round ``t``
    join (:func:`~grid_envs.sokoban.compiled.areas.sides`); -3 where they make two runs
    and ``t`` is not the parent's lowest cell."""
    for q in range(n_cells):
        if cells[q] == b:
            return -1
    for k in range(4):
        n = b + offsets[k]
        if n == t or not floor[n] or occ[n] >= 0 or mark[n] == stamp:
            continue
        for q in range(n_cells):
            if cells[q] == n:
                return -1
        return -2  # another area joins the player's
    if mark[t] != stamp:
        return min(low, b)  # the box went off the player's area
    runs, _, _ = sides(t, floor, occ, offsets)
    if t == low or runs > 2:
        return -2
    return -3 if runs == 2 else min(low, b)


@uncounted
def _child_area(b, t, low, floor, occ, stamp, offsets, cells, n_cells, work):
    """:func:`_child_low`; where a box on ``t`` may cut the parent's area in two, two
    floods in step from its sides
    (:func:`~grid_envs.sokoban.compiled.areas.pieces_of_two`, about twice the smaller
    piece): ``b``'s piece where it closes first, else the lowest of ``b`` and the parent's
    lowest cell where the closed piece does not hold that; :func:`_reach` where it does."""
    r = _child_low(b, t, low, floor, occ, work[MARK], stamp, offsets, cells, n_cells)
    last = work.shape[1] - 1
    if r == -3:
        label = work[CHILD_MARK]
        two = label[last] + 1
        label[last] += 2
        _, a, z = sides(t, floor, occ, offsets)
        closed, lowest = pieces_of_two(a, z, floor, occ, label, two, work[QUEUE], work[OTHER],
                                       offsets)  # fmt: skip
        if closed >= 0 and label[b] == two + closed:
            return lowest  # b's piece, flooded whole
        if closed < 0 or label[low] != two + closed:
            return min(low, b)  # joined, or the parent's lowest cell is on b's side
    elif r != -2:
        return r
    work[CHILD_MARK, last] += 1
    stamp = work[CHILD_MARK, last]
    return _reach(b, floor, occ, work[CHILD_MARK], stamp, work[QUEUE], offsets, cells, n_cells)


@uncounted
def _hash(zob, cells, base, n, moved, t, low):
    """A position's hash: its cells (``cells[base + moved]`` read as ``t``) and its
    player's lowest cell."""
    key = zob[low] * 3
    for z in range(n):
        key ^= zob[t if z == moved else cells[base + z]]
    return key


@uncounted
def _entry(work, key):
    """Where the table keeps the answer for hash ``key``: (row, first entry); its rows
    are a power of two."""
    slot = key & ((work.shape[0] - TABLE) * ROW_SLOTS - 1)
    return TABLE + slot // ROW_SLOTS, slot % ROW_SLOTS * ENTRY


@uncounted
def _known(work, key, n, low, alow, cells, limit):
    """The kept answer for this corral (0 alive, 1 lost), -1 when none is kept."""
    row, at = _entry(work, key)
    table = work[row]
    if table[at + 1] == 0 or table[at] != key or table[at + 2] != low:
        return -1
    if table[at + 3] != alow or table[at + 4] != n + (limit << 8):
        return -1
    for z in range(n):
        if table[at + 5 + z] != cells[z]:
            return -1
    return table[at + 1] - 1


@uncounted
def _keep(work, key, n, low, alow, cells, limit, answer):
    """Keep ``answer`` for this corral, over whatever the slot held."""
    row, at = _entry(work, key)
    table = work[row]
    table[at] = key
    table[at + 1] = answer + 1
    table[at + 2] = low
    table[at + 3] = alow
    table[at + 4] = n + (limit << 8)
    for z in range(n):
        table[at + 5 + z] = cells[z]


@uncounted
def _same(work, row, n, low):
    """Whether stored position ``row`` is the one whose boxes are marked in ``OCC`` (as a
    set) with the player's lowest cell ``low``."""
    if work[LOWS, row] != low:
        return False
    occ = work[OCC]
    hits = 0
    for z in range(n):
        hits += occ[work[STATES, row * FENCE_BOXES + z]] >= 0
    return hits == n


@uncounted
def corral_lost(fence, n, cells, n_cells, low, floor, dead, goal, offsets, work, limit):
    """Whether the corral of cells ``cells[:n_cells]``, fenced by the ``n`` boxes
    ``fence[:n]``, is lost, the player's area's lowest cell being ``low`` (the module's
    search, cut at ``limit`` positions). False where the corral holds no work (every fence
    box on a goal), it has more than :data:`FENCE_BOXES` boxes, or the search gives up."""
    if n == 0 or n > FENCE_BOXES:
        return False
    on = 0
    for z in range(n):
        on += goal[fence[z]] >= 0
    if on == n:
        return False
    states = work[STATES]
    for z in range(n):
        states[z] = fence[z]
    sort_few(states, n)
    alow = cells[0]
    for q in range(n_cells):
        alow = min(alow, cells[q])
    key = _hash(work[ZOB], states, 0, n, -1, 0, low) ^ work[ZOB, alow] * 5
    answer = _known(work, key, n, low, alow, states, limit)
    if answer < 0:
        answer = _search(n, cells, n_cells, low, floor, dead, goal, offsets, work, limit)
        _keep(work, key, n, low, alow, states, limit, answer)
    return answer == 1


@uncounted
def _search(n, cells, n_cells, low, floor, dead, goal, offsets, work, limit):
    """The breadth-first search of :func:`corral_lost` from the fence in ``STATES``'s
    first row, the corral's cells ``cells[:n_cells]``: 1 where it runs out of positions
    (lost), 0 where it finds a way or gives up after ``limit`` positions."""
    states, lows, occ, mark = work[STATES], work[LOWS], work[OCC], work[MARK]
    last = work.shape[1] - 1
    for z in range(n):
        occ[states[z]] = z
    mark[last] += 1
    start = _reach(low, floor, occ, mark, mark[last], work[QUEUE], offsets, cells, n_cells)
    for z in range(n):
        occ[states[z]] = -1
    if start < 0:
        return 0  # not fenced after all (never, for a corral)
    lows[0] = start
    n_states = _add(work, n, 0, -1, 0, start, 0, limit)
    head, answer = 0, 1  # lost unless a way is found
    while head < n_states and answer == 1:
        base = head * FENCE_BOXES
        for z in range(n):
            occ[states[base + z]] = z
        if head > 0:  # the first position's area is the one the start's flood marked
            mark[last] += 1
            flood(lows[head], floor, occ, mark, mark[last], work[QUEUE], offsets)
        stamp = mark[last]
        for q in range(4 * n):
            moved, d = q >> 2, q & 3
            b = states[base + moved]
            t = b + offsets[d]
            if mark[b - offsets[d]] != stamp or not floor[t] or occ[t] >= 0 or dead[t]:
                continue
            occ[b] = -1
            occ[t] = moved
            on = 0
            for z in range(n):
                on += goal[t if z == moved else states[base + z]] >= 0
            if on == n:
                answer = 0  # every fence box on a goal
            elif not freeze_deadlock(floor, dead, goal, -offsets[0], occ, t, work[FROZEN]):
                r = _child_area(b, t, lows[head], floor, occ, stamp, offsets, cells, n_cells,
                                work)  # fmt: skip
                if r < 0:
                    answer = 0  # the player gets in
                else:
                    n_states = _add(work, n, base, moved, t, r, n_states, limit)
                    if n_states < 0:
                        answer = 0  # undecided: counts as a way found
            occ[t] = -1
            occ[b] = moved
            if answer != 1:
                break
        for z in range(n):
            occ[states[base + z]] = -1
        head += 1
    for q in range(abs(n_states)):
        work[SEEN, work[USED, q]] = 0
    return answer


@uncounted
def _add(work, n, base, moved, t, low, n_states, limit):
    """Store the position of ``STATES[base:]`` with box ``moved`` at ``t`` (none: -1) and
    the player's lowest cell ``low`` as position ``n_states`` unless it is stored
    already: the positions' count after it, or minus the count when the search is full
    (``limit`` positions)."""
    states, seen, keys = work[STATES], work[SEEN], work[KEYS]
    h = _hash(work[ZOB], states, base, n, moved, t, low)
    mask = WIDTH - 1
    s = h & mask
    while seen[s] != 0:
        if keys[s] == h and _same(work, seen[s] - 1, n, low):
            return n_states
        s = (s + 1) & mask
    if n_states == limit:
        return -n_states
    seen[s] = n_states + 1
    keys[s] = h
    work[USED, n_states] = s
    nbase = n_states * FENCE_BOXES
    for z in range(n):
        states[nbase + z] = states[base + z]
    if moved >= 0:
        states[nbase + moved] = t
    work[LOWS, n_states] = low
    return n_states + 1


@uncounted
def _ring(fence, n, occupied, offsets, ring, last):
    """The fence's ``n`` boxes and then every box beside one of them, into ``ring``: their
    count, or 0 where they would be more than :data:`FENCE_BOXES` or the box on ``last``
    (the state's own move's; -1: none, any ring) is not among them."""
    touched = last < 0
    for z in range(n):
        ring[z] = fence[z]
        touched = touched or fence[z] == last
    m = n
    for z in range(n):
        for d in range(4):
            c = fence[z] + offsets[d]
            if occupied[c] < 0:
                continue
            new = True
            for y in range(m):
                new = new and ring[y] != c
            if new:
                if m == FENCE_BOXES:
                    return 0
                ring[m] = c
                m += 1
                touched = touched or c == last
    return m if touched else 0


@uncounted
def any_lost(low, floor, dead, goal, offsets, corrals, work, occupied, last):
    """Whether any area off the player's reach, as
    :func:`grid_envs.sokoban.compiled.pruning.corral` has just labelled them in
    ``corrals``, is a lost corral (:func:`corral_lost`), its fence alone or with the boxes
    beside it (``occupied``; only where the state's own move left its box on ``last`` in
    that ring); False at once when ``work`` is empty (the test is off)."""
    if work.shape[1] == 0:
        return False
    rings = work[RING, work.shape[1] - 1] == 1
    for a in range(corrals[START, corrals.shape[1] - 1]):
        f0, s0 = corrals[FENCE_START, a], corrals[START, a]
        n, fence = corrals[FENCE_START, a + 1] - f0, corrals[AREA_FENCE, f0:]
        cells, n_cells = corrals[CELLS, s0:], corrals[START, a + 1] - s0
        if corral_lost(
            fence, n, cells, n_cells, low, floor, dead, goal, offsets, work, FENCE_STATES
        ):  # fmt: skip
            return True
        if not rings or n > FENCE_BOXES:
            continue
        m = _ring(fence, n, occupied, offsets, work[RING], last)
        if m > n and corral_lost(
            work[RING], m, cells, n_cells, low, floor, dead, goal, offsets, work, RING_STATES
        ):  # fmt: skip
            return True
    return False
