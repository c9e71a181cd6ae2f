"""Wrappers shared by every game: potential-based reward shaping.

``PotentialShaping`` adds ``gamma * phi(s') - phi(s)`` to each reward, with ``phi = 0`` in
terminal states (Ng, Harada and Russell, 1999): any policy's discounted return changes by the
constant ``-phi(s0)``, so the optimal policy is unchanged while the agent gets denser signal.
Each game names potentials built from its own algorithm; pass a name or any callable that
takes the game's state (``env.unwrapped.game_state()``) and returns a float.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

Potential = Callable[[Any], float]

# env id pattern -> {name: "module:function"}; a function takes the game state, returns phi.
POTENTIALS: dict[str, dict[str, str]] = {
    "GridGames/Sokoban*": {
        "distance": "grid_envs.sokoban.rules:distance_potential",
        "boxes": "grid_envs.sokoban.rules:boxes_potential",
        "matching": "grid_envs.sokoban.solver:matching_potential",
        "solver": "grid_envs.sokoban.solver:solver_potential",
    },
    "GridGames/Knight*": {"distance": "grid_envs.knight.solver:distance_potential"},
    "GridGames/Pikachu*": {"mobility": "grid_envs.pikachu.solver:mobility_potential"},
    "GridGames/Lines98*": {"lines": "grid_envs.lines98.heuristic:lines_potential"},
}


def potential_names(env_id: str) -> list[str]:
    return sorted(
        name
        for pattern, table in POTENTIALS.items()
        if fnmatch.fnmatchcase(env_id, pattern)
        for name in table
    )


def get_potential(env_id: str, name: str) -> Potential:
    """The potential ``name`` of the game behind ``env_id``."""
    for pattern, table in POTENTIALS.items():
        if fnmatch.fnmatchcase(env_id, pattern) and name in table:
            module, func = table[name].split(":")
            fn: Potential = getattr(importlib.import_module(module), func)
            return fn
    raise ValueError(
        f"no potential {name!r} for {env_id}; known: {potential_names(env_id) or 'none'}"
    )


class PotentialShaping(gym.Wrapper[Any, Any, Any, Any]):
    """Reward + gamma * phi(s') - phi(s), with phi(terminal) = 0.

    ``info["shaping"]`` holds the added term and ``info["raw_reward"]`` the game's reward.
    A truncated (time-limit) step is not terminal, so it keeps phi(s').
    """

    def __init__(self, env: gym.Env[Any, Any], potential: Potential | str, gamma: float = 0.99):
        super().__init__(env)
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
        if isinstance(potential, str):
            if env.spec is None:
                raise ValueError("a potential by name needs an env made with gymnasium.make")
            potential = get_potential(env.spec.id, potential)
        self.potential: Potential = potential
        self.gamma = float(gamma)
        self._phi = 0.0

    def _phi_now(self) -> float:
        return float(self.potential(self.env.unwrapped.game_state()))  # type: ignore[attr-defined]

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._phi = self._phi_now()
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        phi_next = 0.0 if terminated else self._phi_now()
        bonus = self.gamma * phi_next - self._phi
        self._phi = phi_next
        info = dict(info)
        info["raw_reward"] = float(reward)
        info["shaping"] = float(bonus)
        return obs, float(reward) + bonus, terminated, truncated, info


def shaped_return(rewards: list[float], gamma: float) -> float:
    """Discounted return of a reward sequence (a helper for checking shaping)."""
    return float(np.sum(np.asarray(rewards) * gamma ** np.arange(len(rewards))))
