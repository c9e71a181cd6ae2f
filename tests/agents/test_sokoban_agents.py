"""The Sokoban solver agent: wins, follows its plan, replans on surprise."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from agents import evaluate, list_agents, make_agent
from agents.sokoban import SOKOBAN_IDS


@pytest.mark.parametrize("env_id", SOKOBAN_IDS)
def test_solver_agent_wins_generated_levels(env_id: str) -> None:
    assert "solver" in list_agents(env_id)
    result = evaluate(env_id, "solver", episodes=12, seed=1)
    assert result.win_rate == 1.0
    baseline = evaluate(env_id, "random", episodes=12, seed=1)
    assert result.mean_return > baseline.mean_return


def test_solver_agent_replans_when_the_state_changes() -> None:
    env = gym.make("GridGames/Sokoban-v0", level_pool=None)  # seed 2's level leaves moves
    agent = make_agent("solver", env, seed=0)
    obs, _ = env.reset(seed=2)
    agent.predict(obs)
    first = agent.last_result
    rng = np.random.default_rng(0)
    # someone else plays two moves: the plan no longer fits and the agent plans again
    for _ in range(2):
        moves = np.flatnonzero(env.unwrapped.action_masks()[:4])
        obs, *_ = env.step(int(rng.choice(moves)))
    done = False
    steps = 0
    while not done:
        action, _ = agent.predict(obs)
        obs, _, terminated, truncated, info = env.step(int(action))
        done = terminated or truncated
        steps += 1
    assert agent.last_result is not first
    assert info["is_success"]
