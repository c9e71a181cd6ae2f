"""The exact searches: fewest moves from every position (checked against a plain search
over the env's own rules)."""

from __future__ import annotations

import copy
from collections import deque

import gymnasium as gym
import numpy as np
import pytest

from grid_envs.sokoban import bfs, rules
from grid_envs.sokoban.bfs import move_distances, position_key
from grid_envs.sokoban.levels import parse_xsb
from grid_envs.sokoban.state import SokobanState


def key_of(s: SokobanState) -> int:
    cols = s.floor.shape[1]
    return position_key(rules.bits(s.boxes), s.player[0] * cols + s.player[1], s.floor.size)


def fewest_moves(start: SokobanState) -> int | None:
    """A plain BFS over positions, stepping with the rules themselves (no pruning)."""
    seen = {key_of(start)}
    queue = deque([(start, 0)])
    while queue:
        s, depth = queue.popleft()
        if rules.is_solved(s):
            return depth
        for action in np.flatnonzero(rules.legal_mask(s)):
            child = copy.deepcopy(s)
            rules.apply_action(child, int(action))
            if key_of(child) not in seen:
                seen.add(key_of(child))
                queue.append((child, depth + 1))
    return None


def states(episodes: int) -> list[SokobanState]:
    env = gym.make("GridGames/Sokoban-Small-v0")
    out = []
    for seed in range(episodes):
        env.reset(seed=seed)
        out.append(copy.deepcopy(env.unwrapped.game_state()))
    return out


def test_move_distances_match_a_plain_search_from_the_start_and_from_random_positions() -> None:
    rng = np.random.default_rng(0)
    for start in states(6):
        table = move_distances(start)
        assert table is not None and table[key_of(start)] == fewest_moves(start)
        s = copy.deepcopy(start)
        for _ in range(8):  # wander off: every position reached has its exact distance
            if rules.is_solved(s) or (s.boxes & s.dead).any():
                break  # the episode ends here (a box on a dead square: not followed)
            legal = np.flatnonzero(rules.legal_mask(s))
            rules.apply_action(s, int(rng.choice(legal)))
            truth = fewest_moves(s)
            assert table[key_of(s)] == (-1 if truth is None else truth)


def test_a_position_that_cannot_be_solved_reads_minus_one() -> None:
    level = parse_xsb("#####\n#@$.#\n#   #\n#####")[0]
    start = rules.new_state(level)
    pushed = copy.deepcopy(start)
    rules.apply_action(pushed, rules.PUSH_RIGHT)  # the box onto the goal: solved
    table = move_distances(start)
    assert table is not None and table[key_of(start)] == 1 and table[key_of(pushed)] == 0
    stuck = rules.new_state(parse_xsb("######\n#@ $ #\n#.   #\n######")[0])
    table = move_distances(stuck)  # the box can only go along the top wall
    assert table is not None and table[key_of(stuck)] == -1
    rules.apply_action(stuck, rules.MOVE_RIGHT)  # a walk step: still -1, still a key
    assert table[key_of(stuck)] == -1


def test_one_table_serves_every_position_of_its_room_and_no_other_key() -> None:
    first = rules.new_state(parse_xsb("#######\n#@    #\n# $ $ #\n#  .. #\n#######")[0])
    near = rules.new_state(parse_xsb("#######\n#    @#\n#  $$ #\n#  .. #\n#######")[0])
    stuck = rules.new_state(parse_xsb("#######\n#   $@#\n#  $  #\n#  .. #\n#######")[0])
    table = move_distances(first)
    assert table is not None and len(table) > 0
    for s in (first, near, stuck):  # boxes elsewhere, the player elsewhere: one table
        truth = fewest_moves(s)
        assert table[key_of(s)] == (-1 if truth is None else truth)
    assert table[key_of(stuck)] == -1 < table[key_of(near)]
    cells = first.floor.size
    with pytest.raises(KeyError):
        table[position_key(1, 8, cells)]  # one box, on a wall
    with pytest.raises(KeyError):
        table[position_key(rules.bits(first.boxes), 0, cells)]  # the player on a wall


def test_move_distances_give_up_past_max_states_or_past_the_numbering() -> None:
    start = states(1)[0]
    full = move_distances(start)
    assert full is not None and len(full) > 10
    assert move_distances(start, max_states=10) is None
    again = move_distances(start, max_states=len(full))
    assert again is not None and again[key_of(start)] == full[key_of(start)]
    room = bfs._Room(start.floor, int(start.boxes.sum()))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bfs, "MAX_SPACE", room.space - 1)
        assert move_distances(start) is None
