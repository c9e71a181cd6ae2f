"""Minesweeper rules: flood fill, first-click rules, rewards, masks, bad boards."""

from __future__ import annotations

import sys
import time
from collections import deque
from unittest.mock import patch

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grid_envs.minesweeper import rules
from grid_envs.minesweeper.env import MinesweeperEnv, compact_view, planes_view
from grid_envs.minesweeper.state import MinesweeperState
from tests.conftest import play_with_restores


def board(layout: str) -> MinesweeperState:
    """A hand-built board: '*' mine, '.' safe."""
    grid = np.array([[ch == "*" for ch in row] for row in layout.split()], dtype=bool)
    s = MinesweeperState.empty(*grid.shape, int(grid.sum()), "any")
    s.mines = grid
    s.counts = rules.neighbour_counts(grid)
    s.runs = rules.zero_runs(s.counts == 0, grid)
    s.placed = True
    return s


def naive_reveal(s: MinesweeperState, cell: tuple[int, int]) -> np.ndarray:
    """The source article's flood fill, as a plain BFS over cells: the reference."""
    opened = np.zeros_like(s.revealed)
    queue = deque([cell])
    opened[cell] = True
    while queue:
        r, c = queue.popleft()
        if s.counts[r, c] != 0:
            continue
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                rr, cc = r + dr, c + dc
                if 0 <= rr < s.rows and 0 <= cc < s.cols and not opened[rr, cc]:
                    opened[rr, cc] = True
                    queue.append((rr, cc))
    return opened


def test_counts_on_a_hand_built_board() -> None:
    s = board("*.. ... ..*")
    np.testing.assert_array_equal(s.counts, [[0, 1, 0], [1, 2, 1], [0, 1, 0]])


def test_zero_opens_its_region_and_numbered_border() -> None:
    s = board("..... ..... ..... ....* ...*.")
    opened = rules.reveal(s, (0, 0), np.random.default_rng(0))
    expected = np.array(
        [[1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1, 0], [1, 1, 1, 0, 0]],
        dtype=bool,
    )
    np.testing.assert_array_equal(s.revealed, expected)
    assert opened == expected.sum()


def test_number_opens_only_itself_and_mine_explodes() -> None:
    s = board("*.. ... ...")
    assert rules.reveal(s, (0, 1), np.random.default_rng(0)) == 1
    assert s.revealed.sum() == 1
    assert rules.reveal(s, (0, 0), np.random.default_rng(0)) == -1 and s.exploded == (0, 0)


def test_regions_joined_only_diagonally_open_together() -> None:
    # two zero pockets touching corner to corner are one 8-connected region
    s = board("..*** ..*** ***.. ***..")
    s.counts = rules.neighbour_counts(s.mines)
    s.runs = rules.zero_runs(s.counts == 0, s.mines)
    rules.reveal(s, (0, 0), np.random.default_rng(0))
    np.testing.assert_array_equal(s.revealed, naive_reveal(s, (0, 0)))


@settings(max_examples=80, deadline=None)
@given(
    rows=st.integers(1, 14), cols=st.integers(1, 14), density=st.floats(0.0, 0.35),
    seed=st.integers(0, 10_000),
)  # fmt: skip
def test_flood_fill_matches_the_plain_bfs(rows: int, cols: int, density: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    mines = rng.random((rows, cols)) < density
    safe = np.argwhere(~mines)
    if len(safe) == 0:
        return
    layout = " ".join("".join("*" if m else "." for m in row) for row in mines)
    s = board(layout)
    cell = tuple(int(x) for x in safe[rng.integers(len(safe))])
    with patch.object(rules, "BITS_BOARD", 0):  # the runs search of large boards
        by_runs = rules.opened_by(s, cell) if s.counts[cell] == 0 else None
    rules.reveal(s, cell, rng)  # a board this small floods as one integer
    expected = naive_reveal(s, cell)
    np.testing.assert_array_equal(s.revealed, expected)
    if by_runs is not None:
        np.testing.assert_array_equal(by_runs, expected)


def test_a_flood_counts_only_new_cells_and_lifts_its_flags() -> None:
    s = board("..... ..... ..... ....*")
    s.revealed[0, 4] = True  # open before the flood
    s.flags[1, 1] = s.flags[3, 4] = True  # inside the region; on the mine (stays)
    assert rules.reveal(s, (0, 0), np.random.default_rng(0)) == 19 - 1
    assert not s.flags[1, 1] and s.flags[3, 4] and not s.revealed[3, 4]


@pytest.mark.parametrize("rule", ["safe", "zero", "any"])
def test_one_board_is_drawn_as_the_batch_draws_it(rule: str) -> None:
    class Keys:  # a generator giving fixed keys, many of them tied
        def __init__(self, keys: np.ndarray) -> None:
            self.keys = keys

        def random(self, n: int) -> np.ndarray:
            return self.keys.reshape(n).copy()

    gen = np.random.default_rng(3)
    for trial in range(300):
        keys = gen.random((1, 6, 7))
        if trial % 2:
            keys = np.round(keys, 1)  # ties at the cut
        first = (int(gen.integers(6)), int(gen.integers(7)))
        firsts = np.zeros(keys.shape, dtype=bool)
        if rule != "any":
            firsts[0][first] = True
        s = MinesweeperState.empty(6, 7, 12, rule)
        rules.place_mines(s, Keys(keys), first if rule != "any" else None)  # type: ignore[arg-type]
        np.testing.assert_array_equal(s.mines, rules.draw_mines(keys, firsts, 12, rule)[0])
        np.testing.assert_array_equal(s.counts, rules.neighbour_counts(s.mines))


def test_a_million_cells_open_fast_without_recursion() -> None:
    s = MinesweeperState.empty(1000, 1000, 5000, "zero")
    limit = sys.getrecursionlimit()
    start = time.perf_counter()
    opened = rules.reveal(s, (500, 500), np.random.default_rng(0))
    assert opened > 900_000 and sys.getrecursionlimit() == limit
    assert time.perf_counter() - start < 30  # a guard against a hang; speed is benchmarked


@pytest.mark.parametrize("rule", ["safe", "zero"])
def test_first_click_rules(rule: str) -> None:
    for seed in range(60):
        env = MinesweeperEnv(rows=9, cols=9, mines=70 if rule == "safe" else 60, first_click=rule)
        env.reset(seed=seed)
        _, _reward, _terminated, _, info = env.step(4 * 9 + 4)
        s = env.state
        assert not s.mines[4, 4]
        if rule == "zero":
            assert s.counts[4, 4] == 0 and info["revealed"] >= 9
        assert s.mines.sum() == env.num_mines


def test_first_click_any_can_lose() -> None:
    losses = 0
    for seed in range(40):
        env = MinesweeperEnv(rows=5, cols=5, mines=20, first_click="any")
        env.reset(seed=seed)
        assert env.state.placed  # placed at reset
        _, reward, terminated, _, info = env.step(0)
        if terminated and not info["is_success"]:
            losses += 1
            assert reward == -1.0 and info["mines"].sum() == 20
    assert losses > 20


def test_a_won_game_pays_exactly_one_plus_the_bonus() -> None:
    for seed in range(20):
        env = gym.make("GridGames/Minesweeper-Intermediate-v0")
        env.reset(seed=seed)
        total, done = 0.0, False
        _, r, done, _, info = env.step(0)
        total += r
        while not done:  # the test peeks at the mines to play perfectly
            s = env.unwrapped.state
            safe = np.flatnonzero((~s.mines & ~s.revealed).ravel())
            _, r, done, _, info = env.step(int(safe[0]))
            total += r
        assert info["is_success"] and total == pytest.approx(2.0)
        assert info["revealed"] == 16 * 16 - 40


def test_mask_and_flags() -> None:
    env = MinesweeperEnv(rows=4, cols=5, mines=3, allow_flags=True)
    _, info = env.reset(seed=1)
    n = 20
    assert env.action_space.n == 40 and info["action_mask"].all()
    _, r, *_, info = env.step(n + 7)  # flag (1, 2)
    assert r == 0.0 and info["mines_left"] == 2
    assert not info["action_mask"][7] and info["action_mask"][n + 7]
    obs = env.observe()
    assert obs.shape == (11, 4, 5) and obs[10, 1, 2] == 1 and obs[0, 1, 2] == 1
    _, r, *_, info = env.step(7)  # revealing a flagged cell is masked
    assert info["illegal_action"] and r == -0.05
    env.step(n + 7)  # unflag
    assert env.action_masks()[7]
    hidden = ~env.state.revealed.ravel()
    np.testing.assert_array_equal(env.action_masks()[:n], hidden & ~env.state.flags.ravel())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rows": 3, "cols": 3, "mines": 9, "first_click": "safe"}, "holds between 1 and 8"),
        ({"rows": 4, "cols": 4, "mines": 8, "first_click": "zero"}, "holds between 1 and 7"),
        ({"rows": 9, "cols": 9, "mines": 0}, "mines=0 do not fit"),
        ({"first_click": "first"}, "first_click must be one of"),
        ({"rows": 0}, "rows must be between 1 and 256"),
    ],
)
def test_bad_boards_are_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make("GridGames/Minesweeper-v0", **kwargs)


def test_info_shows_the_layout_only_at_the_end() -> None:
    env = gym.make("GridGames/Minesweeper-v0")
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(0)
    assert "mines" not in info or terminated
    obs = env.unwrapped.observe()
    assert obs.max() == 1 and obs.shape == (10, 9, 9)


def test_mines_are_the_smallest_keys_even_when_keys_tie() -> None:
    keys = np.round(np.random.default_rng(0).random((200, 4, 4)), 1)  # many ties
    firsts = np.zeros(keys.shape, dtype=bool)
    firsts[:, 0, 0] = True
    mines = rules.draw_mines(keys, firsts, 5, "safe").reshape(200, 16)
    flat = np.where(firsts, 2.0, keys).reshape(200, 16)
    assert (mines.sum(axis=1) == 5).all()
    assert not mines[:, 0].any()  # the first click stays free
    kth = np.sort(flat, axis=1)[:, 4:5]
    assert (flat[mines].reshape(200, 5) <= kth).all()  # no mine above the fifth key


def test_neighbour_counts_count_the_eight_neighbours() -> None:
    mines = np.random.default_rng(1).random((30, 5, 7)) < 0.3
    counts = rules.neighbour_counts(mines)
    for b, r, c in np.ndindex(mines.shape):
        window = mines[b, max(r - 1, 0) : r + 2, max(c - 1, 0) : c + 2]
        assert counts[b, r, c] == window.sum() - mines[b, r, c]


@pytest.mark.parametrize("mode", ["planes", "compact"])
def test_planes_and_counts_kept_step_by_step_match_the_state(mode: str) -> None:
    # the env updates its planes cell by cell and counts reveals and flags as they happen;
    # each must equal what the state gives from scratch, through floods, flags and restores
    env = MinesweeperEnv(rows=8, cols=10, mines=12, allow_flags=True, observation_mode=mode)
    view = planes_view if mode == "planes" else compact_view

    def check(obs: np.ndarray, info: dict) -> None:
        s = env.state
        np.testing.assert_array_equal(obs, view(s.revealed, s.counts, s.flags))
        if "revealed" in info:  # not after a restore: the next step's info has them
            assert info["revealed"] == s.revealed.sum()
            assert info["mines_left"] == 12 - s.flags.sum()

    play_with_restores(env, 40, check)
