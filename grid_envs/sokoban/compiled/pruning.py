"""The push search's pruning rules, compiled: the freeze test, the player's area and
PI-corrals, as the solver's pure-Python ``frozen``, ``_flood`` and ``_pi_corral`` decide
them (the freeze test is held to the env's own in the tests)."""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import uncounted


@uncounted
def sort_few(values, n):
    """Sort ``values[:n]`` in place, a few dozen cells at most (boxes, a fence): an
    insertion sort, which numba's sort does not beat at this size."""
    for x in range(1, n):
        item = values[x]
        y = x
        while y > 0 and values[y - 1] > item:
            values[y] = values[y - 1]
            y -= 1
        values[y] = item


@uncounted
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


@uncounted
def freeze_deadlock(floor, dead, goal, cols, occupied, cell, seen):
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


@uncounted
def flood(start, floor, occupied, mark, stamp, queue, offsets):
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


# the rows of :func:`corral`'s one working array, passed down its helpers as one argument
# (they run many times a state); a row holds four entries a cell of the room, and one more
(
    LABEL,  # the area off the player's reach of a cell, -1 for none
    CELLS,  # those cells, area by area
    START,  # where each area's cells begin in CELLS
    IN_AREA,  # the areas the corral holds so far
    GROW,  # the areas it must take in
    TRIED,  # the corrals tried, by hash (TRIED's last entry: how many)
    BARRIER,  # the boxes fencing the corral
    FENCE,  # those boxes' cells
    OUT_BOX,  # the pushes found (box cell, direction)
    OUT_DIR,
    BEST_BOX,  # the best corral's pushes
    BEST_DIR,
    ZOB,  # a random key for each area
    AREA_FENCE,  # the boxes beside each area, area by area
    FENCE_START,  # where each area's boxes begin in AREA_FENCE
    LISTED,  # the last area (by a running number, kept in its last entry) to list a box
    N_ROWS,
) = range(17)


def corral_scratch(size: int) -> np.ndarray:
    """The working array of :func:`corral` for a room of ``size`` cells."""
    work = np.zeros((N_ROWS, 4 * size + 1), np.int64)
    work[LABEL] = -1
    return work


@uncounted
def _label_areas(floor, occupied, mark, stamp, offsets, work, left):
    """Label the areas of free floor off the player's reach (``mark == stamp``) in order
    of their lowest cell: ``work[LABEL, cell]``, their cells area by area in ``CELLS``
    (area ``a`` from ``START[a]`` to ``START[a + 1]``), and the boxes beside each in
    ``AREA_FENCE`` (from ``FENCE_START[a]``), so that a corral's fence is the union of
    its areas' lists. Returns how many areas there are, also kept in ``START``'s last
    entry. ``left``: the free cells off the player's reach where the caller knows them
    (-1: not known); the scan of the room stops once they are all labelled."""
    ncomp = 0
    n_cells = 0
    n_boxes = 0
    serial = work.shape[1] - 1  # LISTED's last entry: the running number of areas
    for c in range(floor.shape[0]):
        if n_cells == left:
            break
        if not floor[c] or occupied[c] >= 0 or mark[c] == stamp or work[LABEL, c] >= 0:
            continue
        work[LISTED, serial] += 1
        me = work[LISTED, serial]
        work[LABEL, c] = ncomp
        work[START, ncomp] = n_cells
        work[FENCE_START, ncomp] = n_boxes
        work[CELLS, n_cells] = c
        head = n_cells
        n_cells += 1
        while head < n_cells:
            x = work[CELLS, head]
            head += 1
            for k in range(4):
                n = x + offsets[k]
                if occupied[n] >= 0:
                    if work[LISTED, n] != me:
                        work[LISTED, n] = me
                        work[AREA_FENCE, n_boxes] = n
                        n_boxes += 1
                elif floor[n] and mark[n] != stamp and work[LABEL, n] < 0:
                    work[LABEL, n] = ncomp
                    work[CELLS, n_cells] = n
                    n_cells += 1
        ncomp += 1
    work[START, ncomp] = n_cells
    work[FENCE_START, ncomp] = n_boxes
    work[START, work.shape[1] - 1] = ncomp
    return ncomp


@uncounted
def _fence(ncomp, work):
    """The boxes beside the corral (the areas with ``IN_AREA``), lowest cell first, into
    ``FENCE`` (marked in ``BARRIER``), from its areas' lists; returns how many."""
    n_fence = 0
    for a in range(ncomp):
        if not work[IN_AREA, a]:
            continue
        for q in range(work[FENCE_START, a], work[FENCE_START, a + 1]):
            b = work[AREA_FENCE, q]
            if not work[BARRIER, b]:
                work[BARRIER, b] = 1
                work[FENCE, n_fence] = b
                n_fence += 1
    sort_few(work[FENCE], n_fence)
    return n_fence


@uncounted
def _fence_pushes(n_fence, ncomp, floor, dead, offsets, occupied, mark, stamp, work):
    """The fence's pushes into the corral, to ``OUT_BOX``/``OUT_DIR``: returns their count,
    -1 where a push voids the corral, -2 where the corral must take in more areas
    (marked in ``GROW``)."""
    n = 0
    for k in range(ncomp):
        work[GROW, k] = 0
    growing = False
    for f in range(n_fence):
        b = work[FENCE, f]
        for d in range(4):
            p = b - offsets[d]
            t = b + offsets[d]
            if not floor[p] or not floor[t]:
                continue
            if work[BARRIER, p] or (work[LABEL, p] >= 0 and work[IN_AREA, work[LABEL, p]]):
                continue  # no player there before the corral opens
            if mark[p] != stamp and occupied[p] < 0:
                work[GROW, work[LABEL, p]] = 1  # the player's square lies in another corral
                growing = True
                continue
            if occupied[t] >= 0:
                if work[BARRIER, t]:
                    continue
                return -1  # an outside box may leave and free the way out
            if dead[t]:
                continue
            if work[LABEL, t] >= 0 and work[IN_AREA, work[LABEL, t]]:
                if mark[p] != stamp:
                    return -1  # possible only after a move elsewhere
                work[OUT_BOX, n] = b
                work[OUT_DIR, n] = d
                n += 1
            elif mark[t] == stamp:
                return -1  # a push along the fence, not into the corral
            else:
                work[GROW, work[LABEL, t]] = 1
                growing = True
    return -2 if growing else n


@uncounted
def _corral_from(first, ncomp, floor, dead, goal, offsets, occupied, mark, stamp, work):
    """The corral grown from area ``first`` (the solver's ``_corral_pushes``): its pushes'
    count, or -1 where it is void, tried already, or holds no unsolved work."""
    n_tried = work.shape[1] - 1  # TRIED's last entry counts the corrals tried
    for k in range(ncomp):
        work[IN_AREA, k] = 0
    work[IN_AREA, first] = 1
    while True:
        key = np.int64(0)
        for k in range(ncomp):
            if work[IN_AREA, k]:
                key ^= work[ZOB, k]
        for q in range(work[TRIED, n_tried]):
            if work[TRIED, q] == key:
                return -1
        if work[TRIED, n_tried] < n_tried:
            work[TRIED, work[TRIED, n_tried]] = key
            work[TRIED, n_tried] += 1
        n_fence = _fence(ncomp, work)
        n = _fence_pushes(n_fence, ncomp, floor, dead, offsets, occupied, mark, stamp, work)
        unsolved = False
        for f in range(n_fence):
            if goal[work[FENCE, f]] < 0:
                unsolved = True
            work[BARRIER, work[FENCE, f]] = 0
        if n == -2:
            for k in range(ncomp):
                if work[GROW, k]:
                    work[IN_AREA, k] = 1
            continue
        if n < 0:
            return -1
        for a in range(ncomp):
            if work[IN_AREA, a]:
                for q in range(work[START, a], work[START, a + 1]):
                    if goal[work[CELLS, q]] >= 0:
                        unsolved = True
        return n if unsolved else -1


@uncounted
def corral(floor, dead, goal, offsets, occupied, mark, stamp, work, left=-1):
    """PI-corral pruning, as the solver's ``_pi_corral``: the pushes of the smallest
    PI-corral into ``work[OUT_BOX]``/``work[OUT_DIR]`` (``work`` from
    :func:`corral_scratch`); returns their count, 0 for a corral deadlock, -1 when none
    applies. ``mark == stamp`` is the player's area. Corrals already tried are known by a
    hash of their areas: a collision can only make a corral count as tried, which prunes
    less, never wrongly. The areas off the player's reach stay listed in ``CELLS`` and
    ``START`` (:func:`grid_envs.sokoban.compiled.areas.number_areas` reads them)."""
    ncomp = _label_areas(floor, occupied, mark, stamp, offsets, work, left)
    if ncomp == 0:
        return -1
    x = np.int64(0x2545F4914F6CDD1D)
    for k in range(ncomp):
        x = x * np.int64(6364136223846793005) + np.int64(1442695040888963407)
        work[ZOB, k] = x ^ (x >> np.int64(29))
    work[TRIED, work.shape[1] - 1] = 0
    best_n = -1
    for first in range(ncomp):
        n = _corral_from(first, ncomp, floor, dead, goal, offsets, occupied, mark, stamp, work)
        if n >= 0 and (best_n < 0 or n < best_n):
            best_n = n
            for q in range(n):
                work[BEST_BOX, q] = work[OUT_BOX, q]
                work[BEST_DIR, q] = work[OUT_DIR, q]
            if n == 0:
                break
    for q in range(work[START, ncomp]):
        work[LABEL, work[CELLS, q]] = -1
    for q in range(max(best_n, 0)):
        work[OUT_BOX, q] = work[BEST_BOX, q]
        work[OUT_DIR, q] = work[BEST_DIR, q]
    return best_n
