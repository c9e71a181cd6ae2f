"""``grid-games bench``: env steps a second, against FrozenLake's."""

from __future__ import annotations

import argparse
import json
import sys

from grid_games.cli.base import command, count, env_id, json_argument, seconds


def _bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--envs", nargs="*", default=None, help="default: the five classic ids")
    p.add_argument("--batches", nargs="+", type=count(1), default=[1, 64, 1024, 4096],
                   help="batch sizes to time (default: 1 64 1024 4096)")  # fmt: skip
    p.add_argument("--seconds", type=seconds, default=1.0, help="length of one timed window")
    p.add_argument("--repeats", type=count(1), default=3, help="windows per figure (median)")
    json_argument(p, "print the figures as JSON")


@command("bench", _bench_arguments, help="steps/s single and batched, resets/s, next to FrozenLake")
def cmd_bench(args: argparse.Namespace) -> int:
    from grid_envs.bench import bench, bench_envs, table

    envs = tuple(env_id(e) for e in args.envs) if args.envs else bench_envs()
    report = bench(
        envs, tuple(args.batches), args.seconds, args.repeats,
        log=None if args.json else lambda msg: print(msg, file=sys.stderr, flush=True),
    )  # fmt: skip
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0
