"""Pikachu (Onet) for a whole batch: the boards as one (num_envs, rows, cols) array.

The registered Pikachu ids' ``vector_entry_point``. The mask, the costly part of a step
(10,296 pairs on the classic board), is computed for the whole batch at once
(:func:`rules.batch_legal_masks`: equal tiles found by one sort per board, pairs that can
leave their cells kept, and the path test of every pair of every board in one array
pass); the planes too. Removals, gravity and reshuffles are played game by game with the
single env's own code (:meth:`PikachuEnv.remove`, given the batch's pairs and paths found
in one call each, and :meth:`PikachuEnv.when_stuck`), each with its own generator: the same
seeds and actions give the trajectories of N single envs (tested).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from grid_envs.core.vector import GridVectorEnv
from grid_envs.pikachu import rules
from grid_envs.pikachu.env import PikachuEnv
from grid_envs.pikachu.paths import connect_pairs, corners
from grid_envs.pikachu.state import PikachuState


class PikachuVectorEnv(GridVectorEnv):
    """``num_envs`` Pikachu games; the keyword arguments are the single env's."""

    template: PikachuEnv

    env_class = PikachuEnv

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        super().__init__(num_envs, max_episode_steps, **kwargs)
        single = self.template
        self.boards = np.zeros((self.num_envs, single.rows, single.cols), dtype=np.int16)
        self.states: list[PikachuState] = []  # each game's board is a view of ``boards``
        self.total_pairs = np.ones(self.num_envs, dtype=np.int64)
        self._kinds = np.arange(1, single.kinds + 1, dtype=np.int16)[None, :, None, None]
        self._known: tuple[np.ndarray, np.ndarray] | None = None  # masks found in _apply

    def _bind_views(self) -> None:
        for i, state in enumerate(self.states):  # each game plays in place in its row
            state.board = self.boards[i]

    # ------------------------------------------------------------------ hooks
    def _reset_envs(self, idx: np.ndarray, options: dict[str, Any]) -> None:
        single = self.template
        if not self.states:
            self.states = [PikachuState(self.boards[i]) for i in range(self.num_envs)]
        for i in idx.tolist():
            state = self._single_episode(i, options)
            self.boards[i] = state.board
            state.board = self.boards[i]  # played in place from now on
            self.states[i] = state
            self.total_pairs[i] = single.total_pairs
        self._known = None

    def _masks(self, idx: np.ndarray) -> np.ndarray:
        known = self._known
        if known is not None and np.array_equal(known[0], idx):
            return known[1]
        return rules.batch_legal_masks(self.boards[idx])

    def _apply(self, idx: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        single = self.template
        cells, cols = self.boards.shape[1] * self.boards.shape[2], self.boards.shape[2]
        first, second = rules.actions_to_pairs(actions, cells)
        a = np.stack(np.divmod(first, cols), axis=1)
        b = np.stack(np.divmod(second, cols), axis=1)
        _, _, kind, pivot = connect_pairs(self.boards, a, b, idx)  # every path at once
        for i, pair, ra, ca, rb, cb, shape, at in zip(
            idx.tolist(), zip(first.tolist(), second.tolist(), strict=True),
            *a.T.tolist(), *b.T.tolist(), kind.tolist(), pivot.tolist(), strict=True,
        ):  # fmt: skip
            path = corners((ra, ca), (rb, cb), shape, at)
            single.remove(self.states[i], pair=pair, path=path)
        rewards = (
            np.full(len(idx), single.fixed_pair_reward, dtype=np.float64)
            if single.fixed_pair_reward is not None
            else 1.0 / self.total_pairs[idx]
        )
        cleared = ~self.boards[idx].reshape(len(idx), -1).any(axis=1)
        rewards[cleared] += single.clear_reward
        terminated, won = cleared.copy(), cleared.copy()
        masks = rules.batch_legal_masks(self.boards[idx])
        for k in np.flatnonzero(~cleared & ~masks.any(axis=1)).tolist():  # stuck
            i = int(idx[k])
            rewards[k], terminated[k], won[k] = single.when_stuck(
                self.states[i], float(rewards[k]), self.rngs[i]
            )
            masks[k] = rules.legal_mask(self.boards[i])
        self._known = (idx.copy(), masks)
        return rewards, terminated, won

    def _state_of_env(self, i: int) -> Any:
        return copy.deepcopy(self.states[i])

    def _no_legal_action(self, idx: np.ndarray) -> float:
        return 0.0

    def _observations(self) -> np.ndarray:
        self._known = None  # the step is over: its masks are in ``self.mask``
        if self.template.observation_mode == "compact":
            return self.boards.astype(np.uint8)
        return (self.boards[:, None] == self._kinds).view(np.uint8)

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        paths = np.empty(self.num_envs, dtype=object)
        for i, s in enumerate(self.states):
            paths[i] = s.last_path
        return {
            "tiles_left": (self.boards != 0).reshape(self.num_envs, -1).sum(axis=1),
            "pairs_removed": np.array([s.removed for s in self.states]),
            "shuffles": np.array([s.shuffles for s in self.states]),
            "path": paths,
        }
