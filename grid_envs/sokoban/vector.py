"""Sokoban for a whole batch: rooms as (num_envs, rows, cols) code grids, stepped at once.

The registered Sokoban ids' ``vector_entry_point``. Every cell holds its code of the compact
view (wall, floor, goal, box, box on goal, player, player on goal), so a move or a push is
three additions at three cells per env, the mask is a table look-up at the player's
neighbours, and the planes are updated at the cells that changed.

New episodes: with ``level_pool=N`` (see :mod:`grid_envs.core.pool`) each env draws the
pool index with its own generator and the level is copied from the pool's arrays; without a
pool (fresh levels, level files) the single env's own code sets up each episode, which is
exact but costs a generation per reset. Deadlocks: a box pushed onto a dead square is an
array look-up; a freeze can only appear where the pushed box may be held on both axes, and
only there does the single env's test run (a few pushes in a hundred under random play). The same
seeds and actions give the trajectories of N single envs (tested).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grid_envs.core.grid import DIRECTIONS
from grid_envs.core.vector import GridVectorEnv
from grid_envs.sokoban import rules
from grid_envs.sokoban.env import SokobanEnv
from grid_envs.sokoban.pool import start_figures
from grid_envs.sokoban.state import (
    BOX,
    BOX_ON_GOAL,
    CHANNELS,
    FLOOR,
    GOAL,
    PLAYER,
    PLAYER_ON_GOAL,
    WALL,
    SokobanState,
    cell_codes,
)

PAD = 2  # wall cells around every room: a push looks two cells ahead

_CODES = np.arange(len(CHANNELS))
FREE = np.isin(_CODES, [FLOOR, GOAL])  # code -> a cell the player or a box can enter
BOXED = np.isin(_CODES, [BOX, BOX_ON_GOAL])
ON_GOAL = np.isin(_CODES, [GOAL, BOX_ON_GOAL, PLAYER_ON_GOAL])
BLOCKS = np.isin(_CODES, [WALL, BOX, BOX_ON_GOAL])  # may stop a box along an axis
# code changes: the player leaves a cell, enters an empty one, enters a box's cell; a box
# enters an empty cell (each is the same for the cell with or without a goal)
LEAVE, ENTER, ENTER_BOX, BOX_IN = PLAYER - FLOOR, PLAYER - FLOOR, PLAYER - BOX, BOX - FLOOR
_DIRS = np.array(DIRECTIONS, dtype=np.int64)  # up, down, left, right
# by (code beside the player) * len(CHANNELS) + (code beyond it): may it step, may it push
_MOVE_LEGAL = np.repeat(FREE, len(CHANNELS))
_PUSH_LEGAL = np.outer(BOXED, FREE).reshape(-1)


class SokobanVectorEnv(GridVectorEnv):
    """``num_envs`` Sokoban games; the keyword arguments are the single env's."""

    template: SokobanEnv  # sets up the episodes that do not come from a pool

    env_class = SokobanEnv

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        super().__init__(num_envs, max_episode_steps, **kwargs)
        single = self.template
        n, (rows, cols) = self.num_envs, single.obs_shape
        self.rows, self.cols = rows, cols
        self.codes = np.full((n, rows + 2 * PAD, cols + 2 * PAD), WALL, dtype=np.uint8)
        self.dead = np.zeros(self.codes.shape, dtype=bool)  # dead squares, static per level
        # fewest pushes of a lone box to a goal, -1 if none (static per level; potentials)
        self.push_dist = np.full(self.codes.shape, -1, dtype=np.int32)
        padded = self.codes.shape[1] * self.codes.shape[2]
        self._base = np.arange(n, dtype=np.int64) * padded
        self._steps = _DIRS[:, 0] * self.codes.shape[2] + _DIRS[:, 1]  # direction -> offset
        self._reach = np.concatenate([self._steps, 2 * self._steps])  # beside, then beyond
        self.pos = np.zeros(n, dtype=np.int64)  # the player's flat cell in its padded room
        self.goals_free = np.zeros(n, dtype=np.int64)
        self.boxes_on = np.zeros(n, dtype=np.int64)
        self.num_boxes = np.zeros(n, dtype=np.int64)
        self.pushes = np.zeros(n, dtype=np.int64)
        self.moves = np.zeros(n, dtype=np.int64)
        self.deadlocked = np.zeros(n, dtype=bool)
        self.level_index = np.full(n, -1, dtype=np.int64)
        self.optimal_pushes = np.full(n, None, dtype=object)
        self.next_index = np.zeros(n, dtype=np.int64)  # each env's place in a sequential list
        self.planes = np.zeros((n, len(CHANNELS), rows, cols), dtype=np.uint8)
        self._bind_views()
        self._inner_size = rows * cols
        r, c = np.divmod(np.arange(padded), self.codes.shape[2])
        self._inner = (r - PAD) * cols + (c - PAD)  # padded flat cell -> flat cell of a plane
        self._view = (slice(None), slice(PAD, PAD + rows), slice(PAD, PAD + cols))

    def _bind_views(self) -> None:
        self._flat = self.codes.reshape(-1)  # the batch's cells, flat: env i at i * padded
        self._dead_flat = self.dead.reshape(-1)
        self._planes_flat = self.planes.reshape(-1)

    # ------------------------------------------------------------------ hooks
    def _reset_envs(self, idx: np.ndarray, options: dict[str, Any]) -> None:
        single = self.template
        if single.pool is not None and options.get("level") is None:
            pool = single.pool
            # pool.draw for each env, the scaling and truncation done for all at once
            draws = np.array([self.rngs[i].random() for i in idx.tolist()])
            ks = (draws * pool.size).astype(np.int64)
            pool.fill(ks)
            optimal = pool.optimal_pushes[ks].astype(object)
            optimal[pool.optimal_pushes[ks] < 0] = None
            self._load(idx, pool.codes[ks], pool.dead(ks), pool.player[ks],
                       (pool.goals_free[ks], pool.boxes_on[ks], pool.num_boxes[ks]),
                       pool.deadlocked[ks], ks, optimal, pool.push_dist[ks])  # fmt: skip
        else:
            for i in idx.tolist():  # the single env's own code with env i's generator
                single.next_index = int(self.next_index[i])  # env i's place in a level list
                s = self._single_episode(i, options)
                self.next_index[i] = single.next_index
                self._load(np.array([i]), cell_codes(s, single.obs_shape)[None], s.dead[None],
                           np.array([s.player]), start_figures(s), single.deadlocked,
                           single.level_index, single.optimal_pushes,
                           s.push_dist[None])  # fmt: skip
        self.pushes[idx] = 0
        self.moves[idx] = 0
        if single.observation_mode == "planes":
            inner = self.codes[idx, PAD : PAD + self.rows, PAD : PAD + self.cols]
            # plane c is where the code is c (a comparison: faster than a one-hot gather)
            self.planes[idx] = inner[:, None] == _CODES[None, :, None, None]

    def _load(self, idx: np.ndarray, codes: np.ndarray, dead: np.ndarray, player: np.ndarray,
              figures: tuple[Any, Any, Any], deadlocked: Any, level_index: Any,
              optimal_pushes: Any, push_dist: np.ndarray) -> None:  # fmt: skip
        """New episodes in the envs ``idx``: their rooms' codes, dead squares and push
        distances (k, rows, cols) in the top-left corner of the padded arrays, the rest per
        env."""
        self.codes[idx] = WALL
        self.codes[idx, PAD : PAD + codes.shape[1], PAD : PAD + codes.shape[2]] = codes
        self.dead[idx] = False
        self.dead[idx, PAD : PAD + dead.shape[1], PAD : PAD + dead.shape[2]] = dead
        self.push_dist[idx] = -1
        rows, cols = push_dist.shape[1:]
        self.push_dist[idx, PAD : PAD + rows, PAD : PAD + cols] = push_dist
        self.pos[idx] = (player[:, 0] + PAD) * self.codes.shape[2] + player[:, 1] + PAD
        self.goals_free[idx], self.boxes_on[idx], self.num_boxes[idx] = figures
        self.deadlocked[idx], self.level_index[idx] = deadlocked, level_index
        self.optimal_pushes[idx] = optimal_pushes

    def _masks(self, idx: np.ndarray) -> np.ndarray:
        # laid out (8, len): numpy's inner loops then run along the batch, not along 4 or 8
        # directions (faster), and the caller gets the transposed view
        here = self._base[idx] + self.pos[idx]
        cells = self._flat.take(self._reach[:, None] + here[None])  # beside x4, beyond x4
        pair = cells[:4] * np.uint8(len(CHANNELS)) + cells[4:]
        out = np.empty((8, len(idx)), dtype=bool)
        _MOVE_LEGAL.take(pair, out=out[:4])
        _PUSH_LEGAL.take(pair, out=out[4:])
        return out.T

    def _apply(self, idx: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        single = self.template
        push = actions >= 4
        step = self._steps[actions % 4]
        here = self._base[idx] + self.pos[idx]  # flat cells of the whole batch
        near = here + step
        at, e = np.flatnonzero(push), idx[push]
        box, was = near[push] + step[push], near[push]
        # the cells the player leaves and enters and the boxes enter, all in one call (they
        # differ, so reading every code before writing any is the same as one at a time)
        n, change = len(idx), np.empty(2 * len(idx) + len(e), dtype=np.int64)
        change[:n] = -LEAVE
        change[n : 2 * n] = np.where(push, ENTER_BOX, ENTER)
        change[2 * n :] = BOX_IN
        self._add(np.concatenate([idx, idx, e]), np.concatenate([here, near, box]), change)
        self.pos[idx] += step
        self.moves[idx] += 1
        goal_change = np.zeros(len(idx), dtype=np.int64)
        won = np.zeros(len(idx), dtype=bool)
        lost = np.zeros(len(idx), dtype=bool)
        if len(e):
            self.pushes[e] += 1
            delta = ON_GOAL[self._flat[box]].astype(np.int64) - ON_GOAL[self._flat[was]]
            self.boxes_on[e] += delta
            self.goals_free[e] -= delta
            goal_change[at] = delta
            solved = self.goals_free[e] == 0
            won[at[solved]] = True
            live = ~solved
            self.deadlocked[e[live]] = self._deadlocked_after(e[live], box[live])
            if single.terminate_on_deadlock:
                lost[at[live][self.deadlocked[e[live]]]] = True
        return rules.step_reward(single.rewards, goal_change, won, lost), won | lost, won

    def _add(self, idx: np.ndarray, cells: np.ndarray, change: Any) -> None:
        """Add ``change`` to the codes at the flat ``cells`` (one per env of ``idx``) and
        move their one-hot bit in the planes."""
        before = self._flat[cells].astype(np.int64)
        after = before + change
        self._flat[cells] = after
        if self.template.observation_mode == "planes":
            n = len(CHANNELS) * self._inner_size
            at = idx * n + self._inner[cells - self._base[idx]]
            self._planes_flat[at + before * self._inner_size] = 0
            self._planes_flat[at + after * self._inner_size] = 1

    def _deadlocked_after(self, idx: np.ndarray, box: np.ndarray) -> np.ndarray:
        """Whether each env is deadlocked after its box was pushed to the flat cell ``box``
        (:func:`rules.deadlocked_after_push`, the single env's test). Most pushes are
        settled here along the whole batch: onto a dead square is a deadlock; a box that
        cannot be held along both axes cannot freeze, nor hold a box beside it (that needs
        it frozen too), and a box on its goal alone freezes nothing. Only the rest, a few
        pushes in a hundred under random play, run the freeze test one env at a time."""
        codes, dead = self._flat, self._dead_flat
        out = dead.take(box)
        # (4, len) arrays (up, down, left, right): the inner loops run along the batch
        beside = self._steps[:, None] + box[None]
        near = codes.take(beside)
        dead_pair = dead.take(beside)
        across = self._steps[[2, 3, 0, 1], None]  # the other axis of each neighbour
        side_codes = [codes.take(beside - across), codes.take(beside + across)]
        side_dead = dead.take(beside - across) & dead.take(beside + across)
        crossed = BLOCKS.take(side_codes[0]) | BLOCKS.take(side_codes[1]) | side_dead
        boxed_near = BOXED.take(near)
        may_hold = (near == WALL) | (boxed_near & crossed)
        maybe = [may_hold[a] | may_hold[b] | (dead_pair[a] & dead_pair[b])
                 for a, b in ((0, 1), (2, 3))]  # fmt: skip
        # a box on its goal with no box beside it freezes nothing
        matters = boxed_near.any(axis=0) | ~ON_GOAL.take(codes.take(box))
        before = self.deadlocked[idx]
        for k in np.flatnonzero(before | (~out & maybe[0] & maybe[1] & matters)).tolist():
            i = int(idx[k])
            state = self._state_of(i)
            cell = divmod(int(box[k] - self._base[i]), self.codes.shape[2])
            out[k] = rules.deadlocked_after_push(state, cell, bool(before[k]))
        return out

    def _state_of(self, i: int) -> SokobanState:
        """Env ``i`` as the single env's state (padded), for its deadlock tests."""
        codes = self.codes[i]
        return SokobanState(
            floor=codes != WALL, goals=ON_GOAL[codes], boxes=BOXED[codes],
            player=divmod(int(self.pos[i]), codes.shape[1]), dead=self.dead[i],
        )  # fmt: skip

    def _state_of_env(self, i: int) -> SokobanState:
        """Env ``i``'s position on the observation's grid (a level smaller than the grid
        sits in its top-left corner, walled around, as in the observation)."""
        codes = self.codes[i][self._view[1:]]
        r, c = divmod(int(self.pos[i]), self.codes.shape[2])
        view = self._view[1:]
        return SokobanState(
            floor=codes != WALL, goals=ON_GOAL[codes], boxes=BOXED[codes],
            player=(r - PAD, c - PAD), pushes=int(self.pushes[i]), moves=int(self.moves[i]),
            push_dist=self.push_dist[i][view].copy(), dead=self.dead[i][view].copy(),
        )  # fmt: skip

    def _no_legal_action(self, idx: np.ndarray) -> float:
        self.deadlocked[idx] = True
        return self.template.rewards.loss_reward

    def _observations(self) -> np.ndarray:
        if self.template.observation_mode == "compact":
            return self.codes[self._view].copy()
        return self.planes.copy()

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        return {
            "boxes_on_target": self.boxes_on.copy(),
            "num_boxes": self.num_boxes.copy(),
            "solved": self.won.copy(),
            "deadlocked": self.deadlocked.copy(),
            "level_index": self.level_index.copy(),
            "pushes": self.pushes.copy(),
            "moves": self.moves.copy(),
            "optimal_pushes": self.optimal_pushes.copy(),
        }


def boxes_potentials(env: SokobanVectorEnv) -> np.ndarray:
    """The ``"boxes"`` potential of every env, (num_envs,) float64: the boxes on goals (as
    :func:`grid_envs.sokoban.rules.boxes_potential`)."""
    return env.boxes_on.astype(np.float64)


def distance_potentials(env: SokobanVectorEnv) -> np.ndarray:
    """The ``"distance"`` potential of every env, (num_envs,) float64: minus the boxes'
    push distances to their nearest goals, a box on a dead square counting as the level's
    largest distance plus one (as :func:`grid_envs.sokoban.rules.distance_to_goals`)."""
    dist = env.push_dist.reshape(env.num_envs, -1)
    worst = dist.max(axis=1, keepdims=True) + 1
    boxed = BOXED[env.codes].reshape(env.num_envs, -1)
    return -np.where(dist < 0, worst, dist).sum(axis=1, where=boxed).astype(np.float64)
