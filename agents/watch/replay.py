"""The HTML replay: one self-contained file (``replay.html`` with the recording inside it as
JSON, its frames as PNG data), which any browser opens with nothing fetched.

It shows the board as the game draws it, scaled up; the move played and its reward; the
return; and what the agent weighed for the next move: its moves with their weights, the
position's value, its figures, and over the board its heat map (mine probabilities), its
planned route and the cells of the moves. A slider, buttons and the keys step through it
(left and right arrows, space to play and pause, Home and End, PageUp and PageDown between
episodes). :func:`replay_data` is the JSON it shows, which tests read the page against.
"""

from __future__ import annotations

import base64
import io
import json
import math
from importlib import resources
from typing import Any

import numpy as np

import grid_envs
from agents.watch.record import RecordedStep, Recording, finite_or_none, scale_of


def png(frame: np.ndarray) -> str:
    """``frame`` as a PNG data URL."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _plain(value: Any) -> Any:
    """A fact's value as JSON holds it: numbers (finite, else their words) and text."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return round(float(value), 4) if math.isfinite(value) else str(value)
    return str(value)


def _step(step: RecordedStep) -> dict[str, Any]:
    th = step.thought
    heat = None
    if th.heat is not None:
        heat = [[None if not np.isfinite(p) else round(float(p), 4) for p in row]
                for row in np.asarray(th.heat, dtype=np.float64)]  # fmt: skip
    return {
        "action": step.action, "text": step.text, "cells": [list(c) for c in step.cells],
        "reward": step.reward, "total": step.total, "illegal": step.illegal,
        "thought": {
            "moves": [[text, weight, [list(c) for c in cells]] for text, (_, weight), cells
                      in zip(step.move_texts, th.moves, step.move_cells, strict=True)],
            "weight": th.weight, "value": finite_or_none(th.value),
            "facts": [[name, _plain(value)] for name, value in th.facts.items()],
            "heat": heat, "heat_name": th.heat_name, "path": [list(c) for c in th.path],
        },
    }  # fmt: skip


def replay_data(recording: Recording) -> dict[str, Any]:
    """The recording as the page reads it (frames as PNG data URLs)."""

    first = recording.episodes[0].frames[0]
    settings = ", ".join(f"{k}={v!r}" for k, v in recording.env_kwargs.items())
    return {
        "env": recording.env_id, "agent": recording.agent,
        "subtitle": f"{len(recording.episodes)} episode(s)"
        + (f", settings {settings}" if settings else "")
        + f"; recorded with grid-games {grid_envs.__version__}",
        "board": list(recording.board), "offset": list(recording.offset),
        "tile": recording.tile, "frame": list(first.shape[:2]), "scale": scale_of(first),
        "episodes": [
            {"seed": e.seed, "won": e.won, "truncated": e.truncated, "return": e.total,
             "frames": [png(f) for f in e.frames], "steps": [_step(s) for s in e.steps]}
            for e in recording.episodes
        ],
    }  # fmt: skip


def html(recording: Recording) -> str:
    """The replay page of ``recording``."""
    import html as escape

    template = resources.files("agents.watch").joinpath("replay.html").read_text("utf-8")
    data = json.dumps(replay_data(recording), separators=(",", ":"))
    title = escape.escape(f"{recording.agent} on {recording.env_id}: GridGames replay")
    # "</" would end the script element the data sits in
    return template.replace("__TITLE__", title).replace("__DATA__", data.replace("</", "<\\/"))
