"""The solver's searches on several threads: the same answers, limits and Ctrl-C as on one."""

from __future__ import annotations

import random
import threading
import time

import pytest

from grid_envs.sokoban import parse_xsb, portfolio, rules
from grid_envs.sokoban.bfs import min_pushes
from grid_envs.sokoban.compiled import search as cs
from grid_envs.sokoban.solver import SolveProgress, solve, solver_for
from tests.sokoban.test_compiled_search import HARD, ROOMS, _start
from tests.sokoban.test_solver import generated, random_layouts


def test_the_feature_searches_are_dealt_first_and_the_weighted_ones_share_the_last() -> None:
    # fast mode: two weighted searches, then two feature searches
    assert portfolio.thread_of([False, False, True, True], 1) == [0, 0, 0, 0]
    assert portfolio.thread_of([False, False, True, True], 2) == [1, 1, 0, 1]
    assert portfolio.thread_of([False, False, True, True], 3) == [2, 2, 0, 1]
    assert portfolio.thread_of([False, False, True, True], 8) == [3, 3, 0, 1]
    assert portfolio.thread_of([False, False, True], 2) == [1, 1, 0]
    assert portfolio.thread_of([False, False], 2) == [0, 1]  # no feature search: dealt round
    assert portfolio.thread_of([False], 4) == [0]  # optimal mode: one search


def test_each_thread_has_its_own_corral_table() -> None:
    """The searches of one thread share a corral table (they take turns); two threads
    never touch the same one, and the memory bound counts every table."""
    (level,) = parse_xsb(ROOMS[1])
    solver = solver_for(level.floor, level.goals)
    boxes, player = _start(level)
    h0 = solver.lower_bound(boxes)
    searches = solver._searches(boxes, player, h0, "fast", (), "compiled", 1 << 30, 2)
    dealt = portfolio.thread_of([s.feature > 0 for s in searches], 2)
    tables = [s.fences for s in searches]
    for i in range(len(searches)):
        for j in range(len(searches)):
            same = tables[i] is tables[j]
            assert same == (dealt[i] == dealt[j]), (i, j)
    one = solver._searches(boxes, player, h0, "fast", (), "compiled", 1 << 30, 1)
    assert all(s.fences is one[0].fences for s in one)
    left_two, left_one = searches[0].memory[0], one[0].memory[0]
    assert left_one - left_two == one[0].fences.nbytes  # the second table is counted


def test_two_threads_agree_with_breadth_first_search() -> None:
    """Random layouts, many of them dead: on two threads the solver still calls a
    position unsolvable exactly when BFS finds no solution (the first search to exhaust
    its space ends the race), and every answer replays."""
    rng = random.Random(1)
    checked = unsolvable = searched = 0
    for level in generated(7, 7, 3, 6, seed=9):
        for trial in random_layouts(level, 3, 40, rng):
            truth = min_pushes(trial)
            r = solve(trial, mode="fast", max_seconds=30, threads=2)
            assert r.status != "gave_up"
            assert (r.status == "unsolvable") == (truth is None), truth
            if r.solved:
                assert rules.solves(trial, r.solution)
            checked += 1
            unsolvable += truth is None
            searched += truth is None and r.nodes > 0  # exhausted by the searches
    assert checked > 200 and unsolvable > 100 and searched > 3


def test_two_threads_solve_a_harder_level_and_honour_the_limits() -> None:
    (level,) = parse_xsb(HARD)
    r = solve(level, mode="fast", max_seconds=60, threads=2)
    assert r.solved and rules.solves(level, r.solution)
    before = threading.active_count()
    r = solve(level, mode="optimal", max_seconds=60, node_limit=3000, threads=2)
    assert r.status == "gave_up" and r.reason == "node limit"  # optimal: one search
    r = solve(level, mode="fast", max_seconds=0.2, threads=2, without=("packing-advice",))
    assert r.reason in ("time limit", "") and r.seconds < 5
    r = solve(level, mode="fast", max_seconds=30, threads=2, memory=300_000)
    assert r.status == "gave_up" and r.reason.startswith("memory limit")
    assert threading.active_count() == before  # every thread of a solve has ended


def test_ctrl_c_ends_a_solve_on_two_threads_with_what_it_knows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (level,) = parse_xsb(HARD)
    seen: list[SolveProgress] = []
    before = threading.active_count()
    run = cs.CompiledSearch.run

    def slowed(self: cs.CompiledSearch, budget: int, deadline: float) -> str:
        time.sleep(0.05)  # a turn as long as a large level's: the solve outlasts the reports
        return run(self, budget, deadline)

    monkeypatch.setattr(cs.CompiledSearch, "run", slowed)

    def report(p: SolveProgress) -> None:
        seen.append(p)
        raise KeyboardInterrupt  # as Ctrl-C reaches the thread that waits

    r = solve(level, mode="fast", max_seconds=60, progress=report, progress_every=0.0, threads=2)
    assert r.status == "gave_up" and r.reason == "interrupted" and r.nodes > 0
    assert len(seen) == 1 and threading.active_count() == before


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_a_bad_thread_count_is_refused_in_one_line(threads: object) -> None:
    (level,) = parse_xsb(ROOMS[0])
    with pytest.raises(ValueError, match="threads must be a whole number of at least 1"):
        solve(level, threads=threads)  # type: ignore[arg-type]


def test_the_python_engine_runs_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pure-Python searches hold the GIL: ``threads`` leaves them in one portfolio on the
    calling thread, which expands the same states as ``threads=1``."""
    (level,) = parse_xsb(ROOMS[0])
    one = solve(level, mode="fast", engine="python", max_seconds=30)

    def refused(*args: object) -> None:
        raise AssertionError("the Python engine was dealt out to threads")

    monkeypatch.setattr(portfolio, "in_threads", refused)
    r = solve(level, mode="fast", engine="python", threads=4, max_seconds=30)
    assert r.solved and rules.solves(level, r.solution)
    assert (r.nodes, r.solution) == (one.nodes, one.solution)
