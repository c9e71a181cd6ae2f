"""Minesweeper's baselines beyond what every game's keep (test_baselines.py): the solver
reads only what the player sees and plays every first-click rule, names only cells that
are safe as a teacher, and wins where random does not."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from agents import evaluate, make_agent
from agents.games.minesweeper import view_from_observation
from grid_envs.minesweeper.solver import HIDDEN
from tests.agents.games import play_labels

# What the algorithm guarantees


def test_the_agent_reads_only_the_observation() -> None:
    env = gym.make("GridGames/Minesweeper-v0", observation_mode="compact")
    obs, _ = env.reset(seed=3)
    agent = make_agent("solver", env)
    assert int(agent.predict(obs)[0]) == 0  # the corner under the safe rule
    view = view_from_observation(obs)
    assert (view == HIDDEN).all()
    obs, *_ = env.step(0)
    planes_env = gym.make("GridGames/Minesweeper-v0")
    planes_env.reset(seed=3)
    planes_obs, *_ = planes_env.step(0)
    np.testing.assert_array_equal(view_from_observation(obs), view_from_observation(planes_obs))
    assert (view_from_observation(obs) >= HIDDEN).all()
    for _ in range(10):  # a whole game in compact mode
        obs, _, done, _, _ = env.step(int(agent.predict(obs)[0]))
        if done:
            break
    with pytest.raises(ValueError, match="planes or compact"):
        view_from_observation(np.zeros((9, 9, 3, 2)))


@pytest.mark.parametrize("rule", ["safe", "zero", "any"])
def test_solver_plays_every_rule(rule: str) -> None:
    r = evaluate("GridGames/Minesweeper-v0", "solver", episodes=40, seed=1,
                 env_kwargs={"first_click": rule})  # fmt: skip
    assert r.win_rate > (0.5 if rule == "any" else 0.8)


def test_the_end_game_search_can_be_left_out() -> None:
    """``end_game=False`` guesses by the rule of thumb to the last cell: it never names a
    chance of winning, where the default does on some of the same boards."""
    named = {}
    for end_game in (True, False):
        env = gym.make("GridGames/Minesweeper-v0", rows=6, cols=6, mines=5)
        agent = make_agent("solver", env, end_game=end_game)
        chances = []
        for seed in range(30):
            obs, _ = env.reset(seed=seed)
            done = False
            while not done:
                obs, _, term, trunc, _ = env.step(int(agent.predict(obs)[0]))
                done = term or trunc
            (solver,) = agent._solvers.values()
            assert solver.end_game is end_game
            chances.append(solver.win_chance)
        named[end_game] = [c for c in chances if c is not None]
    assert named[True] and not named[False]


# What it names as a teacher


def test_minesweeper_solver_names_only_cells_that_are_safe() -> None:
    said, _ = play_labels("GridGames/Minesweeper-v0", "solver", 10, pick_any=True)
    sizes = []
    for state, action, good, mask in said:
        assert good[action] and not (good & ~mask).any()
        if good.sum() > 1:  # sure cells, never a mine
            assert not state.mines.ravel()[np.flatnonzero(good)].any()
        sizes.append(int(good.sum()))
    assert max(sizes) > 1


# Against the other agents


def test_solver_beats_random_by_far() -> None:
    solver = evaluate("GridGames/Minesweeper-v0", "solver", episodes=200, seed=0)
    random = evaluate("GridGames/Minesweeper-v0", "random", episodes=200, seed=0)
    assert solver.win_rate > 0.85 and random.win_rate < 0.05
