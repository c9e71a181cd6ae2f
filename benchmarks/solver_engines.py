"""The compiled push search against the pure-Python one: states a second on the same levels,
the same states, in one run.

    python benchmarks/solver_engines.py ../shared/levels/xsokoban_90.xsb --levels 1-20 \
        --seconds 5 [--json out.json]

Both engines expand the same states in the same order (tested), so for each level and each
kind of search (the weight-1.2 best-first search and the feature search of ``fast`` mode)
the Python search runs for ``--seconds`` (or to its end), and the compiled one then expands
exactly as many states: the ratio of their times is the speed-up on identical work. That
compiled run lasts a fraction of a second, so its time is the least of ``REPEATS`` fresh
searches: the first touch of a search's new memory can cost more than its states on a
virtual machine, where the host has not backed that memory yet. The compiled search's own
rate over ``--seconds`` is printed beside it (it goes further in that time, into larger
tables). Compiling happens before any timing. One level at a time, on one core.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solve_collection import level_indices, read_levels

from grid_envs.sokoban import Level
from grid_envs.sokoban.compiled import CompiledSearch, Features
from grid_envs.sokoban.python_search import each_order
from grid_envs.sokoban.rules import bit_cells
from grid_envs.sokoban.solver import _bits, _FeatureSearch, _Search, solve, solver_for

REPEATS = 3  # fresh compiled searches timed on the Python search's states


def _searches(level: Level, kind: str) -> tuple[Any, Any]:
    """The Python search and a maker of the compiled one, for one kind, from the start."""
    solver = solver_for(level.floor, level.goals)
    cols = level.floor.shape[1]
    boxes = _bits(np.flatnonzero((level.boxes & level.floor).ravel()))
    player = level.player[0] * cols + level.player[1]
    h0 = solver.lower_bound(boxes)
    room, cells = solver.compiled_room(), bit_cells(boxes)
    if kind == "weighted":
        return _Search(solver, boxes, player, h0, 1.2), lambda: CompiledSearch(
            room, cells, player, 1.2, [1 << 40]
        )
    order = solver.packing_order(player, boxes)
    if order is None:
        return None, None
    areas = solver.area_orders(order)
    plan = Features(each_order(areas), True, True)
    python = _FeatureSearch(solver, boxes, player, h0, areas, areas, areas)
    return python, lambda: CompiledSearch(room, cells, player, 1.0, [1 << 40], features=plan)


def _timed(search: Any, budget: int | None, seconds: float) -> tuple[int, float]:
    """Run to ``budget`` states (or for ``seconds``, or to the end): (states, seconds)."""
    begin = time.perf_counter()
    while time.perf_counter() - begin < seconds:
        step = 64 if budget is None else min(4096, budget - search.expanded)
        if step <= 0 or search.run(step) != "open":
            break
    return search.expanded, time.perf_counter() - begin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collection")
    parser.add_argument("--levels", default="1-10", help="e.g. 1-20,33")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    levels = read_levels(args.collection)
    wanted = level_indices(args.levels, len(levels))
    solve(levels[0], max_seconds=1.0)  # compile (or load) every compiled function first
    rows: list[dict[str, Any]] = []
    print(f"{'level':>5} {'search':<9} {'states':>9} {'python/s':>9} {'compiled/s':>10} "
          f"{'same-states x':>13} {'own rate/s':>10} {'own x':>6}")  # fmt: skip
    for index in wanted:
        for kind in ("weighted", "feature"):
            python, make = _searches(levels[index], kind)
            if python is None:
                continue
            n, t_py = _timed(python, None, args.seconds)
            if n < 50:
                continue  # solved at once: nothing to time
            t_c = min(_timed(make(), n, float("inf"))[1] for _ in range(REPEATS))
            own, t_own = _timed(make(), 1 << 60, args.seconds)
            row = {
                "level": index + 1, "search": kind, "states": n, "python": n / t_py,
                "compiled": n / t_c, "same_states_ratio": t_py / t_c,
                "own_rate": own / t_own, "own_ratio": (own / t_own) / (n / t_py),
            }  # fmt: skip
            rows.append(row)
            print(f"{index + 1:>5} {kind:<9} {n:>9,} {row['python']:>9,.0f} "
                  f"{row['compiled']:>10,.0f} {row['same_states_ratio']:>13.1f} "
                  f"{row['own_rate']:>10,.0f} {row['own_ratio']:>6.1f}", flush=True)  # fmt: skip
    for kind in ("weighted", "feature"):
        ratios = [r["same_states_ratio"] for r in rows if r["search"] == kind]
        owns = [r["own_ratio"] for r in rows if r["search"] == kind]
        if ratios:
            print(f"{kind}: same states median {statistics.median(ratios):.1f}x "
                  f"(min {min(ratios):.1f}, max {max(ratios):.1f}); over {args.seconds:g} s "
                  f"median {statistics.median(owns):.1f}x, {len(ratios)} levels")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
