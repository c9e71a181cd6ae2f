"""Baselines and learned policies behind one ``predict()`` interface, and their evaluation."""

import importlib

import grid_envs  # registers the GridGames ids
from agents.base import Agent, RandomAgent, unwrap_envs
from agents.evaluation import EvalResult, evaluate, wilson_interval
from agents.registry import describe_agent, list_agents, make_agent, register_agent

# each game's baselines and training defaults (agents/<game>.py, registered on import), in
# the order of grid_envs.GAMES: a new game's module is found by its name there
GAME_MODULES = {name: importlib.import_module(f"agents.{name}") for name in grid_envs.GAMES}

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
