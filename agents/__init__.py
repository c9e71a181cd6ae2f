"""Baselines and learned policies behind one ``predict()`` interface, and their evaluation."""

import grid_envs  # noqa: F401  (registers the GridGames ids)
from agents.base import Agent, RandomAgent, unwrap_envs
from agents.evaluation import EvalResult, evaluate, wilson_interval
from agents.games import declarations
from agents.nets.registry import register_policy
from agents.registry import describe_agent, list_agents, make_agent, register_agent

declarations()  # each game's baselines, registered as its declaration is read

__all__ = [
    "Agent",
    "EvalResult",
    "RandomAgent",
    "describe_agent",
    "evaluate",
    "list_agents",
    "make_agent",
    "register_agent",
    "register_policy",
    "unwrap_envs",
    "wilson_interval",
]
