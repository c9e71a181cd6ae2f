"""Lines98 for a whole batch: every game as rows of arrays, played by compiled rules.

The registered Lines98 ids' ``vector_entry_point``. Each game is a row of the batch's
arrays (its flat board, its announced balls in order, its counters: the layout of
:mod:`grid_envs.lines98.rules`), and a step plays every game's move, with its line clears,
spawns and announcements, and writes its mask, in one compiled loop over the rows
(:func:`rules.play_batch`, :func:`rules.masks_batch`) that calls the single env's own
compiled rules, each game drawing from its own generator: the same seeds and actions give
the trajectories of N single envs (tested). New games likewise (:func:`rules.new_games_batch`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grid_envs.core.jit import over_threads
from grid_envs.core.vector import GridVectorEnv
from grid_envs.lines98 import render, rules
from grid_envs.lines98.env import Lines98Env, announced_info, planes_batch
from grid_envs.lines98.state import CLEARED, COUNTERS, MOVES, N_ANN, SCORE, Lines98State


class Lines98VectorEnv(GridVectorEnv):
    """``num_envs`` Lines98 games; the keyword arguments are the single env's."""

    template: Lines98Env

    env_class = Lines98Env

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        super().__init__(num_envs, max_episode_steps, **kwargs)
        single = self.template
        n = single.rows * single.cols
        self.boards = np.zeros((self.num_envs, n), dtype=np.int8)
        self.ann_cell = np.zeros((self.num_envs, n), dtype=np.int64)
        self.ann_colour = np.zeros((self.num_envs, n), dtype=np.int8)
        self.counters = np.zeros((self.num_envs, COUNTERS), dtype=np.int64)
        self.cleared = np.zeros((self.num_envs, n), dtype=np.int64)

    # ------------------------------------------------------------------ hooks
    def _reset_envs(self, idx: np.ndarray, options: dict[str, Any]) -> None:
        s = self.template
        rules.new_games_batch(
            self.boards, self.ann_cell, self.ann_colour, self.counters, self.cleared, idx,
            self._generators(), s.rows, s.cols, s.colours, s.initial, s.spawn, s.line_length,
        )  # fmt: skip

    def _update_masks(self, idx: np.ndarray) -> np.ndarray:
        s = self.template

        def masks(rows: np.ndarray) -> np.ndarray:
            return rules.masks_batch(self.boards, rows, s.rows, s.cols, self.mask)

        return over_threads(masks, idx)

    def _apply(self, idx: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        s, rngs = self.template, self._generators()

        def play(rows: np.ndarray, moves: np.ndarray) -> tuple[np.ndarray, ...]:
            return rules.play_batch(
                self.boards, self.ann_cell, self.ann_colour, self.counters, self.cleared, rows,
                moves, rngs, s.rows, s.cols, s.spawn, s.colours, s.line_length,
                s.target_score or 0, s._reward_array,
            )  # fmt: skip

        return over_threads(play, idx, actions.astype(np.int64))

    def _state_of_env(self, i: int) -> Any:
        s = self.template
        return Lines98State.of_arrays(
            self.boards[i].reshape(s.rows, s.cols), self.ann_cell[i], self.ann_colour[i],
            self.counters[i], self.cleared[i], s.line_length, s.colours,
        )  # fmt: skip

    def _no_legal_action(self, idx: np.ndarray) -> float:
        return self.template.rewards.loss_reward

    def _announced(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        held = self.counters[:, N_ANN]
        most = int(held.max(initial=0))
        return self.ann_cell[:, :most], self.ann_colour[:, :most], held

    def _observations(self) -> np.ndarray:
        s = self.template
        boards = self.boards.reshape(self.num_envs, s.rows, s.cols)
        if s.observation_mode == "compact":
            return render.codes(boards, *self._announced(), s.colours)
        return planes_batch(boards, *self._announced(), s.colours)

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        s = self.template
        return {
            "score": self.counters[:, SCORE].copy(),
            "balls_cleared": self.counters[:, CLEARED].copy(),
            "moves": self.counters[:, MOVES].copy(),
            "empty_cells": (self.boards == 0).sum(axis=1),
            "announced": announced_info(*self._announced(), s.cols, s.spawn),
        }
