"""Knight figures: maze generation and Dijkstra times by size (medians of repeats).

python benchmarks/knight_maze.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from grid_envs.knight import maze, solver


def median_time(fn, repeats: int) -> float:
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        fn(r)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    solver.distances(np.zeros((2, 2), np.uint8), np.ones((2, 2)), (0, 0))  # compiled or loaded
    heads = ("generate", "kruskal", "boruvka", "dijkstra", "dial", "compiled")
    print(f"{'size':>11} " + " ".join(f"{h:>10}" for h in heads))
    for n in (10, 100, 1000):
        rep = args.repeats if n < 1000 else max(3, args.repeats // 2)
        rng = np.random.default_rng(0)
        cells = maze.generate(n, n, rng, 0.05)
        costs = np.where(rng.random(cells.shape) < 0.1, 3, 1)

        def gen(r: int, n: int = n, method: str = "auto") -> None:
            maze.generate(n, n, np.random.default_rng(r), 0.05, method=method)

        row = [
            median_time(gen, rep),
            median_time(lambda r, n=n: gen(r, n, "kruskal"), rep),
            median_time(lambda r, n=n: gen(r, n, "boruvka"), rep),
            median_time(lambda r, c=cells, p=costs: solver.dijkstra(c, p, (0, 0)), rep),
            median_time(lambda r, c=cells, p=costs: solver.dial(c, p, (0, 0)), rep),
            median_time(lambda r, c=cells, p=costs: solver.distances(c, p, (0, 0)), rep),
        ]
        print(f"{n:>5}x{n:<5} " + " ".join(f"{t:>9.4f}s" for t in row), flush=True)


if __name__ == "__main__":
    main()
