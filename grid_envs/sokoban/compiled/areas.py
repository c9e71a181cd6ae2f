"""The feature search's *areas* feature, compiled: how many separate areas the boxes cut
the floor into.

:func:`areas` counts them afresh (a flood an area: the start's cell and the tests'
reference); in the search a state's areas are numbered once (:func:`number_areas`, from
the player's flood and the corral's labelling, which every state has had already) and
each child's count follows from them (:func:`areas_after`): the box leaves one cell and
takes another, and only where the cells round the new one do not join does a flood run.
"""

from __future__ import annotations

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


@uncounted
def _pieces_of_two(a, b, floor, occupied, label, stamp, queue, other, offsets):
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
def areas_after(
    count, b, t, floor, occupied, area_of, label, stamp, queue, other, offsets
):  # fmt: skip
    """:func:`areas` of a child whose box went from ``b`` to ``t`` (``occupied`` is the
    child's), from its parent's areas (``count`` of them, numbered in ``area_of``).

    Freeing ``b`` joins the areas round it into one; the box on ``t`` splits its area
    only where the free cells round ``t`` are not joined by the ring of eight cells about
    it, and only then is a flood needed to count the pieces (marking ``label`` with
    ``stamp`` and ``stamp + 1``). A child costs a look at a few cells, where counting
    afresh floods the room."""
    if b == t:
        return count
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
        closed, _ = _pieces_of_two(a, z, floor, occupied, label, stamp, queue, other, offsets)
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
def child_low(b, t, low, floor, occupied, area_of, work, label, stamp, queue, other, offsets):
    """The lowest cell of the player's area after one push of a box from ``b`` to ``t``
    (``occupied`` is the child's; the player stands on ``b``): the name of the child's
    area in the search's tables, so that positions that differ only in where the player
    stands within one area are one state from the moment they are generated.

    It follows from the parent's areas (:func:`number_areas`: the player's area 0, whose
    lowest cell is ``low``; the corral's areas, whose lists in ``work`` start at their
    lowest cell): the areas beside ``b`` join. ``t``'s area loses ``t``, which matters
    only where that area is among them and ``t`` was its lowest cell or the ring of eight
    cells round ``t`` does not join its free sides. Two such sides are told apart by two
    floods in step (:func:`_pieces_of_two`, ``label`` marked with ``stamp`` and
    ``stamp + 1``): the piece that closes first is flooded whole. Only where that leaves
    the answer open does a flood from ``b`` (``stamp + 2``) give it."""
    here = area_of[t]
    best = b if b < low else low
    joined = here == 0
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
    kept = t != (low if here == 0 else work[CELLS, work[START, here - 1]])  # its lowest cell
    ring, free = _ring(t, floor, occupied, offsets)
    runs, s0, s1 = _runs(free)
    if runs <= 1 and kept:
        return best
    if runs == 2:
        a, z = t + ring[s0], t + ring[s1]
        closed, lowest = _pieces_of_two(a, z, floor, occupied, label, stamp, queue, other, offsets)
        if closed >= 0 and label[b] == stamp + closed:
            return lowest  # the player's piece, flooded whole
        if kept and (closed < 0 or label[best] != stamp + closed):
            return best  # joined, or the lowest cell is on the player's side
    return flood(b, floor, occupied, label, stamp + 2, queue, offsets)
