"""Pikachu-v0: actions, masks, gravity, shuffles, boards, the planner and agents."""

from __future__ import annotations

import itertools
from copy import deepcopy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import seeding

from grid_envs.pikachu import rules
from grid_envs.pikachu.env import PikachuEnv
from grid_envs.pikachu.paths import find_path, removable_pairs
from grid_envs.pikachu.solver import plan, remove
from grid_envs.pikachu.state import PikachuState
from tests.pikachu.conftest import exhaustive


def test_pair_actions_round_trip() -> None:
    for cells in (2, 3, 36, 144):
        actions = [
            rules.pair_to_action(i, j, cells) for i, j in itertools.combinations(range(cells), 2)
        ]
        assert actions == list(range(rules.n_pairs(cells)))
        for a in (0, len(actions) // 3, len(actions) - 1):
            i, j = rules.action_to_pair(a, cells)
            assert rules.pair_to_action(j, i, cells) == a
        # the batched env's version, every action: the pairs in the order they are numbered
        first, second = rules.actions_to_pairs(np.arange(len(actions)), cells)
        assert list(zip(first.tolist(), second.tolist(), strict=True)) == list(
            itertools.combinations(range(cells), 2)
        )
    big = 4096  # where a float square root could land one row off
    actions = np.arange(0, rules.n_pairs(big), 997)
    first, second = rules.actions_to_pairs(actions, big)
    assert [rules.action_to_pair(int(a), big) for a in actions] == list(
        zip(first.tolist(), second.tolist(), strict=True)
    )
    with pytest.raises(ValueError, match="two different cells"):
        rules.pair_to_action(3, 3, 10)


def test_mask_is_exactly_the_removable_pairs() -> None:
    env = gym.make("GridGames/Pikachu-Small-v0")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    cells = 36
    for _ in range(200):
        board = env.unwrapped.game_state().board
        expected = set()
        for i, j in itertools.combinations(range(cells), 2):
            a, b = divmod(i, 6), divmod(j, 6)
            if board[a] and board[a] == board[b] and find_path(board, a, b) is not None:
                expected.add(rules.pair_to_action(i, j, cells))
        assert set(np.flatnonzero(info["action_mask"]).tolist()) == expected
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            _, info = env.reset()


def test_removing_a_pair_scores_and_clearing_wins() -> None:
    board = [[1, 2], [1, 2]]
    env = PikachuEnv(levels=board)
    _, info = env.reset(seed=0)
    assert (info["path"] == -1).all()  # no removal yet
    a = rules.pair_to_action(0, 2, 4)  # the 1s are neighbours
    assert info["action_mask"][a] and info["action_mask"].sum() == 2
    _, r, term, _, info = env.step(a)
    assert r == pytest.approx(0.5) and not term
    assert info["path"].tolist() == [[0, 0], [1, 0], [-1, -1], [-1, -1]]
    assert env.unwrapped.state.last_path == ((0, 0), (1, 0))
    _, r, term, _, info = env.step(rules.pair_to_action(1, 3, 4))
    assert term and info["is_success"] and r == pytest.approx(0.5 + 1.0)


def test_a_crossed_lock_is_reshuffled_at_the_start() -> None:
    # A B / B A: each pair needs four segments, so the deal is stuck and gets reshuffled
    assert not removable_pairs(np.array([[1, 2], [2, 1]]))
    env = PikachuEnv(levels=[[1, 2], [2, 1]])
    _, info = env.reset(seed=0)
    assert info["action_mask"].any()


@pytest.mark.parametrize(
    ("gravity", "expected"),
    [
        ("down", [[0, 0, 0], [3, 0, 4], [5, 6, 7]]),
        ("up", [[3, 6, 4], [5, 0, 7], [0, 0, 0]]),
        ("left", [[3, 4, 0], [6, 0, 0], [5, 7, 0]]),
        ("right", [[0, 3, 4], [0, 0, 6], [0, 5, 7]]),
        ("none", [[3, 0, 4], [0, 6, 0], [5, 0, 7]]),
    ],
)
def test_gravity(gravity: str, expected: list) -> None:
    board = np.array([[3, 0, 4], [0, 6, 0], [5, 0, 7]], dtype=np.int16)
    rules.apply_gravity(board, gravity)
    np.testing.assert_array_equal(board, expected)


def test_gravity_in_the_env_keeps_tiles_packed() -> None:
    env = gym.make("GridGames/Pikachu-Small-v0", gravity="down")
    rng = np.random.default_rng(1)
    _, info = env.reset(seed=1)
    for _ in range(10):
        _, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        board = env.unwrapped.game_state().board
        for col in board.T:  # no hole below a tile
            filled = np.flatnonzero(col)
            assert len(filled) == 0 or (
                filled[-1] == len(col) - 1 and len(filled) == filled[-1] - filled[0] + 1
            )
        if term:
            break


def test_shuffle_leaves_a_move_whenever_a_layout_has_one() -> None:
    rng = np.random.default_rng(0)
    for seed in range(200):
        r = np.random.default_rng(seed)
        board = rules.random_board(6, 6, 9, r)
        board[r.random((6, 6)) < 0.5] = 0  # knock holes, keep kinds even below
        for kind in range(1, 10):
            cells = np.argwhere(board == kind)
            if len(cells) % 2:
                board[tuple(cells[0])] = 0
        if not board.any():
            continue
        before = sorted(board[board > 0].tolist())
        ok = rules.shuffle(board, rng, tries=1)
        assert sorted(board[board > 0].tolist()) == before  # same tiles
        if ok:
            assert removable_pairs(board)
    # a lone pair walled in cannot be helped: the shuffle says so and leaves the board
    board = np.array([[2, 2, 2], [2, 1, 2], [2, 2, 2]], dtype=np.int16)
    board[1, 1] = 3  # one tile of kind 3... make kinds even by construction below
    stuck = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]], dtype=np.int16)
    assert not rules.shuffle(stuck, rng)


def test_stuck_board_ends_or_reshuffles() -> None:
    # after removing the 3s, the crossed 1s and 2s are stuck
    board = [[3, 1, 2, 3], [0, 2, 1, 0]]
    ends = PikachuEnv(levels=board, on_stuck="end")
    ends.reset(seed=0)
    _, r, term, _, info = ends.step(rules.pair_to_action(0, 3, 8))
    assert term and not info["is_success"] and r == pytest.approx(1 / 3 - 1.0)
    shuffles = PikachuEnv(levels=board, on_stuck="shuffle")
    shuffles.reset(seed=0)
    _, r, term, _, info = shuffles.step(rules.pair_to_action(0, 3, 8))
    assert not term and info["shuffles"] == 1 and r == pytest.approx(1 / 3 - 0.1)
    assert info["action_mask"].any()


def test_a_steps_own_planes_are_those_of_the_board_it_leaves() -> None:
    # the step writes its observation in its compiled call, unless a reshuffle moved the
    # tiles after it; either way it equals the planes made afresh, and is taken once
    board = [[3, 1, 2, 3], [0, 2, 1, 0]]  # stuck, and reshuffled, after the 3s go
    shuffles = PikachuEnv(levels=board, on_stuck="shuffle")
    shuffles.reset(seed=0)
    obs, _, _, _, info = shuffles.step(rules.pair_to_action(0, 3, 8))
    assert info["shuffles"] == 1 and (obs == shuffles._planes()).all()
    env = gym.make("GridGames/Pikachu-Small-v0")
    u = env.unwrapped
    obs, info = env.reset(seed=5)
    start = u.snapshot()
    rng = np.random.default_rng(5)
    for _ in range(40):
        obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        assert u._fresh_planes is None  # taken by the step's observation
        assert (u._planes() == obs).all()
        assert (info["path"][: u.state.counters[rules.PATH]] == u.state.last_path).all()
        if term or trunc:
            obs, info = env.reset()
    played = u.state
    u._fresh_planes = (played, np.zeros_like(obs))  # as if a step made them and left them
    u.restore(start)  # another state object: planes made for the one before are not used
    assert u.state is not played and u._planes().any()


def test_a_states_counters_and_path_are_its_own_arrays() -> None:
    state = PikachuState(np.ones((2, 2), dtype=np.int16), removed=3, shuffles=1,
                         last_path=((0, 0), (-1, 0), (-1, 1), (0, 1)), total=2)  # fmt: skip
    copy = deepcopy(state)
    copy.removed, copy.shuffles, copy.last_path = 4, 2, ((0, 0), (1, 0))
    copy.board[0, 0] = 0
    assert (state.removed, state.shuffles, state.tiles_left) == (3, 1, 4)
    assert state.last_path == ((0, 0), (-1, 0), (-1, 1), (0, 1))
    assert copy.path.tolist() == [[0, 0], [1, 0], [-1, -1], [-1, -1]]
    assert copy.counters.tolist() == [4, 2, 2, 2]  # removed, shuffles, total, corners
    with pytest.raises(ValueError, match="at most 4 corner points"):
        copy.last_path = ((0, 0),) * 5


def test_odd_counts_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"kind\(s\) 2 occur an odd number of times"):
        PikachuEnv(levels=[[1, 1, 2], [3, 3, 0]])
    with pytest.raises(ValueError, match="cannot hold 7 kinds"):
        gym.make("GridGames/Pikachu-v0", kinds=7)


def test_planner_plans_replay_and_clear() -> None:
    for seed in range(6):
        board = rules.random_board(6, 6, 9, np.random.default_rng(seed))
        result = plan(board, max_seconds=5)
        assert result.status in ("cleared", "unsolvable")
        if result.cleared:
            for move in result.moves:
                assert move in set(removable_pairs(board))
                board = remove(board, move, "none")
            assert not board.any()


def test_guided_playouts_replay_and_clear() -> None:
    from grid_envs.pikachu.solver import playout

    cleared = 0
    for seed in range(8):
        board = rules.random_board(6, 6, 9, np.random.default_rng(seed))
        moves = playout(board, np.random.default_rng(seed), guided=True)
        if moves is not None:
            cleared += 1
            for move in moves:
                assert move in set(removable_pairs(board))
                board = remove(board, move, "none")
            assert not board.any()
    assert cleared >= 4


def test_planner_proofs_agree_with_exhaustive_search() -> None:
    """'unsolvable' is a proof: it never contradicts a plain exhaustive search."""
    both = {True: 0, False: 0}
    fours = [k for k in range(1, 4) for _ in range(4)]
    twos = [k for k in range(4, 16) for _ in range(2)]
    tiles = np.array(fours + twos)
    for seed in range(150):
        # three kinds of four (pairing choices) and twelve of two (crossed locks)
        board = np.random.default_rng(seed).permutation(tiles).astype(np.int16).reshape(6, 6)
        truth = exhaustive(board)
        result = plan(board, max_seconds=None, node_limit=100_000)  # the exact search alone
        assert result.status != "gave_up"
        assert result.cleared == truth
        both[truth] += 1
    assert both[True] > 10 and both[False] > 10


@pytest.mark.parametrize("gravity", ["down", "left"])
def test_planner_with_gravity_replays(gravity: str) -> None:
    cleared = 0
    for seed in range(5):
        board = rules.random_board(4, 4, 4, np.random.default_rng(seed))
        result = plan(board, gravity=gravity, max_seconds=5)
        assert result.status != "gave_up"
        if result.cleared:
            cleared += 1
            for move in result.moves:
                assert move in set(removable_pairs(board))
                board = remove(board, move, gravity)
            assert not board.any()
    assert cleared >= 3


def test_solvable_only_gives_the_same_clearable_board_for_a_seed() -> None:
    """The planner judges on a node budget, not a clock: a seed means one board anywhere."""
    boards = []
    for _ in range(2):
        env = PikachuEnv(solvable_only=True)
        env.reset(seed=0)
        boards.append(env.state.board.copy())
    assert (boards[0] == boards[1]).all()
    first_draw = rules.random_board(9, 16, 36, seeding.np_random(0)[0])
    assert not (boards[0] == first_draw).all()  # seed 0's first deal cannot be cleared
    assert plan(first_draw, max_seconds=None).status == "unsolvable"
    assert plan(boards[0], max_seconds=None, node_limit=2_000).cleared
    with pytest.raises(ValueError, match="plan_nodes must be at least 1, got 0"):
        PikachuEnv(solvable_only=True, plan_nodes=0)
