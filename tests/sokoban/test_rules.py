"""Sokoban rules on hand-built levels: moves, pushes, rewards, deadlocks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grid_envs.sokoban import SokobanEnv, parse_xsb, rules
from grid_envs.sokoban.solver import solve
from grid_envs.sokoban.state import cell_codes
from tests.conftest import CORNER, ONE_PUSH, make_level_env

UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3


def state_of(xsb: str) -> rules.SokobanState:
    return rules.new_state(parse_xsb(xsb)[0])


@pytest.mark.parametrize(
    ("action", "legal", "player", "box"),
    [
        (UP, True, (1, 4), (2, 3)),
        (DOWN, True, (3, 4), (2, 3)),
        (RIGHT, True, (2, 5), (2, 3)),
        (LEFT, False, (2, 4), (2, 3)),  # a box is there: moving into it is not a move
        (4 + LEFT, True, (2, 3), (2, 2)),  # push left onto the goal
        (4 + RIGHT, False, (2, 4), (2, 3)),  # nothing to push
        (4 + UP, False, (2, 4), (2, 3)),
    ],
)
def test_action_table(action: int, legal: bool, player: tuple, box: tuple) -> None:
    s = state_of(ONE_PUSH)
    assert rules.legal_mask(s)[action] == legal
    if legal:
        rules.apply_action(s, action)
    assert s.player == player
    assert s.boxes[box] and s.boxes.sum() == 1


def test_push_onto_target_scores_and_solves(one_push_env) -> None:
    _obs, reward, terminated, truncated, info = one_push_env.step(4 + LEFT)
    assert reward == pytest.approx(-0.1 + 1.0 + 10.0)
    assert terminated and not truncated
    assert info["is_success"] and info["solved"] and info["boxes_on_target"] == 1


def test_push_off_target_costs() -> None:
    env = make_level_env("########\n#      #\n# $.   #\n#  *@  #\n#      #\n########")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(4 + LEFT)
    # the box leaves its goal; it stays live (it can come back) so the game goes on
    assert reward == pytest.approx(-0.1 - 1.0)
    assert not terminated and info["boxes_on_target"] == 0


def test_mask_has_at_most_one_action_per_direction() -> None:
    s = state_of(CORNER)
    mask = rules.legal_mask(s)
    for d in range(4):
        assert not (mask[d] and mask[4 + d])


def test_corner_deadlock_terminates_with_penalty() -> None:
    env = make_level_env(CORNER)
    env.reset(seed=0)
    # walk left of the bottom box, then push it into the bottom-right corner
    for a in rules.lurd_to_actions(env.unwrapped.game_state(), "lldd"):
        env.step(a)
    _, reward, terminated, _, info = env.step(4 + RIGHT)  # box to (5, 4), a dead corner
    assert terminated and info["deadlocked"] and not info["is_success"]
    limit = env.unwrapped.time_limit
    assert reward == pytest.approx(-0.1 - 0.1 * limit)


def test_deadlock_never_pays_better_than_running_out_of_time() -> None:
    env = make_level_env(CORNER)
    limit = env.unwrapped.time_limit
    env.reset(seed=0)
    for a in rules.lurd_to_actions(env.unwrapped.game_state(), "lldd"):
        env.step(a)
    steps_so_far = env.unwrapped.steps
    _, reward, *_ = env.step(4 + RIGHT)
    # the same step and then idling until the time limit:
    idle = -0.1 + (-0.1) * (limit - steps_so_far - 1)
    assert reward <= idle


def test_terminate_on_deadlock_can_be_switched_off() -> None:
    env = make_level_env(CORNER, terminate_on_deadlock=False)
    env.reset(seed=0)
    for a in rules.lurd_to_actions(env.unwrapped.game_state(), "lldd"):
        env.step(a)
    _, reward, terminated, _, info = env.step(4 + RIGHT)
    assert not terminated and info["deadlocked"]
    assert reward == pytest.approx(-0.1)


@pytest.mark.parametrize(
    ("xsb", "dead"),
    [
        # box in a corner off its goal
        ("#####\n#$  #\n#  .#\n# @ #\n#####", True),
        # box on its goal in a corner: fine
        ("######\n#*   #\n# $. #\n#    #\n# @  #\n######", False),
        # box against a wall with no goal on that wall: dead square
        ("######\n#    #\n#$  .#\n#  @ #\n######", True),
        # box against a wall with a goal on that wall: alive
        ("######\n#.   #\n#$   #\n#  @ #\n######", False),
        # 2x2 block of boxes, one off goal: frozen
        ("#######\n#     #\n# $$  #\n# $*  #\n#...@ #\n#######", True),
        # two boxes side by side against the top wall, one off goal: frozen
        ("#######\n#.$*  #\n#     #\n#  @  #\n#######", True),
        # two boxes side by side in open space: free
        ("#######\n#     #\n# $$  #\n# .. @#\n#######", False),
    ],
)
def test_deadlock_detection(xsb: str, dead: bool) -> None:
    assert rules.is_deadlocked(state_of(xsb)) == dead


def test_dead_squares_are_the_cells_no_goal_can_be_reached_from() -> None:
    s = state_of("######\n#    #\n#$  .#\n#  @ #\n######")
    # every floor cell touching the top, left or bottom wall is dead except the goal row
    assert s.dead[1, 1] and s.dead[1, 4] and s.dead[3, 1] and s.dead[2, 1]
    assert not s.dead[2, 2] and not s.dead[2, 4]


def _pull_search(floor: np.ndarray, goals: np.ndarray) -> dict[tuple[int, int], int]:
    """Push distances by a plain breadth-first search over pulls, as a check."""
    rows, cols = floor.shape
    dist = {(r, c): 0 for r, c in zip(*np.nonzero(goals & floor), strict=True)}
    frontier = list(dist)
    while frontier:
        nxt = []
        for r, c in frontier:
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                one, two = (r + dr, c + dc), (r + 2 * dr, c + 2 * dc)
                inside = 0 <= two[0] < rows and 0 <= two[1] < cols
                if inside and floor[one] and floor[two] and one not in dist:
                    dist[one] = dist[(r, c)] + 1
                    nxt.append(one)
        frontier = nxt
    return dist


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 9), st.integers(3, 11))
def test_push_distances_are_a_search_over_pulls(seed: int, rows: int, cols: int) -> None:
    """The compiled search, one room and a batch of rooms, against a plain one."""
    rng = np.random.default_rng(seed)
    floor = rng.random((3, rows, cols)) < 0.7
    goals = rng.random((3, rows, cols)) < 0.15
    many = rules.push_distances_many(floor, goals)
    for i in range(3):
        expected = np.full((rows, cols), -1)
        for cell, d in _pull_search(floor[i], goals[i]).items():
            expected[cell] = d
        assert np.array_equal(rules.push_distances(floor[i], goals[i]), expected)
        assert np.array_equal(many[i], expected)


def test_lurd_round_trip_and_errors() -> None:
    s = state_of(ONE_PUSH)
    actions = rules.lurd_to_actions(s, "urdlL")
    assert rules.actions_to_lurd(actions) == "urdlL"
    with pytest.raises(ValueError, match="position 0"):
        rules.lurd_to_actions(s, "x")
    with pytest.raises(ValueError, match="position 1: 'U'"):
        rules.lurd_to_actions(s, "uU")


def test_level_without_a_legal_first_action_is_rejected() -> None:
    # the player is walled in by two boxes in a row: nothing can ever move
    with pytest.raises(ValueError, match="deadlocked at the start"):
        make_level_env("######\n##@$$#\n####.#\n####.#\n######")


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), actions=st.lists(st.integers(0, 7), max_size=80))
def test_boxes_are_never_created_or_lost(seed: int, actions: list[int]) -> None:
    env = SokobanEnv(rows=8, cols=8, num_boxes=3, terminate_on_deadlock=False)
    env.reset(seed=seed)
    s = env.state
    floor = s.floor.copy()
    snap = env.snapshot()
    for i, a in enumerate(actions):
        if env.episode_over:
            break
        if i % 7 == 6:  # back to the start now and then: the counts come from the state
            env.restore(snap)
        _, _, _, _, info = env.step(a)
        s = env.state
        assert s.boxes.sum() == 3 and s.goals.sum() == 3
        assert info["boxes_on_target"] == (s.boxes & s.goals).sum()  # counted as pushed
        assert info["num_boxes"] == 3
        assert not (s.boxes & ~floor).any()
        assert floor[s.player] and not s.boxes[s.player]
        planes = env.observe()
        assert (planes.sum(axis=0) == 1).all()  # one-hot in every cell
        # the codes the env changes by fixed amounts are the codes of the state
        assert (planes.argmax(axis=0) == cell_codes(s, env.obs_shape)).all()


def test_solves_replays_a_solution_and_refuses_a_wrong_one() -> None:
    level = parse_xsb(ONE_PUSH)[0]
    solution = solve(level, mode="optimal").solution
    assert rules.solves(level, solution)
    assert not rules.solves(level, solution[:-1])
    with pytest.raises(ValueError, match="LURD position 0"):
        rules.solves(level, "x")


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n_boxes=st.integers(2, 5))
def test_the_test_after_a_push_agrees_with_the_whole_board_test(seed: int, n_boxes: int) -> None:
    """deadlocked_after_push tests only the pushed box and those joined to it; along random
    play (deadlocks not ending the episode) it says what is_deadlocked says of the board."""
    import numpy as np

    env = SokobanEnv(rows=8, cols=8, num_boxes=n_boxes, level_pool=None)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    state, before = env.game_state(), False
    for _ in range(400):
        legal = np.flatnonzero(rules.legal_mask(state))
        if not len(legal):
            break
        action = int(rng.choice(legal))
        rules.apply_action(state, action)
        if action < 4:
            continue
        dr, dc = rules.DIRECTIONS[action - 4]
        cell = (state.player[0] + dr, state.player[1] + dc)
        after = rules.deadlocked_after_push(state, cell, before)
        assert after == rules.is_deadlocked(state)
        if rules.is_solved(state):
            break
        before = after


def test_the_solver_and_the_envs_share_one_freeze_test() -> None:
    from grid_envs.sokoban import solver

    assert solver.frozen is rules.frozen
    s = state_of("#######\n#.$*  #\n#     #\n#  @  #\n#######")
    room = rules.room_of(s)
    assert rules.frozen(room, rules.bits(s.boxes), 1 * room.width + 2)  # held by its pair
    assert not rules.frozen(room, rules.bits(s.boxes) & ~(1 << (1 * room.width + 3)), 9)
