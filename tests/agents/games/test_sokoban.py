"""Sokoban's baselines beyond what every game's keep (test_baselines.py): the solver wins
generated levels, follows its plan and replans on surprise; the optimal agent plays the
fewest moves; as teachers, the solver names every shortest step and the optimal agent
every move of a fewest-moves solution."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

from agents import evaluate, list_agents, make_agent
from agents.games.sokoban import SOKOBAN_IDS
from grid_envs.sokoban import rules
from grid_envs.sokoban.bfs import move_distances
from tests.agents.games import play_labels
from tests.sokoban.test_bfs import key_of

# What the algorithm guarantees


@pytest.mark.parametrize("env_id", SOKOBAN_IDS)
def test_solver_agent_wins_generated_levels(env_id: str) -> None:
    assert "solver" in list_agents(env_id)
    result = evaluate(env_id, "solver", episodes=12, seed=1)
    assert result.win_rate == 1.0


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


def test_optimal_agent_plays_as_the_solver_where_the_room_has_too_many_positions() -> None:
    env = gym.make("GridGames/Sokoban-Small-v0")
    agent = make_agent("optimal", env, seed=0, max_states=5)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        action, good = agent.label(env.unwrapped, obs)
        assert good[action] and agent.best(env.unwrapped) is None
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert info["is_success"]
    assert agent.last_result is not None and agent.last_result.solved  # the solver planned


# What it names as a teacher


def test_sokoban_solver_names_every_shortest_step_and_still_wins() -> None:
    said, wins = play_labels("GridGames/Sokoban-Small-v0", "solver", 6, pick_any=True)
    assert wins == 6  # walking any shortest way, the solver's pushes still finish the board
    several = 0
    for _, action, good, mask in said:
        assert good[action] and not (good & ~mask).any()
        if good.sum() > 1:
            several += 1
            assert not good[4:].any()  # pushes stand alone; ties are walk steps
    assert several > 0


def test_optimal_agent_plays_the_fewest_moves_and_names_every_action_that_does() -> None:
    env = gym.make("GridGames/Sokoban-Small-v0")
    agent = make_agent("optimal", env, seed=0)
    several = 0
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        agent.reset()
        start = copy.deepcopy(env.unwrapped.game_state())
        table = move_distances(start)
        assert table is not None
        steps, done = 0, False
        while not done:
            s = env.unwrapped.game_state()
            action, good = agent.label(env.unwrapped, obs)
            here = table[key_of(s)]
            for a in np.flatnonzero(rules.legal_mask(s)):  # named exactly when one nearer
                child = copy.deepcopy(s)
                rules.apply_action(child, int(a))
                assert good[a] == (table[key_of(child)] == here - 1)
            several += int(good.sum()) > 1
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            steps += 1
        assert info["is_success"] and steps == table[key_of(start)]
    assert several > 0  # ties are named together


# Against the other agents


@pytest.mark.parametrize("env_id", SOKOBAN_IDS)
def test_the_solver_and_the_optimal_agent_score_above_random(env_id: str) -> None:
    random = evaluate(env_id, "random", episodes=12, seed=1)
    for name in set(list_agents(env_id)) & {"solver", "optimal"}:
        assert evaluate(env_id, name, episodes=12, seed=1).mean_return > random.mean_return
