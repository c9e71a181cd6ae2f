"""The push search's pruning rules, compiled: the freeze test, the player's area and
PI-corrals, as the solver's pure-Python ``frozen``, ``_flood`` and ``_pi_corral`` decide
them (the freeze test is held to the env's own in the tests)."""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import compiled, inlined


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


@inlined
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


@inlined
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


def corral_scratch(size: int) -> tuple[np.ndarray, ...]:
    """The working arrays of :func:`corral` for a room of ``size`` cells."""
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
def _label_areas(floor, occupied, mark, stamp, offsets, label, cells, start):
    """Label the areas of free floor off the player's reach (``mark == stamp``) in order
    of their lowest cell: ``label[cell]``, their cells area by area in ``cells`` (area
    ``a`` from ``start[a]`` to ``start[a + 1]``). Returns how many there are."""
    ncomp = 0
    n_cells = 0
    for c in range(floor.shape[0]):
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
    return ncomp


@compiled
def _fence(ncomp, offsets, occupied, scratch):
    """The boxes beside the corral (the areas with ``in_area``), lowest cell first, into
    ``fence`` (marked in ``barrier``); returns how many."""
    cells, start, in_area, barrier, fence = (
        scratch[1],
        scratch[2],
        scratch[3],
        scratch[6],
        scratch[7],
    )
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
    return n_fence


@compiled
def _fence_pushes(n_fence, ncomp, floor, dead, offsets, occupied, mark, stamp, out_box,
                  out_dir, scratch):  # fmt: skip
    """The fence's pushes into the corral, to ``out_box``/``out_dir``: returns their count,
    -1 where a push voids the corral, -2 where the corral must take in more areas
    (marked in ``grow``)."""
    label, in_area, grow, barrier, fence = (
        scratch[0],
        scratch[3],
        scratch[4],
        scratch[6],
        scratch[7],
    )
    n = 0
    for k in range(ncomp):
        grow[k] = 0
    growing = False
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
                return -1  # an outside box may leave and free the way out
            if dead[t]:
                continue
            if label[t] >= 0 and in_area[label[t]]:
                if mark[p] != stamp:
                    return -1  # possible only after a move elsewhere
                out_box[n] = b
                out_dir[n] = d
                n += 1
            elif mark[t] == stamp:
                return -1  # a push along the fence, not into the corral
            else:
                grow[label[t]] = 1
                growing = True
    return -2 if growing else n


@compiled
def _corral_from(first, ncomp, n_tried, floor, dead, goal, offsets, occupied, mark, stamp,
                 out_box, out_dir, scratch):  # fmt: skip
    """The corral grown from area ``first`` (the solver's ``_corral_pushes``): its pushes'
    count, or -1 where it is void, tried already, or holds no unsolved work."""
    cells, start, in_area, grow, tried, barrier, fence, zob = (
        scratch[1], scratch[2], scratch[3], scratch[4], scratch[5], scratch[6], scratch[7],
        scratch[10],
    )  # fmt: skip
    for k in range(ncomp):
        in_area[k] = 0
    in_area[first] = 1
    while True:
        key = np.int64(0)
        for k in range(ncomp):
            if in_area[k]:
                key ^= zob[k]
        for q in range(n_tried[0]):
            if tried[q] == key:
                return -1
        if n_tried[0] < tried.shape[0]:
            tried[n_tried[0]] = key
            n_tried[0] += 1
        n_fence = _fence(ncomp, offsets, occupied, scratch)
        n = _fence_pushes(
            n_fence, ncomp, floor, dead, offsets, occupied, mark, stamp, out_box, out_dir,
            scratch,
        )  # fmt: skip
        unsolved = False
        for f in range(n_fence):
            if goal[fence[f]] < 0:
                unsolved = True
            barrier[fence[f]] = 0
        if n == -2:
            for k in range(ncomp):
                if grow[k]:
                    in_area[k] = 1
            continue
        if n < 0:
            return -1
        for a in range(ncomp):
            if in_area[a]:
                for q in range(start[a], start[a + 1]):
                    if goal[cells[q]] >= 0:
                        unsolved = True
        return n if unsolved else -1


@compiled
def corral(
    floor, dead, goal, offsets, occupied, mark, stamp, out_box, out_dir, scratch
):  # fmt: skip
    """PI-corral pruning, as the solver's ``_pi_corral``: the pushes of the smallest
    PI-corral into ``out_box``/``out_dir``; returns their count, 0 for a corral deadlock,
    -1 when none applies. ``mark == stamp`` is the player's area. Corrals already tried
    are known by a hash of their areas: a collision can only make a corral count as tried,
    which prunes less, never wrongly."""
    label, cells, start = scratch[0], scratch[1], scratch[2]
    best_box, best_dir, zob = scratch[8], scratch[9], scratch[10]
    ncomp = _label_areas(floor, occupied, mark, stamp, offsets, label, cells, start)
    if ncomp == 0:
        return -1
    x = np.int64(0x2545F4914F6CDD1D)
    for k in range(ncomp):
        x = x * np.int64(6364136223846793005) + np.int64(1442695040888963407)
        zob[k] = x ^ (x >> np.int64(29))
    n_tried = np.zeros(1, np.int64)
    best_n = -1
    for first in range(ncomp):
        n = _corral_from(
            first, ncomp, n_tried, floor, dead, goal, offsets, occupied, mark, stamp,
            out_box, out_dir, scratch,
        )  # fmt: skip
        if n >= 0 and (best_n < 0 or n < best_n):
            best_n = n
            best_box[:n] = out_box[:n]
            best_dir[:n] = out_dir[:n]
            if n == 0:
                break
    for q in range(start[ncomp]):
        label[cells[q]] = -1
    if best_n > 0:
        out_box[:best_n] = best_box[:best_n]
        out_dir[:best_n] = best_dir[:best_n]
    return best_n
