"""Pikachu (Onet)'s data: the board of tiles in play."""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import Counter

Cell = tuple[int, int]
EMPTY = 0
GRAVITY = ("none", "down", "up", "left", "right")
ON_STUCK = ("shuffle", "end")


# a game's counters, one int64 array (a row of the batch's): pairs removed, reshuffles, the
# pairs its deal started with, the corner points of its last path
REMOVED, SHUFFLES, TOTAL, PATH = range(4)
COUNTERS = 4


class PikachuState:
    """A game in play, held in the arrays the compiled rules step: the board (rows, cols)
    int16 (0 empty, 1..K the tile kind), ``counters`` (:data:`COUNTERS` int64) and
    ``path`` (4, 2) int64, the last removal's corner points as (row, col), the rows past
    them -1 (a batch keeps every game as rows of the same arrays). ``removed``,
    ``shuffles`` and ``last_path`` read and write them."""

    def __init__(
        self, board: np.ndarray, removed: int = 0, shuffles: int = 0,
        last_path: tuple[Cell, ...] = (), total: int = 0,
    ) -> None:  # fmt: skip
        self.board = board
        self.counters = np.array([removed, shuffles, total, 0], dtype=np.int64)
        self.path = np.full((4, 2), -1, dtype=np.int64)
        self.last_path = last_path

    @classmethod
    def of_arrays(cls, board: np.ndarray, counters: np.ndarray, path: np.ndarray) -> PikachuState:
        """A state holding copies of a game's arrays."""
        state = cls(board.copy())
        state.counters[:], state.path[:] = counters, path
        return state

    def __deepcopy__(self, memo: dict[int, object]) -> PikachuState:
        return PikachuState.of_arrays(self.board, self.counters, self.path)

    removed = Counter(REMOVED, "Pairs removed so far.")
    shuffles = Counter(SHUFFLES, "Reshuffles so far.")

    @property
    def last_path(self) -> tuple[Cell, ...]:
        """The corner points of the last removal, board coordinates (none before one)."""
        return tuple((r, c) for r, c in self.path[: self.counters[PATH]].tolist())

    @last_path.setter
    def last_path(self, points: tuple[Cell, ...]) -> None:
        if len(points) > len(self.path):
            raise ValueError(f"a path has at most {len(self.path)} corner points, got {points}")
        self.path[:] = -1
        self.path[: len(points)] = np.asarray(points, dtype=np.int64).reshape(-1, 2)
        self.counters[PATH] = len(points)

    @property
    def tiles_left(self) -> int:
        return int(np.count_nonzero(self.board))  # EMPTY is 0
