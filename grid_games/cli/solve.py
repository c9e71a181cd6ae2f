"""``grid-games solve``: a game's solver over the levels of a file."""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from typing import Any

from grid_games.cli.base import (
    byte_size,
    command,
    count,
    declared_hooks,
    json_argument,
    renamed_flag,
    seconds,
)


def _solve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("levels", help="a level file: an XSB file (one level or a collection) for "
                   "sokoban, a map file or samples for knight")  # fmt: skip
    p.add_argument("--game", choices=tuple(declared_hooks("solver")), default="sokoban",
                   help="the game whose levels the file holds (default: sokoban)")  # fmt: skip
    p.add_argument("--level", type=count(1), default=None, help="1-based level number")
    p.add_argument("--max-seconds", type=seconds, default=10.0, help="seconds per level")
    renamed_flag(p, "--time-limit", "--max-seconds")
    p.add_argument("--mode", choices=("fast", "optimal"), default="fast",
                   help="sokoban: fast, any solution; optimal, the fewest pushes")  # fmt: skip
    p.add_argument("--memory", type=byte_size, default=None,
                   help="the memory a level's search may take, e.g. 4G or 512M (default: "
                   "a quarter of the memory free); past it the search gives up")  # fmt: skip
    p.add_argument("--threads", type=count(1), default=1,
                   help="sokoban: run the searches of a level on this many threads, for as "
                   "many free cores (default 1: the same states on every run)")  # fmt: skip
    p.add_argument("--quiet", action="store_true",
                   help="no progress lines (every 5 s on stderr while a search runs)")  # fmt: skip
    json_argument(p, "one JSON object per level")


@command("solve", _solve_arguments, help="solve level files with the game's own algorithm")
def cmd_solve(args: argparse.Namespace) -> int:
    from grid_envs.core.spec import load

    solve = load(declared_hooks("solver")[args.game])
    # a game's solver takes the memory bound and the progress lines where it can use them
    takes = inspect.signature(solve).parameters
    if args.memory is not None and "memory" not in takes:
        raise ValueError(f"--memory: the {args.game} solver takes no memory bound")
    if args.threads != 1 and "threads" not in takes:
        raise ValueError(f"--threads: the {args.game} solver runs on one thread")
    options = {
        "memory": args.memory, "progress": None if args.quiet else _progress,
        "threads": args.threads,
    }  # fmt: skip
    rows = solve(args.levels, args.level, args.max_seconds, args.mode,
                 **{k: v for k, v in options.items() if k in takes})  # fmt: skip
    if args.json:
        done = []
        for row in rows:
            print(json.dumps(row), flush=True)
            done.append(row)
    elif args.level is not None:
        done = list(rows)
        _print_solved(done[0])
    else:
        done = list(_rows_as_they_come(rows))
        _print_table(done, args)
    last = done[-1] if done else {}
    if last.get("reason") == "interrupted":
        raise KeyboardInterrupt(
            f"interrupted in level {last['level']} after {last['nodes']:,} states "
            f"({last['seconds']:.1f} s); the levels before it were printed"
        )
    return 0


def _progress(level: int, line: str) -> None:
    print(f"level {level}: {line.strip()}", file=sys.stderr, flush=True)


def _figures(row: dict[str, Any]) -> dict[str, Any]:
    """A row's game-specific numbers (pushes, moves, nodes; cost, moves)."""
    shared = {"level", "title", "solved", "status", "solution", "seconds", "mode", "reason"}
    return {k: v for k, v in row.items() if k not in shared and isinstance(v, int)}


def _print_solved(row: dict[str, Any]) -> None:
    print(f"level {row['level']} {row['title']!r}: {row['status']}")
    figures = "  ".join(f"{k} {v}" for k, v in _figures(row).items())
    print(f"{figures}  {row['seconds']:.3f} s")
    print(row["solution"] if row["solved"] else row.get("reason", ""))


def _rows_as_they_come(rows: Any) -> Any:
    """Print each level's line as it is solved, then hand the row on."""
    header = None
    for row in rows:
        if header is None:
            header = ["level", "status", *_figures(row), "seconds"]
            print("{:>5}  {:<10}".format(*header[:2]) + "".join(f" {h:>9}" for h in header[2:])
                  + "  title")  # fmt: skip
        numbers = "".join(f" {v:>9}" for v in _figures(row).values())
        print(f"{row['level']:>5}  {row['status']:<10}{numbers} {row['seconds']:>9.3f}  "
              f"{str(row['title'])[:30]}", flush=True)  # fmt: skip
        yield row


def _print_table(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    solved = [row for row in rows if row["solved"]]
    times = sorted(row["seconds"] for row in solved)
    print(f"solved {len(solved)}/{len(rows)} ({args.mode}, {args.max_seconds:g} s a level)")
    if times:
        print(f"median {times[len(times) // 2]:.3f} s, slowest {times[-1]:.3f} s")
    failed = [str(row["level"]) for row in rows if not row["solved"]]
    print("not solved:", ", ".join(failed) or "none")
