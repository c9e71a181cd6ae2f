"""Pikachu planner on random classic boards (9x16, 36 kinds x 4), against playout baselines.

    python benchmarks/pikachu_planner.py [--boards 100] [--first 0] [--max-seconds 1]
                                         [--proof-time 10]

Board ``s`` (``--first`` to ``--first + --boards - 1``) is
``random_board(9, 16, 36, default_rng(s))``. Baselines: one random greedy playout (a
uniformly random removable pair each step, no reshuffle) and the best of 20.
Boards the planner neither clears nor proves unsolvable in ``--max-seconds`` get a second
search of ``--proof-time`` seconds.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from agents.evaluation import wilson_interval
from grid_envs.pikachu.paths import removable_pairs
from grid_envs.pikachu.rules import random_board
from grid_envs.pikachu.solver import plan, remove


def random_playout(board: np.ndarray, rng: np.random.Generator) -> bool:
    while board.any():
        options = removable_pairs(board)
        if not options:
            return False
        board = remove(board, options[int(rng.integers(len(options)))], "none")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--boards", type=int, default=100)
    parser.add_argument("--first", type=int, default=0, help="seed of the first board")
    parser.add_argument("--max-seconds", type=float, default=1.0)
    parser.add_argument("--proof-time", type=float, default=10.0)
    args = parser.parse_args()
    status: dict[str, int] = {}
    times: list[float] = []
    second: dict[str, int] = {}
    one = best20 = 0
    undecided: list[int] = []
    for s in range(args.first, args.first + args.boards):
        board = random_board(9, 16, 36, np.random.default_rng(s))
        r = plan(board, max_seconds=args.max_seconds)
        status[r.status] = status.get(r.status, 0) + 1
        times.append(r.seconds)
        if r.status == "gave_up" and args.proof_time > 0:
            r2 = plan(board, max_seconds=args.proof_time)
            second[r2.status] = second.get(r2.status, 0) + 1
            if r2.status == "gave_up":
                undecided.append(s)
        rng = np.random.default_rng(10_000 + s)
        wins = [random_playout(board, rng) for _ in range(20)]
        one += wins[0]
        best20 += any(wins)
        print(f"board {s}: {r.status} in {r.seconds:.2f} s", flush=True)
    n = args.boards
    print(
        f"boards: {n} random 9x16 deals with 36 kinds x 4, seeds {args.first}-{args.first + n - 1}"
    )
    share = {k: f"{v / n:.0%}" for k, v in status.items()}
    print(f"planner, {args.max_seconds:g} s: {share}; median {statistics.median(times):.2f} s")
    if second:
        n_first = status.get("gave_up", 0)
        print(f"second search of {args.proof_time:g} s on the {n_first} undecided: {second}")
        print(f"undecided after it: boards {undecided}")
    proved = status.get("unsolvable", 0) + second.get("unsolvable", 0)
    lo, hi = wilson_interval(proved, n)
    print(
        f"proved unsolvable in all: {proved}/{n} = {proved / n:.0%} (95% CI {lo:.0%}-{hi:.0%});"
        f" so at most {1 - proved / n:.0%} of these boards can be cleared"
    )
    print(f"random greedy playout: {one / n:.0%} cleared; best of 20: {best20 / n:.0%}")


if __name__ == "__main__":
    main()
