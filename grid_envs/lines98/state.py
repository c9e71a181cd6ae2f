"""Lines98's data: the balls on the board, the announced balls, the running score."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EMPTY = 0


@dataclass(eq=False)
class Lines98State:
    board: np.ndarray  # (rows, cols) int8: 0 empty, 1..C a ball's colour
    # the balls announced for the next spawn: flat cell -> colour (the cells are empty now)
    announced: dict[int, int] = field(default_factory=dict)
    score: int = 0
    balls_cleared: int = 0
    moves: int = 0
    last_cleared: tuple[int, ...] = ()  # flat cells cleared by the last step (for drawing)
    line_length: int = 5  # the rules this game is played by (for planners and potentials)
    colours: int = 7

    def __deepcopy__(self, memo: dict[int, object]) -> Lines98State:
        return Lines98State(
            self.board.copy(), dict(self.announced), self.score, self.balls_cleared,
            self.moves, self.last_cleared, self.line_length, self.colours,
        )  # fmt: skip

    @property
    def empty_cells(self) -> int:
        return self.board.size - int(np.count_nonzero(self.board))  # EMPTY is 0
