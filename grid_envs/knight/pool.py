"""The Knight's level pool (see :mod:`grid_envs.core.pool` for how it keeps seeds reproducible)."""

from __future__ import annotations

import numpy as np

from grid_envs.core.pool import LevelPool
from grid_envs.knight.generator import KnightGenerator
from grid_envs.knight.rules import entry_cost
from grid_envs.knight.solver import distances_many, exit_distances
from grid_envs.knight.state import DOWN_BIT, LEFT_BIT, RIGHT_BIT, UP_BIT, KnightLevel


class KnightLevelPool(LevelPool[KnightLevel]):
    """Generated Knight levels, kept per level as what an env needs to start one: the maze,
    monsters, items, the Dijkstra map to the exit, start, exit and costs. A shipped pool
    keeps the open walls, monsters and items as bits, the start and the exit; the Dijkstra
    maps follow (the compiled Dijkstra over the whole pool)."""

    package = "grid_envs.knight"

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

    def _pack(self) -> dict[str, np.ndarray]:
        n, cells = self.size, self.cells
        right = (cells[:, :, :-1] & RIGHT_BIT) > 0  # the wall between a cell and its right
        down = (cells[:, :-1, :] & DOWN_BIT) > 0
        return {
            "right": np.packbits(right.reshape(n, -1), axis=1),
            "down": np.packbits(down.reshape(n, -1), axis=1),
            "monsters": np.packbits(self.monsters.reshape(n, -1), axis=1),
            "items": np.packbits(self.items.reshape(n, -1), axis=1),
            "start": self.start, "exit": self.exit, "monster_cost": self.monster_cost,
        }  # fmt: skip

    def _unpack(self, stored: dict[str, np.ndarray]) -> None:
        n, rows, cols = self.cells.shape

        def bits(name: str, shape: tuple[int, int]) -> np.ndarray:
            return np.unpackbits(stored[name], axis=1, count=shape[0] * shape[1]).reshape(
                n, *shape).astype(bool)  # fmt: skip

        right, down = bits("right", (rows, cols - 1)), bits("down", (rows - 1, cols))
        cells = self.cells
        cells[...] = 0
        cells[:, :, :-1] |= right * np.uint8(RIGHT_BIT)
        cells[:, :, 1:] |= right * np.uint8(LEFT_BIT)
        cells[:, :-1, :] |= down * np.uint8(DOWN_BIT)
        cells[:, 1:, :] |= down * np.uint8(UP_BIT)
        self.monsters[...] = bits("monsters", (rows, cols))
        self.items[...] = bits("items", (rows, cols))
        self.start[...], self.exit[...] = stored["start"], stored["exit"]
        self.monster_cost[...] = stored["monster_cost"]
        costs = entry_cost(self.monsters, self.monster_cost[:, None, None])
        self.dist[...] = distances_many(cells, costs, self.exit)
        self.cheapest[...] = self.dist[np.arange(n), self.start[:, 0], self.start[:, 1]]

    def _level(self, k: int) -> KnightLevel:
        start = (int(self.start[k, 0]), int(self.start[k, 1]))
        exit_ = (int(self.exit[k, 0]), int(self.exit[k, 1]))
        return KnightLevel(
            self.cells[k], start, exit_, self.monsters[k], self.items[k],
            int(self.monster_cost[k]), int(self.cheapest[k]),
            exit_dist=self.dist[k],  # the env reads it: no Dijkstra again
        )  # fmt: skip
