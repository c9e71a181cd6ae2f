"""``grid-games compare``: the main job, every game's baselines against a taught network."""

from __future__ import annotations

import argparse
import sys
import time

from grid_games.cli.base import (
    command,
    count,
    env_id,
    progress_argument,
    refuse,
    scale,
    seed_argument,
    threads_argument,
)


def _compare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--envs", nargs="*", default=None, help="default: one config per game")
    p.add_argument(
        "--budget", type=scale, default=1.0,
        help="scales every game's labelled states and PPO steps (default 1: about 16 min "
        "on 2 cores; 4: four times the training)",
    )  # fmt: skip
    p.add_argument(
        "--timesteps", type=count(1), default=None,
        help="PPO steps per game (default: each game's own, times --budget)",
    )  # fmt: skip
    p.add_argument(
        "--scratch", action="store_true",
        help="also train MaskablePPO from scratch for the taught run's wall time, teaching "
        "included",
    )  # fmt: skip
    p.add_argument("--episodes", type=count(1), default=100, help="evaluation episodes per agent")
    seed_argument(p, "the runs' seed; the held-out episodes are seeded from it")
    p.add_argument("--out", default=None, help="default: compare-DATE-TIME")
    p.add_argument("--no-train", action="store_true", help="baselines only")
    p.add_argument("--force", action="store_true",
                   help="replace the outputs of another compare in --out (the same command "
                   "again goes on from what it finished, without --force)")  # fmt: skip
    threads_argument(p, "torch threads of the training (default: every core this process "
                     "may use); with --precision, what fixes its figures on a machine")  # fmt: skip
    p.add_argument("--precision", choices=("auto", "bf16", "fp32"), default=None,
                   help="the networks' arithmetic (as train's; default auto)")  # fmt: skip
    progress_argument(p)


@command(
    "compare",
    _compare_arguments,
    help="random, the algorithms and a taught-then-tuned policy, every game",
)
def cmd_compare(args: argparse.Namespace) -> int:
    from agents.compare import compare_envs, report, run_compare

    envs = tuple(env_id(e) for e in args.envs) if args.envs else compare_envs()
    out = args.out or time.strftime("compare-%Y%m%d-%H%M%S")
    if args.no_train:
        refuse({"--budget": args.budget != 1.0, "--timesteps": args.timesteps,
                "--scratch": args.scratch, "--threads": args.threads,
                "--precision": args.precision},
               "options of the training --no-train leaves out")  # fmt: skip
    result = run_compare(
        envs, budget=args.budget, timesteps=args.timesteps, episodes=args.episodes,
        seed=args.seed, out=out, train_models=not args.no_train, scratch=args.scratch,
        progress=not args.no_progress, log=lambda msg: print(msg, file=sys.stderr, flush=True),
        threads=args.threads, precision=args.precision or "auto", force=args.force,
    )  # fmt: skip
    print(report(result))
    print(f"\nwritten to {result.out}/: table.md, results.json, results.png, learning_curves.png")
    return 0
