"""Baselines and learned policies behind one ``predict()`` interface, and their evaluation."""

import importlib

import grid_envs  # registers the GridGames ids
from agents.base import Agent, RandomAgent, unwrap_envs
from agents.evaluation import EvalResult, evaluate, wilson_interval
from agents.policies import register_policy
from agents.registry import describe_agent, list_agents, make_agent, register_agent

# each game's baselines and training defaults (the module its spec names, agents/<game>.py
# for the package's games, registered on import), in the order of grid_envs.GAMES
GAME_MODULES = {
    spec.name: importlib.import_module(spec.agents)
    for spec in grid_envs.game_specs()
    if spec.agents is not None
}

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
