"""Grid helpers: BFS, flood fill and paths, iterative on any board size."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

from grid_envs.core.grid import (
    bfs_distances,
    flat_neighbour_table,
    flat_offset_table,
    flood_fill,
    neighbours,
)

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


@pytest.mark.parametrize("connectivity", [4, 8])
def test_the_flat_tables_hold_the_neighbours_in_order(connectivity: int) -> None:
    shape = (3, 5)
    table = flat_neighbour_table(shape, connectivity)
    for r in range(shape[0]):
        for c in range(shape[1]):
            near = [rr * shape[1] + cc for rr, cc in neighbours((r, c), shape, connectivity)]
            assert list(table[r * shape[1] + c]) == near


def test_a_flat_offset_table_keeps_only_the_cells_on_the_board() -> None:
    table = flat_offset_table((3, 4), ((-2, 0), (2, 0), (0, -2), (0, 2)))
    assert table[0] == (8, 2)  # (0, 0): two down, two right
    assert table[5] == (7,)  # (1, 1): only two right lies on the board
    assert table[11] == (3, 9)  # (2, 3): two up, two left


def test_flood_fill_of_a_million_cells_needs_no_recursion() -> None:
    board = np.ones((1000, 1000), dtype=bool)
    limit = sys.getrecursionlimit()
    start = time.perf_counter()
    region = flood_fill(board, (500, 500))
    assert region.all()
    assert sys.getrecursionlimit() == limit
    assert time.perf_counter() - start < 30  # generous: only guards against a hang
