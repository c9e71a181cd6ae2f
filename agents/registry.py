"""Named baselines per env id: each game registers its agents here.

>>> from agents import make_agent, list_agents
>>> list_agents("GridGames/Sokoban-v0")
['random', ...]
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agents.base import Agent, RandomAgent


@dataclass(frozen=True)
class AgentSpec:
    name: str
    factory: Callable[..., Agent]  # called as factory(env=..., seed=..., **kwargs)
    envs: tuple[str, ...]  # fnmatch patterns of the env ids it plays
    description: str

    def plays(self, env_id: str) -> bool:
        return any(fnmatch.fnmatchcase(env_id, pattern) for pattern in self.envs)


_AGENTS: dict[str, list[AgentSpec]] = {}


def register_agent(
    name: str,
    factory: Callable[..., Agent],
    envs: Sequence[str] = ("GridGames/*",),
    description: str = "",
) -> None:
    """Register ``factory`` as agent ``name`` for the env ids matching ``envs``.

    The same name may be registered for several games (each game's ``solver``, say).
    """
    spec = AgentSpec(name, factory, tuple(envs), description)
    specs = [s for s in _AGENTS.get(name, []) if s.envs != spec.envs]
    _AGENTS[name] = [*specs, spec]


def _spec(name: str, env_id: str) -> AgentSpec:
    for spec in _AGENTS.get(name, []):
        if spec.plays(env_id):
            return spec
    known = ", ".join(list_agents(env_id)) or "none"
    raise ValueError(f"no agent {name!r} for {env_id}; agents for it: {known}")


def agent_names() -> list[str]:
    """Every registered agent's name, ``random`` first."""
    return sorted(_AGENTS, key=lambda n: (n != "random", n))


def list_agents(env_id: str) -> list[str]:
    """Names of the agents that play ``env_id``, ``random`` first."""
    names = [n for n, specs in _AGENTS.items() if any(s.plays(env_id) for s in specs)]
    return sorted(names, key=lambda n: (n != "random", n))


def describe_agent(name: str, env_id: str) -> str:
    return _spec(name, env_id).description


def make_agent(name: str, env: Any, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build agent ``name`` bound to ``env`` (whose ``spec.id`` picks the game)."""
    env_id = env_id_of(env)
    return _spec(name, env_id).factory(env=env, seed=seed, **kwargs)


def env_id_of(env: Any) -> str:
    first = env.envs[0] if hasattr(env, "envs") else env[0] if isinstance(env, list) else env
    spec = getattr(first, "spec", None) or getattr(getattr(first, "unwrapped", None), "spec", None)
    if spec is None:
        raise ValueError("the env has no spec: make it with gymnasium.make('GridGames/...')")
    return str(spec.id)


register_agent("random", RandomAgent, ("GridGames/*",), "uniform over the legal actions")
