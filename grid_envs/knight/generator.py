"""Knight levels: a maze, monsters and items, and a start far from the exit."""

from __future__ import annotations

import numpy as np

from grid_envs.core import checks
from grid_envs.knight import maze
from grid_envs.knight.rules import entry_cost
from grid_envs.knight.solver import distances
from grid_envs.knight.state import KnightLevel

# The generator's own bound, where a maze's time and memory stay a command's; the
# env plays boards of at most checks.MAX_SIDE a side (KnightEnv checks its own)
MAX_CELLS = 4_000_000
#: The dearest monster: a route's energy is kept as a 32-bit integer, and the longest route
#: of the largest env board (65,536 cells) at this cost stays far inside it.
MAX_MONSTER_COST = 1000


class KnightGenerator:
    """Random levels whose cheapest route is long.

    Args:
        rows, cols: the maze's size in cells (the wall border is implicit).
        loops: share of the walls left after the spanning tree that are opened too
            (0: exactly one route between any two cells).
        monster_density, item_density: chance that a cell holds a monster or an item.
        monster_cost: energy to enter a monster's cell (other cells cost 1); from 1 to
            :data:`MAX_MONSTER_COST`.

    The exit is the cell farthest (by cost) from a random cell, and the start the cell
    farthest from the exit, so the knight has a long way to go.
    """

    def __init__(
        self,
        rows: int = 9,
        cols: int = 9,
        loops: float = 0.1,
        monster_density: float = 0.1,
        item_density: float = 0.05,
        monster_cost: int = 3,
    ) -> None:
        self.rows = checks.side("rows", rows, high=MAX_CELLS)
        self.cols = checks.side("cols", cols, high=MAX_CELLS)
        if self.rows * self.cols > MAX_CELLS:
            raise ValueError(
                f"a generated maze has at most {MAX_CELLS:,} cells (memory and time), got "
                f"{self.rows}x{self.cols}"
            )
        if self.rows * self.cols < 2:
            raise ValueError(f"a level needs at least two cells, got {rows}x{cols}")
        self.loops = checks.real("loops", loops, 0.0, 1.0)
        self.monster_density = checks.real("monster_density", monster_density, 0.0, 1.0)
        self.item_density = checks.real("item_density", item_density, 0.0, 1.0)
        self.monster_cost = checks.integer("monster_cost", monster_cost, 1, MAX_MONSTER_COST)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def settings(self) -> tuple[int | float, ...]:
        """Everything that decides which level a random stream gives."""
        return (self.rows, self.cols, self.loops, self.monster_density, self.item_density,
                self.monster_cost)  # fmt: skip

    def generate(self, rng: np.random.Generator) -> KnightLevel:
        shape = self.shape
        cells = maze.generate(self.rows, self.cols, rng, self.loops)
        monsters = rng.random(shape) < self.monster_density
        items = (rng.random(shape) < self.item_density) & ~monsters
        costs = entry_cost(monsters, self.monster_cost)
        probe = divmod(int(rng.integers(self.rows * self.cols)), self.cols)
        exit_ = _farthest(distances(cells, costs, probe))
        monsters[exit_] = items[exit_] = False
        # clearing the exit's monster lowers every other cell's cost by the same amount, so
        # the farthest cell (the start) is the one it was before
        dist = distances(cells, entry_cost(monsters, self.monster_cost), exit_)
        start = _farthest(dist)
        monsters[start] = items[start] = False
        # no cheapest route passes through the start (the farthest cell: any route through it
        # costs more than its own), so clearing its monster changes no cell's cost: ``dist``
        # is the finished level's Dijkstra map, handed to the env instead of computed again
        return KnightLevel(
            cells, start, exit_, monsters, items, self.monster_cost, int(dist[start]), dist
        )


def _farthest(dist: np.ndarray) -> tuple[int, int]:
    r, c = np.unravel_index(int(np.argmax(dist)), dist.shape)
    return (int(r), int(c))
