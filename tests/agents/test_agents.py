"""The agent interface, the registry and the evaluation routine (what every game's baselines
keep is tests/agents/games/test_baselines.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from agents import RandomAgent, evaluate, make_agent, wilson_interval


def test_evaluation_is_deterministic() -> None:
    a = evaluate("GridGames/Sokoban-Small-v0", "random", episodes=30, seed=4)
    b = evaluate("GridGames/Sokoban-Small-v0", "random", episodes=30, seed=4)
    assert a.returns == b.returns and a.lengths == b.lengths and a.wins == b.wins
    c = evaluate("GridGames/Sokoban-Small-v0", "random", episodes=30, seed=5)
    assert c.returns != a.returns
    d = a.to_dict()
    for key in ("env", "agent", "episodes", "win_rate", "win_rate_ci", "mean_return",
                "mean_length", "steps_per_second"):  # fmt: skip
        assert key in d
    lo, hi = a.win_rate_ci
    assert 0 <= lo <= a.win_rate <= hi <= 1


def test_wilson_interval() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    lo, hi = wilson_interval(0, 20)
    assert lo == 0.0 and 0.1 < hi < 0.2


def test_predict_on_a_batch_and_sb3_evaluate_policy() -> None:
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    vec = make_vec_env("GridGames/Sokoban-Small-v0", n_envs=3, seed=0)
    agent = RandomAgent(vec, seed=0)
    obs = vec.reset()
    actions, _ = agent.predict(obs)
    assert actions.shape == (3,)
    for env, a in zip(vec.envs, actions, strict=True):
        assert env.unwrapped.action_masks()[a]
    mean, std = evaluate_policy(agent, vec, n_eval_episodes=6, warn=False)
    assert np.isfinite(mean) and std >= 0


def test_unbound_agent_and_unknown_agent_are_clear_errors() -> None:
    with pytest.raises(RuntimeError, match="not bound"):
        RandomAgent().predict(np.zeros((7, 7, 7), dtype=np.uint8))
    with pytest.raises(ValueError, match="no agent 'nope' for GridGames/Sokoban-v0"):
        make_agent("nope", gym.make("GridGames/Sokoban-v0"))
    with pytest.raises(TypeError, match="GridGames envs"):
        RandomAgent(gym.make("FrozenLake-v1"))
