"""Wrappers shared by every game: potential-based reward shaping.

``PotentialShaping`` adds ``gamma * phi(s') - phi(s)`` to each reward, with ``phi = 0`` in
terminal states (Ng, Harada and Russell, 1999): any policy's discounted return changes by the
constant ``-phi(s0)``, so the optimal policy is unchanged while the agent gets denser signal.
Each game names potentials built from its own algorithm; pass a name or any callable that
takes the game's state (``env.unwrapped.game_state()``) and returns a float.

``VectorPotentialShaping`` does the same for a whole native batched env, with the same
rewards as ``PotentialShaping`` on each of N single envs. Potentials that the batch can read
off its arrays (a potential's ``batch`` form in its game's spec) are computed for every env
in one call; any other potential runs on each env's ``game_state(i)``. Both take a
``scale``: the bonus is ``scale * (gamma * phi(s') - phi(s))``, the same as shaping with the
potential ``scale * phi``;
and ``at_loss``: ``"zero"`` (the default) gives every terminal state ``phi = 0``, ``"kept"``
only a won end, a lost end keeping its potential as a time-limit end does. Where the
potentials are at most 0 (a distance still to go), ``"zero"`` pays the last step of a lost
episode ``-phi`` of where it stood, the most rewarding step of many; ``"kept"`` does not, at
the price of the guarantee: it ranks losses by where they end.

``PotentialInput`` and ``VectorPotentialInput`` give the learner the potential another way:
as one more observation plane, rewards untouched (see :class:`PotentialInput`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from grid_envs import game_specs

Potential = Callable[[Any], float]


def _lookup(env_id: str, name: str, form: str = "state") -> Any:
    """The function of the potential ``name`` of the game behind ``env_id`` in ``form`` (a
    field of :class:`grid_envs.core.spec.PotentialSpec`), None where the game gives none."""
    for game in game_specs():
        if game.serves(env_id) and name in game.potentials:
            target = game.potentials[name].forms().get(form)
            if target is None:
                return None
            module, func = target.split(":")
            return getattr(importlib.import_module(module), func)
    return None


def shaping_bonus(phi: Any, phi_next: Any, gamma: float) -> Any:
    """``gamma * phi(s') - phi(s)``; the caller passes ``phi(s') = 0`` for a terminal s'."""
    return gamma * phi_next - phi


def potential_names(env_id: str) -> list[str]:
    return sorted(name for game in game_specs() if game.serves(env_id) for name in game.potentials)


def get_potential(env_id: str, name: str) -> Potential:
    """The potential ``name`` of the game behind ``env_id``."""
    fn: Potential | None = _lookup(env_id, name)
    if fn is not None:
        return fn
    raise ValueError(
        f"no potential {name!r} for {env_id}; known: {potential_names(env_id) or 'none'}"
    )


def batch_potentials(
    env: Any, potential: Potential, batched: Callable[[Any], np.ndarray] | None,
    rows: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """phi of a batch's envs ``rows`` (all by default), float64: read off its arrays by
    ``batched`` where the game has it, else ``potential`` of each env's game state."""
    base: Any = env.unwrapped  # a GridVectorEnv, or Gymnasium's list of single envs
    if batched is not None:
        values = batched(base)
        return values if rows is None else values[rows]
    idx = range(base.num_envs) if rows is None else rows.tolist()
    return np.array([float(potential(base.game_state(i))) for i in idx])


AT_LOSS = ("zero", "kept")


def check_shaping(gamma: float, scale: float, at_loss: str = "zero") -> tuple[float, float]:
    """``gamma`` and ``scale`` as floats, refusing a discount outside [0, 1], a scale that is
    not a positive number or an ``at_loss`` not in :data:`AT_LOSS`."""
    if at_loss not in AT_LOSS:
        raise ValueError(f"at_loss must be one of {AT_LOSS}, got {at_loss!r}")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
    real = isinstance(scale, (int, float)) and not isinstance(scale, bool)
    if not (real and np.isfinite(scale) and scale > 0):
        raise ValueError(f"the shaping scale must be a positive number, got {scale!r}")
    return float(gamma), float(scale)


def _refuse_same_step(env: Any, what: str) -> None:
    mode = env.metadata.get("autoreset_mode")
    if mode is not None and getattr(mode, "value", mode) == "SameStep":
        raise ValueError(
            f"{what} needs the state each step ends in: make the batched env with "
            "autoreset_mode 'NextStep' (the default) or 'Disabled', not 'SameStep'"
        )


class PotentialShaping(gym.Wrapper[Any, Any, Any, Any]):
    """Reward + scale * (gamma * phi(s') - phi(s)), with phi(terminal) = 0 (with
    ``at_loss="kept"``: at a won end only).

    ``info["shaping"]`` holds the added term and ``info["raw_reward"]`` the game's reward.
    A truncated (time-limit) step is not terminal, so it keeps phi(s').
    """

    def __init__(
        self, env: gym.Env[Any, Any], potential: Potential | str, gamma: float = 0.99,
        scale: float = 1.0, at_loss: str = "zero",
    ) -> None:  # fmt: skip
        super().__init__(env)
        self.gamma, self.scale = check_shaping(gamma, scale, at_loss)
        self.at_loss = at_loss
        if isinstance(potential, str):
            if env.spec is None:
                raise ValueError("a potential by name needs an env made with gymnasium.make")
            potential = get_potential(env.spec.id, potential)
        self.potential: Potential = potential
        self._phi = 0.0

    def _phi_now(self) -> float:
        return float(self.potential(self.env.unwrapped.game_state()))  # type: ignore[attr-defined]

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._phi = self._phi_now()
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        zero = terminated and (self.at_loss == "zero" or bool(info.get("is_success")))
        phi_next = 0.0 if zero else self._phi_now()
        bonus = self.scale * shaping_bonus(self._phi, phi_next, self.gamma)
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

    def __init__(
        self, env: Any, potential: Potential | str, gamma: float = 0.99, scale: float = 1.0,
        at_loss: str = "zero",
    ) -> None:  # fmt: skip
        super().__init__(env)
        self.gamma, self.scale = check_shaping(gamma, scale, at_loss)
        self.at_loss = at_loss
        _refuse_same_step(env, "shaping")
        self.batched: Callable[[Any], np.ndarray] | None = None
        if isinstance(potential, str):
            if env.spec is None:
                raise ValueError("a potential by name needs an env made with gymnasium.make_vec")
            self.batched = _lookup(env.spec.id, potential, "batch")
            potential = get_potential(env.spec.id, potential)
        self.potential: Potential = potential
        self._phi = np.zeros(self.num_envs)
        self._ended = np.zeros(self.num_envs, dtype=bool)  # reset by the next step

    def potentials(self, rows: np.ndarray | None = None) -> np.ndarray:
        """phi of the envs ``rows`` (all by default), float64."""
        return batch_potentials(self.env, self.potential, self.batched, rows)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        mask = (kwargs.get("options") or {}).get("reset_mask")
        rows = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        self._phi[rows] = self.potentials(rows)
        self._ended[rows] = False
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(actions)
        zero = terminated
        if self.at_loss == "kept":
            zero = terminated & np.asarray(info.get("is_success", terminated), dtype=bool)
        phi_next = np.where(zero, 0.0, self.potentials())
        bonus = self.scale * shaping_bonus(self._phi, phi_next, self.gamma)
        bonus[self._ended] = 0.0  # those envs started a new episode: no transition
        self._phi = phi_next
        self._ended = terminated | truncated
        info = dict(info)
        every = np.ones(self.num_envs, dtype=bool)
        info["raw_reward"], info["_raw_reward"] = reward, every
        info["shaping"], info["_shaping"] = bonus, every
        return obs, reward + bonus, terminated, truncated, info


INPUT_BOUND = 4.0  # the input plane's values are clipped to [-INPUT_BOUND, INPUT_BOUND]


def input_space(space: gym.spaces.Box) -> gym.spaces.Box:
    """``space`` (planes, rows, cols) with one more plane, float32, bounded by
    :data:`INPUT_BOUND` (so that a network that scales each plane by its bound brings it to
    [-1, 1])."""
    if len(space.shape) != 3:
        raise ValueError(
            f"the potential as an input plane needs the planes observation (planes, rows, "
            f"cols), not {space.shape}: make the env with observation_mode='planes'"
        )
    _, rows, cols = space.shape
    low = np.concatenate([space.low.astype(np.float32), np.full((1, rows, cols), -INPUT_BOUND)])
    high = np.concatenate([space.high.astype(np.float32), np.full((1, rows, cols), INPUT_BOUND)])
    return gym.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)


def input_plane(field: np.ndarray, start: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A field (or a batch of them) divided by each episode's starting scale, clipped to
    :data:`INPUT_BOUND`, laid on a float32 plane of ``shape`` (rows, cols) from its top-left
    corner; cells the field does not reach get ``-INPUT_BOUND``."""
    lead = field.shape[:-2]
    plane = np.full((*lead, *shape), -INPUT_BOUND, dtype=np.float32)
    rows, cols = min(field.shape[-2], shape[0]), min(field.shape[-1], shape[1])
    start = np.asarray(start, dtype=np.float64).reshape(*lead, 1, 1)
    part = np.clip(field[..., :rows, :cols] / start, -INPUT_BOUND, INPUT_BOUND)
    plane[..., :rows, :cols] = np.nan_to_num(part, nan=-INPUT_BOUND)
    return plane


def _start_scale(phi: Any) -> Any:
    """How an episode's input plane is scaled: ``|phi(s0)|``, at least 1."""
    return np.maximum(np.abs(phi), 1.0)


class PotentialInput(gym.ObservationWrapper[Any, Any, Any]):
    """The observation with one more plane: the potential, rewards untouched.

    Shaping hands the potential to the learner through its rewards, where PPO's critic can
    soak it up (shaping is the same as starting the value estimate at the potential,
    Wiewiora 2003). Here the learner reads it instead: the plane holds the potential's field
    where the game declares one (the Knight's ``distance``: the potential with the knight on
    each cell, so the way down the field is the way to the exit), else the potential's value
    on every cell; divided by ``|phi(s0)|`` of the episode (at least 1) and clipped to
    ``[-4, 4]``. Needs the planes observation; the observation becomes float32.
    """

    def __init__(self, env: gym.Env[Any, Any], potential: str) -> None:
        super().__init__(env)
        if env.spec is None:
            raise ValueError("the potential as an input needs an env made with gymnasium.make")
        self.planes = InputPlanes(env.spec.id, potential)
        self.observation_space = input_space(env.observation_space)  # type: ignore[arg-type]

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.planes.new_episode()  # the first position observed is the episode's start
        return self.observation(obs), info

    def observation(self, observation: Any) -> np.ndarray:
        state = self.env.unwrapped.game_state()  # type: ignore[attr-defined]
        return self.planes.observe(0, observation, state)


def with_input(
    observation: np.ndarray, state: Any, potential: Potential,
    field: Callable[[Any], np.ndarray] | None, start: float,
) -> np.ndarray:  # fmt: skip
    """One env's planes with the potential's plane after them (:class:`PotentialInput`):
    ``field(state)``, or ``potential(state)`` on every cell, over ``start``."""
    shape = observation.shape[1:]
    if field is not None:
        values = np.asarray(field(state), dtype=np.float64)
    else:
        values = np.full(shape, float(potential(state)))
    plane = input_plane(values, start, shape)
    return np.concatenate([observation.astype(np.float32), plane[None]])


class InputPlanes:
    """What a player of a model trained on :class:`PotentialInput` needs to build its
    observations from a bare env's: the potential's plane, each episode scaled by its
    first position's potential (for an agent that sees one position at a time)."""

    def __init__(self, env_id: str, potential: str) -> None:
        self.potential = get_potential(env_id, potential)
        self.field = _lookup(env_id, potential, "field")
        self._starts: dict[int, float] = {}

    def new_episode(self, key: int | None = None) -> None:
        """Forget the start of the episode ``key`` plays (every episode: None)."""
        if key is None:
            self._starts.clear()
        else:
            self._starts.pop(key, None)

    def observe(self, key: int, observation: np.ndarray, state: Any) -> np.ndarray:
        """``observation`` of the game ``key`` in ``state`` with the plane; the first call
        since :meth:`new_episode` takes ``state`` as the episode's start."""
        if key not in self._starts:
            self._starts[key] = float(_start_scale(self.potential(state)))
        return with_input(observation, state, self.potential, self.field, self._starts[key])


class VectorPotentialInput(gym.vector.VectorWrapper):
    """:class:`PotentialInput` for a native batched env: each env's observation is the one
    ``PotentialInput`` gives on a single env (autoreset ``NextStep`` or ``Disabled``, as for
    :class:`VectorPotentialShaping`)."""

    def __init__(self, env: Any, potential: str) -> None:
        super().__init__(env)
        _refuse_same_step(env, "the potential as an input")
        if env.spec is None:
            raise ValueError("the potential as an input needs an env made with gymnasium.make_vec")
        self.potential = get_potential(env.spec.id, potential)
        self.batched = _lookup(env.spec.id, potential, "batch")
        self.field = _lookup(env.spec.id, potential, "batch_field")
        self.single_field = _lookup(env.spec.id, potential, "field")
        self.single_observation_space = input_space(env.single_observation_space)
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )
        self._start = np.ones(self.num_envs)
        self._ended = np.zeros(self.num_envs, dtype=bool)

    def _fields(self, shape: tuple[int, ...]) -> np.ndarray:
        base: Any = self.env.unwrapped
        if self.field is not None:
            return np.asarray(self.field(base), dtype=np.float64)
        if self.single_field is not None:
            return np.stack([self.single_field(base.game_state(i)) for i in range(self.num_envs)])
        phi = self._phi()
        return np.broadcast_to(phi[:, None, None], (self.num_envs, *shape))

    def _phi(self, rows: np.ndarray | None = None) -> np.ndarray:
        return batch_potentials(self.env, self.potential, self.batched, rows)

    def _observe(self, obs: Any) -> np.ndarray:
        shape = obs.shape[2:]
        planes = input_plane(self._fields(shape), self._start, shape)
        return np.concatenate([np.asarray(obs, dtype=np.float32), planes[:, None]], axis=1)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        mask = (kwargs.get("options") or {}).get("reset_mask")
        rows = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        self._start[rows] = _start_scale(self._phi(rows))
        self._ended[rows] = False
        return self._observe(obs), info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(actions)
        started = np.flatnonzero(self._ended)  # envs the step reset (autoreset NextStep)
        if started.size:
            self._start[started] = _start_scale(self._phi(started))
        self._ended = terminated | truncated
        return self._observe(obs), reward, terminated, truncated, info


def shaped_return(rewards: list[float], gamma: float) -> float:
    """Discounted return of a reward sequence (a helper for checking shaping)."""
    return float(np.sum(np.asarray(rewards) * gamma ** np.arange(len(rewards))))
