"""Grid helpers: BFS, flood fill and paths, iterative on any board size."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

from grid_envs.core.grid import bfs_distances, flood_fill, neighbours

BOARD = np.array(
    [
        [1, 1, 1, 0, 1],
        [0, 0, 1, 0, 1],
        [1, 1, 1, 0, 1],
        [1, 0, 0, 0, 1],
        [1, 1, 1, 1, 1],
    ],
    dtype=bool,
)


def test_bfs_distances_follow_the_corridor() -> None:
    d = bfs_distances(BOARD, (0, 0))
    assert d[0, 2] == 2 and d[2, 0] == 6 and d[0, 4] == 16
    assert d[1, 0] == -1  # a wall


def test_flood_fill_eight_connected_crosses_diagonals() -> None:
    board = np.eye(4, dtype=bool)
    assert flood_fill(board, (0, 0), connectivity=4).sum() == 1
    assert flood_fill(board, (0, 0), connectivity=8).sum() == 4


def test_neighbours_stay_in_bounds() -> None:
    assert sorted(neighbours((0, 0), (3, 3))) == [(0, 1), (1, 0)]
    assert len(list(neighbours((1, 1), (3, 3), connectivity=8))) == 8
    with pytest.raises(ValueError, match="connectivity must be 4 or 8, got 6"):
        list(neighbours((0, 0), (3, 3), connectivity=6))


def test_flood_fill_of_a_million_cells_needs_no_recursion() -> None:
    board = np.ones((1000, 1000), dtype=bool)
    limit = sys.getrecursionlimit()
    start = time.perf_counter()
    region = flood_fill(board, (500, 500))
    assert region.all()
    assert sys.getrecursionlimit() == limit
    assert time.perf_counter() - start < 30  # generous: only guards against a hang
