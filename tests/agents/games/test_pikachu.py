"""Pikachu's baselines beyond what every game's keep (test_baselines.py): mobility leaves
the most moves, the planner keeps its plan in any order; as teachers, greedy names every
pair its shortest path joins, mobility every most mobile pair, and the planner every pair
that keeps the board clearable; the planner clears where the others do not."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agents.games.pikachu as pk_agents
from agents import evaluate, make_agent
from grid_envs.pikachu import rules
from grid_envs.pikachu.paths import removable_pairs, removable_with_lengths
from grid_envs.pikachu.solver import plan, remove
from tests.agents.games import play_labels

# What the algorithm guarantees


def test_mobility_agent_leaves_the_most_moves() -> None:
    from agents.games.pikachu import most_mobile_pairs

    board = rules.random_board(9, 16, 36, np.random.default_rng(3))
    best = most_mobile_pairs(board)
    assert best
    left = {}
    for pair in removable_pairs(board):
        child = remove(board, pair, "none")
        left[rules.pair_to_action(*pair, board.size)] = len(removable_pairs(child))
    assert set(best) == {a for a, n in left.items() if n == max(left.values())}


def test_planner_keeps_its_plan_when_its_pairs_are_removed_in_another_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without gravity a plan stays a clear whatever order its pairs go in: the planner
    plans once for a game in which the plan's pairs are played last first where they can."""
    env = gym.make("GridGames/Pikachu-v0", rows=6, cols=6, kinds=9)
    agent = make_agent("planner", env)
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        agent.reset()
        agent.act(env.unwrapped, obs)
        if agent._plans:
            break
    kept = agent._plans[id(env.unwrapped)]
    calls = []
    monkeypatch.setattr(pk_agents, "plan", lambda *a, **k: calls.append(a) or plan(*a, **k))
    done = False
    while not done:
        board = env.unwrapped.game_state().board
        now = set(removable_pairs(board))
        pair = [p for p in kept.pairs if p in now][-1]  # the plan's last connecting pair
        action = rules.pair_to_action(*pair, board.size)
        assert agent.label(env.unwrapped, obs)[1][action]
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert info["is_success"] and not calls


# What it names as a teacher


def test_pikachu_greedy_names_every_pair_its_shortest_path_joins() -> None:
    said, _ = play_labels("GridGames/Pikachu-Small-v0", "greedy", 3, pick_any=False)
    several = 0
    for state, action, good, mask in said:
        assert good[action] and not (good & ~mask).any()
        pairs, lengths = removable_with_lengths(state.board)
        length = dict(zip(pairs, lengths, strict=True))
        named = [length[tuple(sorted(rules.action_to_pair(int(a), state.board.size)))]
                 for a in np.flatnonzero(good)]  # fmt: skip
        assert set(named) == {min(lengths)}
        assert len(named) == sum(n == min(lengths) for n in lengths)
        several += len(named) > 1
    assert several > 0


def test_mobility_names_every_most_mobile_pair() -> None:
    from agents.games.pikachu import most_mobile_pairs

    env = gym.make("GridGames/Pikachu-v0")
    obs, _ = env.reset(seed=3)
    action, good = make_agent("mobility", env).label(env.unwrapped, obs)
    assert good[action] and good.sum() == len(most_mobile_pairs(env.unwrapped.game_state().board))


def test_planner_labels_spare_the_pairs_that_keep_the_board_clearable() -> None:
    """Every pair the planner names is legal, its own among them; a legal pair it leaves
    out leaves a board that no plan clears."""
    env = gym.make("GridGames/Pikachu-v0", rows=6, cols=6, kinds=9)
    agent = make_agent("planner", env)
    left_out = 0
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        agent.reset()
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            action, good = agent.label(env.unwrapped, obs)
            assert good[action] and not (good & ~mask).any()
            board = env.unwrapped.game_state().board
            for a in np.flatnonzero(mask & ~good):
                child = remove(board, rules.action_to_pair(int(a), board.size), "none")
                assert plan(child, max_seconds=None, node_limit=100_000).status == "unsolvable"
                left_out += 1
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    assert left_out > 0


# Against the other agents


def test_the_planner_clears_boards_the_others_leave_stuck() -> None:
    """On the small board every agent clears every deal; on the registered one the
    planner clears more than random and greedy, with the intervals apart."""
    for name in ("random", "greedy", "planner"):
        assert evaluate("GridGames/Pikachu-Small-v0", name, episodes=5, seed=0).win_rate == 1.0
    rates = {name: evaluate("GridGames/Pikachu-v0", name, episodes=40, seed=0).win_rate_ci
             for name in ("random", "greedy", "planner")}  # fmt: skip
    assert rates["planner"][0] > max(rates["random"][1], rates["greedy"][1])
