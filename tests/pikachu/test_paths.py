"""The 3-segment path check, proved exact against a plain BFS over (cell, direction, turns)."""

from __future__ import annotations

import itertools
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grid_envs.pikachu.paths import NO_PATH, connect_one, corners, find_path, geometry

DIRS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def bfs_shortest(board: np.ndarray, a: tuple[int, int], b: tuple[int, int]) -> int | None:
    """Fewest cells walked from a to b with at most 2 turns, through empty cells and the
    outer ring; a BFS over (cell, direction, turns). None if there is no such path."""
    rows, cols = board.shape
    free = np.ones((rows + 2, cols + 2), dtype=bool)
    free[1:-1, 1:-1] = board == 0
    start, goal = (a[0] + 1, a[1] + 1), (b[0] + 1, b[1] + 1)
    seen = {}
    queue = deque()
    for d in range(4):
        queue.append((start, d, 0, 0))
    while queue:
        (r, c), d, turns, dist = queue.popleft()
        for nd in range(4):
            nturns = turns + (nd != d)
            if nturns > 2 or (dist == 0 and nd != d):
                continue
            rr, cc = r + DIRS[nd][0], c + DIRS[nd][1]
            if not (0 <= rr < rows + 2 and 0 <= cc < cols + 2):
                continue
            if (rr, cc) == goal:
                return dist + 1
            if not free[rr, cc] or seen.get((rr, cc, nd), 3) <= nturns:
                continue
            seen[(rr, cc, nd)] = nturns
            queue.append(((rr, cc), nd, nturns, dist + 1))
    return None


def check_path(board: np.ndarray, a, b, points) -> int:
    """The corner points form <= 3 straight segments through empty cells; return length."""
    assert points[0] == a and points[-1] == b and len(points) <= 4
    rows, cols = board.shape
    length = 0
    for (r0, c0), (r1, c1) in itertools.pairwise(points):
        assert r0 == r1 or c0 == c1
        steps = max(abs(r1 - r0), abs(c1 - c0))
        for k in range(1, steps + 1):
            r = r0 + (r1 - r0) // steps * k
            c = c0 + (c1 - c0) // steps * k
            if (r, c) == b:
                continue
            assert -1 <= r <= rows and -1 <= c <= cols
            if 0 <= r < rows and 0 <= c < cols:
                assert board[r, c] == 0, (r, c)
        length += steps
    return length


def test_the_seeds_example_board() -> None:
    # the source article's input file: 1 = the two tiles to join, 2 = obstacles, 0 = free (its outer
    # barrier ring is dropped: in the real game the ring around the board is free)
    seed = np.array(
        [
            [0, 0, 0, 0, 0],
            [0, 1, 0, 0, 0],
            [0, 2, 2, 0, 0],
            [0, 0, 0, 1, 0],
            [0, 0, 0, 0, 2],
        ]
    )
    board = np.where(seed > 0, 7, 0)
    path = find_path(board, (1, 1), (3, 3))
    assert path is not None
    assert check_path(board, (1, 1), (3, 3), path) == bfs_shortest(board, (1, 1), (3, 3)) == 4
    assert find_path(board, (1, 1), (4, 4)) is not None  # around through the ring


@settings(max_examples=300, deadline=None)
@given(
    rows=st.integers(1, 7), cols=st.integers(1, 7), density=st.floats(0.1, 0.9),
    seed=st.integers(0, 100_000),
)  # fmt: skip
def test_path_check_equals_bfs_on_random_boards(
    rows: int, cols: int, density: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    board = np.where(rng.random((rows, cols)) < density, 1, 0)
    tiles = [tuple(int(x) for x in t) for t in np.argwhere(board)]
    if len(tiles) < 2:
        return
    pairs = [(a, b) for i, a in enumerate(tiles) for b in tiles[i + 1 :]]
    shapes = geometry(board.ravel(), rows, cols)
    for pa, pb in pairs:
        expected = bfs_shortest(board, pa, pb)
        length, kind, pivot = connect_one(shapes, pa[0] * cols + pa[1], pb[0] * cols + pb[1],
                                          cols, False)  # fmt: skip
        assert (length < NO_PATH) == (expected is not None), (pa, pb)
        if expected is None:
            assert find_path(board, pa, pb) is None
        else:
            assert length == expected
            points = corners(pa, pb, kind, pivot)
            assert check_path(board, pa, pb, points) == expected
            assert find_path(board, pa, pb) == points


@pytest.mark.parametrize(("rows", "cols"), [(2, 60), (60, 3), (5, 59), (60, 60)])
def test_the_widest_boards_equal_bfs(rows: int, cols: int) -> None:
    """A padded side fills most of a 64-bit field: its last places, the ring's included,
    still count."""
    rng = np.random.default_rng(rows * cols)
    board = np.where(rng.random((rows, cols)) < 0.6, 1, 0)
    board[0, 0] = board[-1, -1] = board[0, -1] = board[-1, 0] = 1
    tiles = [tuple(int(x) for x in t) for t in np.argwhere(board)]
    picks = [tiles[k] for k in rng.choice(len(tiles), size=min(len(tiles), 24), replace=False)]
    picks += [(0, 0), (rows - 1, cols - 1), (0, cols - 1), (rows - 1, 0)]
    checked = 0
    for pa, pb in itertools.combinations(dict.fromkeys(picks), 2):
        expected = bfs_shortest(board, pa, pb)
        path = find_path(board, pa, pb)
        assert (path is None) == (expected is None), (pa, pb)
        if path is not None:
            assert check_path(board, pa, pb, path) == expected
            checked += 1
    assert checked > 10


def test_a_board_too_wide_is_refused() -> None:
    from grid_envs.pikachu import rules

    with pytest.raises(ValueError, match="at most 60 cells a side, got 2x61"):
        rules.legal_mask(np.ones((2, 61), dtype=np.int16))
    with pytest.raises(ValueError, match="at most 60 cells a side"):
        find_path(np.ones((61, 2), dtype=np.int16), (0, 0), (0, 1))


def test_the_ring_counts_as_empty() -> None:
    board = np.ones((3, 3), dtype=int)
    # two corners of a full board connect around the outside (U shape through the ring)
    assert find_path(board, (0, 0), (0, 2)) == ((0, 0), (-1, 0), (-1, 2), (0, 2))
    assert find_path(board, (1, 1), (0, 0)) is None  # the centre is walled in


@pytest.mark.parametrize(
    ("a", "b", "points"),
    [
        ((0, 0), (0, 1), ((0, 0), (0, 1))),  # neighbours: one segment
        ((0, 0), (2, 0), ((0, 0), (2, 0))),
        ((0, 0), (2, 2), None),  # an L: either corner is as short
    ],
)
def test_corner_points(a, b, points) -> None:
    board = np.zeros((3, 3), dtype=int)
    board[a] = board[b] = 5
    found = find_path(board, a, b)
    if points is None:
        assert found in (((0, 0), (0, 2), (2, 2)), ((0, 0), (2, 0), (2, 2)))
    else:
        assert found == points


def test_batched_masks_equal_every_pair_checked_alone() -> None:
    from grid_envs.pikachu import rules

    rng = np.random.default_rng(5)
    boards = np.stack([rules.random_board(6, 8, 12, rng) for _ in range(40)])
    for board in boards:  # thin each board out, kind by kind, to every density
        flat, share = board.reshape(-1), rng.random()
        for kind in np.unique(flat):
            if rng.random() < share:
                flat[flat == kind] = 0
    masks = rules.batch_legal_masks(boards)
    cells = 48
    for board, mask in zip(boards, masks, strict=True):
        expected = np.zeros_like(mask)
        for i in range(cells):
            for j in range(i + 1, cells):
                a, b = divmod(i, 8), divmod(j, 8)
                if board[a] and board[a] == board[b] and find_path(board, a, b) is not None:
                    expected[rules.pair_to_action(i, j, cells)] = True
        assert np.array_equal(mask, expected)


def test_the_mask_opens_every_connected_pair_of_equal_tiles() -> None:
    """``rules.legal_mask`` against every pair of equal tiles path-checked alone
    (``find_path``, proved against the BFS above) and against the removable pairs, and the
    batch's against the single board's: boards of every shape and fill, touching tiles,
    tiles walled in, boards as wide as the path test takes (a padded side in one 64-bit
    field)."""
    from grid_envs.pikachu import rules
    from grid_envs.pikachu.paths import removable_pairs

    rng = np.random.default_rng(11)
    shapes = [(int(rng.integers(1, 12)), int(rng.integers(1, 20))) for _ in range(600)]
    shapes += [(3, 60), (60, 2), (1, 1), (1, 2), (2, 1)]
    legal = 0
    for rows, cols in shapes:
        kinds = int(rng.integers(1, 6))
        board = rng.integers(1, kinds + 1, (rows, cols)) * (rng.random((rows, cols)) < rng.random())
        mask = rules.legal_mask(board)
        assert np.array_equal(mask, rules.batch_legal_masks(board[None])[0]), board
        found = [rules.pair_to_action(i, j, board.size) for i, j in removable_pairs(board)]
        assert sorted(found) == np.flatnonzero(mask).tolist(), board
        if board.size <= 60:  # every pair alone
            tiles = np.flatnonzero(board.ravel()).tolist()
            alone = [
                rules.pair_to_action(i, j, board.size)
                for k, i in enumerate(tiles) for j in tiles[k + 1 :]
                if board.flat[i] == board.flat[j]
                and find_path(board, divmod(i, cols), divmod(j, cols)) is not None
            ]  # fmt: skip
            assert alone == sorted(found)
        legal += int(mask.sum())
    assert legal > 10_000  # the boards hold plenty of pairs of both outcomes


def test_the_compiled_mask_follows_whole_games() -> None:
    """Followed through whole games (gravity, reshuffles, now and then an unrelated board,
    as a restore gives), the compiled mask opens exactly the pairs the array path test
    finds, at every step."""
    from grid_envs.pikachu import rules
    from grid_envs.pikachu.paths import removable_pairs

    rng = np.random.default_rng(3)
    steps = updates = 0
    for _ in range(100):
        rows, cols = int(rng.integers(2, 10)), 2 * int(rng.integers(2, 9))
        kinds = int(rng.integers(1, 8))
        board = rng.permutation(np.arange(rows * cols) % kinds + 1).reshape(rows, cols)
        gravity = str(rng.choice(["none", "none", "down", "left"]))
        for _ in range(200):
            pairs = removable_pairs(board)
            mask = np.flatnonzero(rules.legal_mask(board)).tolist()
            assert mask == sorted(rules.pair_to_action(i, j, board.size) for i, j in pairs)
            steps += 1
            flat = board.reshape(-1)
            if not pairs or rng.random() < 0.05:  # stuck, or a restore: another layout
                if not board.any() or rng.random() < 0.3:
                    break
                board = board.copy()
                flat = board.reshape(-1)
                tiles = np.flatnonzero(flat)
                flat[tiles] = rng.permutation(flat[tiles])
                continue
            i, j = pairs[rng.integers(len(pairs))]
            flat[[i, j]] = 0
            rules.apply_gravity(board, gravity)
            updates += 1
    assert steps > 1_500 and updates > 1_000  # most steps were removals
