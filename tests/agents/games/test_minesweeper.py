"""The Minesweeper baseline: the solver as an agent reads only what the player sees."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from agents import evaluate, make_agent
from agents.games.minesweeper import view_from_observation
from grid_envs.minesweeper.solver import HIDDEN


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


def test_solver_beats_random_by_far() -> None:
    solver = evaluate("GridGames/Minesweeper-v0", "solver", episodes=200, seed=0)
    random = evaluate("GridGames/Minesweeper-v0", "random", episodes=200, seed=0)
    assert solver.win_rate > 0.85 and random.win_rate < 0.05


@pytest.mark.parametrize("rule", ["safe", "zero", "any"])
def test_solver_plays_every_rule(rule: str) -> None:
    r = evaluate("GridGames/Minesweeper-v0", "solver", episodes=40, seed=1,
                 env_kwargs={"first_click": rule})  # fmt: skip
    assert r.win_rate > (0.5 if rule == "any" else 0.8)
