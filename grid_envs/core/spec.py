"""What a game declares about itself, in one place: its registered ids, its potentials,
the module of its baselines and training settings, its level writer and solver, and its
picture.

Each game folder has a ``spec.py`` holding its :class:`GameSpec`, and everything else reads
the specs: registration (:mod:`grid_envs`), the shaping wrappers (:mod:`grid_envs.wrappers`),
the agents and training rows (:mod:`agents`), ``grid-games list``, ``generate``, ``solve``,
``bench``,
the soak benchmark, the golden trajectories, the docs' game pages, their navigation and
pictures. So adding a game is its folder plus its name in :data:`grid_envs.GAMES` (or
:func:`grid_envs.register_game` with its spec, for a game that lives elsewhere).

A spec names code by ``"module:attribute"`` strings, so reading it imports nothing of the
game: the game's modules load when an env is made.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class IdSpec:
    """One registered id: its entry points, time limit, keyword arguments and summary."""

    id: str
    entry_point: str  # "module:Class" of the single env
    time_limit: int
    kwargs: dict[str, Any]
    summary: str  # one line, for ``grid-games list``
    vector_entry_point: str | None = None  # the native batched env, if the id has one


@dataclass(frozen=True)
class PotentialSpec:
    """One shaping potential of a game, in each form the game gives it, each a
    ``"module:function"`` (see :mod:`grid_envs.wrappers`):

    * ``state``: the game state to the potential's value, phi (float);
    * ``batch``: a native batched env to (num_envs,) float64, the same values read off the
      batch's arrays (None: each env's state is read);
    * ``field``: the game state to (rows, cols) float64, on each cell the potential's value
      with the player there (the input plane of :class:`grid_envs.wrappers.PotentialInput`;
      None: its value on every cell);
    * ``batch_field``: the same for a native batched env, (num_envs, rows, cols).
    """

    state: str
    batch: str | None = None
    field: str | None = None
    batch_field: str | None = None

    def forms(self) -> dict[str, str]:
        """The forms the game gives, by name."""
        found = {"state": self.state, "batch": self.batch, "field": self.field,
                 "batch_field": self.batch_field}  # fmt: skip
        return {form: target for form, target in found.items() if target is not None}


@dataclass(frozen=True)
class GameSpec:
    """A game: its ids, and its potentials for reward shaping (see
    :mod:`grid_envs.wrappers`)."""

    name: str
    ids: tuple[IdSpec, ...]
    id_pattern: str  # fnmatch pattern of the ids the potentials serve ("GridGames/Knight*")
    bench_id: str  # the id ``grid-games bench`` times
    # name -> the potential in each form the game gives it
    potentials: dict[str, PotentialSpec] = field(default_factory=dict)
    title: str = ""  # the game's name in the docs (default: ``name`` capitalised)
    # "module:attribute" of the game's declaration on the agents' side (an
    # ``agents.games.spec.AgentsSpec``: training defaults, compare row, search hooks), whose
    # module registers the game's baselines; loaded by the agents side only
    agents: str | None = None
    # "module:function" writing generated levels to a file for ``grid-games generate``:
    # ``write(path, rng, count, settings) -> str`` (count None: the game's own; settings:
    # the generator's keyword arguments; returns a line saying what was written)
    writer: str | None = None
    # "module:function" solving the levels of a file for ``grid-games solve``:
    # ``solve(path, level, max_seconds, mode)`` yields one dict a level (``level``,
    # ``title``, ``solved``, ``status``, ``solution``, ``seconds`` and the game's own
    # figures), each answer replayed through the rules before it is yielded
    solver: str | None = None
    picture_agent: str = "random"  # the agent that plays the docs' picture of the game

    def serves(self, env_id: str) -> bool:
        return fnmatch.fnmatchcase(env_id, self.id_pattern)

    @property
    def display_name(self) -> str:
        return self.title or self.name.capitalize()


def load(target: str) -> Any:
    """The object a ``"module:attribute"`` string names."""
    import importlib

    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def lazy_exports(package: str, names: dict[str, str]) -> Any:
    """A module ``__getattr__`` for a game package: ``names`` maps each exported name to
    the submodule that defines it, imported on first use, so that reading the game's spec
    (at ``import grid_envs``) loads none of its code."""
    import importlib

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{names[name]}"), name)

    return __getattr__
