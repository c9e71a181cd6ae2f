"""What a game declares on the agents' side, beside :class:`grid_envs.core.spec.GameSpec`.

Each game's module in :mod:`agents.games` registers its baselines and ends with one
:class:`AgentsSpec`, ``AGENTS``, which its ``GameSpec.agents`` names. Training, ``compare``,
the search and expert iteration read these declarations (:func:`agents.games.declarations`),
never a game module's other names.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: A search hook's signature is the hook's own (see :mod:`agents.search`); the spec only
#: carries it.
Hook = Callable[..., Any]


@dataclass(frozen=True)
class AgentsSpec:
    """A game's agents' side: its training defaults, its compare row, its searches and the
    board symmetries cloning may use.

    * ``training``: env id -> :class:`agents.train.config.TrainConfig` fields that
      ``grid-games train`` starts from;
    * ``compare``: env id -> what ``grid-games compare`` teaches, trains and plays for the
      game (TrainConfig fields, and ``sample``, ``episodes``, ``skip_agents``, ``search``);
    * ``search``: env id pattern -> the search it plays by default (``variant``,
      ``simulations``);
    * ``symmetries``: env id -> a function ``(shape, flip_rows, flip_cols, transpose) ->
      actions`` saying where each action goes when the board is mirrored
      (:class:`agents.train.cloning.ActionMap`); an id without one is cloned as it comes;
    * ``exact_search``: the game's exact solver that a network's prior can order
      (``variant="exact"``);
    * ``leaf_value``: the game's judgement of positions, standing for the value head
      (``leaf_value="algorithm"``);
    * ``ordered_search``: the game's own search proposing moves in the prior's order
      (``variant="ordered"``).
    """

    game: str
    training: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    compare: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    search: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    symmetries: Mapping[str, Hook] = field(default_factory=dict)
    exact_search: Hook | None = None
    leaf_value: Hook | None = None
    ordered_search: Hook | None = None

    def search_for(self, env_id: str) -> dict[str, Any] | None:
        """The default search of ``env_id``, None where no pattern matches it."""
        for pattern, settings in self.search.items():
            if fnmatch.fnmatchcase(env_id, pattern):
                return dict(settings)
        return None
