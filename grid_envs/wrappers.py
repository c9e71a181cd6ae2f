"""Wrappers shared by every game: potential-based reward shaping.

``PotentialShaping`` adds ``gamma * phi(s') - phi(s)`` to each reward, with ``phi = 0`` in
terminal states (Ng, Harada and Russell, 1999): any policy's discounted return changes by the
constant ``-phi(s0)``, so the optimal policy is unchanged while the agent gets denser signal.
Each game names potentials built from its own algorithm; pass a name or any callable that
takes the game's state (``env.unwrapped.game_state()``) and returns a float.

``VectorPotentialShaping`` does the same for a whole native batched env, with the same
rewards as ``PotentialShaping`` on each of N single envs. Potentials that the batch can read
off its arrays (:data:`BATCHED_POTENTIALS`) are computed for every env in one call; any
other potential runs on each env's ``game_state(i)``.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from grid_envs import game_specs

Potential = Callable[[Any], float]

# env id pattern -> {name: "module:function"}; a function takes the game state, returns phi.
# Each game names its own in its spec (grid_envs/<game>/spec.py).
POTENTIALS: dict[str, dict[str, str]] = {
    game.id_pattern: game.potentials for game in game_specs() if game.potentials
}

# env id pattern -> {name: "module:function"}; the function takes a native batched env and
# returns (num_envs,) float64, the values of the potential of the same name above, read off
# the batch's arrays.
BATCHED_POTENTIALS: dict[str, dict[str, str]] = {
    game.id_pattern: game.batched_potentials for game in game_specs() if game.batched_potentials
}


def _lookup(table: dict[str, dict[str, str]], env_id: str, name: str) -> Any:
    for pattern, names in table.items():
        if fnmatch.fnmatchcase(env_id, pattern) and name in names:
            module, func = names[name].split(":")
            return getattr(importlib.import_module(module), func)
    return None


def shaping_bonus(phi: Any, phi_next: Any, gamma: float) -> Any:
    """``gamma * phi(s') - phi(s)``; the caller passes ``phi(s') = 0`` for a terminal s'."""
    return gamma * phi_next - phi


def potential_names(env_id: str) -> list[str]:
    return sorted(
        name
        for pattern, table in POTENTIALS.items()
        if fnmatch.fnmatchcase(env_id, pattern)
        for name in table
    )


def get_potential(env_id: str, name: str) -> Potential:
    """The potential ``name`` of the game behind ``env_id``."""
    fn: Potential | None = _lookup(POTENTIALS, env_id, name)
    if fn is not None:
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
        bonus = shaping_bonus(self._phi, phi_next, self.gamma)
        self._phi = phi_next
        info = dict(info)
        info["raw_reward"] = float(reward)
        info["shaping"] = float(bonus)
        return obs, float(reward) + bonus, terminated, truncated, info


class VectorPotentialShaping(gym.vector.VectorWrapper):
    """:class:`PotentialShaping` for a native batched env (``gymnasium.make_vec(...,
    vectorization_mode="vector_entry_point")``), with the rewards it gives on each of N
    single envs.

    The env autoresets at the next step (Gymnasium's default: that step's reward stays 0)
    or not at all (``autoreset_mode="Disabled"``, ended envs reset by ``reset_mask``); at
    the same step the state a step ends in is gone before its potential could be read, so
    that mode is refused. ``info["shaping"]`` and ``info["raw_reward"]`` as for one env.
    """

    def __init__(self, env: Any, potential: Potential | str, gamma: float = 0.99) -> None:
        super().__init__(env)
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
        mode = env.metadata.get("autoreset_mode")
        if mode is not None and getattr(mode, "value", mode) == "SameStep":
            raise ValueError(
                "shaping needs the state each step ends in: make the batched env with "
                "autoreset_mode 'NextStep' (the default) or 'Disabled', not 'SameStep'"
            )
        self.gamma = float(gamma)
        self.batched: Callable[[Any], np.ndarray] | None = None
        if isinstance(potential, str):
            if env.spec is None:
                raise ValueError("a potential by name needs an env made with gymnasium.make_vec")
            self.batched = _lookup(BATCHED_POTENTIALS, env.spec.id, potential)
            potential = get_potential(env.spec.id, potential)
        self.potential: Potential = potential
        self._phi = np.zeros(self.num_envs)
        self._ended = np.zeros(self.num_envs, dtype=bool)  # reset by the next step

    def potentials(self, rows: np.ndarray | None = None) -> np.ndarray:
        """phi of the envs ``rows`` (all by default), float64."""
        base: Any = self.env.unwrapped  # a GridVectorEnv, or Gymnasium's list of single envs
        if self.batched is not None:
            values = self.batched(base)
            return values if rows is None else values[rows]
        idx = range(self.num_envs) if rows is None else rows.tolist()
        return np.array([float(self.potential(base.game_state(i))) for i in idx])

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        mask = (kwargs.get("options") or {}).get("reset_mask")
        rows = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        self._phi[rows] = self.potentials(rows)
        self._ended[rows] = False
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(actions)
        phi_next = np.where(terminated, 0.0, self.potentials())
        bonus = shaping_bonus(self._phi, phi_next, self.gamma)
        bonus[self._ended] = 0.0  # those envs started a new episode: no transition
        self._phi = phi_next
        self._ended = terminated | truncated
        info = dict(info)
        every = np.ones(self.num_envs, dtype=bool)
        info["raw_reward"], info["_raw_reward"] = reward, every
        info["shaping"], info["_shaping"] = bonus, every
        return obs, reward + bonus, terminated, truncated, info


def shaped_return(rewards: list[float], gamma: float) -> float:
    """Discounted return of a reward sequence (a helper for checking shaping)."""
    return float(np.sum(np.asarray(rewards) * gamma ** np.arange(len(rewards))))
