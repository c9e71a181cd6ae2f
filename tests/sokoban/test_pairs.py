"""The two-box deadlock table: exact against an exhaustive search of the two boxes alone,
sound in the solver (its answers unchanged), and it prunes."""

from __future__ import annotations

import random

import numpy as np
import pytest

from grid_envs.sokoban import Level, SokobanGenerator, parse_xsb
from grid_envs.sokoban.bfs import min_pushes
from grid_envs.sokoban.solver import solve, solver_for

# three goals in a goal room behind a doorway (made here)
GOAL_ROOM = "#########\n#   #...#\n# $ #   #\n#  $    #\n# $ #   #\n#@  #####\n#####"


def _live(level: Level, a: int, b: int, player: int) -> bool:
    """The table's answer for boxes on cells ``a``, ``b`` and the player on ``player``."""
    index, live = solver_for(level.floor, level.goals).compiled_room().pairs
    p = int(index[player])
    return bool((int(live[index[a], index[b], p >> 6]) >> (p & 63)) & 1)


def _two_boxes(level: Level, a: int, b: int, player: int, goals: tuple[int, ...]) -> Level:
    """The level's room with only boxes on ``a`` and ``b``, the player and ``goals``."""
    boxes = np.zeros(level.floor.size, bool)
    boxes[[a, b]] = True
    marked = np.zeros(level.floor.size, bool)
    marked[list(goals)] = True
    cols = level.floor.shape[1]
    shape = level.floor.shape
    return Level(level.walls, level.floor, marked.reshape(shape), boxes.reshape(shape),
                 divmod(player, cols))  # fmt: skip


def _triples(level: Level, count: int, rng: random.Random) -> list[tuple[int, int, int]]:
    cells = [int(c) for c in np.flatnonzero(level.floor)]
    return [tuple(rng.sample(cells, 3)) for _ in range(count)]  # type: ignore[misc]


def test_the_table_is_exact_against_a_search_of_the_two_boxes_alone() -> None:
    """Rooms of two goals: a pair is live exactly when breadth-first search over its
    pushes, the player starting where the table's cell says, solves it."""
    rng = random.Random(4)
    gen_rng = np.random.default_rng(4)
    live = dead = 0
    for _ in range(6):
        level = SokobanGenerator(7, 7, 2).generate(gen_rng).level
        goals = tuple(int(g) for g in np.flatnonzero(level.goals))
        for a, b, p in _triples(level, 400, rng):
            truth = min_pushes(_two_boxes(level, a, b, p, goals)) is not None
            assert _live(level, a, b, p) == truth == _live(level, b, a, p), (a, b, p)
            live += truth
            dead += not truth
    assert live > 80 and dead > 80  # both answers were really checked


def test_with_more_goals_a_pair_is_live_when_some_two_goals_take_it() -> None:
    (level,) = parse_xsb(GOAL_ROOM)
    goals = [int(g) for g in np.flatnonzero(level.goals)]
    pairs = [(x, y) for i, x in enumerate(goals) for y in goals[i + 1 :]]
    rng = random.Random(5)
    live = 0
    for a, b, p in _triples(level, 150, rng):
        truth = any(min_pushes(_two_boxes(level, a, b, p, pair)) is not None for pair in pairs)
        assert _live(level, a, b, p) == truth, (a, b, p)
        live += truth
    assert 20 < live < 130


def test_the_player_shut_out_of_a_pocket_makes_a_pair_dead() -> None:
    """Two boxes closing a pocket by the goals: from inside it the player pushes them
    home, from outside it cannot, though neither box is frozen or on a dead square."""
    outside = "#######\n#..$  #\n#   $ #\n##   ##\n#@    #\n#######"
    inside = "#######\n#..$ @#\n#   $ #\n##   ##\n#     #\n#######"
    (shut_out,), (shut_in,) = parse_xsb(outside), parse_xsb(inside)
    cols = shut_out.floor.shape[1]
    a, b = 1 * cols + 3, 2 * cols + 4
    assert not _live(shut_out, a, b, 4 * cols + 1) and _live(shut_out, a, b, 1 * cols + 5)
    solver = solver_for(shut_out.floor, shut_out.goals)
    boxes = (1 << a) | (1 << b)
    assert not solver.freeze_deadlock(boxes, a) and not solver.freeze_deadlock(boxes, b)
    assert not (solver.dead_bb >> a) & 1 and not (solver.dead_bb >> b) & 1
    assert min_pushes(shut_out) is None and min_pushes(shut_in) is not None
    assert solve(shut_in).solved
    # a start that holds a dead pair is answered at once, without a search
    at_once = solve(shut_out)
    assert at_once.status == "unsolvable" and at_once.nodes == 0
    searched = solve(shut_out, without=("pair-deadlocks",))
    assert searched.status == "unsolvable" and searched.nodes > 0


@pytest.mark.parametrize("mode", ["fast", "optimal"])
def test_the_solver_prunes_dead_pairs_and_answers_the_same(mode: str) -> None:
    rng = np.random.default_rng(8)
    levels = [SokobanGenerator(10, 10, 4).generate(rng).level for _ in range(12)]
    nodes = {True: 0, False: 0}
    for level in levels:
        runs = {}
        for pairs in (True, False):
            without = () if pairs else ("pair-deadlocks",)
            runs[pairs] = r = solve(level, mode=mode, max_seconds=30, without=without)
            assert r.solved
            nodes[pairs] += r.nodes
        if mode == "optimal":
            assert runs[True].pushes == runs[False].pushes
    assert nodes[True] < nodes[False]


def test_a_room_too_large_for_a_table_is_searched_without_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from grid_envs.sokoban.compiled import search

    (level,) = parse_xsb(GOAL_ROOM)
    solver = solver_for(level.floor, level.goals)
    room = solver.compiled_room()
    assert room.pairs[1].shape[0] == int(level.floor.sum())
    monkeypatch.setattr(search, "PAIR_CELLS", int(level.floor.sum()) - 1)
    larger = search.Room(level.floor, np.zeros_like(level.floor), solver.goal_cells,
                         solver.cost_row)  # fmt: skip
    assert larger.pairs[1].shape[0] == 0
    monkeypatch.setattr(solver, "_compiled_room", larger)
    assert not solver.pair_deadlock(0, 0, 0)
    r = solve(level, max_seconds=10)
    assert r.solved
