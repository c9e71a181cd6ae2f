"""``grid-games iterate``: expert iteration, a network learning from its own search."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from grid_games.cli.base import (
    above_zero,
    capped,
    command,
    count,
    env_argument,
    env_id,
    model_file,
    renamed_flag,
    seed_argument,
    threads_argument,
)


def _iterate_arguments(p: argparse.ArgumentParser) -> None:
    from agents.search import VARIANTS

    env_argument(p)
    p.add_argument("--model", required=True, metavar="PATH",
                   help="the model.zip to start from (a taught run's), or pretrained")  # fmt: skip
    p.add_argument("--simulations", type=count(1), default=32, help="search simulations a move")
    p.add_argument("--variant", choices=VARIANTS, default="gumbel",
                   help="the search that plays (levin, lds, exact: deterministic games; "
                   "see eval --variant)")  # fmt: skip
    p.add_argument("--rounds", type=count(1), default=4, help="play-then-learn rounds")
    p.add_argument("--episodes", type=count(1), default=64, help="searched episodes a round")
    p.add_argument("--epochs", type=count(1), default=2,
                   help="learning passes over the kept positions a round")  # fmt: skip
    p.add_argument("--window", type=count(1), default=2,
                   help="rounds of positions kept for learning")  # fmt: skip
    p.add_argument("--lr", type=above_zero("step size"), default=1e-3, help="learning's step")
    p.add_argument("--eval-episodes", type=count(0), default=50,
                   help="validation episodes of the network alone after each round")  # fmt: skip
    p.add_argument("--workers", type=count(1), default=1,
                   help="processes that play each round, one per core")  # fmt: skip
    threads_argument(p, "torch threads of the learning step (default: every core)")
    renamed_flag(p, "--time-limit", "--max-seconds")
    p.add_argument("--max-seconds", type=count(1), default=None, metavar="SECONDS",
                   help="stop after the round in play once this much time has passed")  # fmt: skip
    seed_argument(p, "the rounds' episodes follow it")
    p.add_argument("--out", default=None, help="run folder; rerunning it goes on from it")


@command(
    "iterate",
    _iterate_arguments,
    help="expert iteration: a search guided by the network plays, the network learns "
    "from its choices and outcomes, round after round",
)
def cmd_iterate(args: argparse.Namespace) -> int:
    from agents.search.expert import IterationConfig, iterate

    name = env_id(args.env)
    start = model_file(args.model, name)
    if not Path(start).is_file():
        raise ValueError(f"--model {start!r}: no such model file")
    config = IterationConfig(
        env_id=name, start=start, simulations=args.simulations, variant=args.variant,
        rounds=args.rounds, episodes=args.episodes, epochs=args.epochs, window=args.window,
        lr=args.lr, eval_episodes=args.eval_episodes, seed=args.seed,
        workers=capped(args.workers, "--workers"),
        threads=args.threads, max_seconds=args.max_seconds,
    )  # fmt: skip
    out = args.out or f"runs/{name.split('/')[1]}-iterate-s{args.seed}"

    def log(line: dict[str, Any]) -> None:
        alone = "-"
        if line.get("policy_win_rate") is not None:
            alone = f"{line['policy_win_rate']:.0%} (return {line['policy_return']:.2f})"
        print(
            f"round {line['round']}: {line['positions']} positions, search won "
            f"{line['search_win_rate']:.0%} (return {line['search_return']:.2f}), network "
            f"alone {alone}, {line['seconds']:.0f} s",
            file=sys.stderr, flush=True,
        )  # fmt: skip

    result = iterate(config, out, log=log)
    if result.already_done:
        print(f"{out} already holds {len(result.rounds)} finished rounds: nothing redone; ask "
              f"for more with --rounds to go on from them")  # fmt: skip
    else:
        print(f"{len(result.rounds)} rounds in {result.seconds:.0f} s")
    print(f"model: {result.model_path}  rounds: {Path(out) / 'rounds.json'}")
    return 0
