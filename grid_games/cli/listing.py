"""``grid-games list``: the registered env ids."""

from __future__ import annotations

import argparse

import grid_envs
from grid_games.cli.base import command


def _list_arguments(p: argparse.ArgumentParser) -> None:
    """It takes none."""


@command("list", _list_arguments, help="list the registered env ids")
def cmd_list(args: argparse.Namespace) -> int:
    width = max(len(i) for i in grid_envs.ENVS)
    for env, (_, steps, _, summary) in grid_envs.ENVS.items():
        limit = f"{steps} steps" if steps else "no limit"
        print(f"{env:<{width}}  {summary} ({limit})")
    return 0
