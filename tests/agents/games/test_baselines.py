"""What every game's baselines keep, one test a property, each run for every game: legal
moves to the end, the same episodes from the same seed, labels a teacher can be cloned
from, and a game's teacher above random. A game declared later is tested here as it
registers (its ids, its agents and its compare row's teacher)."""

from __future__ import annotations

import gymnasium as gym
import pytest

from agents import evaluate, list_agents, make_agent
from agents.train.config import compare_rows
from tests.conftest import ENV_IDS

PAIRS = [(env_id, name) for env_id in ENV_IDS for name in list_agents(env_id)]
# each game's compare id and its agents: the properties that play whole games run there
GAME_PAIRS = [(env_id, name) for env_id in compare_rows() for name in list_agents(env_id)]
TEACHERS = [(env_id, row["teacher"]) for env_id, row in compare_rows().items() if "teacher" in row]
CAP = {"max_episode_steps": 60}  # Lines98's look-ahead plays games of thousands of moves


@pytest.mark.parametrize(("env_id", "name"), PAIRS)
def test_every_baseline_plays_legal_moves_to_the_end(env_id: str, name: str) -> None:
    """Legal moves to the episode's end, or for 300 moves, on every registered id."""
    env = gym.make(env_id, max_episode_steps=300)
    agent = make_agent(name, env, seed=0)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        action, state = agent.predict(obs, deterministic=True)
        assert state is None
        assert env.unwrapped.action_masks()[int(action)]
        obs, _, terminated, truncated, info = env.step(int(action))
        assert not info["illegal_action"]
        done = terminated or truncated


@pytest.mark.parametrize(("env_id", "name"), GAME_PAIRS)
def test_every_baseline_plays_the_same_episodes_from_the_same_seed(env_id: str, name: str) -> None:
    first, again = (evaluate(env_id, name, 3, seed=7, env_kwargs=CAP) for _ in range(2))
    assert first.returns == again.returns and first.lengths == again.lengths


@pytest.mark.parametrize(("env_id", "name"), GAME_PAIRS)
def test_every_baseline_labels_a_legal_move_among_legal_equals(env_id: str, name: str) -> None:
    """What a teacher says (``Agent.label``) in the states of its own play: a legal action,
    named among the actions it rates as good, all of them legal."""
    env = gym.make(env_id, **CAP)
    agent = make_agent(name, env, seed=0)
    obs, _ = env.reset(seed=3)
    done = False
    while not done:
        action, good = agent.label(env.unwrapped, obs)
        mask = env.unwrapped.action_masks()
        assert good.shape == mask.shape and good.dtype == bool
        assert mask[action] and good[action] and not (good & ~mask).any()
        obs, _, terminated, truncated, _ = env.step(int(action))
        done = terminated or truncated


@pytest.mark.parametrize(("env_id", "teacher"), TEACHERS)
def test_each_game_s_teacher_plays_above_random(env_id: str, teacher: str) -> None:
    """On held-out seeds, with the 95% intervals apart: win rates where either agent won a
    game, else mean returns over games capped at 60 moves (Lines98 has no win)."""
    mine = evaluate(env_id, teacher, 30, seed=1_000_000, env_kwargs=CAP)
    random = evaluate(env_id, "random", 30, seed=1_000_000, env_kwargs=CAP)
    if mine.wins or random.wins:
        assert mine.win_rate_ci[0] > random.win_rate_ci[1]
    else:
        assert mine.return_ci[0] > random.return_ci[1]
