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

__version__ = "0.3.0"

# the games, in the order ``grid-games list`` shows them; each folder's spec.py declares
# its ids and potentials (see grid_envs.core.spec): adding a game adds its name here
GAMES = ("sokoban", "minesweeper", "knight", "pikachu", "lines98")


_SPECS: tuple[GameSpec, ...] = tuple(
    importlib.import_module(f"grid_envs.{name}.spec").SPEC for name in GAMES
)


def game_specs() -> list[GameSpec]:
    """Every game's :class:`~grid_envs.core.spec.GameSpec`, in :data:`GAMES` order."""
    return list(_SPECS)


# id -> (entry point, time limit, kwargs, one-line summary for `grid-games list`)
ENVS: dict[str, tuple[str, int | None, dict[str, Any], str]] = {
    i.id: (i.entry_point, i.time_limit, i.kwargs, i.summary) for game in _SPECS for i in game.ids
}


def _register_all() -> None:
    for game in _SPECS:
        for i in game.ids:
            if i.id not in registry:
                # The env keeps its own time limit (``time_limit``, as MiniGrid's
                # ``max_steps``) rather than Gymnasium's TimeLimit wrapper: restore()
                # rewinds the step count with the rest of the state, and Sokoban's deadlock
                # penalty is defined from it.
                register(id=i.id, entry_point=i.entry_point,
                         vector_entry_point=i.vector_entry_point,
                         kwargs={**i.kwargs, "time_limit": i.time_limit})  # fmt: skip


_register_all()
