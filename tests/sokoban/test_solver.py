"""The push-search solver: exact against BFS, sound on unsolvable positions, replayed."""

from __future__ import annotations

import dataclasses
import itertools
import random

import gymnasium as gym
import numpy as np
import pytest

from grid_envs.sokoban import Level, SokobanGenerator, parse_xsb, rules
from grid_envs.sokoban.bfs import min_pushes
from grid_envs.sokoban.rules import bit_cells
from grid_envs.sokoban.solver import (
    Solver,
    hungarian,
    rematch,
    rematch_after_push,
    solve,
    solver_for,
)
from grid_envs.wrappers import get_potential


def replay_through_env(level: Level, lurd: str) -> dict:
    env = gym.make("GridGames/Sokoban-v0", levels=level, time_limit=None)
    env.reset(seed=0)
    info: dict = {}
    actions = rules.lurd_to_actions(env.unwrapped.game_state(), lurd)
    for i, a in enumerate(actions):
        _, _, terminated, _, info = env.step(a)
        assert not info["illegal_action"]
        assert terminated == (i == len(actions) - 1)
    return info


def generated(rows: int, cols: int, boxes: int, n: int, seed: int) -> list[Level]:
    gen = SokobanGenerator(rows, cols, boxes)
    rng = np.random.default_rng(seed)
    return [gen.generate(rng).level for _ in range(n)]


@pytest.mark.parametrize("engine", ["compiled", "python"])
@pytest.mark.parametrize(("rows", "cols", "boxes", "n"), [(7, 7, 2, 40), (8, 8, 3, 15)])
def test_optimal_agrees_with_brute_force_bfs(
    rows: int, cols: int, boxes: int, n: int, engine: str
) -> None:
    for level in generated(rows, cols, boxes, n, seed=rows + boxes):
        best = min_pushes(level)
        r = solve(level, mode="optimal", max_seconds=30, engine=engine)
        assert r.solved and r.pushes == best
        assert replay_through_env(level, r.solution)["is_success"]


def test_fast_solutions_replay_to_a_win() -> None:
    for level in generated(10, 10, 4, 15, seed=3):
        r = solve(level, mode="fast", max_seconds=10)
        assert r.solved and r.moves == len(r.solution)
        assert r.pushes == sum(ch.isupper() for ch in r.solution)
        assert replay_through_env(level, r.solution)["is_success"]


def test_an_answer_that_does_not_replay_never_reaches_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``solve`` plays the search's answer through the rules before it returns it: a
    search bug that answers a wrong (here truncated) solution raises instead."""
    level = generated(7, 7, 2, 1, seed=5)[0]
    right = solve(level, max_seconds=10)
    assert right.solved and rules.solves(level, right.solution)
    wrong = dataclasses.replace(right, solution=right.solution[:-1])
    monkeypatch.setattr(Solver, "solve", lambda *args, **kwargs: wrong)
    with pytest.raises(RuntimeError, match="does not solve the level"):
        solve(level, max_seconds=10)


def random_layouts(level: Level, boxes: int, count: int, rng: random.Random) -> list[Level]:
    """``count`` random placements of ``boxes`` boxes in the level's room (the solved ones
    left out), many of them dead."""
    cells = [tuple(c) for c in np.argwhere(level.floor) if tuple(c) != level.player]
    out = []
    for _ in range(count):
        placed = np.zeros_like(level.boxes)
        for r, c in rng.sample(cells, boxes):
            placed[r, c] = True
        trial = Level(level.walls, level.floor, level.goals, placed, level.player)
        if not rules.is_solved(rules.new_state(trial)):
            out.append(trial)
    return out


def test_never_calls_a_solvable_position_unsolvable() -> None:
    """Random box placements, many of them dead: the solver agrees with BFS on each."""
    rng = random.Random(0)
    template = generated(7, 7, 2, 12, seed=9)
    checked = unsolvable = 0
    for level in template:
        for trial in random_layouts(level, 2, 8, rng):
            truth = min_pushes(trial)
            for mode in ("optimal", "fast"):
                r = solve(trial, mode=mode, max_seconds=30)
                assert r.status != "gave_up"
                assert (r.status == "unsolvable") == (truth is None), (mode, truth)
                if mode == "optimal" and truth is not None:
                    assert r.pushes == truth
            checked += 1
            unsolvable += truth is None
    assert checked > 60 and unsolvable > 10  # both kinds were really exercised


def test_bipartite_deadlock_is_unsolvable_at_once() -> None:
    # both boxes can only slide along the top wall, and only one goal lies there
    (level,) = parse_xsb("#######\n#. $$ #\n#     #\n#.   @#\n#######")
    r = solve(level, mode="optimal")
    assert r.status == "unsolvable" and r.nodes == 0


def test_limits_give_up_with_a_reason() -> None:
    level = generated(10, 10, 4, 1, seed=1)[0]
    r = solve(level, mode="optimal", node_limit=1)
    assert r.status == "gave_up" and r.reason == "node limit" and not r.solved
    with pytest.raises(ValueError, match="mode must be one of"):
        solve(level, mode="quick")


def test_a_solved_position_needs_nothing() -> None:
    (level,) = parse_xsb("#######\n#     #\n# .$@ #\n#     #\n#######")
    s = rules.new_state(level)
    rules.apply_action(s, 4 + 2)
    r = solve(s)
    assert r.solved and r.solution == "" and r.pushes == 0


def test_solves_a_game_in_progress() -> None:
    env = gym.make("GridGames/Sokoban-v0")
    env.reset(seed=4)
    mask = env.unwrapped.action_masks()
    env.step(int(np.flatnonzero(mask[:4])[0]))  # one move first
    r = solve(env.unwrapped.game_state(), mode="fast")
    assert r.solved
    for a in rules.lurd_to_actions(env.unwrapped.game_state(), r.solution):
        _, _, terminated, _, info = env.step(a)
    assert terminated and info["is_success"]


def brute_matching(cost: list[list[int]]) -> int:
    n = len(cost)
    return min(sum(cost[i][p[i]] for i in range(n)) for p in itertools.permutations(range(n)))


def test_hungarian_and_rematch_match_brute_force() -> None:
    rng = random.Random(1)
    big = 1 << 20
    for _ in range(400):
        n = rng.randint(1, 6)
        cost = [[rng.choice([rng.randint(0, 9), big]) for _ in range(n)] for _ in range(n)]
        total, *m = hungarian(cost)
        assert total == brute_matching(cost)
        state = tuple(m)
        for _ in range(4):
            k = rng.randrange(n)
            cost = [row[:] for row in cost]
            cost[k] = [rng.choice([rng.randint(0, 9), big]) for _ in range(n)]
            total, state = rematch(cost, state, k)
            assert total == brute_matching(cost)


def test_rematch_after_push_stays_optimal_and_feasible() -> None:
    """A push changes one box's row by at most one in every entry; when its matched goal
    came one nearer the shortcut keeps the old matching. It must still be optimal, and the
    potentials feasible for the rematches that follow."""
    rng = random.Random(2)
    shortcuts = 0
    for _ in range(400):
        n = rng.randint(1, 6)
        cost = [[rng.randint(1, 9) for _ in range(n)] for _ in range(n)]
        total, *m = hungarian(cost)
        state = tuple(m)
        for _ in range(6):
            k = rng.randrange(n)
            j = state[2].index(k + 1, 1) - 1  # the goal box k is matched to
            before = cost[k]
            row = [max(0, c + rng.choice((-1, 0, 1))) for c in before]
            if rng.random() < 0.6 and before[j] > 0:
                row[j] = before[j] - 1  # the push brought the box nearer its goal
                shortcuts += 1
            cost = [r[:] for r in cost]
            cost[k] = row
            total, state = rematch_after_push(cost, state, k, before, total)
            assert total == brute_matching(cost)
            u, v, _ = state
            assert all(u[i + 1] + v[c + 1] <= cost[i][c] for i in range(n) for c in range(n))
    assert shortcuts > 300


def test_pi_corral_restricts_to_pushes_into_the_corral() -> None:
    # The player (right) cannot reach the left room; the two fence boxes can only be pushed
    # into it, so only those two pushes are searched.
    text = "########\n#.  $  #\n#  #   #\n#. $  @#\n########"
    (level,) = parse_xsb(text)
    s = solver_for(level.floor, level.goals)
    cols = level.shape[1]
    boxes = sum(1 << int(i) for i in np.flatnonzero(level.boxes.ravel()))
    free = s.floor_bb & ~boxes
    reach = s._flood(1 << (level.player[0] * cols + level.player[1]), free)
    pushes = s._pi_corral(boxes, reach, s.corrals(reach, free))
    assert pushes is not None
    assert sorted((divmod(b, cols), d) for b, d in pushes) == [((1, 4), 2), ((3, 3), 2)]
    assert solve(level, mode="optimal").pushes == min_pushes(level) == 5


def test_areas_after_a_move_match_a_full_count() -> None:
    """The feature search counts a child's areas from its parent's with local checks,
    falling back to a flood; on random layouts and moves it must agree with the flood."""
    text = "\n".join(
        [
            "###########",
            "#@   #    #",
            "# ##   #  #",
            "#  #  ##  #",
            "#   $ #   #",
            "## #      #",
            "#    # ## #",
            "#    .    #",
            "###########",
        ]
    )
    (level,) = parse_xsb(text)
    s = Solver(level.floor, level.goals)
    full = s.areas
    floods = []
    s.areas = lambda boxes: floods.append(boxes) or full(boxes)  # type: ignore[method-assign]
    rng = random.Random(5)
    cells = bit_cells(s.floor_bb)
    trials, settled = 3000, 0
    for _ in range(trials):
        boxes = sum(1 << c for c in rng.sample(cells, rng.randint(1, 30)))
        free = s.floor_bb & ~boxes
        seed = rng.choice(bit_cells(free))
        reach = s._flood(1 << seed, free)
        before = full(boxes)
        moved = rng.choice(bit_cells(boxes))
        near = bit_cells(s._around(1 << moved) & free)
        target = rng.choice(near) if near and rng.random() < 0.7 else rng.choice(bit_cells(free))
        after = boxes & ~(1 << moved) | (1 << target)
        floods.clear()
        assert s.areas_after(boxes, reach, after, before) == full(after)
        settled += not floods
    assert settled > trials // 5  # the local checks, not only the flood, were exercised


def test_lower_bound_potentials_are_admissible() -> None:
    matching = get_potential("GridGames/Sokoban-v0", "matching")
    exact = get_potential("GridGames/Sokoban-v0", "solver")
    for level in generated(7, 7, 2, 15, seed=21):
        s = rules.new_state(level)
        best = min_pushes(level)
        assert -matching(s) <= best
        assert -exact(s) == best


def test_packing_order_fills_a_dead_end_from_its_far_end() -> None:
    """Goals down a one-wide dead end: the far goal must be filled first, or the near box
    walls it in. The order is worked out by pulling boxes back out, nearest first."""
    (level,) = parse_xsb("#########\n#@ $$...#\n#  $    #\n#########")
    cols = level.floor.shape[1]
    solver = solver_for(level.floor, level.goals)
    order = solver.packing_order(level.player[0] * cols + level.player[1])
    assert order == [1 * cols + 7, 1 * cols + 6, 1 * cols + 5]


def test_packing_order_with_the_player_on_a_goal() -> None:
    """A player on a goal (a level that starts so, or a game just after a push into a goal
    room) stood where the pulls put a box, so no box ever came out and the feature search
    had no order: the nearest cell of his area off the goals stands in for him."""
    from grid_envs.sokoban.solver import _bits

    for row in ("#  $$.+.#", "#  $$..+#"):
        (level,) = parse_xsb(f"#########\n{row}\n#  $    #\n#########")
        cols = level.floor.shape[1]
        solver = solver_for(level.floor, level.goals)
        player = level.player[0] * cols + level.player[1]
        boxes = _bits(np.flatnonzero((level.boxes & level.floor).ravel()))
        far_first = [1 * cols + 7, 1 * cols + 6, 1 * cols + 5]
        assert solver.packing_order(player) == far_first
        assert solver.packing_order(player, boxes) == far_first
        assert solver._off_goals(player, boxes) == 2 * cols + player % cols
    (level,) = parse_xsb("#########\n#    .+.#\n#  $$$  #\n#       #\n#########")
    solver, cols = solver_for(level.floor, level.goals), level.floor.shape[1]
    boxes = _bits(np.flatnonzero((level.boxes & level.floor).ravel()))
    assert solver.packing_order(level.player[0] * cols + level.player[1], boxes) is not None
    assert solve(level, max_seconds=5).solved


def _can_follow(solver: Solver, order: list[int], starts: int, player: int) -> bool:
    """Whether the goals can be filled in ``order``, each by a box from one of the
    ``starts`` cells pushed alone, the goals before it already filled."""
    filled = 0
    for goal in order:
        if all(solver.push_path(s, player, filled, goal) is None for s in bit_cells(starts)):
            return False
        filled |= 1 << goal
    return True


def test_packing_order_brings_boxes_in_from_where_they_stand() -> None:
    """Pulled out only to the player's side, a box may leave the goals by a way no box can
    come in by (here: the goals' right, which boxes reach only over the goals); pulled
    back to where boxes stand, every goal of the order can be filled in turn."""
    from grid_envs.sokoban.solver import _bits

    (level,) = parse_xsb(
        "########\n####@ ##\n####  ##\n#### * #\n#### ..#\n## # $$#\n##.$   #\n########"
    )
    solver = solver_for(level.floor, level.goals)
    cols = level.floor.shape[1]
    player = level.player[0] * cols + level.player[1]
    boxes = _bits(np.flatnonzero((level.boxes & level.floor).ravel()))
    starts = boxes & ~solver.goal_bb
    player_side = solver.packing_order(player)
    box_side = solver.packing_order(player, boxes)
    assert player_side is not None and box_side is not None
    assert sorted(box_side) == sorted(solver.goal_cells)
    assert not _can_follow(solver, player_side, starts, player)
    assert _can_follow(solver, box_side, starts, player)


def test_feature_search_alone_solves_and_replays() -> None:
    """The feature-space search of ``fast`` mode, run by itself to the end."""
    from grid_envs.sokoban.solver import _bits, _FeatureSearch

    for level in generated(9, 9, 3, 8, seed=4):
        solver = solver_for(level.floor, level.goals)
        cols = level.floor.shape[1]
        boxes = _bits(np.flatnonzero((level.boxes & level.floor).ravel()))
        player = level.player[0] * cols + level.player[1]
        order = solver.packing_order(player)
        assert order is not None and sorted(order) == sorted(solver.goal_cells)
        areas = solver.area_orders(order)
        h0 = solver.lower_bound(boxes)
        search = _FeatureSearch(solver, boxes, player, h0, areas, areas, areas)
        assert search.run(200_000) == "solved"
        assert search.found is not None
        result = solver._finish(boxes, player, search.pushes(), "fast", 0, 0, 0.0)
        assert replay_through_env(level, result.solution)["is_success"]


# a goal room of three goals behind a doorway (made for these tests)
GOAL_ROOM = "#########\n#   #...#\n# $ #   #\n#  $    #\n# $ #   #\n#@  #####\n#####"


def _push_all(level: Level, pushes: list[tuple[int, int]]) -> tuple[int, int]:
    """Apply (box cell, direction) pushes with walks in between; (boxes, player) after."""
    solver = solver_for(level.floor, level.goals)
    cols = level.floor.shape[1]
    from grid_envs.sokoban.solver import _bits

    boxes = _bits(np.flatnonzero((level.boxes & level.floor).ravel()))
    player = level.player[0] * cols + level.player[1]
    lurd = solver.pushes_to_lurd(boxes, player, pushes)  # raises if a push is out of reach
    state = rules.new_state(level)
    for a in rules.lurd_to_actions(state, lurd):
        rules.apply_action(state, a)
    return _bits(np.flatnonzero(state.boxes.ravel())), state.player[0] * cols + state.player[1]


def test_goal_macro_and_fill_path_take_a_box_to_the_next_slot() -> None:
    """The packing advisor's move brings a box to the goal the packing order fills first
    (the far corner of the room); a goal macro carries a box entering the goals to it."""
    (level,) = parse_xsb(GOAL_ROOM)
    solver = solver_for(level.floor, level.goals)
    cols = level.floor.shape[1]
    player = level.player[0] * cols + level.player[1]
    order = solver.packing_order(player)
    assert order == [1 * cols + 7, 1 * cols + 6, 1 * cols + 5]
    boxes = sum(1 << c for c in (2 * cols + 2, 3 * cols + 3, 4 * cols + 2))  # as drawn
    reach = solver._flood(1 << player, solver.floor_bb & ~boxes)
    path = solver.fill_path(boxes, reach, order[0])
    assert path is not None and len(path) > 1
    after, _ = _push_all(level, list(path))
    assert (after >> order[0]) & 1 and bin(after).count("1") == 3
    # a box pushed up onto the middle goal from below goes on to the first slot
    orders = solver.area_orders(order)
    middle = 1 * cols + 6
    boxes = 1 << middle | 1 << (2 * cols + 2) | 1 << (3 * cols + 2)
    macro = solver.goal_macro(boxes, middle, middle + cols, orders)
    assert macro == [(middle, 3)]  # one push right, onto (1, 7)


def test_fill_path_tries_the_box_a_matching_gives_the_goal_first() -> None:
    """``first`` (the box the state's matching gives the goal) is tried before the nearest
    boxes where it can get there; a cell holding no box changes nothing."""
    (level,) = parse_xsb(GOAL_ROOM)
    solver = solver_for(level.floor, level.goals)
    cols = level.floor.shape[1]
    player = level.player[0] * cols + level.player[1]
    order = solver.packing_order(player)
    assert order is not None
    far, near = 2 * cols + 2, 2 * cols + 5
    boxes = sum(1 << c for c in (far, 2 * cols + 3, near))
    reach = solver._flood(1 << player, solver.floor_bb & ~boxes)
    nearest = solver.fill_path(boxes, reach, order[0])
    assert nearest is not None and nearest[0][0] == near
    path = solver.fill_path(boxes, reach, order[0], first=far)
    assert path is not None and path[0][0] == far
    last, d = path[-1]
    assert last + solver.offsets[d] == order[0]  # the far box, pushed all the way in
    assert solver.fill_path(boxes, reach, order[0], first=player) == nearest


def test_macros_keep_unsolvable_sound_in_a_goal_room() -> None:
    """Goal macros and packing advice are extra moves, never the only ones: on random
    box placements in a goal-room level, ``fast`` calls a position unsolvable exactly
    when brute-force BFS finds no solution."""
    (level,) = parse_xsb(GOAL_ROOM)
    kinds = set()
    for trial in random_layouts(level, 3, 40, random.Random(1)):
        truth = min_pushes(trial)
        r = solve(trial, mode="fast", max_seconds=30)
        assert r.status != "gave_up"
        assert (r.status == "unsolvable") == (truth is None), truth
        if r.solved:
            assert replay_through_env(trial, r.solution)["is_success"]
        kinds.add(truth is None)
    assert kinds == {True, False}


def test_a_goal_macro_is_offered_besides_the_push_not_instead() -> None:
    """The packing order can be wrong for a position (a box may have to stay on the goal
    it entered), so the push onto the goal stays a child of its own next to the macro;
    were it dropped, an exhausted search would no longer prove a level unsolvable."""
    from grid_envs.sokoban.solver import _Search

    (level,) = parse_xsb(GOAL_ROOM)
    solver = solver_for(level.floor, level.goals)
    cols = level.floor.shape[1]
    orders = solver.area_orders(solver.packing_order(level.player[0] * cols + level.player[1]))
    below, middle, corner = 2 * cols + 6, 1 * cols + 6, 1 * cols + 7
    rest = 1 << (2 * cols + 2) | 1 << (4 * cols + 2)
    boxes = rest | 1 << below
    search = _Search(solver, boxes, 3 * cols + 6, solver.lower_bound(boxes), 1.0, orders)
    search.run(1)
    children = {b for b, _ in search.parent}
    assert rest | 1 << middle in children  # the push up onto the middle goal
    assert rest | 1 << corner in children  # and the macro on to the first slot


@pytest.mark.parametrize(
    ("box_moves", "pushes", "costs"),
    [(True, False, (2, 2)), (False, False, (2, 3)), (True, True, (4, 5)), (False, True, (4, 6))],
)
def test_the_feature_search_counts_box_moves_not_pushes(
    box_moves: bool, pushes: bool, costs: tuple[int, int]
) -> None:
    """A push of the box the state's own move pushed costs nothing in the feature search
    (it neither packs nor joins areas here); without box moves it costs one, as any
    other push that is not advised. Counting pushes as well adds one to every such push
    (the second feature search of ``fast`` mode)."""
    from grid_envs.sokoban.solver import _bits, _FeatureSearch

    (level,) = parse_xsb("#######\n#@$  .#\n#######")
    solver = solver_for(level.floor, level.goals)
    cols = level.floor.shape[1]
    boxes, player = _bits([cols + 2]), cols + 1
    areas = solver.area_orders(solver.packing_order(player, boxes))
    h0 = solver.lower_bound(boxes)
    search = _FeatureSearch(
        solver, boxes, player, h0, areas, pairs=False, box_moves=box_moves, pushes=pushes
    )
    # the start (cost 1; 2 with pushes counted, a constant the order of states ignores): one
    # push, of a box not yet moved
    assert search.run(1) == "open"
    assert [entry[0] for cell in search.cells.values() for entry in cell] == [costs[0]]
    assert search.run(1) == "open"  # that push's child: the same box, pushed on
    (entry,) = [entry for cell in search.cells.values() for entry in cell]
    assert entry[0] == costs[1]
    assert entry[4] == _bits([cols + 4])


def test_techniques_can_be_left_out_and_unknown_names_are_refused() -> None:
    from grid_envs.sokoban.solver import TECHNIQUES

    (level,) = parse_xsb(GOAL_ROOM)
    for left_out in [(), TECHNIQUES, *((name,) for name in TECHNIQUES)]:
        r = solve(level, mode="fast", max_seconds=10, without=left_out)
        assert r.solved and replay_through_env(level, r.solution)["is_success"]
    with pytest.raises(ValueError, match="unknown techniques \\['goal-macro'\\]"):
        solve(level, without=("goal-macro",))


def test_the_bold_searches_take_two_turns_and_the_weighted_ones_stop_early(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The near-greedy and the feature search take ``BOLD_SLICES`` slices a turn, the
    A*-like search one; past ``EARLY_SECONDS`` the weighted searches get no more turns
    where feature searches run, and the near-greedy one alone stops where none does.
    (The searches are kept from reporting success, so turns go on until one runs out of
    states.)"""
    from grid_envs.sokoban import portfolio
    from grid_envs.sokoban import solver as module

    turns: list[tuple[str, float, int]] = []
    run = module._Search.run

    def counted(self: module._Search, budget: int) -> str:
        name = f"{type(self).__name__}{getattr(self, 'count_pushes', '')}"
        turns.append((name, self.weight, budget))
        outcome = run(self, budget)
        return "open" if outcome == "solved" else outcome

    def share(name: str, weight: float) -> int:
        bold = name.startswith("_FeatureSearch") or weight > portfolio.GREEDY_WEIGHT
        return portfolio._SLICE * (portfolio.BOLD_SLICES if bold else 1)

    monkeypatch.setattr(module._Search, "run", counted)
    (level,) = parse_xsb(GOAL_ROOM)
    feature = {("_FeatureSearchFalse", 1.0), ("_FeatureSearchTrue", 1.0)}  # box moves; pushes
    everyone = {("_Search", w) for w in module.FAST_WEIGHTS} | feature
    assert len(everyone) == 4 and portfolio.BOLD_SLICES == 2

    # the pure-Python engine: every search is a _Search (the compiled one's turns are
    # tested in test_compiled_search.py)
    solve(level, max_seconds=0.2, engine="python")  # "unsolvable" once one runs out of states
    assert {(name, weight) for name, weight, _ in turns} == everyone
    assert all(budget == share(name, weight) for name, weight, budget in turns)

    turns.clear()
    released: list[module._Search] = []
    release = module._Search.release

    def counted_release(self: module._Search) -> None:
        released.append(self)
        release(self)

    monkeypatch.setattr(module._Search, "release", counted_release)
    monkeypatch.setattr(portfolio, "EARLY_SECONDS", -1.0)
    solve(level, max_seconds=0.2, engine="python")
    # the weighted searches stop for good, and drop their tables for the feature searches
    assert {(s.feature, s.weight) for s in released} == {(0, w) for w in module.FAST_WEIGHTS}
    assert all(not s.parent and not s.heap and not s.best_g for s in released)
    assert {(name, weight) for name, weight, _ in turns} == feature
    assert all(budget == share(name, weight) for name, weight, budget in turns)

    # without a feature search, the near-greedy search alone stops
    turns.clear()
    released.clear()
    solve(level, max_seconds=0.2, engine="python", without=("feature-search",))
    greedy = {w for w in module.FAST_WEIGHTS if w > portfolio.GREEDY_WEIGHT}
    assert released and {s.weight for s in released} == greedy
    assert all(not s.parent and not s.heap and not s.best_g for s in released)
    assert {(name, weight) for name, weight, _ in turns} == {
        ("_Search", w) for w in module.FAST_WEIGHTS if w <= portfolio.GREEDY_WEIGHT
    }
    assert all(budget == share(name, weight) for name, weight, budget in turns)
