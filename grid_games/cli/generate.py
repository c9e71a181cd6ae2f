"""``grid-games generate``: levels written to a file by a game's generator."""

from __future__ import annotations

import argparse

from grid_envs.core import files
from grid_games.cli.base import command, count, declared_hooks, parse_settings, seed_argument


def _generate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", choices=tuple(declared_hooks("writer")),
                   help="the game whose generated levels to write")  # fmt: skip
    p.add_argument("--out", required=True, help="the file to write")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    seed_argument(p, "the generator's seed")
    p.add_argument("--count", type=count(1), default=None,
                   help="levels in the file (default: the game's own, 10 for a Sokoban "
                   "collection; a Knight map holds one)")  # fmt: skip
    p.add_argument("--rows", type=count(1), default=None,
                   help="the board's rows (default: the generator's own)")  # fmt: skip
    p.add_argument("--cols", type=count(1), default=None,
                   help="the board's columns (default: the generator's own)")  # fmt: skip
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a generator setting, e.g. --set num_boxes=3 --set min_pushes=8 "
                   "(sokoban) or --set loops=0.2 --set monster_density=0.2 (knight)")  # fmt: skip


@command("generate", _generate_arguments, help="write generated levels to a file")
def cmd_generate(args: argparse.Namespace) -> int:
    import numpy as np

    from grid_envs.core.spec import load

    files.check_target(args.out, "--out", args.force)
    settings = parse_settings(args.set)
    for name in ("rows", "cols"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    write = load(declared_hooks("writer")[args.game])
    print(write(args.out, np.random.default_rng(args.seed), args.count, settings))
    return 0
