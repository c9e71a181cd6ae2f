"""Sokoban's level pool (see :mod:`grid_envs.core.pool` for how it keeps seeds reproducible)."""

from __future__ import annotations

import numpy as np

from grid_envs.core.pool import LevelPool
from grid_envs.sokoban import rules
from grid_envs.sokoban.generator import GeneratedLevel, SokobanGenerator
from grid_envs.sokoban.state import SokobanState, cell_codes


def start_figures(state: SokobanState) -> tuple[int, int, int]:
    """(goals without a box, boxes on goals, goals) of a position: what a batched env keeps
    per env."""
    goals = state.goals
    return int((goals & ~state.boxes).sum()), rules.boxes_on_goals(state), int(goals.sum())


class SokobanLevelPool(LevelPool[GeneratedLevel]):
    """Generated Sokoban levels, with per level what a batched env copies to start one: the
    cell codes of the observation, the dead squares, the player's cell, how many goals lack
    a box and whether the start is already deadlocked; and the push distances, with which
    the single env starts one."""

    def __init__(self, generator: SokobanGenerator, size: int, seed: int = 0) -> None:
        super().__init__(generator, size, seed)
        n, (rows, cols) = self.size, generator.shape
        self.codes = np.zeros((n, rows, cols), dtype=np.uint8)
        self.dead = np.zeros((n, rows, cols), dtype=bool)
        self.player = np.zeros((n, 2), dtype=np.int64)
        self.goals_free = np.zeros(n, dtype=np.int64)  # goals without a box
        self.boxes_on = np.zeros(n, dtype=np.int64)
        self.num_boxes = np.zeros(n, dtype=np.int64)
        self.deadlocked = np.zeros(n, dtype=bool)
        self.optimal_pushes = np.full(n, None, dtype=object)  # when the generator proved it
        # the single env starts a pooled level from these (push distances take about 0.1 ms)
        self.push_dist: list[np.ndarray | None] = [None] * n

    def _record(self, k: int, generated: GeneratedLevel) -> None:
        level = generated.level
        state = rules.new_state(level)
        self.codes[k] = cell_codes(state, self.codes.shape[1:])
        self.dead[k] = state.dead
        self.player[k] = level.player
        self.goals_free[k], self.boxes_on[k], self.num_boxes[k] = start_figures(state)
        self.deadlocked[k] = rules.is_deadlocked(state)
        self.optimal_pushes[k] = generated.optimal_pushes
        self.push_dist[k] = state.push_dist
