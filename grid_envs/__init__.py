"""GridGames: classic grid games as Gymnasium environments.

Importing this package registers every ``GridGames/*`` id, so that
``gymnasium.make("GridGames/Sokoban-v0")`` works (and ``"grid_envs:GridGames/Sokoban-v0"``
without an import). The games themselves are imported only when an env is made.
"""

from __future__ import annotations

import importlib
from typing import Any

from gymnasium.envs.registration import register, registry

from grid_envs.core.spec import GameSpec

__version__ = "0.6.0"

# the games' names, in the order ``grid-games list`` shows them (register_game appends; the
# package's own are registered at the end of this module, from each folder's spec.py)
GAMES: tuple[str, ...] = ()
_SPECS: list[GameSpec] = []
# id -> (entry point, time limit, kwargs, one-line summary for `grid-games list`)
ENVS: dict[str, tuple[str, int | None, dict[str, Any], str]] = {}


def game_specs() -> list[GameSpec]:
    """Every game's :class:`~grid_envs.core.spec.GameSpec`, in :data:`GAMES` order."""
    return list(_SPECS)


def register_game(spec: GameSpec) -> None:
    """Add a game: register its ids with Gymnasium and list it wherever the games are
    listed (every reader of :func:`game_specs`). The package's own games come in this way
    from their ``spec.py``; a game kept elsewhere calls it with its spec."""
    global GAMES
    if spec.name in GAMES:
        raise ValueError(f"a game named {spec.name!r} is registered already")
    for i in spec.ids:
        if i.id in ENVS:
            raise ValueError(f"{i.id} is registered already")
    for i in spec.ids:
        ENVS[i.id] = (i.entry_point, i.time_limit, i.kwargs, i.summary)
        if i.id not in registry:
            # The env keeps its own time limit (``time_limit``, as MiniGrid's
            # ``max_steps``) rather than Gymnasium's TimeLimit wrapper: restore() rewinds
            # the step count with the rest of the state, and Sokoban's deadlock penalty
            # is defined from it.
            register(id=i.id, entry_point=i.entry_point,
                     vector_entry_point=i.vector_entry_point,
                     kwargs={**i.kwargs, "time_limit": i.time_limit})  # fmt: skip
    _SPECS.append(spec)
    GAMES = (*GAMES, spec.name)


# the package's games: adding one adds its folder's name here (see grid_envs.core.spec)
for _name in ("sokoban", "minesweeper", "knight", "pikachu", "lines98"):
    register_game(importlib.import_module(f"grid_envs.{_name}.spec").SPEC)
