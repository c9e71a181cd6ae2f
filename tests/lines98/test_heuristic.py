"""Lines98's heuristic (grid_envs.lines98.heuristic): the gains of a move, cell by cell and
window by window, the best gain, and the lines potential that shapes rewards."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from grid_envs.lines98 import rules
from grid_envs.lines98.heuristic import (
    _window_gains,
    best_gain,
    cell_gains,
    incidence,
    lines_potential,
    move_gains,
    potential,
    window_summary,
)
from grid_envs.lines98.state import Lines98State
from grid_envs.wrappers import PotentialShaping


def test_move_gains_equal_the_change_of_the_potential() -> None:
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(80):
        board = ((rng.random((9, 9)) < rng.random()) * rng.integers(1, 4, (9, 9))).astype(np.int8)
        legal = np.flatnonzero(rules.legal_mask(board))
        if not len(legal):
            continue
        moves = np.stack([legal // 81, legal % 81], axis=1)[rng.permutation(len(legal))[:30]]
        for (source, target), gain in zip(moves, move_gains(board, moves, 5, 3), strict=True):
            after = board.copy().ravel()
            after[target], after[source] = after[source], 0
            expect = potential(after.reshape(9, 9), 5, 3) - potential(board, 5, 3)
            assert abs(gain - expect) < 1e-6
            checked += 1
    assert checked > 500


def random_positions(count: int, colours: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Boards of every fill from empty to crowded, with all their legal moves."""
    rng = np.random.default_rng(2)
    out = []
    for _ in range(count):
        fill = rng.random() * 0.9
        board = ((rng.random((9, 9)) < fill) * rng.integers(1, colours + 1, (9, 9))).astype(np.int8)
        moves = rules.mask_to_moves(rules.legal_mask(board), 81)
        if len(moves):
            out.append((board, moves))
    return out


def test_cell_gains_add_up_to_the_gain_of_a_move_whose_ends_share_no_window() -> None:
    inside = incidence(9, 9, 5)[:, :-1]
    apart = total = 0
    for board, moves in random_positions(60, 4):
        drop, lift = cell_gains(board, 5, 4)
        colour = board.ravel()[moves[:, 0]].astype(np.int64) - 1
        rough = lift[moves[:, 0]] + drop[moves[:, 1], colour]
        exact = move_gains(board, moves, 5, 4)
        far = ~(inside[moves[:, 0]] & inside[moves[:, 1]]).any(axis=1)
        np.testing.assert_allclose(rough[far], exact[far])
        apart += int(far.sum())
        total += len(moves)
    assert apart > total // 2


def test_move_gains_from_the_cell_tables_equal_the_gains_window_by_window() -> None:
    checked = 0
    for board, moves in random_positions(60, 7):
        summary = window_summary(board, 5, 7)
        np.testing.assert_array_equal(
            move_gains(board, moves, 5, 7), _window_gains(board, moves, 5, 7, summary)
        )
        checked += len(moves) >= 64  # the tables are used
    assert checked > 20


def test_best_gain_finds_the_best_move_of_the_shortlist_and_of_the_board() -> None:
    for board, moves in random_positions(60, 7):
        exact = move_gains(board, moves, 5, 7).max()
        assert best_gain(board, moves, 5, 7) == exact  # the shortlist holds the best move
        assert best_gain(board, moves[:3], 5, 7) == move_gains(board, moves[:3], 5, 7).max()


def test_lines_potential_shapes_rewards() -> None:
    state = Lines98State(np.zeros((9, 9), dtype=np.int8))
    state.board[4, 0:4] = 2
    assert lines_potential(state) > 1.5  # four of five in a row: about 2 points
    env = PotentialShaping(gym.make("GridGames/Lines98-Small-v0"), "lines", 0.99)
    _, info = env.reset(seed=0)
    _, reward, *_ = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert np.isfinite(reward)
