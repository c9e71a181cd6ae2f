"""Corral deadlocks: the search of a corral's fence alone proves positions lost, both
engines answer alike, and the solver's searches use it (or go without it)."""

from __future__ import annotations

import random

import numpy as np

from grid_envs.sokoban import Level, SokobanGenerator, parse_xsb, rules
from grid_envs.sokoban.bfs import min_pushes
from grid_envs.sokoban.compiled import fences, pruning
from grid_envs.sokoban.rules import bit_cells
from grid_envs.sokoban.solver import BIG, Solver, _bits, solve, solver_for

# the three boxes in a column fence the goals on their right, and every push into that
# corral strands a box there (found among random placements here): only the fence
# search proves it lost
LOST = "########\n#   $.*#\n#   $  #\n#  .$.##\n#@ #####\n########"


def _layouts(rows: int, cols: int, n_boxes: int, seed: int, count: int) -> list[Level]:
    """Random placements of ``n_boxes`` boxes and the player in generated rooms, the
    solved ones left out: goal-crowded rooms where boxes fence corrals often."""
    rng = random.Random(seed)
    gen = SokobanGenerator(rows, cols, n_boxes)
    nrng = np.random.default_rng(seed)
    out: list[Level] = []
    while len(out) < count:
        level = gen.generate(nrng).level
        cells = [(int(r), int(c)) for r, c in np.argwhere(level.floor)]
        for _ in range(6):
            picked = rng.sample(cells, n_boxes + 1)
            boxes = np.zeros_like(level.boxes)
            for r, c in picked[1:]:
                boxes[r, c] = True
            trial = Level(level.walls, level.floor, level.goals, boxes, picked[0])
            if not rules.is_solved(rules.new_state(trial)):
                out.append(trial)
    return out[:count]


def _position(level: Level) -> tuple[Solver, int, int, int]:
    """The solver, the boxes, the player's area and the free floor of a level's start."""
    solver = solver_for(level.floor, level.goals)
    cols = level.floor.shape[1]
    boxes = _bits(np.flatnonzero((level.boxes & level.floor).ravel()))
    free = solver.floor_bb & ~boxes
    reach = solver._flood(1 << (level.player[0] * cols + level.player[1]), free)
    return solver, boxes, reach, free


def _compiled_lost(solver: Solver, boxes: int, reach: int, rings: bool = True) -> bool:
    """The compiled answer: the corral's labelling, then :func:`fences.any_lost` (every
    ring searched with ``rings``, as at a search's start)."""
    room = solver.compiled_room()
    size = room.floor.shape[0]
    occupied = np.full(size, -1, np.int64)
    for k, c in enumerate(bit_cells(boxes)):
        occupied[c] = k
    mark = np.array([(reach >> c) & 1 for c in range(size)], np.int64)
    low = (reach & -reach).bit_length() - 1
    work = pruning.corral_scratch(size)
    pruning.corral(room.floor, room.dead, room.goal, room.offsets, occupied, mark, 1, work)
    scratch = fences.fence_scratch(size, True, rings)
    return bool(
        fences.any_lost(
            low, room.floor, room.dead, room.goal, room.offsets, work, scratch, occupied, -1
        )
    )


def test_a_corral_the_fence_search_proves_lost() -> None:
    """A corral whose fence can be pushed in, but to no end: lost, though no single
    rule (dead squares, freeze, pairs, the PI-corral's pushes) says so."""
    (level,) = parse_xsb(LOST)
    solver, boxes, reach, free = _position(level)
    assert solver._pi_corral(boxes, reach, solver.corrals(reach, free))  # the PI-corral has pushes
    assert solver.corrals_lost(boxes, reach, solver.corrals(reach, free))
    assert _compiled_lost(solver, boxes, reach)
    assert min_pushes(level) is None
    on = solve(level, mode="optimal", max_seconds=30)
    off = solve(level, mode="optimal", max_seconds=30, without=("corral-deadlocks",))
    assert on.status == off.status == "unsolvable"
    assert on.nodes == 1 < off.nodes


def test_a_lost_corral_is_lost_and_both_engines_say_so() -> None:
    """On random placements (many of them dead): wherever the fence search calls a
    position lost, breadth-first search over every push finds no solution; the compiled
    test gives the Python one's answer on every position."""
    lost = checked = 0
    for level in _layouts(7, 7, 3, seed=5, count=120):
        solver, boxes, reach, free = _position(level)
        answer = solver.corrals_lost(boxes, reach, solver.corrals(reach, free))
        assert _compiled_lost(solver, boxes, reach) == answer
        if answer:
            assert min_pushes(level) is None
            lost += 1
        checked += 1
    assert lost >= 10 and checked == 120  # the test really fired


def test_the_engines_agree_on_larger_rooms() -> None:
    """Larger rooms with more boxes: the two engines' answers, position for position."""
    fired = 0
    for level in _layouts(10, 10, 6, seed=8, count=150):
        solver, boxes, reach, free = _position(level)
        answer = solver.corrals_lost(boxes, reach, solver.corrals(reach, free))
        assert _compiled_lost(solver, boxes, reach) == answer
        fired += answer
    assert fired >= 5


def test_a_fence_searched_with_the_boxes_beside_it_proves_more_and_stays_sound() -> None:
    """A box beside a fence box can hold it where the fence alone looks free: searched
    with its ring, more positions are proven lost, each one truly lost (breadth-first
    search over every push), both engines alike; the ring is searched only where the
    state's own move left its box in it."""
    more = 0
    for level in _layouts(7, 7, 4, seed=13, count=300):
        solver, boxes, reach, free = _position(level)
        comps = solver.corrals(reach, free)
        plain = solver.corrals_lost(boxes, reach, comps, rings=False)
        ringed = solver.corrals_lost(boxes, reach, comps)
        assert _compiled_lost(solver, boxes, reach, rings=False) == plain
        assert _compiled_lost(solver, boxes, reach) == ringed
        assert ringed or not plain  # the ring only adds
        if ringed and not plain:
            more += 1
            assert min_pushes(level) is None
            # a move that left its box out of every ring (cell 0, a corner of the border
            # wall, for one): the fence alone is searched
            assert not solver.corrals_lost(boxes, reach, comps, last=0)
    assert more >= 3


def test_a_childs_area_read_from_its_parents_is_the_one_a_flood_finds() -> None:
    """The fence search names a child's area from its parent's where it can: on every
    push of random placements, with each position's unreached area as the corral, that
    answer (the lowest cell, or the player in the corral) is the flood's, with the two
    floods in step where the pushed box may cut the area in two; the parent's area alone
    settles most pushes."""
    settled = two = pushes = 0
    for level in _layouts(8, 8, 4, seed=21, count=120):
        solver, boxes, reach, free = _position(level)
        room = solver.compiled_room()
        floor, offsets, size = room.floor, room.offsets, room.floor.shape[0]
        occ = np.full(size, -1, np.int64)
        for k, c in enumerate(bit_cells(boxes)):
            occ[c] = k
        work = fences.fence_scratch(size)
        mark = work[fences.MARK]
        mark[:size] = [(reach >> c) & 1 for c in range(size)]
        low = (reach & -reach).bit_length() - 1
        cells = np.array(bit_cells(free & ~reach) or [0], np.int64)
        n_cells = len(cells) if free & ~reach else 0
        queue, child = np.zeros(size, np.int64), np.zeros(size, np.int64)
        for k, b in enumerate(bit_cells(boxes)):
            for d in range(4):
                t = b + int(offsets[d])
                if not mark[b - offsets[d]] or not floor[t] or occ[t] >= 0:
                    continue
                occ[b], occ[t] = -1, k
                fast = fences._child_low(b, t, low, floor, occ, mark, 1, offsets, cells, n_cells)
                area = fences._child_area(b, t, low, floor, occ, 1, offsets, cells, n_cells, work)
                child[:] = 0
                flooded = fences._reach(b, floor, occ, child, 1, queue, offsets, cells, n_cells)
                occ[t], occ[b] = -1, k
                assert area == flooded
                pushes += 1
                two += fast == -3
                if fast >= -1:
                    settled += 1
                    assert fast == flooded
    assert pushes >= 200 and settled >= pushes // 2 and two >= 10


def test_the_corral_table_grows_with_the_room_within_an_eighth_of_the_memory() -> None:
    """The table of answers takes the power of two rows at or above the room's cells, up
    to its cap, and at most an eighth of a memory bound where one is given."""
    rows = [fences.fence_scratch(size).shape[0] - fences.TABLE for size in (30, 121, 400)]
    assert rows == [32, 128, 512]
    assert fences.fence_scratch(5_000).shape[0] - fences.TABLE == fences.TABLE_ROWS
    small = fences.fence_scratch(400, memory=64 << 20)
    assert small.nbytes <= (64 << 20) // 8 < fences.fence_scratch(400).nbytes


def test_solves_with_and_without_agree_on_what_is_unsolvable() -> None:
    """``optimal`` with the corral test and without it calls the same positions
    unsolvable, and with it proves each in no more states (it searches a subset of the
    same space), in fewer where a lost corral comes up on the way. Placements that the
    checks before any search (dead squares, the matching, the pairs) already call lost
    are left out."""
    proved = unsolvable = 0
    for level in _layouts(7, 7, 3, seed=21, count=400):
        solver, boxes, reach, _ = _position(level)
        low = (reach & -reach).bit_length() - 1
        if solver.lower_bound(boxes) >= BIG or boxes & solver.dead_bb:
            continue
        if solver.dead_pair(boxes, low):
            continue
        on = solve(level, mode="optimal", max_seconds=30)
        off = solve(level, mode="optimal", max_seconds=30, without=("corral-deadlocks",))
        assert on.status != "gave_up"
        assert (on.status == "unsolvable") == (off.status == "unsolvable")
        if on.status == "unsolvable":
            unsolvable += 1
            assert on.nodes <= off.nodes
            proved += on.nodes < off.nodes
    assert proved >= 3 and unsolvable > proved
