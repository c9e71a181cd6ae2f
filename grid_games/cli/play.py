"""``grid-games play``: a person plays in the terminal or a window."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import gymnasium as gym

from grid_envs.core.base_env import GridEnv
from grid_games.cli.base import (
    command,
    env_argument,
    env_id,
    parse_settings,
    seed_argument,
    set_argument,
)
from grid_games.terminal import play_terminal


class _KeysHelp(argparse.HelpFormatter):
    """``play --help`` ends with each game's keys (read from the envs only when asked)."""

    def format_help(self) -> str:
        from grid_games.terminal import keys_by_game

        return super().format_help() + "\n" + keys_by_game() + "\n"


def play_window(env: gym.Env[Any, Any], base: GridEnv, seed: int | None) -> int:
    env.reset(seed=seed)
    names = {"escape": "q", "backspace": "u"}
    while True:
        for key in base.window_keys():
            key = names.get(key, key)
            if key in ("quit", "q"):
                return 0
            if key == "r":
                env.reset(seed=seed)
                continue
            action = base.action_for_key(key)
            if action is not None:
                _, _, terminated, truncated, _ = env.step(action)
                if terminated or truncated:
                    env.reset()
        env.render()


def _play_arguments(p: argparse.ArgumentParser) -> None:
    env_argument(p)
    seed_argument(p, "the seed of the first game (default: a random one)", default=None)
    p.add_argument("--window", action="store_true", help="a pygame window (needs [human])")
    set_argument(p)


@command(
    "play",
    _play_arguments,
    help="play an env yourself, in the terminal or a window",
    formatter_class=_KeysHelp,
)
def cmd_play(args: argparse.Namespace) -> int:
    name = env_id(args.env)
    kwargs = parse_settings(args.set, name)
    if args.window:
        from grid_envs.core.render import no_display

        missing = no_display()
        if missing:
            raise ValueError(f"--window: {missing}; leave --window out to play in the terminal")
    mode = "human" if args.window else "ansi"
    env = gym.make(name, render_mode=mode, **kwargs)
    base = env.unwrapped
    assert isinstance(base, GridEnv)
    try:
        if args.window:
            return play_window(env, base, args.seed)
        return play_terminal(env, base, args.seed, sys.stdin)
    finally:
        env.close()
