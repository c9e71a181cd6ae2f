"""Minesweeper for a whole batch: boards as (num_envs, rows, cols) arrays, stepped at once.

The registered ids' ``vector_entry_point``:
``gymnasium.make_vec("GridGames/Minesweeper-v0", num_envs=4096,
vectorization_mode="vector_entry_point")``. Same settings, observations, rewards and info
keys as :class:`~grid_envs.minesweeper.env.MinesweeperEnv`, and for the same seeds and
actions the same trajectories (tested), because each env draws the single env's keys from
its own generator (one per cell, at the first click under the ``safe`` and ``zero`` rules)
and :func:`rules.draw_mines` turns the keys of all envs, in one array, into the layouts the
single env's :func:`rules.place_mines` makes of them. The flood fill grows every clicked
region together, dilations restricted to the board's zero cells, on rows packed into
integers (boards up to 64 columns wide).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grid_envs.core.vector import GridVectorEnv
from grid_envs.minesweeper import rules
from grid_envs.minesweeper.env import MinesweeperEnv, compact_view
from grid_envs.minesweeper.rules import FLAG_PLANE, HIDDEN_PLANE, number_plane
from grid_envs.minesweeper.state import MinesweeperState


class MinesweeperVectorEnv(GridVectorEnv):
    """``num_envs`` Minesweeper games; the keyword arguments are the single env's."""

    env_class = MinesweeperEnv
    template: MinesweeperEnv

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        super().__init__(num_envs, max_episode_steps, **kwargs)
        single = self.template
        self.rows, self.cols, self.num_mines = single.rows, single.cols, single.num_mines
        self.first_click, self.allow_flags = single.first_click, single.allow_flags
        self.safe_cells = self.rows * self.cols - self.num_mines
        shape = (self.num_envs, self.rows, self.cols)
        self.mines = np.zeros(shape, dtype=bool)  # (num_envs, rows, cols) bool
        self.counts = np.zeros(shape, dtype=np.uint8)  # mines among the 8 neighbours
        self.revealed = np.zeros(shape, dtype=bool)
        self.flags = np.zeros(shape, dtype=bool)
        self.placed = np.zeros(self.num_envs, dtype=bool)  # mines drawn yet
        self.exploded = np.full(self.num_envs, -1, dtype=np.int64)  # flat cell of a hit mine
        self._rows = rules.PackedRows(self.cols) if self.cols <= 64 else None  # packed flood
        packed = self._rows.dtype if self._rows is not None else np.uint64
        self.zero_rows = np.zeros((self.num_envs, self.rows), dtype=packed)  # zero cells
        self.revealed_count = np.zeros(self.num_envs, dtype=np.int64)
        self.flag_count = np.zeros(self.num_envs, dtype=np.int64)
        self._first_click = np.full(self.num_envs, self.first_click, dtype=object)
        self._planes = single.observation_mode == "planes"
        n_planes = rules.n_planes(self.allow_flags)
        self.planes = np.zeros((self.num_envs, n_planes, self.rows, self.cols), dtype=np.uint8)

    # ------------------------------------------------------------------ hooks
    def _reset_envs(self, idx: np.ndarray, options: dict[str, Any]) -> None:
        # mines and counts are only read once placed, and placing sets them
        self.revealed[idx] = False
        self.flags[idx] = False
        self.placed[idx] = False
        self.exploded[idx] = -1
        self.revealed_count[idx] = 0
        self.flag_count[idx] = 0
        if self._planes:
            self.planes[idx] = 0
            self.planes[idx, HIDDEN_PLANE] = 1  # every cell hidden
        if self.first_click == "any":
            self._place(idx)

    def _place(self, idx: np.ndarray, first: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Draw the mines of the envs ``idx``: each env's keys from its own generator, the
        layouts and counts for all at once (:func:`rules.draw_mines`: the single env's
        layouts).
        ``first``: the rows and columns of the first clicks (None: no click yet)."""
        flat_keys = np.empty((len(idx), self.rows * self.cols))
        for out, i in zip(list(flat_keys), idx.tolist(), strict=True):
            self.rngs[i].random(out=out)
        keys = flat_keys.reshape(len(idx), self.rows, self.cols)
        clicked = np.zeros(keys.shape, dtype=bool)
        if first is not None:
            clicked[np.arange(len(idx)), first[0], first[1]] = True
        mines = rules.draw_mines(keys, clicked, self.num_mines, self.first_click)
        self.mines[idx] = mines
        counts = rules.neighbour_counts(mines)
        self.counts[idx] = counts
        if self._rows is not None:  # the zero cells, packed for the flood fill
            self.zero_rows[idx] = self._rows.pack((counts == 0) & ~mines)
        self.placed[idx] = True

    def _masks(self, idx: np.ndarray) -> np.ndarray:
        hidden = ~self.revealed[idx].reshape(len(idx), self.rows * self.cols)
        reveal = hidden & ~self.flags[idx].reshape(len(idx), self.rows * self.cols)
        return np.concatenate([reveal, hidden], axis=1) if self.allow_flags else reveal

    def _apply(self, idx: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        n = self.rows * self.cols
        rewards = np.zeros(len(idx))
        terminated = np.zeros(len(idx), dtype=bool)
        won = np.zeros(len(idx), dtype=bool)
        flag = actions >= n
        if flag.any():
            f_idx, f_cell = idx[flag], actions[flag] - n
            r, c = np.divmod(f_cell, self.cols)
            now = ~self.flags[f_idx, r, c]
            self.flags[f_idx, r, c] = now
            self.flag_count[f_idx] += np.where(now, 1, -1)
            if self._planes:
                self.planes[f_idx, FLAG_PLANE, r, c] = now
            rewards[flag] = rules.flag_reward(self.template.rewards)
        k = np.flatnonzero(~flag)
        if not len(k):
            return rewards, terminated, won
        envs = idx[k]
        r, c = np.divmod(actions[k], self.cols)
        new = np.flatnonzero(~self.placed[envs])
        if len(new):
            self._place(envs[new], (r[new], c[new]))
        boom = self.mines[envs, r, c]
        self.exploded[envs[boom]] = actions[k[boom]]
        rewards[k[boom]] = rules.mine_reward(self.template.rewards)
        terminated[k[boom]] = True
        safe = ~boom
        envs, r, c, k = envs[safe], r[safe], c[safe], k[safe]
        opened = np.zeros(len(envs), dtype=np.int64)
        number = self.counts[envs, r, c] > 0
        e, rn, cn = envs[number], r[number], c[number]
        self.revealed[e, rn, cn] = True
        opened[number] = 1
        if self._planes:
            self._open_in_planes(e, rn * self.cols + cn)
        zero = np.flatnonzero(~number)
        if len(zero):
            opened[zero] = self._flood(envs[zero], r[zero], c[zero])
        self.revealed_count[envs] += opened
        win = self.revealed_count[envs] == self.safe_cells
        rewards[k] = rules.reveal_reward(self.template.rewards, opened, self.safe_cells, win)
        terminated[k[win]] = won[k[win]] = True
        return rewards, terminated, won

    def _flood(self, envs: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Open the zero regions clicked in ``envs`` and their borders; cells opened each."""
        if self._rows is not None:
            start = np.zeros((len(envs), self.rows), dtype=self._rows.kind)
            start[np.arange(len(envs)), r] = np.left_shift(
                self._rows.one, c.astype(self._rows.kind)
            )
            region = self._rows.unpack(self._rows.grow(start, self.zero_rows[envs]))
        else:  # wider boards: each region as the single env opens it
            region = np.stack([
                rules.opened_by(self._state_of_env(e), (rr, cc))
                for e, rr, cc in zip(envs.tolist(), r.tolist(), c.tolist(), strict=True)
            ])  # fmt: skip
        opened = region & ~self.revealed[envs]
        flat = (len(envs), self.rows * self.cols)
        lifted = self.flags[envs] & opened  # flags inside the opened region are lifted
        self.flag_count[envs] -= lifted.reshape(flat).sum(axis=1)
        self.flags[envs] &= ~opened
        self.revealed[envs] |= opened
        if self._planes:
            at = np.flatnonzero(opened)  # 2-d np.nonzero is slower here
            k = at // flat[1]
            self._open_in_planes(envs[k], at - k * flat[1])
        return np.count_nonzero(opened.reshape(flat), axis=1)

    def _open_in_planes(self, env: np.ndarray, cell: np.ndarray) -> None:
        """Turn the flat cells ``cell`` of the envs ``env`` (one each) from hidden (and
        flagged) to their numbers in the planes, through flat indices (faster than building
        the boards' planes again after a flood)."""
        cells = self.rows * self.cols
        at = env * (self.planes.shape[1] * cells) + cell  # the cell in plane 0 of its env
        flat = self.planes.reshape(-1)
        flat[at + HIDDEN_PLANE * cells] = 0
        number = self.counts.reshape(-1)[env * cells + cell].astype(np.intp)
        flat[at + number_plane(number) * cells] = 1
        if self.allow_flags:  # flags inside the opened region were lifted
            flat[at + FLAG_PLANE * cells] = 0

    def _state_of_env(self, i: int) -> MinesweeperState:
        """Env ``i``'s board."""
        hit = int(self.exploded[i])
        return MinesweeperState(
            self.rows, self.cols, self.num_mines, self.first_click, self.mines[i].copy(),
            self.counts[i].copy(), self.revealed[i].copy(), self.flags[i].copy(),
            placed=bool(self.placed[i]), exploded=divmod(hit, self.cols) if hit >= 0 else None,
        )  # fmt: skip

    def _observations(self) -> np.ndarray:
        if self.template.observation_mode == "compact":
            return compact_view(self.revealed, self.counts, self.flags)
        return self.planes.copy()

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        infos: dict[str, Any] = {
            "revealed": self.revealed_count.copy(),
            "mines_left": self.num_mines - self.flag_count,
            "first_click": self._first_click.copy(),
        }
        ended = done & self.placed
        if ended.any():
            infos["mines"] = self.mines & ended[:, None, None]  # faster than np.where
            infos["_mines"] = ended.copy()
        return infos
