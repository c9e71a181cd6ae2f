"""Lines98 baselines over seeded games: score, balls cleared and moves survived.

    python benchmarks/lines98_agents.py [--games 200] [--agents random greedy lookahead]
                                        [--jobs 2] [--max-moves 10000]

Game ``g`` is ``GridGames/Lines98-v0`` reset with seed ``g`` and the agent seeded with ``g``;
a game ends when the board is full (or at ``--max-moves``, counted and reported).
"""

from __future__ import annotations

import argparse
import statistics
import time
from multiprocessing import Pool

import gymnasium as gym
import numpy as np

import grid_envs  # noqa: F401
from agents import make_agent


def play(job: tuple[str, int, int]) -> tuple[int, int, int, bool, float]:
    name, seed, max_moves = job
    env = gym.make("GridGames/Lines98-v0", max_episode_steps=max_moves)
    agent = make_agent(name, env, seed=seed)
    obs, info = env.reset(seed=seed)
    start = time.perf_counter()
    while True:
        obs, _, terminated, truncated, info = env.step(agent.predict(obs)[0])
        if terminated or truncated:
            break
    seconds = time.perf_counter() - start
    return info["score"], info["balls_cleared"], info["moves"], truncated, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--agents", nargs="+", default=["random", "greedy", "lookahead"])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-moves", type=int, default=10_000)
    args = parser.parse_args()
    means: dict[str, float] = {}
    print(f"{args.games} seeded games of GridGames/Lines98-v0 (9x9, 7 colours, lines of 5)")
    print("| agent | score (mean, median) | balls cleared | moves survived (mean, median, max) "
          "| capped | ms/move |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name in args.agents:
        jobs = [(name, g, args.max_moves) for g in range(args.games)]
        with Pool(args.jobs) as pool:
            rows = pool.map(play, jobs)
        score, balls, moves, capped, seconds = (np.array(x) for x in zip(*rows, strict=True))
        means[name] = float(score.mean())
        print(
            f"| {name} | {score.mean():.1f}, {statistics.median(score.tolist()):.0f} "
            f"| {balls.mean():.1f} | {moves.mean():.1f}, {statistics.median(moves.tolist()):.0f},"
            f" {moves.max()} | {int(capped.sum())} | {1000 * seconds.sum() / moves.sum():.2f} |",
            flush=True,
        )
    if "random" in means and means["random"] > 0:
        for name, value in means.items():
            if name != "random":
                print(f"{name}: {value / means['random']:.0f}x the random agent's mean score")


if __name__ == "__main__":
    main()
