"""The Knight's data: a maze of 4-bit cells, and the game in play."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

Cell = tuple[int, int]

# The source article's bits, read from the right: UP, RIGHT, DOWN, LEFT.
UP_BIT, RIGHT_BIT, DOWN_BIT, LEFT_BIT = 1, 2, 4, 8
# Bits in the order of the actions (0 up, 1 down, 2 left, 3 right).
ACTION_BITS = (UP_BIT, DOWN_BIT, LEFT_BIT, RIGHT_BIT)


@dataclass(frozen=True, eq=False)
class KnightLevel:
    """A maze with its start, exit, monsters, items and the cheapest route's cost."""

    cells: np.ndarray  # (rows, cols) uint8, URDL bits of open sides
    start: Cell
    exit: Cell
    monsters: np.ndarray  # (rows, cols) bool
    items: np.ndarray  # (rows, cols) bool
    monster_cost: int = 3  # energy to enter a monster's cell (1 for any other cell)
    cheapest: int = 0  # cost of the cheapest route from start to exit
    # the cheapest cost from every cell to the exit: a cache that
    # :func:`grid_envs.knight.solver.exit_distances` fills (or the generator hands over)
    exit_dist: np.ndarray | None = field(default=None, repr=False)

    def __deepcopy__(self, memo: dict[int, object]) -> KnightLevel:
        return self  # immutable

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.cells.shape[0]), int(self.cells.shape[1]))


@dataclass(eq=False)
class KnightState:
    """The game in play; the maze itself is shared with the level, never written."""

    level: KnightLevel
    knight: Cell
    energy: int
    items: np.ndarray  # (rows, cols) bool, items not yet picked up
    collected: int = 0

    def __deepcopy__(self, memo: dict[int, object]) -> KnightState:
        return KnightState(self.level, self.knight, self.energy, self.items.copy(), self.collected)
