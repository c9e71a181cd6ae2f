"""The generator keeps its promises: solvable, seeded, varied, not trivial."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from grid_envs.sokoban import SokobanGenerator, rules
from grid_envs.sokoban.bfs import min_pushes


@pytest.mark.parametrize(("rows", "cols", "boxes"), [(7, 7, 2), (10, 10, 4), (8, 12, 3)])
def test_certificate_replays_to_a_win_through_the_env(rows: int, cols: int, boxes: int) -> None:
    gen = SokobanGenerator(rows, cols, boxes)
    rng = np.random.default_rng(rows * 100 + boxes)
    for _ in range(25):
        g = gen.generate(rng)
        env = gym.make("GridGames/Sokoban-v0", levels=g.level, time_limit=None)
        env.reset(seed=0)
        assert g.level.num_boxes == boxes
        actions = rules.lurd_to_actions(env.unwrapped.game_state(), g.solution)
        for i, a in enumerate(actions):
            _, _, terminated, _, info = env.step(a)
            assert not info["illegal_action"]
            assert terminated == (i == len(actions) - 1)
        assert info["is_success"]
        assert g.pushes == sum(c.isupper() for c in g.solution)


def test_same_seed_same_level_different_seeds_differ() -> None:
    gen = SokobanGenerator()
    a = gen.generate(np.random.default_rng(3))
    b = gen.generate(np.random.default_rng(3))
    assert a.level.same_puzzle(b.level) and a.solution == b.solution
    levels = [gen.generate(np.random.default_rng(s)).level for s in range(20)]
    distinct = {lv.boxes.tobytes() + lv.floor.tobytes() for lv in levels}
    assert len(distinct) == 20


def test_levels_are_not_trivial() -> None:
    """Optimal push counts by exhaustive BFS: a spread, and rarely a one-push level."""
    gen = SokobanGenerator(7, 7, 2)
    rng = np.random.default_rng(11)
    optimal = []
    for _ in range(40):
        g = gen.generate(rng)
        best = min_pushes(g.level)
        assert best is not None and 1 <= best <= g.pushes
        optimal.append(best)
    assert np.median(optimal) >= 3
    assert np.mean(np.array(optimal) == 1) < 0.15
    assert len(set(optimal)) >= 4


def test_start_is_never_solved_or_deadlocked() -> None:
    gen = SokobanGenerator(10, 10, 4)
    rng = np.random.default_rng(5)
    for _ in range(100):
        s = rules.new_state(gen.generate(rng).level)
        assert not rules.is_solved(s)
        assert not rules.is_deadlocked(s)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rows": 4}, "rows must be between 5 and 256"),
        ({"num_boxes": 0}, "num_boxes must be between 1 and 16"),
        ({"num_boxes": 40}, "got 40"),
        ({"pulls": 0}, "pulls must be at least 1"),
        ({"floor_fraction": 0.05}, "floor_fraction"),
    ],
)
def test_bad_settings_raise(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SokobanGenerator(**kwargs)


def test_env_sizes_follow_the_generator() -> None:
    env = gym.make("GridGames/Sokoban-v0", rows=8, cols=12, num_boxes=3)
    obs, info = env.reset(seed=0)
    assert obs.shape == (7, 8, 12) and info["num_boxes"] == 3


def test_bfs_oracle_on_known_levels() -> None:
    from grid_envs.sokoban import parse_xsb

    assert min_pushes(parse_xsb("#######\n#     #\n# .$@ #\n#     #\n#######")[0]) == 1
    assert min_pushes(parse_xsb("########\n#      #\n# . $ @#\n#      #\n########")[0]) == 2
    # a box in a corner can never reach the goal
    assert min_pushes(parse_xsb("######\n#$   #\n#  . #\n#  @ #\n######")[0]) is None


def test_min_pushes_is_proved() -> None:
    gen = SokobanGenerator(7, 7, 2, min_pushes=5)
    rng = np.random.default_rng(2)
    for _ in range(8):
        g = gen.generate(rng)
        assert g.optimal_pushes is not None and g.optimal_pushes >= 5
        assert min_pushes(g.level) == g.optimal_pushes
    env = gym.make("GridGames/Sokoban-Small-v0", min_pushes=5)
    _, info = env.reset(seed=0)
    assert info["optimal_pushes"] >= 5
    with pytest.raises(ValueError, match="min_pushes must be at least 0"):
        SokobanGenerator(min_pushes=-1)
