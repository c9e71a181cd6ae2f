"""Minesweeper solver win rates per preset and first-click rule, with 95% intervals.

    python benchmarks/minesweeper_solver.py [--games 1000] [--seed 0] [--rules safe zero]

Games use seeds ``seed .. seed + games - 1``; the solver reads only the observations.
"""

from __future__ import annotations

import argparse
import time

from agents import evaluate

PRESETS = (
    ("beginner", "GridGames/Minesweeper-v0"),
    ("intermediate", "GridGames/Minesweeper-Intermediate-v0"),
    ("expert", "GridGames/Minesweeper-Expert-v0"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", nargs="+", default=["safe", "zero"])
    args = parser.parse_args()
    print(f"{'rule':<6} {'preset':<13} {'games':>6} {'win rate':>9}  {'95% CI':<15} {'games/s':>8}")
    for rule in args.rules:
        for name, env_id in PRESETS:
            start = time.perf_counter()
            r = evaluate(env_id, "solver", args.games, args.seed, {"first_click": rule})
            rate = args.games / (time.perf_counter() - start)
            lo, hi = r.win_rate_ci
            print(
                f"{rule:<6} {name:<13} {args.games:>6} {r.win_rate:>9.1%}  "
                f"{lo:.1%} - {hi:.1%}  {rate:>8.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
