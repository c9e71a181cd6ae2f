"""Solve every level of a collection and print the count, times and failures.

    python benchmarks/solve_collection.py ../shared/levels/microban_155.xsb \
        --max-seconds 10 --mode fast [--jobs 2] [--levels 1-50] [--json out.jsonl] \
        [--without goal-macros ...] [--threads 2] [--reference 1000000]

Each level is solved on one core (``--jobs`` runs that many levels side by side, each in
its own process), or with ``--threads`` its searches on that many threads (one level at a
time on as many cores: ``--jobs 1``); more jobs times threads than the machine has cores
draw a warning, since the times then measure the sharing. Every solution is replayed
through the rules before it counts. The collection is read from where it lies; nothing is
copied into the project.

A shared machine's speed swings from one sitting to the next, so a run also times the
same work before and after its levels: the optimal search's first ``--reference`` states
(a million; 0 leaves it out) of a room of this benchmark's own, as many searches at once
as the run keeps cores busy. Two runs' times compare beside their references.

Besides XSB files it reads xsok's level files. The original game's levels (Thinking
Rabbit, 1982; the XSokoban set) ship in Debian's ``xsok`` package as ``Sokoban.def``:

    apt-get download xsok && dpkg-deb -x xsok_*.deb /tmp/xsok
    python benchmarks/solve_collection.py /tmp/xsok/usr/share/games/xsok/Sokoban.def \
        --levels 1-50 --max-seconds 60 --jobs 2

Collections the solver was never tuned on, to measure it on: Debian's ``cavepacker-data``
ships David W. Skinner's Microban II and Sasquatch I-IX a level a file (``.sok``, XSB):

    apt-get download cavepacker-data && dpkg-deb -x cavepacker-data_*.deb /tmp/cp
    for f in /tmp/cp/usr/share/games/cavepacker/maps/microban02_*.sok; do cat "$f"; echo; \
        done > /tmp/microban02.xsb
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from grid_envs.bench import cpu_model
from grid_envs.sokoban import Level, parse_xsb, read_collection, rules
from grid_envs.sokoban.solver import ENGINES, TECHNIQUES, solve
from grid_games.cli.base import count


def read_levels(path: str) -> list[Level]:
    """An XSB collection, or xsok's level file (``;LEVEL n`` headers, ``;`` lines of
    settings) turned into XSB first."""
    text = Path(path).read_text(encoding="latin-1")
    if not re.search(r"^;LEVEL \d+$", text, flags=re.M):
        return read_collection(path)
    parts = re.split(r"^;LEVEL (\d+)\n", text, flags=re.M)[1:]
    blocks = []
    for number, body in zip(parts[::2], parts[1::2], strict=True):
        rows = [line for line in body.splitlines() if line.strip() and not line.startswith(";")]
        blocks.append(f"; {number}\n\n" + "\n".join(rows))
    return parse_xsb("\n\n".join(blocks) + "\n", source=path)


# the reference room (written for this benchmark): eight boxes round a goal room of eight
REFERENCE_ROOM = """
  #########
  #   #   #
  # $ $ $ #
### #   # ####
#  $  @  $   #
#   ##.##  $ #
## $#...#    #
 #  #...# $  #
 #   #.#   ###
 #         #
 ###########
"""


def reference_rate(states: int) -> float:
    """States a second of the optimal search over its first ``states`` states of the
    reference room: the same states on every run (one thread), so the same work. The same
    search runs once untimed first: it loads the compiled code, and the fresh process's
    first touch of as much memory (which a host may back only then) is not timed either,
    so a reference before the levels measures what one after them does."""
    level = parse_xsb(REFERENCE_ROOM, source="the reference room")[0]
    solve(level, mode="optimal", max_seconds=600, node_limit=states)  # untimed
    result = solve(level, mode="optimal", max_seconds=600, node_limit=states)
    return result.nodes / result.seconds


def _reference(states: int, copies: int) -> str:
    """The median rate of ``copies`` reference searches run at once, as a phrase."""
    with ProcessPoolExecutor(max_workers=copies) as pool:
        rates = list(pool.map(reference_rate, [states] * copies))
    return f"{statistics.median(rates):,.0f}"


def level_indices(text: str, count: int) -> list[int]:
    """The 0-based indices of ``text``'s 1-based level numbers (``"1-20,93"``), each
    checked against the collection's ``count`` levels."""
    picked: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi or lo)
        except ValueError:
            raise SystemExit(f"--levels: {part!r} is not a level number or range") from None
        if not 1 <= first <= last <= count:
            raise SystemExit(f"--levels: {part!r} is outside the collection's 1-{count}")
        picked.extend(range(first - 1, last))
    return picked


def _one(job: tuple[str, int, str, float, tuple[str, ...], str, int]) -> dict:
    path, index, mode, limit, without, engine, threads = job
    level = read_levels(path)[index]
    r = solve(
        level, mode=mode, max_seconds=limit, without=without, engine=engine, threads=threads
    )  # fmt: skip
    replay_ok = r.solved and rules.solves(level, r.solution)
    return {
        "level": index + 1, "title": level.title, "status": r.status, "solved": replay_ok,
        "pushes": r.pushes, "moves": r.moves, "nodes": r.nodes, "seconds": round(r.seconds, 3),
        "nodes_per_second": round(r.nodes_per_second), "solution": r.solution,
    }  # fmt: skip


def _arguments() -> argparse.Namespace:
    """The command line, parsed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collection")
    parser.add_argument("--max-seconds", type=float, default=10.0)
    parser.add_argument("--mode", choices=("fast", "optimal"), default="fast")
    parser.add_argument("--jobs", type=count(1), default=1)
    parser.add_argument(
        "--threads", type=count(1), default=1, help="threads a level's searches run on"
    )
    parser.add_argument(
        "--engine", choices=ENGINES, default="compiled",
        help="run the weighted searches compiled (default) or in pure Python",
    )  # fmt: skip
    parser.add_argument("--levels", type=str, default="", help="e.g. 1-20,93")
    parser.add_argument(
        "--reference", type=count(0), default=1_000_000,
        help="states of the reference search timed before and after the levels (0: none)",
    )  # fmt: skip
    parser.add_argument("--json", type=str, default="", help="write one JSON line per level")
    parser.add_argument(
        "--without", action="append", default=[], choices=TECHNIQUES,
        help="leave a technique of fast mode out (repeatable), to measure what it buys",
    )  # fmt: skip
    return parser.parse_args()


def _summary(args: argparse.Namespace, rows: list[dict], reference_line: str) -> None:
    """The run's lines under the levels': the count, the times, the rates (the reference's
    line where the run timed one)."""
    without = tuple(args.without)
    solved = [r for r in rows if r["solved"]]
    times = [r["seconds"] for r in solved]
    nps = [r["nodes_per_second"] for r in rows if r["nodes"] > 100]
    print(f"collection {args.collection}: {len(rows)} levels, mode {args.mode}, "
          f"{args.max_seconds:g} s a level, {args.jobs} job(s), {args.threads} thread(s) a "
          f"level, {args.engine} engine"
          + (f", without {', '.join(without)}" if without else ""))  # fmt: skip
    print(f"solved {len(solved)}/{len(rows)}")
    if times:
        print(f"time of solved levels: median {statistics.median(times):.3f} s, "
              f"max {max(times):.2f} s, total {sum(r['seconds'] for r in rows):.0f} s")  # fmt: skip
    if nps:
        print(f"nodes per second: median {statistics.median(nps):,.0f}")
    if reference_line:
        print(reference_line)
    failed = [f"{r['level']} ({r['status']})" for r in rows if not r["solved"]]
    print("not solved:", ", ".join(failed) or "none")


def main() -> None:
    args = _arguments()
    cores = os.cpu_count() or 1
    if args.jobs * args.threads > cores:
        print(f"warning: {args.jobs} job(s) of {args.threads} thread(s) share {cores} core(s): "
              "the times measure that sharing as well as the solver", file=sys.stderr)  # fmt: skip
    n = len(read_levels(args.collection))
    wanted = level_indices(args.levels, n) if args.levels else list(range(n))
    without = tuple(args.without)
    jobs = [
        (args.collection, i, args.mode, args.max_seconds, without, args.engine, args.threads)
        for i in wanted
    ]
    copies = min(cores, args.jobs * args.threads)
    before = _reference(args.reference, copies) if args.reference else ""
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        rows = []
        for row in pool.map(_one, jobs):
            rows.append(row)
            mark = "ok " if row["solved"] else row["status"]
            print(
                f"{row['level']:>4} {mark:<10} pushes {row['pushes']:>4} nodes {row['nodes']:>8} "
                f"{row['seconds']:>7.2f}s {row['nodes_per_second']:>9,}/s",
                file=sys.stderr,
            )
    after = _reference(args.reference, copies) if args.reference else ""
    if args.json:
        with open(args.json, "w") as fh:
            for row in rows:
                fh.write(json.dumps(row) + "\n")
    reference_line = ""
    if args.reference:
        reference_line = (
            f"reference: {before} states a second before the levels, {after} after (the "
            f"optimal search's first {args.reference:,} states of the reference room, "
            f"{copies} at once, on {cpu_model()})"
        )
    _summary(args, rows, reference_line)


if __name__ == "__main__":
    main()
