"""The Knight's level pool (see :mod:`grid_envs.core.pool` for how it keeps seeds reproducible)."""

from __future__ import annotations

import numpy as np

from grid_envs.core.pool import LevelPool
from grid_envs.knight.generator import KnightGenerator
from grid_envs.knight.solver import exit_distances
from grid_envs.knight.state import KnightLevel


class KnightLevelPool(LevelPool[KnightLevel]):
    """Generated Knight levels, kept per level as what an env needs to start one: the maze,
    monsters, items, the Dijkstra map to the exit, start, exit and costs."""

    def __init__(self, generator: KnightGenerator, size: int, seed: int = 0) -> None:
        super().__init__(generator, size, seed)
        n, (rows, cols) = self.size, generator.shape
        self.cells = np.zeros((n, rows, cols), dtype=np.uint8)
        self.monsters = np.zeros((n, rows, cols), dtype=bool)
        self.items = np.zeros((n, rows, cols), dtype=bool)
        self.dist = np.zeros((n, rows, cols), dtype=np.int32)  # cheapest cost to the exit
        self.start = np.zeros((n, 2), dtype=np.int16)
        self.exit = np.zeros((n, 2), dtype=np.int16)
        self.monster_cost = np.zeros(n, dtype=np.int32)
        self.cheapest = np.zeros(n, dtype=np.int32)

    def _record(self, k: int, level: KnightLevel) -> None:
        self.cells[k], self.monsters[k], self.items[k] = level.cells, level.monsters, level.items
        self.dist[k] = exit_distances(level)
        self.start[k], self.exit[k] = level.start, level.exit
        self.monster_cost[k], self.cheapest[k] = level.monster_cost, level.cheapest

    def _level(self, k: int) -> KnightLevel:
        start = (int(self.start[k, 0]), int(self.start[k, 1]))
        exit_ = (int(self.exit[k, 0]), int(self.exit[k, 1]))
        return KnightLevel(
            self.cells[k], start, exit_, self.monsters[k], self.items[k],
            int(self.monster_cost[k]), int(self.cheapest[k]),
            exit_dist=self.dist[k],  # the env reads it: no Dijkstra again
        )  # fmt: skip
