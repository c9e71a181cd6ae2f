"""What a player may believe about the hidden mines: every layout that fits what is in view
is equally likely, and a search draws its boards from that belief.

The view is the numbers revealed, the hidden cells and the number of mines (flags are the
player's own marks, not information). Under each first-click rule the mines were drawn
uniformly among the cells the rule allowed, and the cells it kept free are revealed, so
given the view every consistent layout is equally likely. :class:`MineBelief` splits the
hidden cells next to numbers (the frontier) into independent components, as the solver
does (:class:`~grid_envs.minesweeper.solver.MinesweeperSolver`), lists each component's
placements by their number of mines, and draws a layout exactly: the components' mine
counts by their weights (placements times the ways to put the other mines in the
unconstrained cells), one placement of each count uniformly, the rest uniformly among the
unconstrained cells. A component too large to list (more than ``max_placements``
placements) is filled by a randomised backtracking walk instead: consistent, but not
exactly uniform.
"""

from __future__ import annotations

from math import comb

import numpy as np

from grid_envs.minesweeper.placements import Listing, combined
from grid_envs.minesweeper.solver import HIDDEN, MinesweeperSolver


class MineBelief:
    """The layouts that fit a view, ready to draw from.

    Args:
        view: (rows, cols) int, -1 for a hidden cell, else the number shown.
        num_mines: the mines on the board.
        max_placements: a component with more consistent placements than this is filled
            by a random walk (see the module doc).
    """

    def __init__(self, view: np.ndarray, num_mines: int, max_placements: int = 100_000) -> None:
        rows, cols = view.shape
        self.shape = (rows, cols)
        self.num_mines = int(num_mines)
        self.solver = MinesweeperSolver(rows, cols, num_mines, max_nodes=4 * max_placements)
        flat = view.ravel().tolist()
        constraints = [c for c in self.solver.constraints(flat) if c[0]]
        frontier = set().union(*(c[0] for c in constraints)) if constraints else set()
        self.free = np.array(
            [i for i, v in enumerate(flat) if v == HIDDEN and i not in frontier], dtype=np.int64
        )
        # per component: its cells, and its placements by mines ((count, cells) bool each)
        self.listed: list[tuple[np.ndarray, dict[int, np.ndarray]]] = []
        self.walked: list[tuple[list[int], list[tuple[frozenset[int], int]]]] = []
        for cells, cons in self.solver.components(constraints):
            found = self._placements(cells, cons, max_placements)
            if found is None:
                self.walked.append((cells, cons))
            else:
                self.listed.append(found)
        self.polys = [{k: len(p) for k, p in by_k.items()} for _, by_k in self.listed]
        if not self.walked and not self._weights(self.polys, self.num_mines).any():
            raise ValueError("no mine layout fits this view: it is not a view of a real game")

    def _placements(
        self, cells: list[int], cons: list[tuple[frozenset[int], int]], limit: int
    ) -> tuple[np.ndarray, dict[int, np.ndarray]] | None:
        walked = self.solver.walk(cells, cons, most=limit + 1)
        if walked is None or walked.found > limit:
            return None
        listing = Listing(walked)
        counts = listing.mines
        by_k = {int(k): listing.leaves[counts == k] for k in dict.fromkeys(counts.tolist())}
        return np.array(walked.order, dtype=np.int64), by_k

    def _weights(self, polys: list[dict[int, int]], mines: int) -> np.ndarray:
        """For the first component of ``polys``, the weight of each of its mine counts
        (index k) given that the rest and the free cells hold ``mines - k``."""
        u = len(self.free)
        if not polys:
            return np.array([1.0 if 0 <= mines <= u else 0.0])
        rest = combined(polys[1:])
        first = polys[0]
        weights = np.zeros(max(first) + 1)
        for k, count in first.items():
            weights[k] = count * sum(
                c * comb(u, mines - k - k2) for k2, c in rest.items() if 0 <= mines - k - k2 <= u
            )
        return weights

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """A layout, (rows, cols) bool, drawn from the belief with ``rng``."""
        for _ in range(100):
            mines = np.zeros(self.shape[0] * self.shape[1], dtype=bool)
            left = self.num_mines
            for walked, cons in self.walked:  # too large to list: any consistent placement
                found = self.solver.walk(walked, cons, most=1, rng=rng)
                if found is not None and found.found:
                    mines[np.array(found.order)[found.leaves[0] == 1]] = True
            left -= int(mines.sum())
            for i, (cells, by_k) in enumerate(self.listed):
                weights = self._weights(self.polys[i:], left)
                if not weights.sum():
                    break
                k = int(rng.choice(len(weights), p=weights / weights.sum()))
                row = by_k[k][rng.integers(len(by_k[k]))]
                mines[cells[row]] = True
                left -= k
            else:
                if 0 <= left <= len(self.free):
                    mines[rng.choice(self.free, size=left, replace=False)] = True
                    return mines.reshape(self.shape)
        raise ValueError("no mine layout fits this view: it is not a view of a real game")
