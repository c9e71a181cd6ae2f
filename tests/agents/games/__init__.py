"""Each game's baselines: what every game's keep (``test_baselines.py``, one test a
property, run for every game) and what is one game's own (``test_<game>.py``, each in the
same order: what its algorithm guarantees, what it names as a teacher, how it compares
with the other agents)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agents.registry import make_agent


def play_labels(
    env_id: str, agent_name: str, episodes: int, pick_any: bool, **kwargs: Any
) -> tuple[list[tuple[Any, int, np.ndarray, np.ndarray]], int]:
    """Each state's label over ``episodes`` games, as (game state, action, the actions the
    agent rates as good, the legal actions), and the games won; with ``pick_any`` the move
    played is a random one of the equally good actions, not the agent's own."""
    env = gym.make(env_id, **kwargs)
    agent = make_agent(agent_name, env, seed=0)
    rng = np.random.default_rng(0)
    said, wins = [], 0
    for episode in range(episodes):
        obs, _ = env.reset(seed=episode)
        agent.reset()
        done, info = False, {}
        while not done:
            action, good = agent.label(env.unwrapped, obs)
            mask = env.unwrapped.action_masks()
            said.append((env.unwrapped.game_state(), action, good, mask))
            move = int(rng.choice(np.flatnonzero(good))) if pick_any else action
            obs, _, terminated, truncated, info = env.step(move)
            done = terminated or truncated
        wins += bool(info.get("is_success"))
    return said, wins
