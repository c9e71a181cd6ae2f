"""Minesweeper's data: the board in play."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Cell = tuple[int, int]

FIRST_CLICK_RULES = ("safe", "zero", "any")

# Compact view codes: a revealed number shows as itself (0-8).
HIDDEN, FLAGGED = 9, 10


@dataclass(eq=False)
class MinesweeperState:
    """A game in play. Before the first click under ``safe``/``zero`` no mine is placed."""

    rows: int
    cols: int
    num_mines: int
    first_click: str
    mines: np.ndarray  # (rows, cols) bool, all False until placed
    counts: np.ndarray  # (rows, cols) uint8, mines among the 8 neighbours
    revealed: np.ndarray  # (rows, cols) bool
    flags: np.ndarray  # (rows, cols) bool
    placed: bool = False
    exploded: Cell | None = None
    # Horizontal runs of zero cells per row, (starts, ends) with ends exclusive: the flood
    # fill walks these instead of single cells. Static once the mines are placed; found at
    # the first flood (None until then: many games end before any).
    runs: tuple[list[list[int]], list[list[int]]] | None = None
    # The safe zero cells as one integer (see ``rules.opened_by``), the flood's room on
    # boards of up to ``rules.BITS_BOARD`` cells; static once placed, None until the first
    # flood.
    zero_bits: int | None = None

    @classmethod
    def empty(cls, rows: int, cols: int, num_mines: int, first_click: str) -> MinesweeperState:
        return cls(
            rows, cols, num_mines, first_click,
            mines=np.zeros((rows, cols), dtype=bool),
            counts=np.zeros((rows, cols), dtype=np.uint8),
            revealed=np.zeros((rows, cols), dtype=bool),
            flags=np.zeros((rows, cols), dtype=bool),
        )  # fmt: skip

    @property
    def safe_cells(self) -> int:
        return self.rows * self.cols - self.num_mines

    def __deepcopy__(self, memo: dict[int, object]) -> MinesweeperState:
        # mines, counts, runs and zero bits never change once placed: share them
        return MinesweeperState(
            self.rows, self.cols, self.num_mines, self.first_click, self.mines, self.counts,
            self.revealed.copy(), self.flags.copy(), self.placed, self.exploded, self.runs,
            self.zero_bits,
        )  # fmt: skip
