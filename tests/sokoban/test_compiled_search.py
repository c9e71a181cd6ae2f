"""The compiled push search: state for state the pure-Python search, its rules pinned to the
env's, its memory bounded, its progress reported."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from grid_envs.sokoban import Level, SokobanGenerator, parse_xsb, portfolio, rules
from grid_envs.sokoban import solver as module
from grid_envs.sokoban.compiled import matching, pruning
from grid_envs.sokoban.compiled import search as cs
from grid_envs.sokoban.python_search import each_order
from grid_envs.sokoban.rules import bit_cells
from grid_envs.sokoban.solver import (
    ENGINES,
    SolveProgress,
    _bits,
    _Search,
    hungarian,
    solve,
    solver_for,
)

# a room with a goal room behind a doorway and a corral round the middle box (made here)
ROOMS = [
    "#########\n#   #...#\n# $ #   #\n#  $    #\n# $ #   #\n#@  #####\n#####",
    "##########\n#.  #    #\n#.$ # $  #\n#. $  $. #\n# ## ##  #\n#  $   .@#\n##########",
]

# eight boxes and a goal room: more than a minute of optimal search (made here)
HARD = (
    "###########\n#    #....#\n# $  #....#\n#  $      #\n# $ $#    #\n#  $ ######\n"
    "# $ $ $  #\n#@       #\n##########"
)


def _start(level: Level) -> tuple[int, int]:
    cols = level.floor.shape[1]
    boxes = _bits(np.flatnonzero((level.boxes & level.floor).ravel()))
    return boxes, level.player[0] * cols + level.player[1]


def _in_step(python: Any, compiled: Any, step: int, turns: int, bound: bool = True) -> str:
    """Run the two engines ``step`` expansions at a time for up to ``turns`` slices, the
    same outcome, counts (and least bound) after each; returns the last outcome."""
    names = ("expanded", "generated", "best_packed") + (("best_bound",) if bound else ())
    for _ in range(turns):
        a, b = python.run(step), compiled.run(step)
        assert [a, *(getattr(python, n) for n in names)] == [b, *(getattr(compiled, n)
                                                                  for n in names)]  # fmt: skip
        if a != "open":
            break
    return a


def _levels() -> list[Level]:
    rng = np.random.default_rng(11)
    out = [SokobanGenerator(10, 10, 4).generate(rng).level for _ in range(6)]
    out += [SokobanGenerator(12, 12, 5).generate(rng).level for _ in range(2)]
    for text in ROOMS:
        out += parse_xsb(text)
    return out


@pytest.mark.parametrize(
    ("weight", "pairs", "fences"),
    [
        (1.0, True, True),
        (1.2, True, True),
        (8.0, True, True),
        (1000.0, True, True),
        (1.2, False, True),
        (1.2, True, False),
    ],
)
def test_the_compiled_search_expands_what_the_python_search_expands(
    weight: float, pairs: bool, fences: bool
) -> None:
    """Slice by slice, the same states expanded and generated, and the same pushes found,
    with the two-box deadlocks and the corral deadlocks and without."""
    for level in _levels():
        solver = solver_for(level.floor, level.goals)
        boxes, player = _start(level)
        h0 = solver.lower_bound(boxes)
        python = _Search(solver, boxes, player, h0, weight, pairs=pairs, fences=fences)
        compiled = cs.CompiledSearch(
            solver.compiled_room(),
            bit_cells(boxes),
            player,
            weight,
            [1 << 40],
            capacity=64,
            pairs=pairs,
            fences=fences,
        )  # a small start, so the arrays grow several times on the way
        assert _in_step(python, compiled, 37, 400) == "solved", level.title
        assert python.pushes() == compiled.pushes()


@pytest.mark.parametrize(("seed", "weight"), [(0, 8.0), (1, 1.2)])
def test_the_engines_agree_far_into_a_search(seed: int, weight: float) -> None:
    """Up to 1,500 expansions of a level generated here, state for state. At weight 8
    an expanded state is reached again at a lower cost there, and the compiled search
    parted from the Python one when it stored that state's boxes in its new parent's
    order (its kept matching is in the old one); at weight 1.2 the float priority did."""
    rng = np.random.default_rng(seed)
    level = SokobanGenerator(12, 12, 5).generate(rng).level
    if seed:
        level = SokobanGenerator(14, 14, 6).generate(rng).level
    solver = solver_for(level.floor, level.goals)
    boxes, player = _start(level)
    python = _Search(solver, boxes, player, solver.lower_bound(boxes), weight)
    room = solver.compiled_room()
    compiled = cs.CompiledSearch(room, bit_cells(boxes), player, weight, [1 << 40], capacity=64)
    _in_step(python, compiled, 50, 30)
    assert python.expanded >= 600


def test_a_weight_not_kept_to_a_tenth_is_refused() -> None:
    (level,) = parse_xsb(ROOMS[0])
    solver = solver_for(level.floor, level.goals)
    boxes, player = _start(level)
    with pytest.raises(ValueError, match="kept to a tenth"):
        _Search(solver, boxes, player, 0, 1.25)
    with pytest.raises(ValueError, match="kept to a tenth"):
        cs.CompiledSearch(solver.compiled_room(), bit_cells(boxes), player, 1.25, [1 << 40])


def test_a_solution_the_compiled_search_finds_replays_in_the_env() -> None:
    for level in _levels():
        r = solve(level, mode="fast", max_seconds=20)
        assert r.solved and rules.solves(level, r.solution)


def test_frozen_is_the_rules_freeze_test() -> None:
    """On random box layouts, the compiled freeze test answers as the env's own for every
    box."""
    rng = random.Random(3)
    compared = frozen_seen = 0
    for level in _levels():
        solver = solver_for(level.floor, level.goals)
        room = solver.compiled_room()
        cells = [c for c in range(solver.size) if solver.is_floor[c]]
        for _ in range(30):
            boxes = rng.sample(cells, min(len(cells) // 3, 12))
            occupied = np.full(solver.size, -1, np.int64)
            occupied[boxes] = np.arange(len(boxes))
            seen = np.zeros(solver.size, np.uint8)
            bits = _bits(boxes)
            for b in boxes:
                mine = pruning.frozen(room.floor, room.dead, room.cols, occupied, b, seen)
                assert mine == rules.frozen(solver.room, bits, b)
                assert not seen.any()  # the boxes under test are cleared on the way out
                compared += 1
                frozen_seen += mine
    assert compared > 1000 and frozen_seen > 100


def test_the_compiled_matching_is_the_python_matching() -> None:
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 9, 17):
        for _ in range(20):
            cost = rng.integers(0, 12, (n, n))
            cost[rng.random((n, n)) < 0.2] = matching.BIG
            u = np.zeros(n + 1, np.int64)
            v = np.zeros(n + 1, np.int64)
            match = np.zeros(n + 1, np.int64)
            total = matching.hungarian(cost.astype(np.int64), u, v, match)
            want, *_, want_match = hungarian(cost.tolist())
            assert total == want and list(match) == want_match


def test_the_goals_potentials_follow_from_the_boxes_and_the_matching() -> None:
    """Expanded states keep the boxes' potentials and the matching, not the goals'
    potentials: the matching is tight, so they are the ones the algorithm left, after a
    whole matching and after each repair of a moved box's row."""
    from grid_envs.sokoban.compiled.loop import _goal_potentials

    rng = np.random.default_rng(1)
    n_checked = 0
    for n in (1, 2, 5, 9, 17):
        cost = rng.integers(0, 12, (n, n))
        u, v, match = (np.zeros(n + 1, np.int64) for _ in range(3))
        matching.hungarian(cost, u, v, match)
        work = [np.zeros(n + 1, np.int64) for _ in range(2)] + [np.zeros(n + 1, np.uint8)]
        for step in range(30):
            derived = np.zeros(n + 1, np.int64)
            _goal_potentials(cost, u, match, derived)
            assert list(derived[1:]) == list(v[1:])
            n_checked += 1
            k = int(rng.integers(n))
            before = cost[k].copy()
            cost[k] = rng.integers(0, 12, n)
            if step % 2:
                matching.rematch(cost, k, before, u, v, match, *work)
            else:
                matching.rematch_row(cost, k, u, v, match, *work)
    assert n_checked == 150


def test_the_bucket_queue_pops_in_the_heaps_order() -> None:
    """The weighted searches' queue pops by (priority, order queued), as a heap of the
    entries does: random pushes and pops, few priorities and many, against heapq."""
    import heapq

    from grid_envs.sokoban.compiled import queue as q

    rng = random.Random(3)
    for spread in (3, 40, 10_000):
        entries = np.zeros((4096, 2), np.int64)
        buckets = np.zeros((4096, 4), np.int64)
        order = np.zeros(4096, np.int64)
        index = np.zeros(8192, np.int64)
        kept = np.zeros(q.N_KEPT, np.int64)
        reference: list[tuple[int, int]] = []
        seq = 0
        for _ in range(3000):
            if reference and rng.random() < 0.45:
                got = q.queue_pop(entries, buckets, order, kept)
                assert tuple(int(x) for x in got) == heapq.heappop(reference)
            else:
                first = rng.randrange(spread) << 24 | rng.randrange(4)
                seq += 1
                q.queue_push(entries, buckets, order, index, kept, first, seq << 30 | 7)
                heapq.heappush(reference, (first, seq << 30 | 7))
        while reference:
            got = q.queue_pop(entries, buckets, order, kept)
            assert tuple(int(x) for x in got) == heapq.heappop(reference)
        assert kept[q.N_ORDER] == 0
        # after the arrays grow, the index is made anew and finds every bucket again
        fresh = np.zeros(16384, np.int64)
        q.reindex(fresh, buckets, kept[q.N_BUCKETS])
        n = int(kept[q.N_BUCKETS])
        before = n
        q.queue_push(entries, buckets, order, fresh, kept, int(buckets[0, 0]), 1)
        assert kept[q.N_BUCKETS] == before  # an old priority: its bucket, not a new one


def test_a_search_past_its_memory_gives_up_with_a_clear_reason() -> None:
    (level,) = parse_xsb(ROOMS[1])
    r = solve(level, mode="optimal", max_seconds=30, memory=200_000)
    assert r.status == "gave_up" and r.reason.startswith("memory limit") and not r.solved
    # a search that starts small stops where a doubling would pass the bound, and says so
    solver = solver_for(level.floor, level.goals)
    boxes, player = _start(level)
    room = solver.compiled_room()
    small = cs.CompiledSearch(room, bit_cells(boxes), player, 1.0, [1 << 40], capacity=64)
    left = [small.nbytes * 3]
    search = cs.CompiledSearch(room, bit_cells(boxes), player, 1.0, left, capacity=64)
    with pytest.raises(cs.MemoryLimit):
        while search.run(64) == "open":
            pass
    assert 0 <= left[0] < search.nbytes and search.expanded > 0


def test_a_search_grows_by_less_than_double_where_a_doubling_would_pass_the_bound() -> None:
    (level,) = parse_xsb(HARD)
    room = solver_for(level.floor, level.goals).compiled_room()
    boxes, player = _start(level)
    probe = cs.CompiledSearch(room, bit_cells(boxes), player, 1.0, [1 << 40], capacity=1024)
    assert probe.capacity == (1024, 256)
    assert probe._bytes(1024, 256) == probe.nbytes  # the sizes it plans are the ones it makes
    # room for the expanded states' rows to double once, and for the states to grow by a
    # half, not to double
    rows_e = probe._bytes(1024, 512) - probe.nbytes
    half, double = (probe._bytes(n, 256) - probe.nbytes for n in (1536, 2048))
    left = [probe.nbytes + rows_e + (half + double) // 2]  # its first arrays come out of it
    search = cs.CompiledSearch(room, bit_cells(boxes), player, 1.0, left, capacity=1024)
    with pytest.raises(cs.MemoryLimit):
        while search.run(64) == "open":
            pass
    assert search.capacity == (1536, 512) and search._bytes(1536, 512) == search.nbytes
    assert search.generated >= 1536 - search.most_paths - 1  # it filled the larger arrays
    assert 0 <= left[0] < search._bytes(1920, 512) - search.nbytes


def test_a_search_out_of_time_does_not_grow_its_arrays() -> None:
    """Growing millions of states' arrays takes seconds: a search whose arrays are full
    grows them only where the growth, expected to take twice the last of its kind, ends
    before the deadline; else it answers "full", grows nothing, and goes on as before once
    given time (the same states as a search never stopped)."""
    (level,) = parse_xsb(HARD)
    room = solver_for(level.floor, level.goals).compiled_room()
    boxes, player = _start(level)
    search = cs.CompiledSearch(room, bit_cells(boxes), player, 1.0, [1 << 40], capacity=1024)
    other = cs.CompiledSearch(room, bit_cells(boxes), player, 1.0, [1 << 40], capacity=1024)
    assert search.run(10_000, deadline=0.0) == "full"  # the clock is long past 0
    assert search.capacity == (1024, 256) and 0 < search.expanded <= 256
    assert search.run(10_000 - search.expanded) == other.run(10_000) == "open"
    assert search.capacity > (1024, 256) and search.expanded == other.expanded == 10_000
    assert search.generated == other.generated
    # a growth that took 100 s is not begun 150 s before the deadline
    search._grew = [100.0, 100.0]
    while (outcome := search.run(4096, deadline=time.perf_counter() + 150)) == "open":
        pass
    assert outcome == "full" and search.capacity == other.capacity


def test_a_solve_whose_searches_are_full_waits_for_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where no search of a thread can grow its arrays in the time left, the solve gives
    up for the time limit at the deadline, not before (on two threads the other thread's
    searches may still finish) and not seconds after it."""
    (level,) = parse_xsb(HARD)
    made: list[cs.CompiledSearch] = []
    init = cs.CompiledSearch.__init__

    def slow_growth(self: cs.CompiledSearch, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **{**kwargs, "capacity": 64})  # full before it solves
        self._grew = [1e6, 1e6]  # as if each growth took days
        made.append(self)

    monkeypatch.setattr(cs.CompiledSearch, "__init__", slow_growth)
    for threads in (1, 2):
        made.clear()
        r = solve(level, max_seconds=0.5, threads=threads)
        assert r.status == "gave_up" and r.reason == "time limit"
        assert r.seconds >= 0.5 and made
        assert all(x.capacity == (64, 16) for x in made if not x.released)


def test_a_grown_table_finds_every_state_it_holds() -> None:
    """A table grows from the one before it, without reading the states (its slots keep
    the top bits of each hash): after growths by a quarter, where the table may keep its
    size, and by doubling, every state is where a probe for its boxes and player finds it,
    and the search expands what one that never grew expands."""
    from grid_envs.sokoban.compiled import loop

    (level,) = parse_xsb(HARD)
    room = solver_for(level.floor, level.goals).compiled_room()
    boxes, player = _start(level)
    steps, slots_kept = [], 0
    for capacity, quarter in ((64, False), (64, True), (1 << 16, False)):
        search = cs.CompiledSearch(room, bit_cells(boxes), player, 1.0, [1 << 40], capacity)
        while search.expanded < 3000:
            # past its deadline a full search grows nothing: grow it here, by a quarter
            outcome = search.run(
                min(50, 3000 - search.expanded), deadline=0.0 if quarter else math.inf
            )  # fmt: skip
            if outcome == "full":
                cap, rows_e = search.capacity
                kind = search.expanded >= rows_e
                more = (cap, rows_e + rows_e // 4) if kind else (cap + cap // 4, rows_e)
                search.memory[0] = search._bytes(*more) - search.nbytes
                slots = search.gen_table.shape[0]
                search._grow(expanded=kind)
                assert search.capacity == more
                slots_kept += not kind and search.gen_table.shape[0] == slots
            elif outcome != "open":
                break
        steps.append((search.expanded, search.generated, search.best_bound))
        table, n = search.gen_table, int(search.counters[loop.N_STATES])
        assert np.count_nonzero(table) == n
        shift = loop.table_shift(table)
        occupied = np.full(room.floor.shape[0], -1, np.int64)
        for row in range(n):
            occupied[search.boxes[row]] = np.arange(search.nb)
            where = (
                loop._box_key(room.zob_box, search.boxes, row) ^ room.zob_player[search.low_of[row]]
            )
            slot = loop._find(
                table, shift, where, search.boxes, occupied, search.low_of, search.low_of[row]
            )  # fmt: skip
            assert loop._row_in(table[slot]) == row
            occupied[search.boxes[row]] = -1
    assert steps[0] == steps[1] == steps[2] and slots_kept > 0


def test_the_expanded_states_rows_grow_apart_from_the_states() -> None:
    """The matchings kept for expanded states grow when they fill, not with the states
    (the rows were a quarter of the states': a near-greedy search expands more than that
    share of what it stores; without the corral test, which solves this level sooner)."""
    (level,) = parse_xsb(HARD)
    room = solver_for(level.floor, level.goals).compiled_room()
    boxes, player = _start(level)
    for weight in (1.0, 8.0):
        search = cs.CompiledSearch(
            room, bit_cells(boxes), player, weight, [1 << 40], 64, fences=False
        )  # fmt: skip
        search.run(3000)
        cap, rows_e = search.capacity
        assert search.expanded <= rows_e < 2 * search.expanded + 32
    assert rows_e > cap // 4  # the near-greedy search's


def test_a_released_search_hands_its_memory_to_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    (level,) = parse_xsb(HARD)
    room = solver_for(level.floor, level.goals).compiled_room()
    boxes, player = _start(level)
    left = [1 << 30]
    search = cs.CompiledSearch(room, bit_cells(boxes), player, 1.0, left, capacity=64)
    assert search.run(500) == "open"
    held, expanded = search.nbytes, search.expanded
    assert held > 0 and left[0] == (1 << 30) - held
    search.release()
    search.release()  # once only
    assert left[0] == 1 << 30 and search.nbytes == 0 and search.expanded == expanded
    with pytest.raises(RuntimeError, match="released"):
        search.run(1)
    # in a solve, the weighted searches are released once they stop for good
    released: list[float] = []
    release = cs.CompiledSearch.release

    def counted(self: cs.CompiledSearch) -> None:
        released.append(self.weight)
        release(self)

    monkeypatch.setattr(cs.CompiledSearch, "release", counted)
    monkeypatch.setattr(portfolio, "EARLY_SECONDS", -1.0)
    solve(level, mode="fast", max_seconds=0.3)
    assert sorted(released) == sorted(module.FAST_WEIGHTS)  # feature searches run on
    released.clear()
    solve(level, mode="fast", max_seconds=0.3, without=("feature-search",))
    greedy = {w for w in module.FAST_WEIGHTS if w > portfolio.GREEDY_WEIGHT}
    assert released and set(released) == greedy


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_progress_is_reported_and_ctrl_c_ends_the_search_with_what_it_knows(engine: str) -> None:
    (level,) = parse_xsb(HARD)
    seen: list[SolveProgress] = []

    def report(p: SolveProgress) -> None:
        seen.append(p)
        if len(seen) == 3:
            raise KeyboardInterrupt  # as Ctrl-C arrives between two turns

    r = solve(
        level, mode="optimal", max_seconds=60, progress=report, progress_every=0.0, engine=engine
    )
    assert r.status == "gave_up" and r.reason == "interrupted" and r.nodes > 0
    assert len(seen) == 3 and seen[0].expanded < seen[2].expanded
    assert all(p.memory > 0 and p.per_second > 0 and p.best_bound >= 0 for p in seen)
    assert "states" in seen[0].line() and "best bound" in seen[0].line()
    assert all(p.packed is None for p in seen) and "packed" not in seen[0].line()


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_progress_counts_the_goals_the_feature_searches_packed(engine: str) -> None:
    """A report's ``packed`` is the most goals any feature search's expanded state filled
    in the packing order (what a goal-room level's progress shows where the bound stands
    still); the weighted searches pack nothing."""
    level = _levels()[6]  # a generated 12x12 room with 5 boxes
    solver = solver_for(level.floor, level.goals)
    boxes, player = _start(level)
    h0 = solver.lower_bound(boxes)
    searches = solver._searches(boxes, player, h0, "fast", (), engine, 1 << 30)
    for search in searches:
        search.run(6)
    features = [s.best_packed for s in searches if s.feature > 0]
    assert len(features) == 2 and all(s.best_packed == 0 for s in searches if not s.feature)
    report = portfolio.progress_of(searches, 1.0, len(solver.goal_cells))
    assert report.packed == max(features) > 0 and report.goals == 5
    assert f"packed {report.packed}/5 goals" in report.line()


def test_compiled_searches_take_larger_turns_and_engines_are_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cs.warm_up()  # its own small turns come before the counting
    turns: list[tuple[bool, int]] = []
    run = cs.CompiledSearch.run

    def counted(self: cs.CompiledSearch, budget: int, deadline: float) -> str:
        turns.append((self.feature > 0 or self.weight > portfolio.GREEDY_WEIGHT, budget))
        outcome = run(self, budget, deadline)
        return "open" if outcome == "solved" else outcome  # so that every search has turns

    monkeypatch.setattr(cs.CompiledSearch, "run", counted)
    (level,) = parse_xsb(ROOMS[1])
    solve(level, mode="fast", max_seconds=0.5)
    turn = portfolio._SLICE * portfolio.COMPILED_SLICES
    assert {bold for bold, _ in turns} == {True, False}
    assert all(budget == turn * (portfolio.BOLD_SLICES if bold else 1) for bold, budget in turns)
    with pytest.raises(ValueError, match="engine must be one of"):
        solve(level, engine="gpu")
    with pytest.raises(ValueError, match="kept to a tenth"):
        cs.CompiledSearch(solver_for(level.floor, level.goals).compiled_room(), [1], 2, 1.25, [1])


@pytest.mark.parametrize(
    "advice",
    [
        (True, True, True, True, True, False),
        (False, True, True, True, True, False),
        (True, False, True, True, True, False),
        (True, True, False, True, True, False),
        (True, True, True, False, True, False),
        (True, True, True, True, False, False),
        (True, True, True, True, True, True),
        (True, True, True, False, True, True),
    ],
)
def test_the_compiled_feature_search_expands_what_the_python_one_expands(
    advice: tuple[bool, bool, bool, bool, bool, bool],
) -> None:
    """The feature search (FESS's cells, goal macros, packing advice, the two-box
    deadlocks, box moves counted, the corral deadlocks, pushes counted as well), compiled:
    the same states, the same counts, the same pushes as the Python search."""
    from grid_envs.sokoban.solver import _FeatureSearch

    macros, fill, pairs, box_moves, fences, pushes = advice
    compared = 0
    packed: list[int] = []  # the most goals each search packed in order
    for level in _levels():
        solver = solver_for(level.floor, level.goals)
        boxes, player = _start(level)
        order = solver.packing_order(player, boxes)
        if order is None:
            continue
        areas = solver.area_orders(order)
        h0 = solver.lower_bound(boxes)
        python = _FeatureSearch(
            solver, boxes, player, h0, areas, areas if macros else None, areas if fill else None,
            pairs, box_moves, fences, pushes,
        )  # fmt: skip
        plan = cs.Features(each_order(areas), macros, fill, box_moves, pushes)
        compiled = cs.CompiledSearch(
            solver.compiled_room(), bit_cells(boxes), player, 1.0, [1 << 40], capacity=64,
            features=plan, pairs=pairs, fences=fences,
        )  # fmt: skip
        assert _in_step(python, compiled, 23, 400, bound=False) == "solved", level.title
        assert python.pushes() == compiled.pushes()
        compared += 1
        # the solved state is not expanded: fewer than all goals
        assert compiled.best_packed < int((level.goals & level.floor).sum())
        packed.append(compiled.best_packed)
    assert compared >= 8 and max(packed) > 0


def test_a_level_off_the_gate_is_refused_before_the_compiled_search() -> None:
    """The compiled search trusts a room walled in: a level with floor on the board's edge
    is refused in one line by Sokoban's gate, never searched."""
    (level,) = parse_xsb(ROOMS[0])
    floor = level.floor.copy()
    floor[0, 1] = True
    bad = Level(level.walls & ~floor, floor, level.goals, level.boxes, level.player)
    with pytest.raises(ValueError, match="reaches the board's edge"):
        solve(bad)
    state = rules.new_state(level)
    state.boxes = state.boxes.copy()
    state.boxes[state.boxes.nonzero()[0][0], state.boxes.nonzero()[1][0]] = False
    with pytest.raises(ValueError, match="boxes but"):
        solve(state)


def test_the_compiler_runs_before_the_clock_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiling (or loading) the searches is done before a solve's time limit starts, so
    a short limit gives the same answer in a fresh process as in a warm one."""
    import time

    cs.warm_up()  # compiles once; a second call does nothing
    cs.warm_up()
    slow = []

    def compiling() -> None:
        slow.append(True)
        time.sleep(0.3)  # as a compiler would, longer than the limit below

    monkeypatch.setattr(module, "warm_up", compiling)
    (level,) = parse_xsb(ROOMS[0])
    for engine in ENGINES:  # the Python engine reads the compiled two-box table
        slow.clear()
        r = solve(level, mode="optimal", max_seconds=0.2, engine=engine)
        assert slow and r.solved and r.seconds < 0.3


def test_the_blocks_tell_which_sides_of_a_box_the_player_joins() -> None:
    """The push paths read the player's area from the room's blocks: two free neighbours
    of a cell share a block with it exactly when a flood joins them round the cell, and
    the search's tree from the box's cell tells the player's side of the box."""
    from grid_envs.sokoban.compiled import features

    checked = 0
    for level in _levels():
        cols = level.floor.shape[1]
        floor = level.floor.ravel().astype(bool)
        occupied = np.full(floor.size, -1, np.int64)
        boxes = np.flatnonzero((level.boxes & level.floor).ravel())
        occupied[boxes] = np.arange(boxes.size)
        offsets = np.array([-cols, cols, -1, 1], np.int64)
        marks = features.path_scratch(floor.size)[0]
        skip = int(boxes[0])  # the box that moves: its cell is free
        features._blocks(skip, skip, floor, occupied, offsets, marks[1:8], 1, marks[0])
        eblock, top = marks[7], marks[0]
        room = floor & ((occupied < 0) | (np.arange(floor.size) == skip))
        # with the box on ``skip``, two cells are on one side of it when their top is one
        apart = room.copy()
        apart[skip] = False
        reached = sorted(_reached(room, skip, offsets) - {skip})
        for a in reached[::7]:
            for b in reached[::5]:
                same_side = _joined(apart, a, b, offsets)
                assert same_side == (top[a] == top[b]), (level.title, a, b)
                checked += 1
        for x in _reached(room, skip, offsets):  # the blocks cover the box's part
            sides = [k for k in range(4) if room[x + offsets[k]]]
            free = room.copy()
            free[x] = False
            for a in sides:
                for b in sides:
                    joined = _joined(free, int(x + offsets[a]), int(x + offsets[b]), offsets)
                    same = eblock[x * 4 + a] == eblock[x * 4 + b]
                    assert joined == same, (level.title, int(x), a, b)
                    checked += 1
    assert checked > 1000


def _parents(
    rng: np.random.Generator, layouts: int, most: int = 12, share: int = 3
) -> Iterator[SimpleNamespace]:
    """Random layouts of boxes on the test levels, each with a random player's cell and
    its areas numbered as the search numbers them (the player's area searched depth first,
    then the corral's labelling of the rest), and the scratch arrays the area functions
    take."""
    from grid_envs.sokoban.compiled import areas

    for level in _levels():
        cols = level.floor.shape[1]
        floor = level.floor.ravel().astype(bool)
        x = SimpleNamespace(floor=floor, offsets=np.array([-cols, cols, -1, 1], np.int64))
        x.cells = np.flatnonzero(floor).astype(np.int64)
        x.mark, x.label = np.zeros(floor.size, np.int64), np.zeros(floor.size, np.int64)
        x.queue, x.other = np.empty(floor.size, np.int64), np.empty(floor.size, np.int64)
        x.area_of = np.full(floor.size, -1, np.int64)
        x.work = pruning.corral_scratch(floor.size)
        no_dead, no_goal = np.zeros(floor.size, np.uint8), np.full(floor.size, -1, np.int64)
        inner = [c for c in x.cells if floor[c - 1] and floor[c + 1]]
        for n in range(layouts):
            x.boxes = rng.choice(inner, size=min(len(inner) // share, most), replace=False)
            x.occupied = np.full(floor.size, -1, np.int64)
            x.occupied[x.boxes] = np.arange(x.boxes.size)
            x.stamp = 2 * n + 1  # the mark's stamp; ``label``'s are the test's own
            player = rng.choice(x.cells[x.occupied[x.cells] < 0])
            x.tree = areas.tree_scratch(floor.size)
            x.low = areas.search_area(
                player, floor, x.occupied, x.mark, x.stamp, x.offsets, x.tree
            )  # fmt: skip
            seen = np.zeros(floor.size, np.int64)
            flooded = pruning.flood(player, floor, x.occupied, seen, 1, x.queue, x.offsets)
            assert x.low == flooded and ((x.mark == x.stamp) == (seen == 1)).all()
            pruning.corral(
                floor, no_dead, no_goal, x.offsets, x.occupied, x.mark, x.stamp, x.work
            )  # fmt: skip
            x.count = areas.number_areas(x.cells, x.mark, x.stamp, x.work, x.area_of)
            yield x


def test_the_corral_scan_stops_once_every_free_cell_is_labelled() -> None:
    """The search tells the corral's labelling how many free cells lie off the player's
    reach (the room's less the boxes and the size of the player's area, which the area's
    search leaves at its root), and the scan of the room stops once they are labelled:
    the areas, their cells and fences and the pushes must be those of the full scan."""
    from grid_envs.sokoban.compiled import areas

    checked = stopped = 0
    for x in _parents(np.random.default_rng(11), 6, most=40, share=2):
        size = x.floor.size
        player_cells = int((x.mark[x.cells] == x.stamp).sum())
        root = x.tree[areas.ORDER, 0]  # where the area's search began
        assert x.tree[areas.SIZE, root] == player_cells
        left = x.cells.size - x.boxes.size - player_cells
        no_dead, no_goal = np.zeros(size, np.uint8), np.full(size, -1, np.int64)
        works = [pruning.corral_scratch(size), pruning.corral_scratch(size)]
        found = [
            pruning.corral(
                x.floor, no_dead, no_goal, x.offsets, x.occupied, x.mark, x.stamp, work, known
            )
            for work, known in zip(works, (-1, left), strict=True)
        ]
        assert found[0] == found[1]
        full, short = works
        n_areas = full[pruning.START, -1]
        assert short[pruning.START, -1] == n_areas
        assert full[pruning.START, n_areas] == left  # the full scan labels exactly ``left``
        for row in (pruning.START, pruning.FENCE_START):
            assert (full[row, : n_areas + 1] == short[row, : n_areas + 1]).all()
        for row, end in (
            (pruning.CELLS, left),
            (pruning.AREA_FENCE, full[pruning.FENCE_START, n_areas]),
        ):
            assert (full[row, :end] == short[row, :end]).all()
        for row in (pruning.OUT_BOX, pruning.OUT_DIR):
            assert (full[row, : max(found[0], 0)] == short[row, : max(found[0], 0)]).all()
        checked += 1
        # the scan stops short of the room's last free cell
        stopped += left > 0 and full[pruning.CELLS, :left].max() < x.cells[-1]
    assert checked > 20 and stopped > 0


def test_a_childs_areas_follow_from_its_parents() -> None:
    """The feature search counts a child's areas from its parent's (the box leaves one
    cell and takes another, one push or a path of them): the count must be what counting
    afresh gives, for every box moved to every free cell of random layouts."""
    from grid_envs.sokoban.compiled import areas

    stamp = 1
    checked = 0
    most_areas = 0
    for x in _parents(np.random.default_rng(5), 4, most=60, share=2):
        most_areas = max(most_areas, x.count)
        floor, occupied, offsets, label, queue = x.floor, x.occupied, x.offsets, x.label, x.queue
        free = x.cells[occupied[x.cells] < 0]
        assert set(x.area_of[free]) == set(range(x.count)) and (x.area_of[x.boxes] == -1).all()
        stamp += 1
        assert x.count == areas.areas(x.cells, floor, occupied, label, stamp, queue, offsets)
        for k, b in enumerate(x.boxes):
            for t in free:
                occupied[b], occupied[t] = -1, k
                stamp += 2
                after = areas.areas_after(
                    x.count, b, t, floor, occupied, x.area_of, label, stamp, queue, x.other,
                    offsets, x.mark, x.stamp, x.tree,
                )  # fmt: skip
                stamp += 2  # it marks with two stamps
                fresh = areas.areas(x.cells, floor, occupied, label, stamp, queue, offsets)
                assert after == fresh, (int(b), int(t))
                occupied[t], occupied[b] = -1, k
                checked += 1
    assert checked > 5_000 and most_areas >= 10


def _reached(free: np.ndarray, a: int, offsets: np.ndarray) -> set[int]:
    seen, todo = {a}, [a]
    while todo:
        c = todo.pop()
        for d in offsets:
            n = int(c + d)
            if free[n] and n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def _joined(free: np.ndarray, a: int, b: int, offsets: np.ndarray) -> bool:
    return b in _reached(free, a, offsets)


def test_a_childs_player_area_is_named_from_its_parents() -> None:
    """A child's state is named by its player's area's lowest cell, worked out from the
    parent's areas (:func:`areas.child_low`): it must be the lowest cell a flood from the
    player reaches, for every push of random layouts and player cells."""
    from grid_envs.sokoban.compiled import areas

    stamp = 1
    checked = 0
    for x in _parents(np.random.default_rng(7), 60):
        floor, occupied, offsets, label, queue = x.floor, x.occupied, x.offsets, x.label, x.queue
        for k, b in enumerate(x.boxes):
            for d in range(4):
                p, t = b - offsets[d], b + offsets[d]
                if x.mark[p] != x.stamp or not floor[t] or occupied[t] >= 0:
                    continue
                occupied[b], occupied[t] = -1, k
                stamp += 1
                named = areas.child_low(
                    b, t, x.low, floor, occupied, x.area_of, x.work, label, stamp, queue,
                    x.other, offsets, x.mark, x.stamp, x.tree,
                )  # fmt: skip
                stamp += 3
                flooded = pruning.flood(b, floor, occupied, label, stamp, queue, offsets)
                assert named == flooded, (int(b), int(t))
                occupied[t], occupied[b] = -1, k
                checked += 1
    assert checked > 500
