"""Lines98's baselines beyond what every game's keep (test_baselines.py): the look-ahead
ranks its candidates on the board the announced balls leave and judges them on the same
futures; as a teacher greedy names legal ties that hold its move; greedy and the
look-ahead outscore random. The heuristic they share is tested with the game
(tests/lines98/test_heuristic.py)."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from agents import evaluate, make_agent
from agents.games.lines98 import LOST, candidate_order
from grid_envs.lines98 import rules
from grid_envs.lines98.heuristic import (
    move_gains,
)
from grid_envs.lines98.state import Lines98State
from tests.agents.games import play_labels

# What the algorithm guarantees


def _ranked(state: Lines98State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    moves = rules.mask_to_moves(rules.legal_mask(state.board), state.board.size)
    gains = move_gains(state.board, moves, 5, 7)
    return moves, np.argsort(-gains, kind="stable"), candidate_order(state, moves, 5, 7)


def _move(moves: np.ndarray, source: int, target: int) -> int:
    return int(np.flatnonzero((moves[:, 0] == source) & (moves[:, 1] == target))[0])


def test_candidates_are_ranked_on_the_board_the_announced_balls_leave() -> None:
    # three reds on row 0 and a red announced at (0, 4): moving a red to (0, 3) completes
    # the line once the announced ball lands, which the board before the spawn cannot show
    state = Lines98State(np.zeros((9, 9), dtype=np.int8))
    state.board[0, 0:3] = 1
    state.board[5, 5] = 1
    state.board[8, 0:3] = 2  # blues: (8, 3) makes a line of four, worth more before the spawn
    state.board[4, 8] = 2
    state.announced = {0 * 9 + 4: 1, 2 * 9 + 7: 3, 3 * 9 + 7: 4}
    moves, by_gain, order = _ranked(state)
    red = _move(moves, 5 * 9 + 5, 0 * 9 + 3)
    assert order[0] == red and by_gain[0] != red
    trial = copy.deepcopy(state)
    rules.play(trial, 5 * 9 + 5, 0 * 9 + 3, np.random.default_rng(0), 0, 7, 5)
    assert trial.balls_cleared == 5  # the spawn completed the line, as ranked


def test_a_spawn_that_spoils_a_line_ranks_its_move_down() -> None:
    state = Lines98State(np.zeros((9, 9), dtype=np.int8))
    state.board[0, 0:3] = 1
    state.board[5, 5] = 1
    state.board[8, 0:2] = 2
    state.board[4, 8] = 2
    state.announced = {0 * 9 + 4: 3, 2 * 9 + 7: 3, 3 * 9 + 7: 4}  # a green ends the reds' row
    moves, by_gain, order = _ranked(state)
    red = _move(moves, 5 * 9 + 5, 0 * 9 + 3)  # a fourth red, next to the green
    assert by_gain[0] == red and order[0] != red


def test_after_a_clear_the_lookahead_judges_the_next_move_with_the_known_spawn() -> None:
    # a clearing candidate leaves the announcement in place: a red announced at (0, 4)
    # makes moving a red to (0, 3) a clear, which the board alone cannot show
    state = Lines98State(np.zeros((9, 9), dtype=np.int8))
    state.board[0, 0:3] = 1
    state.board[5, 5] = 1
    state.announced = {0 * 9 + 4: 1, 2 * 9 + 7: 3, 3 * 9 + 7: 4}
    blind = copy.deepcopy(state)
    blind.announced = {}
    agent = make_agent("lookahead", gym.make("GridGames/Lines98-v0"), seed=0)
    gain = agent.judge(state, 5, 7) - agent.judge(blind, 5, 7)
    assert gain >= agent.follow_weight * 3000  # the spawn completes a line: a clear's worth


def _crowded_game() -> tuple[gym.Env, Lines98State, np.ndarray]:
    """A game 69 greedy moves in (44 empty cells; no first step clears a line, so the
    reply search runs): the env, its state and its legal moves."""
    env = gym.make("GridGames/Lines98-v0")
    agent = make_agent("greedy", env, seed=1)
    obs, _ = env.reset(seed=1)
    for _ in range(69):
        obs, *_ = env.step(agent.predict(obs)[0])
    game = env.unwrapped
    return env, game.game_state(), rules.mask_to_moves(game.action_masks(), 81)


def test_the_reply_search_picks_among_the_best_first_steps_and_repeats_itself() -> None:
    env, s, moves = _crowded_game()
    game = env.unwrapped
    clock = {"max_seconds": 60.0}  # no answer hangs on the clock of a loaded machine
    first = make_agent("lookahead", env, seed=5, replies=0, **clock)
    searched = make_agent("lookahead", env, seed=5, **clock)
    top = first.first_steps(s, moves, 12, 5, 7, np.random.default_rng(0), float("inf"))
    assert top[0][2].balls_cleared == s.balls_cleared  # no clear: the reply search runs
    assert first.act(game, None) == _action(moves, top[0][1])  # the best first step
    picks = {searched.act(game, None) for _ in range(3)}
    assert picks <= {_action(moves, k) for _, k, _ in top[: searched.replies]}
    for options in ({}, {"futures": 2}):
        again = make_agent("lookahead", env, seed=5, **options, **clock).act(game, None)
        assert again == make_agent("lookahead", env, seed=5, **options, **clock).act(game, None)


def test_the_judge_plays_and_names_the_best_judged_first_steps() -> None:
    env, s, moves = _crowded_game()
    game = env.unwrapped
    judge = make_agent("judge", env, seed=5)
    top = judge.first_steps(s, moves, 12, 5, 7, np.random.default_rng(0), float("inf"))
    action, good = judge.label(game, None)
    best = {_action(moves, k) for value, k, _ in top if value >= top[0][0] - 1e-9}
    assert action == _action(moves, top[0][1]) and good[action]
    assert set(np.flatnonzero(good).tolist()) == best  # every equal, nothing else
    assert make_agent("judge", env, seed=9).act(game, None) == action  # no clock, no draw
    assert make_agent("lookahead", env, seed=5, replies=0, max_seconds=60.0).act(game, None) \
        == action  # fmt: skip


def _action(moves: np.ndarray, k: int) -> int:
    return rules.move_to_action(int(moves[k, 0]), int(moves[k, 1]), 81)


@pytest.mark.parametrize("futures", [0, 2])
def test_a_board_left_without_a_move_is_worth_lost(futures: int) -> None:
    env = gym.make("GridGames/Lines98-v0")
    agent = make_agent("lookahead", env, seed=0, futures=futures)
    full = Lines98State(np.arange(81, dtype=np.int8).reshape(9, 9) % 7 + 1)
    rng = np.random.default_rng(0)
    assert agent.reply_value(full, 3, 5, 7, rng, float("inf")) == LOST
    one_hole = copy.deepcopy(full)
    one_hole.board[4, 4] = 0
    # a drawn announcement fills the hole, and no reply is left; with no draw (futures=0)
    # the reply moves a ball into it and is judged as it is, before the next spawn
    hole_value = agent.reply_value(one_hole, 3, 5, 7, rng, float("inf"))
    assert (hole_value == LOST) == bool(futures)
    roomy = copy.deepcopy(full)
    roomy.board[3:6, 3:6] = 0
    assert agent.reply_value(roomy, 3, 5, 7, rng, float("inf")) > 0


def test_out_of_time_the_lookahead_plays_the_first_candidate() -> None:
    env, s, moves = _crowded_game()
    agent = make_agent("lookahead", env, seed=0, max_seconds=0.0)
    assert agent.act(env.unwrapped, None) == _action(moves, int(candidate_order(s, moves, 5, 7)[0]))


def test_the_reply_search_judges_every_candidate_on_the_same_futures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env, _, _ = _crowded_game()
    drawn: list[tuple[int, ...]] = []
    announce = rules.announce

    def spy(state: Lines98State, rng: np.random.Generator, count: int, colours: int) -> None:
        announce(state, rng, count, colours)
        if count:  # not the first steps' replays, which announce nothing
            drawn.append(tuple(state.announced.values()))  # the colours, in drawn order

    monkeypatch.setattr(rules, "announce", spy)
    for common in (1, 0):
        drawn.clear()
        agent = make_agent("lookahead", env, seed=5, futures=2, common_futures=common,
                           max_seconds=60.0)  # fmt: skip
        agent.act(env.unwrapped, None)
        assert len(drawn) == 8 * 2  # 8 candidates, 2 futures each, candidate by candidate
        alike = all(len(set(drawn[f::2])) == 1 for f in range(2))
        assert alike == bool(common)


def test_the_default_reply_search_judges_exact_boards_and_draws_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env, s, moves = _crowded_game()
    agent = make_agent("lookahead", env, seed=5)
    top = agent.first_steps(s, moves, 12, 5, 7, np.random.default_rng(0), float("inf"))
    after = top[0][2]
    assert not after.announced  # the spawn landed; the next one is not drawn
    values = {
        agent.reply_value(after, 3, 5, 7, np.random.default_rng(seed), float("inf"))
        for seed in range(3)
    }
    assert len(values) == 1  # no luck in it: every scratch generator gives the same worth
    replies = rules.mask_to_moves(rules.legal_mask(after.board), 81)
    best = agent.first_steps(after, replies, 8, 5, 7, np.random.default_rng(9), float("inf"))
    assert values == {best[0][0]}  # the best of the 8 best replies, on the board as it is
    drawn: list[int] = []  # the balls each replayed move or announcement draws
    play, announce = rules.play, rules.announce

    def spy_play(state: Lines98State, *args: Any) -> int:
        drawn.append(args[3])  # count: the balls announced after a spawn
        return play(state, *args)

    def spy_announce(state: Lines98State, rng: np.random.Generator, count: int, c: int) -> None:
        drawn.append(count)
        announce(state, rng, count, c)

    monkeypatch.setattr(rules, "play", spy_play)
    monkeypatch.setattr(rules, "announce", spy_announce)
    agent.act(env.unwrapped, None)
    assert drawn and not any(drawn)  # replays announce nothing; no future is ever drawn


# What it names as a teacher


def test_lines98_greedy_names_legal_ties_that_hold_its_move() -> None:
    said, _ = play_labels("GridGames/Lines98-Small-v0", "greedy", 2, pick_any=True)
    for _, action, good, mask in said:
        assert good[action] and not (good & ~mask).any()


# Against the other agents


def test_greedy_and_lookahead_outscore_random() -> None:
    scores = {}
    for name, episodes in (("random", 3), ("greedy", 3), ("lookahead", 1)):
        # the look-ahead's games last a thousand moves or more: 300 of them are plenty
        limit = {"max_episode_steps": 300}
        r = evaluate("GridGames/Lines98-v0", name, episodes=episodes, seed=0, env_kwargs=limit)
        scores[name] = r.mean_return
    assert scores["random"] < 20 < scores["greedy"] and scores["lookahead"] > 20
