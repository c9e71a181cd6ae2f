"""The feature search's *areas* feature, compiled: how many separate areas the boxes cut
the floor into; and the player's area searched depth first, which names a child's area.

:func:`areas` counts them afresh (a flood an area: the start's cell and the tests'
reference); in the search a state's areas are numbered once (:func:`number_areas`, from
the search of the player's area and the corral's labelling, which every state has had)
and each child's count follows from them (:func:`areas_after`): the box leaves one cell
and takes another. Where it takes a cell of the player's area, the area's depth-first
search tree (:func:`search_area`, which the state's expansion runs in place of the
player's flood) says into how many pieces the cell's loss cuts the area and which piece
holds each cell; elsewhere only where the cells round the new one do not join does a
flood run. :func:`child_low` names the child's area the same way.
"""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import inlined, uncounted
from grid_envs.sokoban.compiled.pruning import CELLS, START, flood


@inlined
def areas(floor_cells, floor, occupied, label, stamp, queue, offsets):
    """How many separate areas the boxes (``occupied >= 0``) cut the floor into; ``label``
    is a scratch array whose cells this call marks with ``stamp``."""
    count = 0
    for c in floor_cells:
        if occupied[c] < 0 and label[c] != stamp:
            count += 1
            flood(c, floor, occupied, label, stamp, queue, offsets)
    return count


@uncounted
def number_areas(floor_cells, mark, stamp, work, area_of):
    """Number the areas the boxes cut the floor into, from the labelling a state has
    already had: the player's area (``mark == stamp``) is 0 and the others follow in the
    corral's order (``work`` after :func:`~grid_envs.sokoban.compiled.pruning.corral`).
    ``area_of`` gets each free floor cell's area, -1 under a box; returns how many (what
    :func:`areas` counts)."""
    for c in floor_cells:
        area_of[c] = 0 if mark[c] == stamp else -1
    ncomp = work[START, work.shape[1] - 1]
    for a in range(ncomp):
        for q in range(work[START, a], work[START, a + 1]):
            area_of[work[CELLS, q]] = a + 1
    return ncomp + 1


# the rows of :func:`search_area`'s working array, one entry a cell (PRE and SUF one a
# place in the search's order, and one more)
(
    DISC,  # a cell's place in the order the search reached the cells (preorder)
    SIZE,  # how many cells its subtree holds
    LINK,  # the earliest place its subtree reaches by one edge outside the tree (low link)
    SMIN,  # its subtree's lowest cell
    PARENT,  # the cell it was reached from, -1 at the root
    NEXT,  # the next direction to try from it
    ORDER,  # the cells in the order reached
    PRE,  # the lowest cell reached before each place
    SUF,  # the lowest cell reached at or after each place
    N_TREE,
) = range(10)


def tree_scratch(size: int) -> np.ndarray:
    """The working array of :func:`search_area` for a room of ``size`` cells."""
    return np.zeros((N_TREE, size + 1), np.int64)


@uncounted
def search_area(start, floor, occupied, mark, stamp, offsets, tree):
    """The player's area from ``start``, as :func:`~grid_envs.sokoban.compiled.pruning.flood`
    gives it (its cells get ``mark == stamp``; returns its lowest cell), by a depth-first
    search that leaves its tree in ``tree`` (Hopcroft and Tarjan's low links, each
    subtree's size and lowest cell, the lowest cell before and after each place in the
    order): where a child's box takes a cell of the area, the player's piece of what is
    left is then a few look-ups (:func:`_piece_low`), not a flood."""
    mark[start] = stamp
    tree[DISC, start] = 0
    tree[LINK, start] = 0
    tree[SMIN, start] = start
    tree[PARENT, start] = -1
    tree[NEXT, start] = 0
    tree[ORDER, 0] = start
    count = 1
    v = start
    while v >= 0:
        d = tree[NEXT, v]
        if d < 4:
            tree[NEXT, v] = d + 1
            w = v + offsets[d]
            if not floor[w] or occupied[w] >= 0:
                continue
            if mark[w] != stamp:  # a tree edge: go down
                mark[w] = stamp
                tree[DISC, w] = count
                tree[LINK, w] = count
                tree[ORDER, count] = w
                count += 1
                tree[SMIN, w] = w
                tree[PARENT, w] = v
                tree[NEXT, w] = 0
                v = w
            elif tree[DISC, w] < tree[LINK, v]:  # an edge up (the parent's changes nothing)
                tree[LINK, v] = tree[DISC, w]
            continue
        tree[SIZE, v] = count - tree[DISC, v]  # v is done: back up to its parent
        u = tree[PARENT, v]
        if u >= 0:
            if tree[LINK, v] < tree[LINK, u]:
                tree[LINK, u] = tree[LINK, v]
            if tree[SMIN, v] < tree[SMIN, u]:
                tree[SMIN, u] = tree[SMIN, v]
        v = u
    best = floor.shape[0]
    for q in range(count):
        tree[PRE, q] = best
        best = min(best, tree[ORDER, q])
    low = best
    best = floor.shape[0]
    tree[SUF, count] = best
    for q in range(count - 1, -1, -1):
        best = min(best, tree[ORDER, q])
        tree[SUF, q] = best
    return low


CUT_OFF, JOINED, NOT_A_CHILD = 1, 0, -1  # what :func:`_child` says of a neighbour


@uncounted
def _child(c, t, mark, stamp, tree):
    """How ``c``, a neighbour of ``t`` (a cell of the player's area, searched by
    :func:`search_area`), fares when ``t`` leaves the area: ``CUT_OFF``, a child of ``t``
    in the tree whose subtree reaches nothing above ``t`` and so is cut off with it;
    ``JOINED``, a child whose subtree stays joined to the rest by an edge up; else
    ``NOT_A_CHILD``."""
    if mark[c] != stamp or tree[PARENT, c] != t:
        return NOT_A_CHILD
    return CUT_OFF if tree[LINK, c] >= tree[DISC, t] else JOINED


@uncounted
def _piece_of(t, n, mark, stamp, offsets, tree):
    """Which piece of the player's area (searched by :func:`search_area`) holds ``n`` when
    ``t`` leaves it (both in it): the child of ``t`` whose subtree is cut off with it, or
    -1 for the rest. Taking ``t`` out cuts off each subtree of a child of ``t`` that
    reaches nothing above ``t``; the rest (the area outside ``t``'s subtree, with the
    subtrees that do reach above it) stays one piece."""
    dn = tree[DISC, n]
    for k in range(4):
        c = t + offsets[k]
        cut = _child(c, t, mark, stamp, tree) == CUT_OFF
        if cut and tree[DISC, c] <= dn < tree[DISC, c] + tree[SIZE, c]:
            return c
    return -1


@uncounted
def _piece_low(t, piece, mark, stamp, offsets, tree):
    """The lowest cell of a piece :func:`_piece_of` names."""
    if piece >= 0:
        return tree[SMIN, piece]
    dt = tree[DISC, t]
    rest = min(tree[PRE, dt], tree[SUF, dt + tree[SIZE, t]])
    for k in range(4):
        c = t + offsets[k]
        if _child(c, t, mark, stamp, tree) == JOINED:
            rest = min(rest, tree[SMIN, c])
    return rest


@uncounted
def _pieces(t, mark, stamp, offsets, tree):
    """How many pieces the player's area falls into when ``t`` leaves it."""
    n = 0 if tree[PARENT, t] < 0 else 1  # the rest, which holds the root
    for k in range(4):
        if _child(t + offsets[k], t, mark, stamp, tree) == CUT_OFF:
            n += 1
    return n


@uncounted
def pieces_of_two(a, b, floor, occupied, label, stamp, queue, other, offsets):
    """Whether the free cells ``a`` and ``b`` are joined: a flood from each, a cell at a
    time in turn (``label``: ``stamp`` for ``a``'s, ``stamp + 1`` for ``b``'s), until one
    reaches the other's cells or runs out (its piece is closed). Either way it costs about
    twice the smaller piece, or the ground between the two, not the room. Returns (-1, -1)
    where they are joined, else the side whose piece closed (0 for ``a``'s, 1 for
    ``b``'s; its cells keep their stamp) and that piece's lowest cell."""
    label[a] = stamp
    label[b] = stamp + 1
    queue[0] = a
    other[0] = b
    ha, ta, hb, tb = 0, 1, 0, 1
    low_a, low_b = a, b
    side = 0
    while True:
        if side == 0:
            if ha == ta:
                return 0, low_a
            c = queue[ha]
            ha += 1
        else:
            if hb == tb:
                return 1, low_b
            c = other[hb]
            hb += 1
        for k in range(4):
            n = c + offsets[k]
            if not floor[n] or occupied[n] >= 0 or label[n] == stamp + side:
                continue
            if label[n] == stamp + 1 - side:
                return -1, -1
            label[n] = stamp + side
            if side == 0:
                queue[ta] = n
                ta += 1
                low_a = min(low_a, n)
            else:
                other[tb] = n
                tb += 1
                low_b = min(low_b, n)
        side = 1 - side


@uncounted
def _parted(b, t, area_of, offsets):
    """Whether, after one push from ``b`` to ``t``, the side of ``t`` that ``b`` is on
    cannot reach its other sides: none of ``b``'s other neighbours was in ``t``'s area
    before the push (the parent's ``area_of``). A way round from ``b`` to another side of
    ``t`` would leave ``b`` by one of them, and only the two cells changed."""
    here = area_of[t]
    near = False
    for k in range(4):
        n = b + offsets[k]
        if n == t:
            near = True
        elif area_of[n] == here:
            return False
    return near


@uncounted
def _areas_beside(c, area_of, offsets):
    """How many different areas (``area_of``) the four cells beside ``c`` lie in."""
    a0, a1, a2 = -1, -1, -1
    found = 0
    for k in range(4):
        a = area_of[c + offsets[k]]
        if a >= 0 and a != a0 and a != a1 and a != a2:
            found += 1
            if a0 < 0:
                a0 = a
            elif a1 < 0:
                a1 = a
            else:
                a2 = a
    return found


@uncounted
def _ring(t, floor, occupied, offsets):
    """The eight cells round ``t`` clockwise from above (the even ones share a side with
    it), as steps from ``t``, and which of them are free floor (bit j for cell j)."""
    up, right, down, left = offsets[0], offsets[3], offsets[1], offsets[2]
    ring = (up, up + right, right, right + down, down, down + left, left, left + up)
    free = 0
    for j in range(8):
        n = t + ring[j]
        if floor[n] and occupied[n] < 0:
            free |= 1 << j
    return ring, free


@uncounted
def _runs(free):
    """The runs of free sides round a cell (``free``: bit j for ring cell j, clockwise
    from above, the even ones its sides): a side starts a run unless joined to the side
    before it through the corner between. Their count and the first two's sides."""
    runs = 0
    s0, s1 = -1, -1
    for j in range(0, 8, 2):
        if not free >> j & 1:
            continue
        if free >> (j + 6) % 8 & 1 and free >> (j + 7) % 8 & 1:
            continue
        runs += 1
        if s0 < 0:
            s0 = j
        elif s1 < 0:
            s1 = j
    return runs, s0, s1


@uncounted
def sides(t, floor, occupied, offsets):
    """The runs of free cells round ``t`` (:func:`_runs`): how many, and the first cell
    of the first two (where there are two). A box on ``t`` may cut the cells beside it
    apart only where there are two or more; where there is one, no area loses more than
    ``t``."""
    ring, free = _ring(t, floor, occupied, offsets)
    runs, s0, s1 = _runs(free)
    return runs, t + ring[max(s0, 0)], t + ring[max(s1, 0)]


@uncounted
def areas_after(
    count, b, t, floor, occupied, area_of, label, stamp, queue, other, offsets, mark, mstamp,
    tree,
):  # fmt: skip
    """:func:`areas` of a child whose box went from ``b`` to ``t`` (``occupied`` is the
    child's), from its parent's areas (``count`` of them, numbered in ``area_of``).

    Freeing ``b`` joins the areas round it into one; the box on ``t`` splits its area.
    Where ``t`` is in the player's area, the area's tree (``tree``, searched with
    ``mark == mstamp``) gives the pieces and which of them lie beside ``b``. Elsewhere
    the area splits only where the free cells round ``t`` are not joined by the ring of
    eight cells about it, and only then is a flood needed to count the pieces (marking
    ``label`` with ``stamp`` and ``stamp + 1``). A child costs a look at a few cells,
    where counting afresh floods the room."""
    if b == t:
        return count
    if area_of[t] == 0:  # the player's area: its pieces without ``t`` from its tree
        i0, i1, i2 = -2, -2, -2  # the parts beside ``b`` (-2 names none), which it joins
        beside = 0
        for k in range(4):
            n = b + offsets[k]
            a = area_of[n]
            if n == t or a < 0:
                continue
            x = _part_of(n, t, area_of, mark, mstamp, offsets, tree)
            if x != i0 and x != i1 and x != i2:
                beside += 1
                if beside == 1:
                    i0 = x
                elif beside == 2:
                    i1 = x
                else:
                    i2 = x
        return count + _pieces(t, mark, mstamp, offsets, tree) - beside
    # the parent's areas next to ``b`` (``t`` among them, free in the parent) become one
    count += 1 - _areas_beside(b, area_of, offsets)
    ring, free = _ring(t, floor, occupied, offsets)
    if free & 0b01010101 == 0:
        return count - 1  # ``t`` was an area of its own
    runs, s0, s1 = _runs(free)
    if runs <= 1:
        return count  # all joined round ``t``, or one run: no split
    if runs == 2:  # (a box in a corridor)
        if _parted(b, t, area_of, offsets):
            return count + 1
        # two floods in step: they meet, or one closes
        a, z = t + ring[s0], t + ring[s1]
        closed, _ = pieces_of_two(a, z, floor, occupied, label, stamp, queue, other, offsets)
        return count if closed < 0 else count + 1
    # more runs: count the pieces they lie in, one flood a piece
    pieces = 0
    for j in range(0, 8, 2):
        n = t + ring[j]
        if free >> j & 1 and label[n] != stamp:
            pieces += 1
            flood(n, floor, occupied, label, stamp, queue, offsets)
    return count - 1 + pieces


@uncounted
def _part_of(c, t, area_of, mark, stamp, offsets, tree):
    """Which part holds the free cell ``c`` once a box takes ``t``, a cell of the player's
    area: its piece of that area (:func:`_piece_of`), or ``-2 - a`` for another area
    ``a``."""
    a = area_of[c]
    return -2 - a if a > 0 else _piece_of(t, c, mark, stamp, offsets, tree)


@uncounted
def _part_low(part, t, work, mark, stamp, offsets, tree):
    """The lowest cell of a part :func:`_part_of` names (an area's list in ``work``
    starts at its lowest cell)."""
    if part < -1:
        return work[CELLS, work[START, -3 - part]]
    return _piece_low(t, part, mark, stamp, offsets, tree)


@uncounted
def _tree_low(b, t, area_of, work, mark, stamp, offsets, tree):
    """:func:`child_low` where ``t`` is in the player's area: the lowest of ``b`` and of
    the parts beside it, which it joins."""
    best = b
    for k in range(4):
        n = b + offsets[k]
        if n != t and area_of[n] >= 0:
            best = min(best, _part_low(_part_of(n, t, area_of, mark, stamp, offsets, tree), t,
                                       work, mark, stamp, offsets, tree))  # fmt: skip
    return best


@uncounted
def child_low(
    b, t, low, floor, occupied, area_of, work, label, stamp, queue, other, offsets, mark,
    mstamp, tree,
):  # fmt: skip
    """The lowest cell of the player's area after one push of a box from ``b`` to ``t``
    (``occupied`` is the child's; the player stands on ``b``): the name of the child's
    area in the search's tables, so that positions that differ only in where the player
    stands within one area are one state from the moment they are generated.

    It follows from the parent's areas (:func:`number_areas`: the player's area 0, whose
    lowest cell is ``low``; the corral's areas, whose lists in ``work`` start at their
    lowest cell): the areas beside ``b`` join. ``t``'s area loses ``t``. Where that is
    the player's area (nearly always), its tree (:func:`search_area`: ``tree``, its cells
    ``mark == mstamp``) gives the lowest cell of each piece beside ``b``. Otherwise the
    loss matters only where ``t``'s area is beside ``b`` and ``t`` was its lowest cell or
    the ring of eight cells round ``t`` does not join its free sides. Two such sides are
    told apart by two floods in step (:func:`pieces_of_two`, ``label`` marked with
    ``stamp`` and ``stamp + 1``): the piece that closes first is flooded whole. Only where
    that leaves the answer open does a flood from ``b`` (``stamp + 2``) give it."""
    here = area_of[t]
    if here == 0:  # the player's area: its pieces without ``t`` from its tree
        return _tree_low(b, t, area_of, work, mark, mstamp, offsets, tree)
    best = b if b < low else low
    joined = False
    for k in range(4):
        n = b + offsets[k]
        a = area_of[n]
        if n == t or a <= 0:
            continue
        lowest = work[CELLS, work[START, a - 1]]
        if lowest < best:
            best = lowest
        if a == here:
            joined = True
    if not joined:
        return best
    kept = t != work[CELLS, work[START, here - 1]]  # its lowest cell
    ring, free = _ring(t, floor, occupied, offsets)
    runs, s0, s1 = _runs(free)
    if runs <= 1 and kept:
        return best
    if runs == 2:
        a, z = t + ring[s0], t + ring[s1]
        closed, lowest = pieces_of_two(a, z, floor, occupied, label, stamp, queue, other, offsets)
        if closed >= 0 and label[b] == stamp + closed:
            return lowest  # the player's piece, flooded whole
        if kept and (closed < 0 or label[best] != stamp + closed):
            return best  # joined, or the lowest cell is on the player's side
    return flood(b, floor, occupied, label, stamp + 2, queue, offsets)
