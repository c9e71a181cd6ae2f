"""Lines98's data: the balls on the board, the announced balls, the running score.

A game is kept as the arrays the compiled rules play on (:mod:`grid_envs.lines98.rules`),
the layout of one row of the batched env's arrays, so a step reads and writes them in
place with no conversion. The announced balls, the score and the other counters are also
read and written as plain Python values through properties (for planners and tests).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from grid_envs.core import checks
from grid_envs.core.jit import Counter

EMPTY = 0
# a game's counters, one int64 array (a row of the batch's): announced balls held, score,
# balls cleared, moves made, cells cleared by the last rule applied
N_ANN, SCORE, CLEARED, MOVES, LAST = range(5)
COUNTERS = 5


class Lines98State:
    """One Lines98 game. ``Lines98State(board, announced, score, balls_cleared, moves,
    last_cleared, line_length, colours)`` copies nothing but the board's dtype and layout
    (an int8 C-ordered board is kept as given)."""

    # board: (rows, cols) int8, 0 empty, 1..C a ball's colour; flat: (rows * cols,) a view
    # ann_cell: (rows * cols,) int64, the announced balls' flat cells in the order they
    #   were announced, the first counters[N_ANN] (the cells are empty now); past them,
    #   what the rules left there (a copy zeroes it)
    # ann_colour: (rows * cols,) int8, their colours
    # counters: (COUNTERS,) int64, see N_ANN, SCORE, CLEARED, MOVES, LAST
    # cleared: (rows * cols,) int64, the flat cells the last rule cleared, the first
    #   counters[LAST] (for drawing)

    def __init__(
        self, board: np.ndarray, announced: dict[int, int] | None = None, score: int = 0,
        balls_cleared: int = 0, moves: int = 0, last_cleared: Iterable[int] = (),
        line_length: int = 5, colours: int = 7,
    ) -> None:  # fmt: skip
        self.board = board
        n = self._board.size
        self.ann_cell = np.zeros(n, dtype=np.int64)
        self.ann_colour = np.zeros(n, dtype=np.int8)
        self.counters = np.array([0, score, balls_cleared, moves, 0], dtype=np.int64)
        self.cleared = np.zeros(n, dtype=np.int64)
        self.announced = announced or {}
        self.last_cleared = tuple(last_cleared)
        self.line_length, self.colours = line_length, colours

    @property
    def board(self) -> np.ndarray:
        return self._board

    @board.setter
    def board(self, board: np.ndarray) -> None:
        self._board = np.ascontiguousarray(board, dtype=np.int8)
        self.flat = self._board.reshape(-1)  # a view: the rules write the board through it

    @classmethod
    def of_arrays(
        cls, board: np.ndarray, ann_cell: np.ndarray, ann_colour: np.ndarray,
        counters: np.ndarray, cleared: np.ndarray, line_length: int, colours: int,
    ) -> Lines98State:  # fmt: skip
        """A copy of a game held as the rules' arrays (one row of a batch's): only the
        announced balls held and the cells last cleared are copied, so two copies of one
        game are equal array for array, whatever the arrays held before."""
        state = cls.__new__(cls)
        state.board = board.copy()
        state.ann_cell, state.ann_colour = ann_cell.copy(), ann_colour.copy()
        state.counters, state.cleared = counters.copy(), cleared.copy()
        state.ann_cell[counters[N_ANN] :] = state.ann_colour[counters[N_ANN] :] = 0
        state.cleared[counters[LAST] :] = 0
        state.line_length, state.colours = line_length, colours
        return state

    def __deepcopy__(self, memo: dict[int, object]) -> Lines98State:
        return Lines98State.of_arrays(self._board, self.ann_cell, self.ann_colour,
                                      self.counters, self.cleared, self.line_length,
                                      self.colours)  # fmt: skip

    def __getstate__(self) -> dict[str, object]:
        return {name: value for name, value in vars(self).items() if name != "flat"}

    def __setstate__(self, saved: dict[str, object]) -> None:
        for name, value in saved.items():
            setattr(self, "board" if name == "_board" else name, value)

    @property
    def announced(self) -> dict[int, int]:
        """The balls announced for the next spawn, flat cell -> colour, in the order they
        were announced (a new dict; assign one to change them)."""
        held = self.held
        return dict(
            zip(self.ann_cell[:held].tolist(), self.ann_colour[:held].tolist(), strict=True)
        )

    @announced.setter
    def announced(self, announced: dict[int, int]) -> None:
        held = len(announced)
        if held > self.ann_cell.size:
            raise ValueError(f"{held} announced balls on a board of {self.ann_cell.size} cells")
        self.ann_cell[:held] = list(announced)
        self.ann_colour[:held] = list(announced.values())
        self.counters[N_ANN] = held

    score = Counter(SCORE, "Points so far.")
    balls_cleared = Counter(CLEARED, "Balls cleared so far.")
    moves = Counter(MOVES, "Moves made so far.")

    @property
    def held(self) -> int:
        """How many balls are announced."""
        return int(self.counters[N_ANN])

    @property
    def last_cleared(self) -> tuple[int, ...]:
        """The flat cells cleared by the last rule applied (a move and its spawn)."""
        return tuple(self.cleared[: self.counters[LAST]].tolist())

    @last_cleared.setter
    def last_cleared(self, cells: tuple[int, ...]) -> None:
        self.cleared[: len(cells)] = cells
        self.counters[LAST] = len(cells)

    @property
    def empty_cells(self) -> int:
        return self._board.size - int(np.count_nonzero(self._board))  # EMPTY is 0

    def check(self, rows: int, cols: int, colours: int, line_length: int) -> None:
        """Lines98's one gate for a state from outside (a snapshot's): a ``ValueError``
        naming what a game of ``colours`` colours and lines of ``line_length`` on a ``rows``
        x ``cols`` board cannot hold, before the compiled rules, which check nothing, see
        it: the board's colours, the announced balls on empty cells of the board, counters
        that count, the cells last cleared on the board."""
        n = rows * cols
        board = checks.array("the board", self._board, (rows, cols), np.int8, 0, colours)
        counters = checks.array("the state's counters", self.counters, (COUNTERS,), np.int64, 0)
        held, last = int(counters[N_ANN]), int(counters[LAST])
        if held > n or last > n:
            raise ValueError(f"the state counts {held} announced and {last} cleared of {n} cells")
        cells = checks.array("the announced cells", self.ann_cell, (n,), np.int64)[:held]
        colour = checks.array("the announced colours", self.ann_colour, (n,), np.int8)[:held]
        if len(cells) and (cells.min() < 0 or cells.max() >= n or len(set(cells.tolist())) < held):
            raise ValueError(f"the announced cells must be distinct cells of the {n}: {cells}")
        if len(colour) and (colour.min() < 1 or colour.max() > colours):
            raise ValueError(f"the announced colours must be 1 to {colours}: {colour}")
        if (board.reshape(-1)[cells] != EMPTY).any():
            raise ValueError("an announced ball's cell must be empty")
        cleared = checks.array("the cleared cells", self.cleared, (n,), np.int64)[:last]
        if len(cleared) and (cleared.min() < 0 or cleared.max() >= n):
            raise ValueError(f"the cleared cells must be cells of the {n}: {cleared}")
        if (self.line_length, self.colours) != (line_length, colours):
            raise ValueError(
                f"the state plays lines of {self.line_length} in {self.colours} colours, this "
                f"env lines of {line_length} in {colours}"
            )
