"""The Knight's files for the command line: ``grid-games generate knight`` writes a
generated maze as a map file, ``grid-games solve --game knight`` solves map files. Here,
above the env, the solver and the generator, so that none of them imports the env."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from grid_envs.core import checks, files
from grid_envs.knight.env import KnightEnv
from grid_envs.knight.generator import KnightGenerator
from grid_envs.knight.levels import load, sample_paths, save
from grid_envs.knight.solver import cheapest_route


def write_generated(
    path: str, rng: np.random.Generator, count: int | None, settings: dict[str, Any]
) -> str:
    """``grid-games generate knight``: one level of a :class:`KnightGenerator` with
    ``settings`` written as a map file (a file holds one level)."""
    if count not in (None, 1):
        raise ValueError(f"a Knight map file holds one level; --count must be 1, got {count}")
    settings = checks.settings_of("the Knight generator", KnightGenerator, settings)
    level = KnightGenerator(**settings).generate(rng)
    with files.written(Path(path)) as partial:  # read back as eval and solve read it
        save(partial, level)
        load(partial)
    return f"wrote {path}: {level.shape[0]}x{level.shape[1]}, cheapest route {level.cheapest}"


def solve_levels(
    path: str, level: int | None, max_seconds: float, mode: str
) -> Iterator[dict[str, Any]]:
    """``grid-games solve --game knight``: the cheapest route of each map (a map file, or
    ``samples`` for the 10 shipped), replayed through the env at the exact energy before it
    is reported. Dijkstra is exact and fast, so ``max_seconds`` and ``mode`` change nothing
    (and it takes no ``memory`` bound or ``progress`` lines)."""
    paths = sample_paths() if path == "samples" else [Path(path)]
    if level is not None and not 1 <= level <= len(paths):
        raise ValueError(f"--level must be between 1 and {len(paths)}, got {level}")
    for n in [level] if level is not None else range(1, len(paths) + 1):
        start = time.perf_counter()
        maze = load(paths[n - 1])
        route = cheapest_route(maze)
        seconds = time.perf_counter() - start
        env = KnightEnv(levels=maze, energy_slack=1.0)
        env.reset(seed=0)
        for action in route:
            env.step(action)
        if not env.won:  # never report a route that fails
            raise RuntimeError(f"level {n}: the cheapest route does not reach the exit")
        yield {"level": n, "title": paths[n - 1].name, "solved": True, "status": "solved",
               "solution": "".join("udlr"[a] for a in route), "cost": maze.cheapest,
               "moves": len(route), "seconds": round(seconds, 4)}  # fmt: skip
