"""Pikachu (Onet)'s data: the board of tiles in play."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Cell = tuple[int, int]
EMPTY = 0
GRAVITY = ("none", "down", "up", "left", "right")
ON_STUCK = ("shuffle", "end")


@dataclass(eq=False)
class PikachuState:
    board: np.ndarray  # (rows, cols) int16: 0 empty, 1..K the tile kind
    removed: int = 0  # pairs removed so far
    shuffles: int = 0
    last_path: tuple[Cell, ...] = ()  # corner points of the last removal, board coordinates

    def __deepcopy__(self, memo: dict[int, object]) -> PikachuState:
        return PikachuState(self.board.copy(), self.removed, self.shuffles, self.last_path)

    @property
    def tiles_left(self) -> int:
        return int(np.count_nonzero(self.board))  # EMPTY is 0
