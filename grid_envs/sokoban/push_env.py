"""Sokoban at the level of pushes: the view the source article's search argues for."""

from __future__ import annotations

from typing import Any

import numpy as np

from grid_envs.core.grid import DIRECTION_NAMES, DIRECTIONS, bfs_distances
from grid_envs.sokoban.env import SokobanEnv
from grid_envs.sokoban.state import FLOOR, PLAYER


def push_action(cell: tuple[int, int], direction: int, cols: int) -> int:
    """Action of pushing the box on ``cell`` in ``direction`` (0 up, 1 down, 2 left, 3 right)."""
    return (cell[0] * cols + cell[1]) * 4 + direction


def decode_push(action: int, cols: int) -> tuple[tuple[int, int], int]:
    """``(box cell, direction)`` of a push action."""
    cell, d = divmod(int(action), 4)
    return divmod(cell, cols), d


class SokobanPushEnv(SokobanEnv):
    """Sokoban where one action is one push; the player walks to it by the shortest path.

    ## Description
    The same levels, generator, rewards and deadlock rules as ``Sokoban-v0``; only the
    action space differs. An action names a box and a direction; the player walks (BFS,
    never pushing) to the cell behind the box and pushes it once.

    ## Action Space
    ``Discrete(rows * cols * 4)`` over the observation grid: action
    ``(r * cols + c) * 4 + d`` pushes the box on ``(r, c)`` in direction ``d`` (0 up,
    1 down, 2 left, 3 right); helpers :func:`push_action` / :func:`decode_push` convert.
    The mask holds exactly the pushes possible now: a box there, the cell behind it
    reachable by the player, the cell beyond it free floor.

    ## Observation Space
    As ``Sokoban-v0``: ``Box(0, 1, (7, rows, cols), uint8)`` one-hot planes.

    ## Rewards
    As ``Sokoban-v0``, with the step penalty charged once per push (walking is free).

    ## Starting State / Episode End
    As ``Sokoban-v0``; the time limit counts pushes (80 for ``SokobanPush-v0``).

    ## Information
    As ``Sokoban-v0`` (``moves`` counts the walking steps too).

    ## Arguments
    Those of :class:`SokobanEnv`.

    ## Version History
    - v0: first release.
    """

    keys = "R C D pushes the box at row R, column C: D 0 up, 1 down, 2 left, 3 right"

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        super().__init__(render_mode, **kwargs)
        rows, cols = self.obs_shape
        self._n_actions = rows * cols * 4
        self.action_space = type(self.action_space)(self._n_actions)
        self._mask = np.zeros(self._n_actions, dtype=bool)
        self._walk = np.zeros((0, 0), dtype=np.int32)  # player distances for the mask

    def _legal_mask(self) -> np.ndarray:
        s = self.state
        assert s is not None
        free = s.floor & ~s.boxes
        self._walk = bfs_distances(free, s.player)
        reach = self._walk >= 0
        mask = np.zeros((*self.obs_shape, 4), dtype=bool)
        for r, c in np.argwhere(s.boxes & s.floor):
            for d, (dr, dc) in enumerate(DIRECTIONS):
                if reach[r - dr, c - dc] and free[r + dr, c + dc]:
                    mask[r, c, d] = True
        return mask.reshape(-1)

    def _set_own_state(self, state: Any) -> None:
        super()._set_own_state(state)
        s = self.state  # the walk distances belong to the restored position, not the last
        assert s is not None
        self._walk = bfs_distances(s.floor & ~s.boxes, s.player)

    def _apply(self, action: int) -> tuple[float, bool, bool]:
        s = self.state
        assert s is not None
        (r, c), d = decode_push(action, self.obs_shape[1])
        dr, dc = DIRECTIONS[d]
        behind = (r - dr, c - dc)
        walked = int(self._walk[behind])
        # the walk: the player's code leaves its cell for the free cell behind the box (the
        # same cell when it stands there already), then the push is the base env's
        self._codes[s.player] -= PLAYER - FLOOR
        self._codes[behind] += PLAYER - FLOOR
        s.player = behind
        s.moves += walked
        return super()._apply(4 + d)

    def action_text(self, action: int) -> str:
        """``push (r, c) left``: the box on that cell, that way."""
        (r, c), d = decode_push(action, self.obs_shape[1])
        return f"push ({r}, {c}) {DIRECTION_NAMES[d]}"

    def action_cells(self, action: int) -> list[tuple[int, int]]:
        """The box's cell and the one it is pushed to."""
        (r, c), d = decode_push(action, self.obs_shape[1])
        dr, dc = DIRECTIONS[d]
        return [(r, c), (r + dr, c + dc)]

    def action_for_key(self, key: str) -> int | None:
        """``R,C,D`` typed as three numbers (row, column, direction 0-3), or an action number."""
        parts = key.replace(",", " ").split()
        if len(parts) == 3 and all(p.isdigit() for p in parts):
            r, c, d = (int(p) for p in parts)
            if r < self.obs_shape[0] and c < self.obs_shape[1] and d < 4:
                return push_action((r, c), d, self.obs_shape[1])
            return None
        return super(SokobanEnv, self).action_for_key(key)
