"""The walk over one part of the frontier's mine placements, compiled.

The solver's probabilities, the end game, the pseudo-50/50's counts and the belief that
samples layouts all rest on one backtracking walk: the part's hidden cells in a fixed
order, each given no mine then a mine (or the two in an order drawn from a generator),
a value kept only where every number touching the cell can still be met. The walk runs
here, compiled (in Python it took most of the solver's time on large boards), and returns
what its callers read: the placements by their number of mines, each cell's mines by that
number, and the first placements themselves. Its inputs are built by the solver from the
numbers in view (:meth:`MinesweeperSolver.walk`), never taken from outside. A view's parts
and what was walked of them are kept in a :class:`ViewParts`, a part's placements listed
in a :class:`Listing`, and parts' counts taken together by :func:`combined`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from grid_envs.core.jit import below, compiled, lone, uncounted

_ENTER, _BACK, _TRY = 0, 1, 2  # the walk's steps
Constraints = list[tuple[frozenset[int], int]]  # (hidden cells, mines among them)
# a part of at most this many placements is listed once a view, and counts with some of its
# cells fixed are read off the list (``MinesweeperSolver.layouts_with``)
MAX_LISTED = 20_000


class Walk(NamedTuple):
    """What a walk found over one part's cells, taken in ``order``: how many placements
    (``found``), their count by number of mines (``counts[k]``), each cell's mines by that
    number (``tally[k, i]``, where asked for) and the placements kept (``leaves[j, i]``: 1
    where cell ``order[i]`` holds a mine in the ``j``-th)."""

    order: list[int]
    found: int
    counts: np.ndarray
    tally: np.ndarray
    leaves: np.ndarray


@compiled
def walk_part(touch_start, touch, need, size, max_nodes, most, per_cell, rngs):
    """Backtrack over the placements of ``n`` cells (``touch_start`` has ``n + 1``
    entries): cell ``i`` is in the numbers ``touch[touch_start[i]:touch_start[i + 1]]``,
    number ``k`` needs ``need[k]`` mines among its ``size[k]`` cells. Each step (a cell
    given a value, or a placement reached) counts against ``max_nodes``. Stops after
    ``most`` placements (-1: none). Returns whether it stayed within ``max_nodes``, the
    placements found, their count by number of mines, each cell's mines by number of mines
    (``per_cell``) and the first ``most`` placements (1 where the cell holds a mine).
    Where ``rngs`` is a generator list (not None), each cell tries its two values in an
    order drawn from ``rngs[0]`` (as ``rng.integers(2)`` would)."""
    n = touch_start.shape[0] - 1
    counts = np.zeros(n + 1, dtype=np.int64)
    tally = np.zeros((n + 1 if per_cell else 0, n), dtype=np.int64)
    leaves = np.zeros((max(most, 0), n), dtype=np.uint8)
    placed = np.zeros(need.shape[0], dtype=np.int64)
    open_left = size.copy()
    assign = np.zeros(n, dtype=np.int64)
    first = np.zeros(n, dtype=np.int64)
    tried = np.zeros(n, dtype=np.int64)
    nodes = found = mines = i = 0
    step = _ENTER
    while True:
        if step == _ENTER:  # a step: cell i is to get its values, or a placement is reached
            nodes += 1
            if nodes > max_nodes:
                return False, found, counts, tally, leaves
            if i < n:
                if rngs is not None:  # (numba compiles the walk without it where None)
                    first[i] = below(rngs[0], 2)
                tried[i] = 0
                step = _TRY
                continue
            counts[mines] += 1
            if per_cell:
                tally[mines] += assign
            if found < leaves.shape[0]:
                leaves[found, :] = assign
            found += 1
            if found == most:
                return True, found, counts, tally, leaves
            step = _BACK
        elif step == _BACK:  # cell i has tried its values: the cell before tries its next
            if i == 0:
                return True, found, counts, tally, leaves
            i -= 1
            _shift(i, assign[i], -1, touch_start, touch, placed, open_left)
            mines -= assign[i]
            assign[i] = 0
            step = _TRY
        else:  # cell i takes its next value that every number touching it allows
            step = _BACK
            while tried[i] < 2:
                value = first[i] ^ tried[i]
                tried[i] += 1
                if _allowed(i, value, touch_start, touch, placed, open_left, need):
                    _shift(i, value, 1, touch_start, touch, placed, open_left)
                    assign[i] = value
                    mines += value
                    i += 1
                    step = _ENTER
                    break


@uncounted
def _allowed(i, value, touch_start, touch, placed, open_left, need):
    """Whether every number touching cell ``i`` can still be met with ``value`` there."""
    for t in range(touch_start[i], touch_start[i + 1]):
        p = placed[touch[t]] + value
        if p > need[touch[t]] or p + open_left[touch[t]] - 1 < need[touch[t]]:
            return False
    return True


@uncounted
def _shift(i, value, sign, touch_start, touch, placed, open_left):
    """Cell ``i`` given ``value`` (``sign`` 1) or relieved of it (-1), in its numbers'
    counts of mines placed and cells still open."""
    for t in range(touch_start[i], touch_start[i + 1]):
        placed[touch[t]] += sign * value
        open_left[touch[t]] -= sign


def generators_for(rng: np.random.Generator | None) -> Any:
    """What :func:`walk_part` draws from: ``rng`` as a generator list, or None."""
    return None if rng is None else lone(rng)


def warm_up() -> None:
    """Compile the walk (or load it from numba's disk cache) with and without draws, on one
    cell under one number, so that what is timed after it is the walk and not the
    loading."""
    start, ones = np.array([0, 1], dtype=np.int64), np.ones(1, dtype=np.int64)
    for rngs in (None, lone(np.random.default_rng(0))):
        walk_part(start, ones - 1, ones, ones.copy(), 10, -1, True, rngs)


def combined(counts: list[dict[int, int]]) -> dict[int, int]:
    """Independent parts' placements taken together, by their number of mines: each part's
    ``{mines: placements}`` multiplied out, as a product of polynomials in the mine count."""
    out = {0: 1}
    for part in counts:
        grown: dict[int, int] = {}
        for a, count_a in out.items():
            for b, count_b in part.items():
                grown[a + b] = grown.get(a + b, 0) + count_a * count_b
        out = grown
    return out


@dataclass
class ViewParts:
    """What ``MinesweeperSolver.probabilities`` works out of a view that
    ``MinesweeperSolver.layouts_with`` starts from: the frontier's independent parts,
    how many hidden cells are next to no number (``free``) and how many mines are not
    proved (``left``); each part's placements by their number of mines (None: too many to
    count), and, once asked for, the placements themselves (:class:`Listing`; None: more
    than :data:`MAX_LISTED`)."""

    parts: list[tuple[list[int], Constraints]]
    free: int
    left: int
    counts: dict[int, dict[int, int] | None] = field(default_factory=dict)
    listed: dict[int, Listing | None] = field(default_factory=dict)


class Listing:
    """Every placement of one part: ``leaves[j, i]`` is True where the part's ``i``-th cell
    in the walk's order (``column[cell] == i``) holds a mine in the ``j``-th placement,
    ``mines[j]`` how many that placement holds."""

    def __init__(self, walked: Walk) -> None:
        self.column = {c: i for i, c in enumerate(walked.order)}
        self.leaves = walked.leaves.astype(bool)
        self.mines = walked.leaves.sum(axis=1, dtype=np.int64)

    def counts(self, mines: set[int], safe: set[int]) -> dict[int, int]:
        """The placements with ``mines`` holding mines and ``safe`` none, by their number
        of mines besides ``mines`` (as a walk of the part with those cells fixed counts
        them)."""
        keep = np.ones(len(self.mines), dtype=bool)
        for c in mines:
            keep &= self.leaves[:, self.column[c]]
        for c in safe:
            keep &= ~self.leaves[:, self.column[c]]
        by_mines = np.bincount(self.mines[keep]).tolist()
        return {k - len(mines): n for k, n in enumerate(by_mines) if n}
