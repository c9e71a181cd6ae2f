"""Pikachu (Onet) for a whole batch: every game as rows of arrays, played by compiled rules.

The registered Pikachu ids' ``vector_entry_point``. Each game is a row of the batch's
arrays (its flat board, its counters, its last path's corners: the layout of
:mod:`grid_envs.pikachu.rules`), and a step plays every game's removal, with its path, the
gravity and, when the board is stuck, the reshuffles, and writes its mask (up to 10,296
pairs on the classic board), in one compiled loop over the rows (:func:`rules.play_batch`)
that calls the single env's own compiled rules, each game drawing from its own generator:
the same seeds and actions give the trajectories of N single envs (tested). New deals are
set up by the single env's code; a stuck board that no random layout unsticks is settled
by the single env's Python fallback (:func:`rules.settle`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grid_envs.core.jit import over_threads
from grid_envs.core.vector import GridVectorEnv
from grid_envs.pikachu import rules
from grid_envs.pikachu.env import PikachuEnv
from grid_envs.pikachu.state import GRAVITY, PikachuState


class PikachuVectorEnv(GridVectorEnv):
    """``num_envs`` Pikachu games; the keyword arguments are the single env's."""

    template: PikachuEnv

    env_class = PikachuEnv

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        super().__init__(num_envs, max_episode_steps, **kwargs)
        single = self.template
        cells = single.rows * single.cols
        self.boards = np.zeros((self.num_envs, cells), dtype=np.int16)
        self.counters = np.zeros((self.num_envs, rules.COUNTERS), dtype=np.int64)
        self.paths = np.full((self.num_envs, 4, 2), -1, dtype=np.int64)  # info["path"]
        self._moves: tuple[np.ndarray, np.ndarray] | None = None  # found in _apply

    # ------------------------------------------------------------------ hooks
    def _reset_envs(self, idx: np.ndarray, options: dict[str, Any]) -> None:
        single = self.template
        self.paths[idx] = -1
        if single.random_deals:
            self._deal(idx)
            return
        for i in idx.tolist():
            state = self._single_episode(i, options)
            self.boards[i] = state.board.ravel()
            self.counters[i] = (state.removed, state.shuffles, single.total_pairs, 0)
        self._moves = None

    def _deal(self, idx: np.ndarray) -> None:
        """New random deals for the games ``idx``, with their masks, as the single env deals
        (:func:`rules.deal`), in a compiled loop over them."""
        s, rngs = self.template, self._generators()

        def deal(rows: np.ndarray) -> np.ndarray:
            return rules.deal_batch(self.boards, rows, rngs, s.rows, s.cols, s.kinds,
                                    rules.SHUFFLE_TRIES, self.mask)  # fmt: skip

        stuck = over_threads(deal, idx)
        playable = np.ones(len(idx), dtype=bool)
        for k in np.flatnonzero(stuck).tolist():  # no random layout unstuck the deal
            i = int(idx[k])
            rules.settle_deal(self.boards[i], s.rows, s.cols, self.rngs[i], self.mask[i])
            playable[k] = self.mask[i].any()
        self.counters[idx] = (0, 0, max(1, s.rows * s.cols // 2), 0)
        self._moves = (idx.copy(), playable)

    def _update_masks(self, idx: np.ndarray) -> np.ndarray:
        moves = self._moves
        if moves is not None and np.array_equal(moves[0], idx):  # written by the step
            return moves[1]
        s = self.template

        def masks(rows: np.ndarray) -> np.ndarray:
            return rules.masks_batch(self.boards, rows, s.rows, s.cols, self.mask)

        return over_threads(masks, idx)

    def _apply(self, idx: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        s, rngs = self.template, self._generators()
        r = s.rewards

        def play(rows: np.ndarray, moves: np.ndarray) -> tuple[np.ndarray, ...]:
            return rules.play_batch(
                self.boards, self.counters, self.paths, rows, moves, rngs, s.rows, s.cols,
                GRAVITY.index(s.gravity), s.on_stuck == "shuffle", s.shuffle_tries,
                r.pair_reward is not None, float(r.pair_reward or 0.0), float(r.win_reward),
                float(r.shuffle_reward), float(r.loss_reward), float(r.step_reward), self.mask,
            )  # fmt: skip

        rewards, terminated, won, undecided = over_threads(play, idx, actions.astype(np.int64))
        for k in np.flatnonzero(undecided).tolist():  # no random layout unstuck the board
            i = int(idx[k])
            state = self._state_of_env(i)
            rewards[k], terminated[k], won[k] = rules.settle(
                state, float(rewards[k]), self.rngs[i], r, self.mask[i]
            )
            self.boards[i] = state.board.ravel()
            self.counters[i, rules.SHUFFLES] = state.shuffles
        # a game still in play has a move: the step unstuck it, or ended it
        self._moves = (idx.copy(), ~terminated)
        return rewards, terminated, won

    def _state_of_env(self, i: int) -> Any:
        s = self.template
        board = self.boards[i].reshape(s.rows, s.cols)
        return PikachuState.of_arrays(board, self.counters[i], self.paths[i])

    def _no_legal_action(self, idx: np.ndarray) -> float:
        return 0.0

    def _observations(self) -> np.ndarray:
        self._moves = None  # the step is over: its masks are in ``self.mask``
        s = self.template
        if s.observation_mode == "compact":
            return self.boards.reshape(self.num_envs, s.rows, s.cols).astype(np.uint8)
        return rules.planes(self.boards, s.kinds, s.rows, s.cols)

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        return {
            "tiles_left": (self.boards != 0).sum(axis=1),
            "pairs_removed": self.counters[:, rules.REMOVED].copy(),
            "shuffles": self.counters[:, rules.SHUFFLES].copy(),
            "path": self.paths.copy(),
        }
