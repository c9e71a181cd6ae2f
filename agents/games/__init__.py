"""Each game's baselines and its declaration on the agents' side.

A game's module here (``agents/games/<game>.py``) registers its baselines with
:func:`agents.registry.register_agent`, its networks with
:func:`agents.nets.registry.register_policy`, and declares an
:class:`~agents.games.spec.AgentsSpec` named ``AGENTS``, which the game's
:class:`~grid_envs.core.spec.GameSpec` names (``agents="agents.games.<game>:AGENTS"``). A
new baseline goes in its game's module; a game that lives outside the package declares its
own module the same way.
"""

from __future__ import annotations

import grid_envs
from agents.games.spec import AgentsSpec
from grid_envs.core.spec import load


def declarations() -> dict[str, AgentsSpec]:
    """Every game's declaration, by game name, in the order of ``grid_envs.GAMES`` (which
    ``grid-games compare`` keeps); importing them registers the games' baselines."""
    return {spec.name: _declared(spec.agents) for spec in grid_envs.game_specs() if spec.agents}


def declaration_of(env_id: str) -> AgentsSpec | None:
    """The declaration of the game that registered ``env_id``, None for an id of no game."""
    for spec in grid_envs.game_specs():
        if spec.agents is not None and spec.serves(env_id):
            return _declared(spec.agents)
    return None


def _declared(target: str) -> AgentsSpec:
    """The declaration a game's spec names (``"module:AGENTS"``), checked to be one."""
    declared = load(target)
    if not isinstance(declared, AgentsSpec):
        raise TypeError(f"{target} must be an AgentsSpec, got {type(declared).__name__}")
    return declared


__all__ = ["AgentsSpec", "declaration_of", "declarations"]
