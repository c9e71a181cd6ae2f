"""The Knight for a whole batch: mazes as (num_envs, rows, cols) arrays, moves stepped at once.

The registered ids' ``vector_entry_point``. With ``level_pool=N`` (see
:mod:`grid_envs.core.pool`) a new episode is an array copy from the pool, the index drawn
with each env's generator; otherwise the single env's own code sets it up
(:meth:`KnightEnv._new_episode`, a generated maze or a level file) with that env's
generator. Either way the same seeds give the mazes of N single envs (tested). The moves,
energy, items, the exit and the "can it still reach the exit" loss are array operations
over the batch, on each maze's Dijkstra map (computed once per maze).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grid_envs.core.grid import DIRECTIONS
from grid_envs.core.vector import GridVectorEnv
from grid_envs.knight import rules
from grid_envs.knight.env import KnightEnv
from grid_envs.knight.rules import ENERGY_PLANE, ITEM_PLANE, KNIGHT_PLANE, MASKS, N_PLANES
from grid_envs.knight.solver import exit_distances
from grid_envs.knight.state import KnightLevel, KnightState

UNREACHABLE = np.iinfo(np.int64).max // 2  # padding cells: never reached


class KnightVectorEnv(GridVectorEnv):
    """``num_envs`` Knight games; the keyword arguments are the single env's."""

    template: KnightEnv  # sets up every new episode, with the env's own generator

    env_class = KnightEnv

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        super().__init__(num_envs, max_episode_steps, **kwargs)
        single = self.template
        n, (rows, cols) = self.num_envs, single.obs_shape
        self.cells = np.zeros((n, rows, cols), dtype=np.uint8)  # URDL open sides, 0 = padding
        self.monsters = np.zeros((n, rows, cols), dtype=bool)
        self.items = np.zeros((n, rows, cols), dtype=bool)  # not picked up yet
        self.dist = np.zeros((n, rows, cols), dtype=np.int64)  # cheapest cost to the exit
        self.monster_cost = np.zeros(n, dtype=np.int64)
        self.knight = np.zeros((n, 2), dtype=np.int64)
        self.exit = np.zeros((n, 2), dtype=np.int64)
        self.energy = np.zeros(n, dtype=np.int64)
        self.cheapest = np.zeros(n, dtype=np.int64)
        self.collected = np.zeros(n, dtype=np.int64)
        self.levels = np.full(n, None, dtype=object)  # each env's KnightLevel, if not pooled
        self.level_index = np.full(n, -1, dtype=np.int64)  # each env's pool level, or -1
        self._moves = np.array(DIRECTIONS, dtype=np.int64)  # action -> (dr, dc)
        self.planes = np.zeros((n, N_PLANES, rows, cols), dtype=np.uint8)  # kept up to date

    # ------------------------------------------------------------------ hooks
    def _reset_envs(self, idx: np.ndarray, options: dict[str, Any]) -> None:
        pool = self.template.pool
        if pool is not None and not isinstance(options.get("level"), KnightLevel):
            ks = np.array([pool.draw(self.rngs[i]) for i in idx.tolist()])
            pool.fill(ks)
            energy = rules.start_energy(pool.cheapest[ks], self.template.energy_slack)
            self._load(idx, pool.cells[ks], pool.monsters[ks], pool.items[ks], pool.dist[ks],
                       pool.start[ks], pool.exit[ks], pool.monster_cost[ks], pool.cheapest[ks],
                       energy)  # fmt: skip
            self.level_index[idx] = ks
        else:
            for i in idx.tolist():  # the single env's own code with env i's generator
                s = self._single_episode(i, options)
                lv = s.level
                self._load(np.array([i]), lv.cells[None], lv.monsters[None], s.items[None],
                           exit_distances(lv)[None], np.array([s.knight]), np.array([lv.exit]),
                           lv.monster_cost, lv.cheapest, s.energy)  # fmt: skip
                self.levels[i], self.level_index[i] = lv, -1
        if self.template.observation_mode == "planes":
            self._draw(idx)

    def _load(self, idx: np.ndarray, cells: np.ndarray, monsters: np.ndarray, items: np.ndarray,
              dist: np.ndarray, knight: Any, exit_: Any, monster_cost: Any, cheapest: Any,
              energy: Any) -> None:  # fmt: skip
        """New episodes in the envs ``idx``: their mazes (k, rows, cols) in the top-left corner
        of the padded arrays, the rest per env."""
        rows, cols = cells.shape[1:]
        for array, source in ((self.cells, cells), (self.monsters, monsters), (self.items, items)):
            array[idx] = 0
            array[idx, :rows, :cols] = source
        self.dist[idx] = UNREACHABLE
        self.dist[idx, :rows, :cols] = dist
        self.knight[idx], self.exit[idx] = knight, exit_
        self.monster_cost[idx], self.cheapest[idx] = monster_cost, cheapest
        self.energy[idx], self.collected[idx] = energy, 0

    def _masks(self, idx: np.ndarray) -> np.ndarray:
        return MASKS[self.cells[idx, self.knight[idx, 0], self.knight[idx, 1]]]

    def _apply(self, idx: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        old = self.knight[idx]
        pos = old + self._moves[actions]
        self.knight[idx] = pos
        r, c = pos[:, 0], pos[:, 1]
        self.energy[idx] -= rules.entry_cost(self.monsters[idx, r, c], self.monster_cost[idx])
        found = self.items[idx, r, c]
        self.items[idx[found], r[found], c[found]] = False
        self.collected[idx[found]] += 1
        at_exit = (pos == self.exit[idx]).all(axis=1)
        rewards, won, lost = rules.outcome(
            self.template.rewards, found, at_exit, self.energy[idx], self.dist[idx, r, c]
        )
        if self.template.observation_mode == "planes":  # only these cells and the energy changed
            self.planes[idx, KNIGHT_PLANE, old[:, 0], old[:, 1]] = 0
            self.planes[idx, KNIGHT_PLANE, r, c] = 1
            self.planes[idx, ITEM_PLANE, r, c] = 0
            self.planes[idx, ENERGY_PLANE] = rules.energy_shown(self.energy[idx])[:, None, None]
        return rewards, won | lost, won

    def _draw(self, idx: np.ndarray) -> None:
        """The observation planes of the envs ``idx``, from scratch (at a reset)."""
        planes = np.zeros((len(idx), *self.planes.shape[1:]), dtype=np.uint8)
        rules.draw_planes(planes, self.cells[idx], self.knight[idx], self.exit[idx],
                          self.monsters[idx], self.items[idx], self.energy[idx])  # fmt: skip
        self.planes[idx] = planes

    def _state_of_env(self, i: int) -> KnightState:
        k = int(self.level_index[i])
        level = self.template.pool[k] if k >= 0 and self.template.pool else self.levels[i]
        rows, cols = level.shape
        knight = (int(self.knight[i, 0]), int(self.knight[i, 1]))
        items = self.items[i, :rows, :cols].copy()
        return KnightState(level, knight, int(self.energy[i]), items, int(self.collected[i]))

    def _observations(self) -> np.ndarray:
        if self.template.observation_mode == "compact":
            return self.cells.copy()
        return self.planes.copy()

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        return {
            "energy": self.energy.copy(),
            "cheapest": self.cheapest.copy(),
            "items_collected": self.collected.copy(),
            "knight": self.knight.copy(),
        }


def distance_potentials(env: KnightVectorEnv) -> np.ndarray:
    """The ``"distance"`` potential of every env of the batch, (num_envs,) float64: minus
    the cheapest cost from the knight's cell to the exit, read off the same Dijkstra map as
    :func:`grid_envs.knight.solver.distance_potential` reads."""
    rows = np.arange(env.num_envs)
    return -env.dist[rows, env.knight[:, 0], env.knight[:, 1]].astype(np.float64)


def distance_fields(env: KnightVectorEnv) -> np.ndarray:
    """The ``"distance"`` field of every env of the batch, (num_envs, rows, cols) float64:
    minus each cell's cheapest cost to the exit (:func:`grid_envs.knight.solver.distance_field`
    for each env)."""
    return -env.dist.astype(np.float64)
