"""Minesweeper solver win rates per preset and first-click rule, with 95% intervals.

    python benchmarks/minesweeper_solver.py [--games 1000] [--seed 0] [--rules safe zero] \
        [--presets beginner intermediate expert] [--no-end-game]

Games use seeds ``seed .. seed + games - 1``; the solver reads only the observations. The
compiled walk is loaded before the clock starts.
``--no-end-game`` plays the same boards with the end game guessed by the rule of thumb
instead of searched (what the exact end game changes). ``--losses`` adds a line a row:
how many games were lost to each of the solver's rules, by the rule that chose the
losing move (``MinesweeperSolver.last_choice``), from the same games.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

import gymnasium as gym

from agents import evaluate, make_agent
from grid_envs.minesweeper.placements import warm_up

PRESETS = (
    ("beginner", "GridGames/Minesweeper-v0"),
    ("intermediate", "GridGames/Minesweeper-Intermediate-v0"),
    ("expert", "GridGames/Minesweeper-Expert-v0"),
)


class LostBy:
    """Counts the games lost by the rule that chose the losing move. It takes the hooks
    ``evaluate`` gives a recorder and reads the agent's ``last_choice``; nothing played
    changes."""

    def __init__(self) -> None:
        self.lost: Counter[str] = Counter()
        self.choice: str | None = None

    def describe(self, agent: str, env_kwargs: dict[str, Any]) -> None:
        pass

    def begin(self, env: Any, seed: int) -> bool:
        return True

    def before(self, env: Any, player: Any, observation: Any, action: int) -> None:
        self.choice = player.last_choice(env.unwrapped)

    def after(self, env: Any, reward: float) -> None:
        pass

    def end(self, won: bool, truncated: bool) -> None:
        if not won:
            self.lost[str(self.choice)] += 1

    def line(self) -> str:
        total = sum(self.lost.values())
        if not total:
            return "  lost by: none"
        return "  lost by: " + ", ".join(
            f"{choice} {n} ({n / total:.0%})" for choice, n in self.lost.most_common()
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", nargs="+", default=["safe", "zero"])
    names = [name for name, _ in PRESETS]
    parser.add_argument("--presets", nargs="+", choices=names, default=names)
    parser.add_argument("--no-end-game", action="store_true")
    parser.add_argument("--losses", action="store_true")
    args = parser.parse_args()
    warm_up()  # the compiled walk loaded before any game is timed
    print(
        f"{'rule':<6} {'preset':<13} {'games':>6} {'won':>6} {'win rate':>9}  "
        f"{'95% CI':<17} {'games/s':>8}"
    )
    for rule in args.rules:
        for name, env_id in PRESETS:
            if name not in args.presets:
                continue
            start = time.perf_counter()
            env = gym.make(env_id, first_click=rule)
            agent = make_agent("solver", env, seed=args.seed, end_game=not args.no_end_game)
            lost = LostBy() if args.losses else None
            r = evaluate(env, agent, args.games, args.seed, record=lost)
            rate = args.games / (time.perf_counter() - start)
            lo, hi = r.win_rate_ci
            print(
                f"{rule:<6} {name:<13} {args.games:>6} {r.wins:>6} "
                f"{r.win_rate:>9.2%}  {lo:.2%} - {hi:.2%}  {rate:>8.1f}",
                flush=True,
            )
            if lost is not None:
                print(lost.line(), flush=True)


if __name__ == "__main__":
    main()
