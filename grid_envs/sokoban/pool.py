"""Sokoban's level pool (see :mod:`grid_envs.core.pool` for how it keeps seeds reproducible)."""

from __future__ import annotations

import numpy as np

from grid_envs.core.pool import LevelPool
from grid_envs.sokoban import rules
from grid_envs.sokoban.generator import GeneratedLevel, SokobanGenerator
from grid_envs.sokoban.state import (
    BOX,
    BOX_ON_GOAL,
    GOAL,
    PLAYER,
    PLAYER_ON_GOAL,
    WALL,
    Level,
    SokobanState,
    cell_codes,
)

_GOALS = np.isin(np.arange(7), [GOAL, BOX_ON_GOAL, PLAYER_ON_GOAL])
_BOXES = np.isin(np.arange(7), [BOX, BOX_ON_GOAL])


def start_figures(state: SokobanState) -> tuple[int, int, int]:
    """(goals without a box, boxes on goals, goals) of a position: what a batched env keeps
    per env."""
    goals = state.goals
    return int((goals & ~state.boxes).sum()), rules.boxes_on_goals(state), int(goals.sum())


class SokobanLevelPool(LevelPool[Level]):
    """Generated Sokoban levels, kept per level as what an env needs to start one: the cell
    codes of the compact view (which hold the whole level: a generated room's walls are
    everything off its floor), the push distances (the dead squares are the floor cells
    without one), the player's cell, how many goals lack a box, whether the start is
    already deadlocked, and the proved optimum when the generator proves one. A shipped
    pool keeps the cell codes, the deadlock flags and the optima; the rest follows from the
    codes (the push distances by the compiled search)."""

    package = "grid_envs.sokoban"

    def __init__(self, generator: SokobanGenerator, size: int, seed: int = 0) -> None:
        super().__init__(generator, size, seed)
        n, (rows, cols) = self.size, generator.shape
        self.codes = np.zeros((n, rows, cols), dtype=np.uint8)
        self.push_dist = np.zeros((n, rows, cols), dtype=np.int16)  # -1: no goal reachable
        self.player = np.zeros((n, 2), dtype=np.int16)
        self.goals_free = np.zeros(n, dtype=np.int16)  # goals without a box
        self.boxes_on = np.zeros(n, dtype=np.int16)
        self.num_boxes = np.zeros(n, dtype=np.int16)
        self.deadlocked = np.zeros(n, dtype=bool)
        self.optimal_pushes = np.zeros(n, dtype=np.int32)  # -1: not proved

    def _record(self, k: int, generated: GeneratedLevel) -> None:
        level = generated.level
        state = rules.new_state(level)
        self.codes[k] = cell_codes(state, self.codes.shape[1:])
        self.push_dist[k] = state.push_dist
        self.player[k] = level.player
        self.goals_free[k], self.boxes_on[k], self.num_boxes[k] = start_figures(state)
        self.deadlocked[k] = rules.is_deadlocked(state)
        optimal = generated.optimal_pushes
        self.optimal_pushes[k] = -1 if optimal is None else optimal

    def _pack(self) -> dict[str, np.ndarray]:
        return {"codes": self.codes, "deadlocked": self.deadlocked,
                "optimal_pushes": self.optimal_pushes}  # fmt: skip

    def _unpack(self, stored: dict[str, np.ndarray]) -> None:
        codes = self.codes
        codes[...] = stored["codes"]
        self.deadlocked[...] = stored["deadlocked"]
        self.optimal_pushes[...] = stored["optimal_pushes"]
        goals, boxes = _GOALS[codes], _BOXES[codes]
        self.push_dist[...] = rules.push_distances_many(codes != WALL, goals)
        player = np.isin(codes, [PLAYER, PLAYER_ON_GOAL]).reshape(len(codes), -1).argmax(axis=1)
        self.player[:, 0], self.player[:, 1] = np.divmod(player, codes.shape[2])
        self.goals_free[...] = (goals & ~boxes).sum(axis=(1, 2))
        self.boxes_on[...] = (goals & boxes).sum(axis=(1, 2))
        self.num_boxes[...] = goals.sum(axis=(1, 2))

    def _level(self, k: int) -> Level:
        codes = self.codes[k]
        floor = codes != WALL
        player = (int(self.player[k, 0]), int(self.player[k, 1]))
        return Level(~floor, floor, _GOALS[codes], _BOXES[codes], player)

    def dead(self, ks: np.ndarray) -> np.ndarray:
        """The dead squares of levels ``ks``, (len(ks), rows, cols) bool."""
        return (self.codes[ks] != WALL) & (self.push_dist[ks] < 0)

    def optimal(self, k: int) -> int | None:
        """The proved optimal pushes of level ``k``, None when not proved."""
        return int(self.optimal_pushes[k]) if self.optimal_pushes[k] >= 0 else None
