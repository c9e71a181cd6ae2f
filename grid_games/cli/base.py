"""What every command shares: the registry of commands, the argument types (whole numbers,
numbers above 0), the env id and ``--set`` readers, and the options several commands
take."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

import grid_envs
from grid_envs.core import checks

Arguments = Callable[[argparse.ArgumentParser], None]
#: each command's handler, and the function that adds its arguments with its parser's options
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}
ARGUMENTS: dict[str, tuple[Arguments, dict[str, Any]]] = {}


def command(
    name: str, arguments: Arguments, **options: Any
) -> Callable[[Callable[[argparse.Namespace], int]], Any]:
    """Register a command: its handler (the decorated function), the function that adds its
    arguments (written just above it) and ``add_parser``'s options (its help)."""

    def deco(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = fn
        ARGUMENTS[name] = (arguments, options)
        return fn

    return deco


def env_id(name: str) -> str:
    """Accept ``Sokoban-v0`` as well as ``GridGames/Sokoban-v0``; reject unknown ids."""
    full = name if "/" in name else f"GridGames/{name}"
    if full not in gym.registry:
        known = ", ".join(sorted(grid_envs.ENVS))
        raise ValueError(f"unknown env {name!r}; known: {known}")
    return full


def parse_settings(items: Sequence[str], env: str | None = None) -> dict[str, Any]:
    """``--set key=value`` pairs; values are read as JSON when they parse, else as text.
    With ``env``, every key must be an argument that env takes."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set expects key=value, got {item!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    if "render_mode" in out:
        raise ValueError(
            "--set render_mode: the command chooses how the game is drawn (play: --window for "
            "a window; eval: --record for a video or a replay)"
        )
    return checks.env_kwargs(env, out) if env else out


#: the largest whole number an option takes (a seed, a count): numpy's and torch's int64
MOST = 2**63 - 1


def count(least: int, most: int = MOST) -> Callable[[str], int]:
    """An argparse type: a whole number from ``least`` to ``most``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
        if value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most:,}, got {value:,}")
        return value

    parse.__name__ = f"a whole number >= {least}"
    return parse


def above_zero(noun: str) -> Callable[[str], float]:
    """An argparse type: a finite ``noun`` (e.g. "number of seconds") above 0."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {noun}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"must be a finite {noun} above 0, got {text}")
        return value

    parse.__name__ = f"a {noun} above 0"
    return parse


def number(least: float, most: float | None = None) -> Callable[[str], float]:
    """An argparse type: a finite number from ``least`` to ``most``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < least or (most is not None and value > most):
            top = f" and at most {most:g}" if most is not None else ""
            raise argparse.ArgumentTypeError(f"must be at least {least:g}{top}, got {text}")
        return value

    parse.__name__ = f"a number >= {least:g}"
    return parse


class _Renamed(argparse.Action):
    """A flag of an earlier version: refused with the name it has now."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        parser.error(f"{option} is now called {self.default}")


def renamed_flag(p: argparse.ArgumentParser, old: str, new: str) -> None:
    """Refuse ``old`` in one line naming ``new`` (for one minor version after the rename)."""
    p.add_argument(old, action=_Renamed, default=new, nargs="?", help=argparse.SUPPRESS)


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def byte_size(text: str) -> int:
    """An argparse type: a size in bytes above 0, as ``123456``, ``512M``, ``4G`` or
    ``1.5GiB`` (K, M, G, T are powers of 1024)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(?:i?B)?\s*", text, flags=re.I)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 512M, 4G)")
    size = int(float(match[1]) * _UNITS[match[2].upper()])
    if size <= 0:
        raise argparse.ArgumentTypeError(f"must be a size above 0, got {text}")
    return size


seconds = above_zero("number of seconds")
scale = above_zero("factor")


def capped(asked: int, flag: str, spare: int = 0) -> int:
    """``asked`` processes, at most the cores this process may use (less ``spare``), with a
    one-line note on stderr where that is fewer."""
    from grid_envs.core.machine import capped_workers

    workers, note = capped_workers(asked, flag, spare)
    if note:
        print(f"grid-games: {note}", file=sys.stderr)
    return workers


def refuse(options: dict[str, Any], why: str) -> None:
    """Refuse, in one line that names them, the options given (a value other than None or
    False) that ``why`` says do not apply here."""
    given = [flag for flag, value in options.items() if value is not None and value is not False]
    if given:
        raise ValueError(f"{', '.join(given)}: {why}")


def agent_names_help() -> str:
    from agents.registry import agent_names

    return ", ".join(agent_names()) + "; each plays the games it is written for"


def env_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("env", help="env id, e.g. Sokoban-v0 or GridGames/Sokoban-v0")


def set_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="an env argument, e.g. --set rows=8 or --set levels=my.xsb "
                   "(repeatable; a value is read as JSON where it parses)")  # fmt: skip


def seed_argument(p: argparse.ArgumentParser, help: str, default: int | None = 0) -> None:
    p.add_argument("--seed", type=count(0), default=default, help=help)


def json_argument(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--json", action="store_true", help=help)


def threads_argument(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--threads", type=count(1), default=None, help=help)


def progress_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def declared_hooks(hook: str) -> dict[str, str]:
    """Each game whose spec declares ``hook`` (``writer``, ``solver``): name -> target."""
    return {spec.name: getattr(spec, hook) for spec in grid_envs.game_specs()
            if getattr(spec, hook)}  # fmt: skip


def model_file(model: str, env: str) -> str:
    """A ``--model`` or ``--agent`` given as a model file: ``pretrained`` is the network
    the package ships for ``env`` (the one place that word is read), anything else the path
    as given."""
    if model != "pretrained":
        return model
    from agents.pretrained import model_path

    return str(model_path(env))
