"""Lines98 rules: reachability, lines, scoring, spawns, game over, the mask."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from grid_envs.core.grid import flood_fill
from grid_envs.lines98 import rules
from grid_envs.lines98.state import EMPTY, Lines98State


def board_from(text: str) -> np.ndarray:
    """Rows of characters: '.' empty, digits colours."""
    rows = [line.split() for line in text.strip().splitlines()]
    return np.array([[0 if ch == "." else int(ch) for ch in row] for row in rows], dtype=np.int8)


def test_reachability_stops_at_walls_of_balls() -> None:
    board = board_from(
        """
        . . 1 . .
        . . 1 . .
        1 1 1 . .
        . . . . 2
        . . . 2 .
        """
    )
    left = rules.reachable(board, 0 * 5 + 2)  # the wall's top ball touches both sides
    assert left[0] and left[3] and left[15]
    corner = rules.reachable(board, 4 * 5 + 3)  # the ball at (4, 3): right region and below
    assert corner[15] and corner[24]
    sealed = board_from(
        """
        3 1 .
        1 . .
        . . .
        """
    )
    assert not rules.reachable(sealed, 0).any()  # boxed in by its neighbours
    assert rules.reachable(sealed, 1)[2] and rules.reachable(sealed, 1)[8]


def reachability_mask(board: np.ndarray) -> np.ndarray:
    """The (n, n) mask by a flood fill from every ball (the definition, cell by cell)."""
    cols = board.shape[1]
    mask = np.zeros((board.size, board.size), dtype=bool)
    for source in np.flatnonzero(board).tolist():
        free = board == EMPTY
        free[divmod(source, cols)] = True  # the ball leaves its own cell
        mask[source] = flood_fill(free, divmod(source, cols)).ravel() & (board.ravel() == EMPTY)
    return mask


def test_mask_is_bfs_reachability_for_every_ball() -> None:
    rng = np.random.default_rng(0)
    for _ in range(60):
        board = ((rng.random((7, 8)) < rng.random()) * rng.integers(1, 5, (7, 8))).astype(np.int8)
        mask = rules.legal_mask(board).reshape(56, 56)
        assert (mask == reachability_mask(board)).all()


def test_regions_are_numbered_in_the_order_of_their_first_cells() -> None:
    # combs and spirals join labels met apart in the scan (a U joins two columns, a comb
    # many), the cases a one-pass labelling must merge
    rng = np.random.default_rng(3)
    boards = [
        board_from("""
        . 1 . 1 .
        . 1 . 1 .
        . . . 1 .
        1 1 1 . .
    """)
    ]
    comb = np.ones((7, 9), dtype=np.int8)
    comb[:6, ::2], comb[6] = 0, 0
    boards.append(comb)
    boards += [((rng.random((6, 8)) < rng.random()) * 2).astype(np.int8) for _ in range(200)]
    for board in boards:
        region = rules.empty_regions(board)
        free = board == EMPTY
        expected = np.zeros(board.shape, dtype=np.int64)
        for cell in np.flatnonzero(free.ravel()):
            if not expected.ravel()[cell]:
                expected[flood_fill(free, divmod(int(cell), board.shape[1]))] = expected.max() + 1
        assert np.array_equal(region, expected)
        assert np.array_equal(rules.legal_mask(board).reshape(board.size, -1),
                              reachability_mask(board))  # fmt: skip


@pytest.mark.parametrize("regions", [8, 9, 64, 65, 72])
def test_mask_with_as_many_regions_as_bits_and_more(regions: int) -> None:
    # a chequerboard of balls on 12x12 leaves 72 one-cell regions; filling some of them
    # gives every count, across the 8-, 16-, 32- and 64-bit fields and past them
    rows, cols = np.indices((12, 12))
    board = (((rows + cols) % 2 == 0) * 3).astype(np.int8)
    holes = np.flatnonzero(board == EMPTY)
    board.ravel()[holes[regions:]] = 1
    assert rules.empty_regions(board).max() == regions
    assert (rules.legal_mask(board).reshape(144, 144) == reachability_mask(board)).all()
    assert (rules.batch_legal_masks(board[None])[0] == rules.legal_mask(board)).all()


@pytest.mark.parametrize(
    "cells",
    [
        [(4, c) for c in range(1, 6)],  # horizontal
        [(r, 2) for r in range(2, 7)],  # vertical
        [(k, k) for k in range(5)],  # diagonal
        [(k, 8 - k) for k in range(2, 7)],  # anti-diagonal
    ],
)
def test_lines_in_all_four_directions(cells: list[tuple[int, int]]) -> None:
    board = np.zeros((9, 9), dtype=np.int8)
    for r, c in cells:
        board[r, c] = 3
    last = cells[-1][0] * 9 + cells[-1][1]
    found = rules.lines_through(board, last, 5)
    assert [sorted(r * 9 + c for r, c in cells)] == found
    board[cells[0]] = 4  # four of a colour are no line
    assert rules.lines_through(board, last, 5) == []


def test_longer_lines_and_crossing_lines_score_each_ball_once() -> None:
    state = Lines98State(np.zeros((9, 9), dtype=np.int8))
    state.board[4, 0:7] = 2  # a line of 7
    assert rules.clear_lines(state, [4 * 9 + 3], 5) == 2 * 7 + 2 * 2
    assert state.balls_cleared == 7 and not state.board.any()
    cross = Lines98State(np.zeros((9, 9), dtype=np.int8))
    cross.board[4, 2:7] = 5
    cross.board[2:7, 4] = 5  # a plus: 9 balls, (4, 4) on both lines
    assert rules.clear_lines(cross, [4 * 9 + 4], 5) == 2 * 9
    assert cross.balls_cleared == 9 and not cross.board.any()


def test_a_spawn_can_complete_a_line() -> None:
    state = Lines98State(np.zeros((9, 9), dtype=np.int8))
    state.board[0, 0:4] = 1
    state.board[8, 8] = 2
    state.announced = {0 * 9 + 4: 1, 5 * 9 + 5: 3, 6 * 9 + 6: 4}
    rng = np.random.default_rng(0)
    gained = rules.play(state, 80, 79, rng, 3, 7, 5)  # a move that clears nothing
    assert gained == 10 and state.score == 10
    assert not state.board[0].any()  # the announced ball completed and cleared the row
    assert state.board[5, 5] == 3 and state.board[6, 6] == 4
    assert len(state.announced) == 3  # and three new ones are announced


def test_no_spawn_after_a_clearing_move() -> None:
    state = Lines98State(np.zeros((9, 9), dtype=np.int8))
    state.board[2, 0:4] = 6
    state.board[7, 4] = 6
    state.board[0, 0] = 2
    state.announced = {8 * 9 + 8: 1, 8 * 9 + 7: 2, 8 * 9 + 6: 3}
    gained = rules.play(state, 7 * 9 + 4, 2 * 9 + 4, np.random.default_rng(0), 3, 7, 5)
    assert gained == 10 and state.balls_cleared == 5
    assert int((state.board != EMPTY).sum()) == 1  # only the ball at (0, 0): no spawn
    assert state.announced == {80: 1, 79: 2, 78: 3}  # the announcement waits


def test_an_empty_board_brings_the_announced_balls_in() -> None:
    state = Lines98State(np.zeros((9, 9), dtype=np.int8))
    state.board[2, 0:4] = 6
    state.board[7, 4] = 6
    state.announced = {8 * 9 + 8: 1, 8 * 9 + 7: 2, 8 * 9 + 6: 3}
    rules.play(state, 7 * 9 + 4, 2 * 9 + 4, np.random.default_rng(0), 3, 7, 5)
    assert int((state.board != EMPTY).sum()) == 3 and len(state.announced) == 3


def test_moving_onto_an_announced_cell_relocates_the_announcement() -> None:
    state = Lines98State(np.zeros((3, 3), dtype=np.int8))
    state.board[0, 0] = 1
    state.announced = {1: 2}  # cell (0, 1), colour 2
    rules.play(state, 0, 1, np.random.default_rng(3), 0, 7, 5)
    assert state.board.ravel()[1] == 1
    # the colour-2 ball spawned on a free cell other than the ones now taken
    assert state.board.ravel()[1] == 1 and (state.board == 2).sum() == 1


def test_spawns_place_exactly_what_they_promise() -> None:
    for seed in range(200):
        state = rules.new_game(np.random.default_rng(seed), 9, 9, 7, 5, 3, 5)
        assert int((state.board != EMPTY).sum()) + state.balls_cleared == 5
        assert len(state.announced) == 3
        assert all(state.board.ravel()[c] == EMPTY for c in state.announced)
    crowded = Lines98State(np.ones((3, 3), dtype=np.int8))
    crowded.board[0, 0] = crowded.board[2, 2] = EMPTY
    rules.announce(crowded, np.random.default_rng(0), 3, 7)
    assert sorted(crowded.announced) == [0, 8]  # only two free cells: two announced


def random_play(
    env: gym.Env[Any, Any], seed: int, steps: int
) -> Iterator[tuple[np.ndarray, bool, dict[str, Any]]]:
    """Yield (observation, terminated, info) after each random legal move."""
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, _, terminated, _, info = env.step(action)
        yield obs, terminated, info
        if terminated:
            return


def test_game_over_when_the_board_fills() -> None:
    env = gym.make("GridGames/Lines98-v0", rows=3, cols=3, colours=7, line_length=3,
                   initial=5, spawn=3)  # fmt: skip
    *_, (_, terminated, info) = random_play(env, 1, 50)
    assert terminated and info["empty_cells"] == 0 and not info["is_success"]
    with pytest.raises(RuntimeError):
        env.step(0)


def test_mask_is_exact_after_the_spawns_of_each_step() -> None:
    env = gym.make("GridGames/Lines98-v0")
    for obs, terminated, info in random_play(env, 5, 20):
        if terminated:
            break
        board = env.unwrapped.game_state().board
        assert (info["action_mask"] == rules.legal_mask(board)).all()
        assert (env.unwrapped.action_masks() == info["action_mask"]).all()
        # the observation shows the balls and the announced balls by colour
        assert obs[:7].sum() == int((board != EMPTY).sum()) and obs[7:].sum() == 3
        announced = env.unwrapped.game_state().announced
        rows = [(*divmod(cell, 9), colour) for cell, colour in announced.items()]
        assert info["announced"].tolist() == [list(r) for r in rows]
        for r, c, colour in rows:
            assert obs[7 + colour - 1, r, c] == 1


def test_a_steps_own_planes_and_info_are_those_of_the_state_it_leaves() -> None:
    # the single env's step writes its observation and info["announced"] in its compiled
    # call; each must equal the views made afresh from the state, and be taken once only
    env = gym.make("GridGames/Lines98-Small-v0")
    u = env.unwrapped
    env.reset(seed=4)
    start = u.snapshot()
    for obs, _, info in random_play(env, 4, 60):
        assert u._fresh_planes is None and u._fresh_announced is None  # taken by the step
        assert (u._planes() == obs).all()  # made afresh from the state
        assert (u._game_info()["announced"] == info["announced"]).all()
    played = u.state
    u._fresh_planes = (played, np.zeros_like(obs))  # as if a step made them and left them
    u.restore(start)  # another state object: views made for the one before are not used
    assert u.state is not played and u._planes().any()


def test_fewer_announced_balls_than_spawn_are_padded_with_rows_of_minus_one() -> None:
    env = gym.make("GridGames/Lines98-v0", rows=3, cols=3, colours=7, line_length=3,
                   initial=5, spawn=3)  # fmt: skip
    helds = []
    for _, _, info in random_play(env, 1, 50):
        helds.append(len(env.unwrapped.game_state().announced))
        assert info["announced"].shape == (3, 3) and info["announced"].dtype == np.int64
        assert (info["announced"][helds[-1] :] == -1).all()
        assert (info["announced"][: helds[-1]] >= 0).all()
    assert min(helds) < 3  # the board filled past the point where 3 could be announced


@pytest.mark.parametrize("shape", [(9, 9), (5, 7), (12, 17)])
def test_batched_masks_equal_the_bfs_mask_on_random_boards(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    for fill in (0.0, 0.2, 0.5, 0.7, 0.95, 1.0):  # one big region to many small ones
        boards = ((rng.random((60, *shape)) < fill) * rng.integers(1, 8, (60, *shape))).astype(
            np.int8
        )
        masks = rules.batch_legal_masks(boards)
        for board, mask in zip(boards, masks, strict=True):
            assert np.array_equal(mask, rules.legal_mask(board))
            assert np.array_equal(mask.reshape(board.size, -1), reachability_mask(board))
