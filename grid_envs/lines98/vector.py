"""Lines98 for a whole batch: the boards as one (num_envs, rows, cols) array.

The registered Lines98 ids' ``vector_entry_point``. The mask, the costly part of a step (a
6,561-move mask on the classic board), is computed for the whole batch at once
(:func:`rules.batch_legal_masks`: region labels spread over all boards together, then one
bit operation per move), and so are the observation planes. The moves themselves, with
their line clears, spawns and announcements, are played game by game with the single env's
own code (:meth:`Lines98Env.play`), each drawing from its own generator: the same seeds and
actions give the trajectories of N single envs (tested).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from grid_envs.core.vector import GridVectorEnv
from grid_envs.lines98 import render, rules
from grid_envs.lines98.env import Lines98Env, announced_info, planes_view
from grid_envs.lines98.state import Lines98State


class Lines98VectorEnv(GridVectorEnv):
    """``num_envs`` Lines98 games; the keyword arguments are the single env's."""

    template: Lines98Env

    env_class = Lines98Env

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        super().__init__(num_envs, max_episode_steps, **kwargs)
        single = self.template
        self.boards = np.zeros((self.num_envs, single.rows, single.cols), dtype=np.int8)
        self.states: list[Lines98State] = []  # each game's board is a view of ``boards``

    def _bind_views(self) -> None:
        for i, state in enumerate(self.states):  # each game plays in place in its row
            state.board = self.boards[i]

    # ------------------------------------------------------------------ hooks
    def _reset_envs(self, idx: np.ndarray, options: dict[str, Any]) -> None:
        if not self.states:
            self.states = [Lines98State(self.boards[i]) for i in range(self.num_envs)]
        for i in idx.tolist():
            state = self._single_episode(i, options)
            self.boards[i] = state.board
            state.board = self.boards[i]  # played in place from now on
            self.states[i] = state

    def _masks(self, idx: np.ndarray) -> np.ndarray:
        return rules.batch_legal_masks(self.boards[idx])

    def _apply(self, idx: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        single = self.template
        out = [
            single.play(self.states[i], a, self.rngs[i])
            for i, a in zip(idx.tolist(), actions.tolist(), strict=True)
        ]
        rewards, terminated, won = (np.array(column) for column in zip(*out, strict=True))
        return rewards.astype(np.float64), terminated.astype(bool), won.astype(bool)

    def _state_of_env(self, i: int) -> Any:
        return copy.deepcopy(self.states[i])

    def _no_legal_action(self, idx: np.ndarray) -> float:
        return self.template.game_over_penalty

    def _observations(self) -> np.ndarray:
        announced = [state.announced for state in self.states]
        if self.template.observation_mode == "compact":
            return render.codes(self.boards, announced, self.template.colours)
        return planes_view(self.boards, announced, self.template.colours)

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        cols = self.template.cols
        announced = np.empty(self.num_envs, dtype=object)
        for i, s in enumerate(self.states):
            announced[i] = announced_info(s.announced, cols)
        return {
            "score": np.array([s.score for s in self.states]),
            "balls_cleared": np.array([s.balls_cleared for s in self.states]),
            "moves": np.array([s.moves for s in self.states]),
            "empty_cells": (self.boards == 0).reshape(self.num_envs, -1).sum(axis=1),
            "announced": announced,
        }
