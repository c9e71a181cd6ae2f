"""What a search takes from the game it plays, read from the game's declaration
(:mod:`agents.games`): its exact solver, its judgement of positions, its own search, and
the search it plays by default."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents.games import declaration_of, declarations
from agents.games.spec import AgentsSpec
from grid_envs.core.base_env import GridEnv


def need_deterministic(env: GridEnv) -> None:
    if not env.deterministic:
        raise ValueError(
            "the levin, lds and exact searches plan whole lines: they need a deterministic "
            "game (Sokoban, the Knight, Pikachu-v0); use gumbel or puct"
        )


ExactSolver = Any  # (env, logits (A,), node budget) -> (status, actions, nodes)


def exact_solver(env: GridEnv) -> ExactSolver:
    """The game's exact solver that a prior can order (its declaration's ``exact_search``,
    :mod:`agents.games`): ``(env, logits, nodes)`` to the status ("cleared", "unsolvable"
    or "gave_up"), the winning actions, and the nodes used."""
    return game_hook(env, lambda d: d.exact_search, "exact solver a prior can order (the "
                      "exact search: Pikachu); use levin, lds, gumbel or puct")  # fmt: skip


LeafValue = Any  # (env, observations (b, ...)) -> values (b,), in the game's rewards


def leaf_value(env: GridEnv) -> LeafValue:
    """The game's own judgement of positions as a search's leaf value (its declaration's
    ``leaf_value``, :mod:`agents.games`), for ``leaf_value="algorithm"``."""
    missing = ("judgement of positions to stand for the value head (leaf_value='algorithm': "
               "Lines98); use leaf_value='network'")  # fmt: skip
    return game_hook(env, lambda d: d.leaf_value, missing)


def game_hook(env: GridEnv, hook: Callable[[AgentsSpec], Any], missing: str) -> Any:
    """The ``hook`` of the env's game's declaration (:mod:`agents.games`), the game found
    by its module (``grid_envs.<game>.env``, for a subclass defined elsewhere too); a clear
    error naming the env and the ``missing`` thing where it declares none."""
    games = (c.__module__.split(".") for c in type(env).__mro__)
    game = next((m[1] for m in games if m[0] == "grid_envs" and len(m) > 2), "")
    declared = declarations().get(game)
    found = None if declared is None else hook(declared)
    if found is None:
        raise ValueError(f"{type(env).__name__} has no {missing}")
    return found


def search_defaults(env_id: str) -> dict[str, Any]:
    """The search a game plays by default (its declaration's ``search``,
    :mod:`agents.games`: the variant and the simulations a move), by env id pattern."""
    declared = declaration_of(env_id)
    found = None if declared is None else declared.search_for(env_id)
    return found or {}
