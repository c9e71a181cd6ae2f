"""Sokoban's files for the command line: ``grid-games generate sokoban`` writes generated
levels as an XSB collection, ``grid-games solve`` solves the levels of one. Here, above
the solver and the generator, so that neither hosts a command."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from grid_envs.core import checks, files
from grid_envs.sokoban.generator import SokobanGenerator
from grid_envs.sokoban.levels import check_level, read_collection, save_collection
from grid_envs.sokoban.solver import SolveProgress, solve
from grid_envs.sokoban.state import Level


def write_generated(
    path: str, rng: np.random.Generator, count: int | None, settings: dict[str, Any]
) -> str:
    """``grid-games generate sokoban``: ``count`` levels (10 by default) of a
    :class:`SokobanGenerator` with ``settings`` written to an XSB collection, each with a
    comment of its pushes (and its proved optimum where the generator proves one)."""
    generator = SokobanGenerator(**checks.settings_of("the Sokoban generator", SokobanGenerator,
                                                      settings))  # fmt: skip
    made = []
    for k in range(10 if count is None else count):
        g = generator.generate(rng)
        note = f"; pushes <= {g.pushes}" + (
            f", optimal {g.optimal_pushes}" if g.optimal_pushes else ""
        )
        lv = g.level
        made.append(Level(lv.walls, lv.floor, lv.goals, lv.boxes, lv.player, (f"; {k + 1}", note)))
    with files.written(Path(path)) as partial:  # read back as eval and solve read it
        save_collection(partial, made)
        for k, level in enumerate(read_collection(partial)):
            check_level(level, f"generated level {k + 1}")
    return (f"wrote {path}: {len(made)} levels of {generator.rows}x{generator.cols} with "
            f"{generator.num_boxes} boxes")  # fmt: skip


def solve_levels(
    path: str,
    level: int | None,
    max_seconds: float,
    mode: str,
    memory: int | None = None,
    progress: Callable[[int, str], None] | None = None,
    threads: int = 1,
) -> Iterator[dict[str, Any]]:
    """``grid-games solve``: the push search on each level of an XSB file (or the one
    numbered ``level``, from 1), each solution replayed through the rules before it is
    reported. ``memory`` bounds each search (bytes; default a quarter of the memory free);
    ``progress(level, line)`` hears where a search stands every few seconds; ``threads``
    runs each level's searches on that many threads (as :func:`.solver.solve` does).
    Ctrl-C ends the level being searched with what its search knows (the row's reason is
    "interrupted") and no later level is started."""
    levels = read_collection(path)
    if level is not None and not 1 <= level <= len(levels):
        raise ValueError(f"--level must be between 1 and {len(levels)}, got {level}")
    for n in [level] if level is not None else range(1, len(levels) + 1):
        lv = levels[n - 1]
        report = None if progress is None else partial(_report, progress, n)
        r = solve(
            lv, mode=mode, max_seconds=max_seconds, memory=memory, progress=report,
            threads=threads,
        )  # fmt: skip
        yield {"level": n, "title": lv.title, "solved": r.solved, "status": r.status,
               "solution": r.solution, "pushes": r.pushes, "moves": r.moves, "nodes": r.nodes,
               "seconds": round(r.seconds, 4), "mode": r.mode, "reason": r.reason}  # fmt: skip
        if r.reason == "interrupted":
            return


def _report(progress: Callable[[int, str], None], level: int, where: SolveProgress) -> None:
    progress(level, where.line())
