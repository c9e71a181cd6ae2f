"""The Knight's baselines beyond what every game's keep (test_baselines.py): Dijkstra
escapes every maze with exactly the energy it has, names a step onto a cheapest route
from any state, and escapes where random does not."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from agents import evaluate, make_agent
from grid_envs.core.grid import DIRECTIONS
from grid_envs.knight import levels
from grid_envs.knight.rules import entry_cost
from grid_envs.knight.solver import exit_distances


def play(env: gym.Env, agent, seed: int) -> dict:
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        action, _ = agent.predict(obs)
        obs, _, terminated, truncated, info = env.step(int(action))
        done = terminated or truncated
    return info


# What the algorithm guarantees


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


# What it names as a teacher


def test_dijkstra_names_a_step_onto_a_cheapest_route_from_any_state() -> None:
    """In the states a learner's wandering reaches (random moves first, as DAgger's), the
    label is a move to a neighbour ``v`` with ``price(v) + dist(v) == dist(u)``."""
    env = gym.make("GridGames/Knight-v0")
    agent = make_agent("dijkstra", env, seed=0)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        for _ in range(int(rng.integers(0, 6))):
            obs, _, done, _, _ = env.step(
                int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
            )
            if done:
                break
        else:
            state = env.unwrapped.game_state()
            action, good = agent.label(env.unwrapped, obs)
            dist = exit_distances(state.level)
            r, c = state.knight
            dr, dc = DIRECTIONS[action]
            price = entry_cost(bool(state.level.monsters[r + dr, c + dc]), state.level.monster_cost)
            assert price + dist[r + dr, c + dc] == dist[r, c] and good.sum() == 1
            checked += 1
    assert checked >= 10


# Against the other agents


def test_random_never_escapes_and_dijkstra_always_does() -> None:
    assert evaluate("GridGames/Knight-v0", "random", episodes=50, seed=0).win_rate < 0.1
    assert evaluate("GridGames/Knight-Large-v0", "dijkstra", episodes=20, seed=0).win_rate == 1.0
