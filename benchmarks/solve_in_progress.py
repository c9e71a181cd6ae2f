"""Solve games in progress: positions along a level's solution, each solved afresh.

    python benchmarks/solve_in_progress.py ../shared/levels/xsokoban_90.xsb \
        --levels 4,10,26 [--every 7] [--seconds 3] [--max-seconds 60]

A teacher labels the positions a learner reaches, and the ``solver`` agent replans from
the position it is in: both solve games in progress, not levels from their start. Each
level is solved first (``--max-seconds``); then, along that solution, every position after
an ``--every``-th push where the player stands on a goal (as he does after pushing a box
into a goal room) and a box is still off the goals is solved afresh within ``--seconds``,
and its answer replayed through the rules from that position before it counts.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solve_collection import level_indices, read_levels

from grid_envs.sokoban import Level, SokobanState, rules
from grid_envs.sokoban.solver import solve


def _positions(level: Level, solution: str, every: int) -> list[SokobanState]:
    """The positions along ``solution`` after every ``every``-th push where the player
    stands on a goal and the level is not yet solved."""
    state = rules.new_state(level)
    picked, pushes = [], 0
    for action in rules.lurd_to_actions(state, solution):
        rules.apply_action(state, action)
        if action < 4:
            continue
        pushes += 1
        if pushes % every == 0 and state.goals[state.player] and not rules.is_solved(state):
            picked.append(copy.deepcopy(state))
    return picked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collection")
    parser.add_argument("--levels", type=str, default="", help="e.g. 1-20,93")
    parser.add_argument("--every", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--max-seconds", type=float, default=60.0)
    args = parser.parse_args()
    levels = read_levels(args.collection)
    wanted = level_indices(args.levels, len(levels)) if args.levels else range(len(levels))
    total = solved_total = 0
    for index in wanted:
        level = levels[index]
        start = solve(level, max_seconds=args.max_seconds)
        if not start.solved:
            print(f"{index + 1:>4} not solved from its start ({start.status})")
            continue
        states = []
        for position in _positions(level, start.solution, args.every):
            r = solve(position, max_seconds=args.seconds)
            ok = r.solved and rules.solves(position, r.solution)
            solved_total += ok
            states.append(r.nodes if ok else None)
        total += len(states)
        if not states:
            continue
        found = [n for n in states if n is not None]
        median = f"{statistics.median(found):>9,.0f}" if found else f"{'-':>9}"
        print(
            f"{index + 1:>4} {len(found):>3} of {len(states):>3} positions solved, "
            f"median {median} states"
        )
    print(f"solved {solved_total} of {total} positions within {args.seconds:g} s each")


if __name__ == "__main__":
    main()
