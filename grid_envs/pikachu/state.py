"""Pikachu (Onet)'s data: the board of tiles in play."""

from __future__ import annotations

import numpy as np

from grid_envs.core import checks
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

    def check(self, rows: int, cols: int, kinds: int) -> None:
        """The gate for a state from outside (a snapshot's): a ``ValueError`` naming what
        a game of ``kinds`` kinds on a ``rows`` x ``cols`` board cannot hold, before the
        compiled rules, which check nothing, see it."""
        check_board(self.board, rows, cols, kinds)
        counters = checks.array("the state's counters", self.counters, (COUNTERS,), np.int64, 0)
        if not 1 <= counters[TOTAL] <= rows * cols // 2 or counters[REMOVED] > counters[TOTAL]:
            raise ValueError(
                f"the state's counters hold {counters[REMOVED]} pairs removed of "
                f"{counters[TOTAL]} dealt, which a {rows}x{cols} board cannot"
            )
        if counters[PATH] > len(self.path):
            raise ValueError(f"the state's path holds {counters[PATH]} points, at most 4")
        path = checks.array("the state's path", self.path, (4, 2), np.int64, -1)
        if (path[:, 0] > rows).any() or (path[:, 1] > cols).any():
            raise ValueError(f"the state's path leaves the ring around a {rows}x{cols} board")


#: The most kinds a board may hold: one a pair of its cells, on the largest board
MAX_KINDS = checks.MAX_PAIR_SIDE**2 // 2


def check_board(board: object, rows: int, cols: int, kinds: int) -> np.ndarray:
    """Pikachu's one gate for a board, given (``levels=``) or restored: an int16 array of
    ``rows`` x ``cols`` tiles, 0 empty or a kind from 1 to ``kinds``, each kind an even
    number of times; a ``ValueError`` naming what is wrong. The board itself."""
    checks.array("the board", board, (rows, cols), np.int16, 0, kinds)
    assert isinstance(board, np.ndarray)
    counts = np.bincount(board.ravel(), minlength=kinds + 1)[1:]
    odd = np.flatnonzero(counts % 2) + 1
    if len(odd):
        raise ValueError(
            f"every tile kind must occur an even number of times; kind(s) "
            f"{', '.join(str(int(k)) for k in odd)} occur an odd number of times"
        )
    return board
