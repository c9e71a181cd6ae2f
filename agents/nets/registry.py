"""Named network policies for ``grid-games train --policy``: each registers itself here.

A policy is SB3's ``CnnPolicy`` with the suite's small grid CNN (``"cnn"``), or a board
policy (:mod:`agents.nets.board`): an extractor that reads the actions' logits off the
board, named here by ``"module:Class"`` so that listing the policies imports no torch. A
game declares its own beside its baselines (``agents/games/<game>.py``); the trainer
(:func:`agents.train.plan.policy_of`), the command line's choices and help, and the docs read
this registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _no_kwargs(env_id: str, actions: int) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class PolicySpec:
    name: str
    description: str  # one line: what it reads and which game takes it by default
    extractor: str | None  # "module:Class" of the features extractor; None: SB3's CnnPolicy
    # the extractor's own keyword arguments for an env id and its number of actions; it
    # raises ValueError where the policy cannot serve that env
    kwargs: Callable[[str, int], dict[str, Any]] = _no_kwargs


_POLICIES: dict[str, PolicySpec] = {}


def register_policy(
    name: str, description: str, extractor: str | None,
    kwargs: Callable[[str, int], dict[str, Any]] = _no_kwargs,
) -> None:  # fmt: skip
    if name in _POLICIES:
        raise ValueError(f"a policy named {name!r} is registered already")
    _POLICIES[name] = PolicySpec(name, description, extractor, kwargs)


def policy_names() -> tuple[str, ...]:
    """Every registered policy, ``cnn`` first."""
    return tuple(sorted(_POLICIES, key=lambda n: (n != "cnn", n)))


def policy_spec(name: str) -> PolicySpec:
    if name not in _POLICIES:
        raise ValueError(f"policy must be one of {policy_names()}, got {name!r}")
    return _POLICIES[name]


def policies_help() -> str:
    """Each policy and what it is, for the command line's help."""
    return "; ".join(f"{name}: {_POLICIES[name].description}" for name in policy_names())


register_policy("cnn", "a small CNN and a dense head (SB3's CnnPolicy; PPO, MaskablePPO, DQN)",
                None)  # fmt: skip
register_policy(
    "cells", "a logit per cell, read off the board (Minesweeper's default)",
    "agents.nets.board:CellLogitsExtractor",
    lambda env_id, actions: {"actions": actions},
)  # fmt: skip
