"""Sokoban figures: generator speed and difficulty, the fewest-moves table's size and
time (what the ``optimal`` teacher builds once a room), and env steps/s next to FrozenLake.

    python benchmarks/sokoban_env.py [--repeats 5] [--bfs-levels 40] [--table-levels 20]

Every timing is the median of ``--repeats`` runs; the env rate is also given as a ratio to
FrozenLake-v1's, measured in the same run (timings on shared machines are noisy).
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import grid_envs  # noqa: F401
from grid_envs.sokoban import SokobanGenerator
from grid_envs.sokoban.bfs import min_pushes, move_distances


def levels_per_second(gen: SokobanGenerator, n: int, repeats: int) -> float:
    rates = []
    for r in range(repeats):
        rng = np.random.default_rng(r)
        start = time.perf_counter()
        for _ in range(n):
            gen.generate(rng)
        rates.append(n / (time.perf_counter() - start))
    return statistics.median(rates)


def steps_per_second(env_id: str, steps: int, repeats: int, masked: bool) -> float:
    env = gym.make(env_id)
    rates = []
    for r in range(repeats):
        rng = np.random.default_rng(r)
        picks = rng.random(steps).tolist()
        _, info = env.reset(seed=r)
        n = int(env.action_space.n)  # type: ignore[attr-defined]
        start = time.perf_counter()
        for u in picks:
            if masked:
                legal = np.flatnonzero(info["action_mask"])
                action = int(legal[int(u * len(legal))])
            else:
                action = int(u * n)
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                _, info = env.reset()
        rates.append(steps / (time.perf_counter() - start))
    return statistics.median(rates)


def table_figures(env_id: str, levels: int) -> str:
    """The fewest-moves table on the first ``levels`` levels of ``env_id``: positions that
    can be solved and seconds to build, median and largest."""
    env = gym.make(env_id)
    sizes, seconds = [], []
    for seed in range(levels):
        env.reset(seed=seed)
        start = time.perf_counter()
        table = move_distances(env.unwrapped.game_state())  # type: ignore[attr-defined]
        seconds.append(time.perf_counter() - start)
        if table is None:
            raise SystemExit(f"{env_id} level {seed}: too many positions for a table")
        sizes.append(len(table))
    return (
        f"{statistics.median(sizes):,.0f} positions (largest {max(sizes):,}), "
        f"{statistics.median(seconds):.3f} s (slowest {max(seconds):.3f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--levels", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--bfs-levels", type=int, default=40)
    parser.add_argument("--table-levels", type=int, default=20)
    args = parser.parse_args()

    print("generator (one core, median of repeats)")
    for rows, cols, boxes in ((10, 10, 4), (7, 7, 2)):
        gen = SokobanGenerator(rows, cols, boxes)
        rate = levels_per_second(gen, args.levels, args.repeats)
        rng = np.random.default_rng(123)
        sample = [gen.generate(rng) for _ in range(args.bfs_levels)]
        optimal = [p for p in (min_pushes(g.level) for g in sample) if p is not None]
        pct = np.percentile(optimal, [10, 25, 50, 75, 90])
        print(
            f"  {rows}x{cols}, {boxes} boxes: {rate:,.0f} levels/s; optimal pushes over "
            f"{len(sample)} levels (exhaustive BFS): min {min(optimal)}, p10/25/50/75/90 "
            f"{'/'.join(f'{p:g}' for p in pct)}, max {max(optimal)}; "
            f"certificate pushes median {np.median([g.pushes for g in sample]):g}"
        )

    print(f"fewest-moves table (one core, {args.table_levels} levels, median)")
    for env_id in ("GridGames/Sokoban-v0", "GridGames/Sokoban-Small-v0"):
        print(f"  {env_id}: {table_figures(env_id, args.table_levels)}")

    print("single env, random agent, resets included (median of repeats)")
    frozen = steps_per_second("FrozenLake-v1", args.steps, args.repeats, masked=False)
    print(f"  FrozenLake-v1: {frozen:,.0f} steps/s (reference)")
    for env_id in ("GridGames/Sokoban-v0", "GridGames/Sokoban-Small-v0"):
        rate = steps_per_second(env_id, args.steps, args.repeats, masked=True)
        print(f"  {env_id}: {rate:,.0f} steps/s = {rate / frozen:.2f}x FrozenLake")


if __name__ == "__main__":
    main()
