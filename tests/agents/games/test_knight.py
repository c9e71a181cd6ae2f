"""The Knight baselines: Dijkstra escapes every maze at the exact energy."""

from __future__ import annotations

import gymnasium as gym

from agents import evaluate, make_agent
from grid_envs.knight import levels


def play(env: gym.Env, agent, seed: int) -> dict:
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        action, _ = agent.predict(obs)
        obs, _, terminated, truncated, info = env.step(int(action))
        done = terminated or truncated
    return info


def test_dijkstra_agent_escapes_every_sample_with_exact_energy() -> None:
    paths = levels.sample_paths()
    assert len(paths) == 10
    for i in range(10):
        env = gym.make("GridGames/Knight-v0", levels="samples")
        agent = make_agent("dijkstra", env)
        env.reset(options={"level": i})
        obs = env.unwrapped.observe()
        done = False
        while not done:
            obs, _, done, _, info = env.step(int(agent.predict(obs)[0]))
        assert info["is_success"] and info["energy"] == 0


def test_dijkstra_agent_escapes_1000_generated_levels_with_exact_energy() -> None:
    env = gym.make("GridGames/Knight-v0")
    agent = make_agent("dijkstra", env)
    for seed in range(1000):
        info = play(env, agent, seed)
        assert info["is_success"] and info["energy"] == 0, seed


def test_random_never_escapes_and_dijkstra_always_does() -> None:
    assert evaluate("GridGames/Knight-v0", "random", episodes=50, seed=0).win_rate < 0.1
    assert evaluate("GridGames/Knight-Large-v0", "dijkstra", episodes=20, seed=0).win_rate == 1.0
