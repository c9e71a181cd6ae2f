"""The agent interface: stable-baselines3's ``predict`` signature for every baseline.

An agent is bound to the env(s) it plays (:meth:`Agent.bind`): a single env, a list of
envs, or a vector env with an ``envs`` attribute (SB3's ``DummyVecEnv``, Gymnasium's
``SyncVectorEnv``). Through the binding it reads what an observation does not carry, and
only through public hooks of :class:`grid_envs.core.GridEnv`:

* ``action_masks()`` - the legal actions now;
* ``game_state()`` - a copy of the game's state dataclass, for agents that plan.

What an agent weighed for a move (a network's likeliest moves and value, a search's
visits, a solver's plan, the mine probabilities) it tells through :meth:`Agent.thoughts`,
which a recording shows beside the board (:mod:`agents.watch`).

``predict`` accepts one observation or a batch (leading batch axis, one env per row), so
``stable_baselines3.common.evaluation.evaluate_policy`` runs any agent like a trained model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import gymnasium as gym
import numpy as np

from grid_envs.core import checks
from grid_envs.core.base_env import GridEnv


def unwrap_envs(env: Any) -> list[GridEnv]:
    """The GridEnv(s) behind ``env``: a gymnasium env, a list, or a vector env."""
    if isinstance(env, (list, tuple)):
        items = list(env)
    elif hasattr(env, "envs"):  # SB3 DummyVecEnv, gymnasium SyncVectorEnv
        items = list(env.envs)
    else:
        items = [env]
    out = []
    for e in items:
        base = e.unwrapped if isinstance(e, gym.Env) else e
        if not isinstance(base, GridEnv):
            raise TypeError(f"agents play GridGames envs; got {type(base).__name__}")
        out.append(base)
    return out


@dataclass
class Thought:
    """What an agent weighed for one move, as a replay shows it; every part is optional.

    ``moves`` are (action, weight) pairs, best first, and ``weight`` says what the weights
    are ("probability", "visits", "gain"); ``value`` is the position's value where the
    agent has one; ``facts`` are a few named figures ("nodes", "plan", "pushes left");
    ``heat`` is a (rows, cols) float array in [0, 1] over the board ("mine probability"
    for ``heat_name``), NaN where it says nothing; ``path`` is a planned route's cells."""

    moves: list[tuple[int, float]] = field(default_factory=list)
    weight: str = ""
    value: float | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    heat: np.ndarray | None = None
    heat_name: str = ""
    path: list[tuple[int, int]] = field(default_factory=list)

    @staticmethod
    def best(actions: Any, weights: Any, k: int = 5) -> list[tuple[int, float]]:
        """The ``k`` actions of highest weight, best first (ties: the lower action)."""
        actions, weights = np.asarray(actions), np.asarray(weights, dtype=np.float64)
        order = np.lexsort((actions, -weights))[:k]
        return [(int(actions[i]), float(weights[i])) for i in order]


class Agent:
    """Base class: subclasses implement :meth:`act` for one env and one observation."""

    #: Name under which the agent is registered (see :mod:`agents.registry`).
    name = "agent"

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """Every agent refuses a setting's old name (``time_limit=`` for seconds) in one line
        naming the new one, before anything is built."""
        if kwargs:
            checks.not_renamed(kwargs, checks.init_names(cast(Any, cls)))
        return super().__new__(cls)

    def __init__(self, env: Any = None, seed: int | None = None) -> None:
        self.envs: list[GridEnv] = []
        self.rng = np.random.default_rng(seed)
        if env is not None:
            self.bind(env)

    def bind(self, env: Any) -> Agent:
        """Attach the env(s) whose masks and state the agent may read; returns self."""
        self.envs = unwrap_envs(env)
        return self

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Forget any plan (called by the evaluation at each new episode)."""

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        raise NotImplementedError

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """What the agent weighed for the move :meth:`act` has just chosen on ``env`` and
        ``observation`` (called after ``act``, before the move is played). It reads what
        ``act`` kept, or works it out again without drawing from the agent's generator, so
        that asking never changes what the agent plays. By default: the legal moves."""
        return Thought(facts={"legal moves": int(np.count_nonzero(env.action_masks()))})

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        """What a teacher says in this state (:mod:`agents.train.teaching`): the action
        :meth:`act` plays, and a bool mask over the action space of every action the agent
        rates as good as that one (it included). By default that action alone; agents
        whose choice is one of several equals (ties in a score, any sure cell, any
        shortest walk) name them all, so that cloning is not asked to guess a tie-break.
        """
        action = self.act(env, observation)
        return action, self.one_hot(env, [action])

    @staticmethod
    def one_hot(env: GridEnv, actions: Any) -> np.ndarray:
        """The bool mask over ``env``'s actions holding ``actions``."""
        good = np.zeros(int(env.action_space.n), dtype=bool)
        good[list(actions)] = True
        return good

    def predict(
        self,
        observation: np.ndarray,
        state: tuple[np.ndarray, ...] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...] | None]:
        """SB3's signature: return (actions, state); one action per observation row."""
        if not self.envs:
            raise RuntimeError(f"{type(self).__name__} is not bound to an env: call bind(env)")
        obs = np.asarray(observation)
        single_ndim = len(self.envs[0].observation_space.shape or ())
        if obs.ndim == single_ndim:
            return np.asarray(self.act(self.envs[0], obs)), state
        if len(obs) != len(self.envs):
            raise ValueError(f"a batch of {len(obs)} observations but {len(self.envs)} bound envs")
        if episode_start is not None and np.any(episode_start):
            self.reset()
        actions = [self.act(env, o) for env, o in zip(self.envs, obs, strict=True)]
        return np.asarray(actions, dtype=np.int64), state


class RandomAgent(Agent):
    """Uniform over the legal actions (the mask), from its own seeded generator."""

    name = "random"

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        legal = np.flatnonzero(env.action_masks())
        if len(legal) == 0:  # an ended episode: any action, the env will say so
            return 0
        return int(legal[self.rng.integers(len(legal))])
