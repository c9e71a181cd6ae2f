"""The networks behind the reference results, shipped with the package.

Each registered id that has one keeps a folder here named after it (``Sokoban-v0/``)
holding ``model.zip`` (an ordinary stable-baselines3 model) and ``settings.json`` (the
settings it was trained with, and under ``"reproduce"`` the commands that made it). They
play with no training and nothing fetched: ``grid-games eval Sokoban-v0 --agent
pretrained`` (the network alone) and ``--agent search --model pretrained`` (the network
guiding a search).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).parent


def available() -> list[str]:
    """The env ids that have a shipped model."""
    return sorted(f"GridGames/{p.parent.name}" for p in FOLDER.glob("*/model.zip"))


def model_path(env_id: str) -> Path:
    """The shipped model of ``env_id``; a ``ValueError`` naming the ids that have one."""
    path = FOLDER / env_id.split("/")[-1] / "model.zip"
    if not path.is_file():
        have = ", ".join(available()) or "none"
        raise ValueError(f"no pretrained model for {env_id}; there is one for: {have}")
    return path


def card(env_id: str) -> dict[str, Any]:
    """The shipped model's settings, with the commands that reproduce it."""
    settings: dict[str, Any] = json.loads((model_path(env_id).parent / "settings.json").read_text())
    return settings


def ship(
    model: str | Path, env_id: str, reproduce: list[str], smoke: dict[str, Any],
    results: dict[str, Any] | None = None,
) -> Path:  # fmt: skip
    """Copy a trained ``model`` (with its run's settings) into the package as ``env_id``'s
    shipped model; its card records the commands that ``reproduce`` it, the ``smoke``
    check the tests run (``{"episodes": 20, "wins_at_least": k}``: the network alone on
    the held-out seeds from 1,000,000) and the reference ``results`` measured with it."""
    import shutil

    from agents.train.runs import settings_of

    settings = settings_of(model)
    if settings.get("env_id") != env_id:
        raise ValueError(f"{model} was trained on {settings.get('env_id')}, not {env_id}")
    folder = FOLDER / env_id.split("/")[-1]
    folder.mkdir(exist_ok=True)
    shutil.copyfile(model, folder / "model.zip")
    card = {**settings, "reproduce": reproduce, "smoke": smoke, "results": results or {}}
    (folder / "settings.json").write_text(json.dumps(card, indent=2) + "\n")
    return folder
