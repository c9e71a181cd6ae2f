"""Baselines and learned policies behind one ``predict()`` interface, and their evaluation."""

import grid_envs  # noqa: F401  (registers the GridGames ids)
from agents import knight as _knight  # noqa: F401  (each game registers its agents)
from agents import lines98 as _lines98  # noqa: F401
from agents import minesweeper as _minesweeper  # noqa: F401
from agents import pikachu as _pikachu  # noqa: F401
from agents import sokoban as _sokoban  # noqa: F401
from agents.base import Agent, RandomAgent, unwrap_envs
from agents.evaluation import EvalResult, evaluate, wilson_interval
from agents.registry import describe_agent, list_agents, make_agent, register_agent

__all__ = [
    "Agent",
    "EvalResult",
    "RandomAgent",
    "describe_agent",
    "evaluate",
    "list_agents",
    "make_agent",
    "register_agent",
    "unwrap_envs",
    "wilson_interval",
]
