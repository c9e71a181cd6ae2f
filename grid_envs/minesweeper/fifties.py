"""Minesweeper's coin flips, taken before any other guess (as David Hill's solver does).

- An unavoidable *50/50* (:func:`unavoidable`): two hidden cells that share one mine and
  that every number, shown or still hidden, touches alike, so that no reveal can ever
  tell them apart. The game cannot be won without that flip; taken first, the number it
  shows informs the guesses after it.
- A *pseudo-50/50* (:func:`pseudo`): a cell that is safe or one side of such a flip, found
  by the patterns two layouts can differ by unseen (a pair across or down, a 2x2 block's
  diagonal, :func:`_patterns`), counted exactly by the solver's
  :meth:`~grid_envs.minesweeper.solver.MinesweeperSolver.layouts_with`.

Both read the solver's reckoning of the view (:class:`Layouts`); :func:`board_patterns`
lays out a board's patterns once, as arrays the pseudo-50/50 tests all at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import numpy as np

from grid_envs.minesweeper.endgame import HIDDEN
from grid_envs.minesweeper.placements import Constraints, ViewParts

MAX_OUTSIDE = 2  # a pseudo-50/50's pattern may need at most this many unproved mines beside it

Patterns = list[tuple[np.ndarray, np.ndarray, np.ndarray]]


class Layouts(Protocol):
    """What the coin flips read of the solver (``MinesweeperSolver``): the board, the mines
    it has proved, the view's constraints, its count of the layouts that fit the last view
    reckoned and of those with some cells fixed, its parts, and the board's patterns."""

    size: int
    mines: int
    known_mines: set[int]
    neighbours: list[tuple[int, ...]]
    layouts: int | None
    parts: ViewParts
    patterns: Patterns

    def constraints(self, flat: list[int]) -> Constraints: ...

    def layouts_with(
        self, flat: list[int], mines: set[int], safe: set[int], cache: ViewParts | None = None
    ) -> int | None: ...


def board_patterns(rows: int, cols: int) -> Patterns:
    """The board's 50/50 patterns (:func:`_patterns`) as cell indices, three arrays of a
    kind each: the cells holding the mines, the cells without, the cells beside some of
    them (``rows * cols``, a cell past the board, where that one is off it)."""
    n = rows * cols
    groups: list[tuple[list, list, list]] = [([], [], []) for _ in range(3)]
    for r in range(rows):
        for c in range(cols):
            for kind, (mine, clear, outside) in enumerate(_patterns(r, c)):
                if all(0 <= y < rows and 0 <= x < cols for y, x in mine + clear):
                    groups[kind][0].append([y * cols + x for y, x in mine])
                    groups[kind][1].append([y * cols + x for y, x in clear])
                    groups[kind][2].append(
                        [y * cols + x if 0 <= y < rows and 0 <= x < cols else n
                         for y, x in outside]
                    )  # fmt: skip
    return [
        (np.array(a, dtype=np.int64), np.array(b, dtype=np.int64), np.array(c, dtype=np.int64))
        for a, b, c in groups
        if a
    ]


def unavoidable(solver: Layouts, flat: list[int], probs: dict[int, float]) -> int | None:
    """A cell of an unavoidable 50/50, or None: two hidden cells that are all a number
    in view has left unknown, with one mine still to find (so one of the two is a mine
    in every layout), that every number in view touches both or neither of, and whose
    hidden neighbours not proved mines are the same cells, so that whatever is revealed
    later touches them alike. By that symmetry each is a mine in half the layouts, now
    and after any reveal."""
    known = solver.known_mines
    constraints = solver.constraints(flat)
    for cells, need in constraints:
        if need != 1 or len(cells) != 2:
            continue
        a, b = sorted(cells)
        if any((a in cs) != (b in cs) for cs, _ in constraints):
            continue
        around = [
            {j for j in solver.neighbours[c] if flat[j] == HIDDEN and j not in known} - {a, b}
            for c in (a, b)
        ]
        if around[0] == around[1] and abs(probs.get(a, 0.0) - 0.5) < 1e-9:
            return a
    return None


def pseudo(solver: Layouts, flat: list[int], probs: dict[int, float]) -> int | None:
    """A cell that is safe or one of an unavoidable 50/50, or None (David Hill's
    *pseudo-50/50*). Two hidden cells side by side, A holding the mine and B not, can
    never be told apart from the layout with them swapped where the cells beside one
    and not the other are all mines (or off the board): those are never revealed, and
    every other cell touches both. Likewise a 2x2 block whose mines are one diagonal,
    where its four corner cells are mines. Where every layout in which a cell holds a
    mine is such a pattern (its count equals the cell's count of mines), revealing it
    loses only games that could not be won but by that coin flip, which must come
    some time, and shows its number now where it is safe."""
    left = solver.mines - len(solver.known_mines)
    total = solver.layouts  # the layouts, and below the parts, probabilities counted here
    if not total:  # a part too large to list: no count to compare
        return None
    cache = solver.parts
    part_of = {c: k for k, (cells, _) in enumerate(cache.parts) for c in cells}
    found: list[int] = []
    for ones, others, missing, hits in _pattern_hits(solver, flat, probs, left):
        # ... and only if the pattern lies in one part of the frontier, and cells next to
        # no number: a cell of another part is free to change while the cell holds its
        # mine, and one next to no number is, unless the mines left are too few
        if len({part_of[x] for x in ones + others + list(missing) if x in part_of}) != 1:
            continue
        count = solver.layouts_with(flat, missing | set(ones), set(others), cache)
        if not count:
            continue
        for t in hits:
            if abs(count - probs.get(t, 0.0) * total) <= 1e-6 * total and (
                solver.layouts_with(flat, {t}, set(), cache) == count
            ):
                found.append(t)
    if not found:
        return None
    return min(found, key=lambda t: (probs.get(t, 1.0), t))


def _pattern_hits(
    solver: Layouts, flat: list[int], probs: dict[int, float], left: int
) -> Iterator[tuple[list[int], list[int], set[int], list[int]]]:
    """The 50/50 patterns the view allows (their cells hidden and not proved mines, no
    number beside, at most :data:`MAX_OUTSIDE` cells beside to fill), with the cells of
    each that may be a pseudo-50/50 by their chances (:func:`_possible`): its mines'
    side, its clear side, the cells beside it that must be mines, those cells."""
    free = np.zeros(solver.size + 1, dtype=bool)  # hidden, not proved a mine
    shown = np.zeros(solver.size + 1, dtype=bool)
    view = np.asarray(flat)
    free[:-1] = view == HIDDEN
    free[list(solver.known_mines)] = False
    shown[:-1] = view != HIDDEN
    chance = np.zeros(solver.size + 1)  # a cell's chance of a mine, 0 where none was reckoned
    chance[list(probs)] = list(probs.values())
    for all_ones, all_others, all_outer in solver.patterns:
        beside = free[all_outer].sum(axis=1)
        keep = np.flatnonzero(
            free[all_ones].all(axis=1)
            & free[all_others].all(axis=1)
            & ~shown[all_outer].any(axis=1)
            & (beside <= MAX_OUTSIDE)
            & (beside + all_ones.shape[1] <= left)
        )
        ones, others, outer = all_ones[keep], all_others[keep], all_outer[keep]
        # the least chance among the cells beside that must be mines (none: no bound)
        least = np.where(free[outer], chance[outer], np.inf).min(axis=1, initial=np.inf)
        on_ones = _possible(chance[ones], chance[others], least)
        on_others = _possible(chance[others], chance[ones], least)
        for k in np.flatnonzero(on_ones.any(axis=1) | on_others.any(axis=1)):
            hits = ones[k][on_ones[k]].tolist() + others[k][on_others[k]].tolist()
            missing = {x for x in outer[k].tolist() if free[x]}
            yield ones[k].tolist(), others[k].tolist(), missing, hits


def _patterns(
    r: int, c: int
) -> list[tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]]:
    """The 50/50 patterns whose first cell is (r, c): (the cells holding mines, the cells
    without, the cells beside some of them but not all, which must be mines): a pair across,
    a pair down, a 2x2 block with mines on one diagonal."""
    return [
        ([(r, c)], [(r, c + 1)], [(r + d, c - 1) for d in (-1, 0, 1)]
         + [(r + d, c + 2) for d in (-1, 0, 1)]),
        ([(r, c)], [(r + 1, c)], [(r - 1, c + d) for d in (-1, 0, 1)]
         + [(r + 2, c + d) for d in (-1, 0, 1)]),
        ([(r, c), (r + 1, c + 1)], [(r, c + 1), (r + 1, c)],
         [(r - 1, c - 1), (r - 1, c + 2), (r + 2, c - 1), (r + 2, c + 2)]),
    ]  # fmt: skip


def _possible(side: np.ndarray, other: np.ndarray, beside: np.ndarray) -> np.ndarray:
    """Which cells of each pattern's ``side`` (a row a pattern, of chances of a mine) may be
    a pseudo-50/50 with mines on ``side`` and the cells beside (the least of whose chances
    is ``beside``) and none on ``other``: a cell may be one only if, whenever it holds a
    mine, so do those cells and the other side holds none, so each of them must hold a mine
    at least as often as the cell does, and the other side's be clear at least as often: a
    test on the chances that passes over most patterns at once."""
    p = side - 1e-9
    return (
        (p > 0)
        & (beside[:, None] >= p)
        & (side.min(axis=1, initial=np.inf)[:, None] >= p)
        & ((1.0 - other).min(axis=1, initial=np.inf)[:, None] >= p)
    )
