"""The parser built from every command's module, and the one exit path: each failure a line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

import grid_envs
from grid_envs.core import checks
from grid_games.cli import (  # noqa: F401  (each module registers its command)
    bench,
    compare,
    demos,
    evaluate,
    generate,
    iterate,
    listing,
    play,
    solve,
    train,
)
from grid_games.cli.base import ARGUMENTS, COMMANDS

#: the commands in the order ``grid-games --help`` lists them: looking, playing, making
#: levels, learning, measuring
ORDER = ("list", "play", "generate", "train", "compare", "bench", "demos", "eval", "iterate",
         "solve")  # fmt: skip


class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (and the usual exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="grid-games", description="Classic grid games as Gymnasium environments.")
    parser.add_argument(
        "--version", action="version", version=f"grid-games {grid_envs.__version__}"
    )
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error instead of its one line")  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)
    for name in sorted(ARGUMENTS, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER)):
        arguments, options = ARGUMENTS[name]
        arguments(sub.add_parser(name, **options))
    return parser


#: what Ctrl-C leaves behind in each command that writes, when it says nothing itself
KEPT_AT_CTRL_C = {
    "eval": "nothing was written", "compare": "the runs finished so far are in its folder "
    "(rerunning the command goes on from them)", "demos": "no dataset was written",
    "generate": "no file was written", "solve": "the levels before it were printed",
    "bench": "nothing was written", "play": "the game was left", "list": "nothing was written",
}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Every failure is one line on stderr naming the command: an
    expected one (bad arguments, files, folders, models, settings) exits 2, anything else
    1 (a bug: ``--debug`` shows its traceback); Ctrl-C says what was kept and exits 130."""
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt as exc:  # training saves what it has and says where
        said = str(exc) or f"interrupted; {KEPT_AT_CTRL_C.get(args.command, 'nothing saved')}"
        print(f"grid-games {args.command}: {said}", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        if isinstance(exc, (ValueError, OSError, ImportError, checks.NoLevelFound)):
            print(f"grid-games: {exc}", file=sys.stderr)
            return 2
        what = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:400]
        print(f"grid-games {args.command}: {what} (an error of grid-games itself; rerun with "
              f"--debug for where, and report it)", file=sys.stderr)  # fmt: skip
        return 1
