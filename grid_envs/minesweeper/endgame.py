"""Minesweeper's end game played exactly: every way the game can go, searched to the end.

When few mine placements still fit the board in view, the solver no longer needs rules of
thumb: it lists every placement (each equally likely, the mines having been laid uniformly),
and for each hidden cell it could reveal, splits them into the placements where the cell
is a mine (lost) and, for the others, by the number the cell would show. The chance of
winning with best play is then worked out over that tree:

- one placement left: the game is won (every cell is known);
- a cell safe in every placement that shows different numbers in some is revealed at once,
  free information that cannot lower the chance;
- otherwise the best guess is the one whose branches, weighted by their placements, win
  most often; a cell safe in every placement with one number everywhere tells nothing and
  is never a guess. Guesses are tried safest first, and a guess's branches largest first,
  each counted as won until searched: a guess is dropped as soon as it cannot beat the
  best so far, which leaves the answer as it was and spares the rest of its branches.

A zero's cascade needs no modelling: its neighbours are safe in every placement of that
branch, so the next level reveals them for free. Positions reached by different orders of
play hold the same placements and are searched once. The search gives up (and the solver
guesses by its usual rule) where the placements or the positions searched pass their
bounds.
"""

from __future__ import annotations

from itertools import combinations
from math import comb
from typing import Protocol

from grid_envs.minesweeper.placements import Constraints, Walk

HIDDEN = -1  # a hidden cell in the views the solver reads (else the number shown, 0-8)

MAX_PLACEMENTS = 200  # the end game is searched when at most this many placements fit
MAX_POSITIONS = 2_000  # positions searched before the search gives up


class Reckoning(Protocol):
    """What the end game reads of the solver (``MinesweeperSolver``): the board, the mines
    it has proved, its split of a view into constraints and their independent parts, and
    its walk over a part's placements."""

    mines: int
    known_mines: set[int]
    neighbours: list[tuple[int, ...]]

    def split(self, flat: list[int]) -> tuple[Constraints, list[int], list[int]]: ...

    def components(self, constraints: Constraints) -> list[tuple[list[int], Constraints]]: ...

    def walk(self, cells: list[int], cons: Constraints, most: int = -1) -> Walk | None: ...


class _TooBig(Exception):
    """The placements or the positions passed their bound."""


def placements(solver: Reckoning, flat: list[int], bound: int) -> list[int] | None:
    """Every mine placement over the hidden cells not proved mines that fits the view, as
    bit masks of cell indices; None where more than ``bound`` fit."""
    constraints, _, free = solver.split(flat)
    left = solver.mines - len(solver.known_mines)
    partial: list[tuple[int, int]] = [(0, 0)]  # (mask, mines) over the components so far
    for cells, cons in solver.components(constraints):
        found = _component(solver, cells, cons, bound)
        if found is None:
            return None
        partial = [(a | b, ka + kb) for a, ka in partial for b, kb in found if ka + kb <= left]
        if len(partial) > bound:
            return None
    if sum(comb(len(free), left - k) for _, k in partial if left - k <= len(free)) > bound:
        return None
    out: list[int] = []
    for mask, k in partial:
        rest = left - k
        if rest > len(free):
            continue
        for chosen in combinations(free, rest):
            extra = 0
            for cell in chosen:
                extra |= 1 << cell
            out.append(mask | extra)
    return out


def _component(
    solver: Reckoning, cells: list[int], cons: Constraints, bound: int
) -> list[tuple[int, int]] | None:
    """One component's placements as (mask, mines); None where more than ``bound``."""
    walked = solver.walk(cells, cons, most=bound + 1)
    if walked is None or walked.found > bound:
        return None
    found = []
    for row in walked.leaves.tolist():
        mask = 0
        for cell, value in zip(walked.order, row, strict=True):
            if value:
                mask |= 1 << cell
        found.append((mask, sum(row)))
    return found


class EndGame:
    """The best cell to reveal, searched over every placement that fits the view.

    A position is a set of placements, held as a bit mask over their indices; each cell
    keeps, once, the placements where it is a mine and those where it shows each number,
    so splitting a position by a cell is a few ``and``s.
    """

    def __init__(
        self, solver: Reckoning, cells: list[int], solutions: list[int], max_positions: int
    ) -> None:
        self.max_positions = max_positions
        self.positions = 0
        self.memo: dict[int, float] = {}
        self.cells: list[tuple[int, int, list[int]]] = []  # (cell, mine mask, number masks)
        self.all = (1 << len(solutions)) - 1
        some = every = solutions[0]
        for s in solutions:
            some |= s
            every &= s
        varying = some & ~every
        for cell in cells:
            bit = 1 << cell
            around = sum(1 << j for j in solver.neighbours[cell])
            if not (varying & (bit | around)) or every & bit:
                continue  # the same in every placement, or a sure mine: tells nothing
            mine, shows = 0, [0] * 9
            for i, s in enumerate(solutions):
                if s & bit:
                    mine |= 1 << i
                else:
                    shows[(s & around).bit_count()] |= 1 << i
            self.cells.append((cell, mine, [m for m in shows if m]))

    def best(self) -> tuple[int, float] | None:
        """(cell, chance of winning with best play), or None where the search gave up."""
        try:
            cell, win = self._search(self.all)
        except _TooBig:
            return None
        return cell, win

    def _win(self, position: int) -> float:
        """The chance of winning with best play from ``position``."""
        if position & (position - 1) == 0:  # one placement left
            return 1.0
        cached = self.memo.get(position)
        if cached is None:
            self.positions += 1
            if self.positions > self.max_positions:
                raise _TooBig
            cached = self.memo[position] = self._search(position)[1]
        return cached

    def _search(self, position: int) -> tuple[int, float]:
        """The best cell and its chance of winning: a safe cell that tells something at
        once, else the guesses safest first, until none can beat the best found (a guess
        wins at most as often as it is safe)."""
        n = position.bit_count()
        guesses = []
        for cell, mine, shows in self.cells:
            mines = (mine & position).bit_count()
            if mines == 0:
                if any((m & position) == position for m in shows):
                    continue  # one number throughout: it tells nothing here
                branches = [b for b in (m & position for m in shows) if b]  # free information
                return cell, sum(b.bit_count() * self._win(b) for b in branches) / n
            elif mines < n:
                guesses.append((mines, cell, shows))
        guesses.sort(key=lambda g: g[0])
        best_cell, best_win = -1, -1.0
        for mines, cell, shows in guesses:
            if (n - mines) / n <= best_win:
                break
            win = self._guess(position, shows, n - mines, best_win * n)
            if win is not None and win / n > best_win:
                best_cell, best_win = cell, win / n
        return best_cell, best_win

    def _guess(self, position: int, shows: list[int], safe: int, beat: float) -> float | None:
        """A guess's placements won with best play after it (of the ``safe`` where it shows
        a number), or None as soon as it cannot win more than ``beat``: its branches are
        searched largest first, each counted as won until searched."""
        branches = sorted(
            ((b.bit_count(), b) for b in (m & position for m in shows) if b), reverse=True
        )
        win, open_count = 0.0, float(safe)
        for count, branch in branches:
            open_count -= count
            win += count * self._win(branch)
            if win + open_count <= beat:
                return None
        return win


def best_cell(solver: Reckoning, flat: list[int]) -> tuple[int, float] | None:
    """The cell that wins most often with best play after it, and that chance, where the
    end game is small enough to search; None otherwise (the solver then guesses by its
    usual rule)."""
    solutions = placements(solver, flat, MAX_PLACEMENTS)
    if not solutions or len(solutions) < 2:
        return None
    cells = solver.split(flat)[1]
    return EndGame(solver, cells, solutions, MAX_POSITIONS).best()


def best_in_part(
    solver: Reckoning, cells: list[int], cons: Constraints
) -> tuple[int, float] | None:
    """:func:`best_cell` for one part of the frontier that nothing else in view can tell
    anything about, searched over that part's placements alone (each equally likely where
    they all hold as many mines); None where it has fewer than two or too many."""
    found = _component(solver, cells, cons, MAX_PLACEMENTS)
    if not found or len(found) < 2:
        return None
    return EndGame(solver, cells, [mask for mask, _ in found], MAX_POSITIONS).best()
