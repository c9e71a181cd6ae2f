"""Maze generation and Dijkstra: connected, consistent, exact."""

from __future__ import annotations

import numpy as np
import pytest

from grid_envs.core.grid import DIRECTIONS
from grid_envs.knight import maze, solver
from grid_envs.knight.state import ACTION_BITS, DOWN_BIT, RIGHT_BIT


def bfs(cells: np.ndarray, target: tuple[int, int]) -> np.ndarray:
    """Steps to ``target`` from every cell (unit prices): the check Dijkstra must match."""
    rows, cols = cells.shape
    dist = np.full((rows, cols), -1, dtype=np.int64)
    dist[target] = 0
    frontier = [target]
    while frontier:
        nxt = []
        for r, c in frontier:
            for bit, (dr, dc) in zip(ACTION_BITS, DIRECTIONS, strict=True):
                v = (r + dr, c + dc)
                if cells[r, c] & bit and dist[v] < 0:
                    dist[v] = dist[r, c] + 1
                    nxt.append(v)
        frontier = nxt
    return dist


def open_walls(cells: np.ndarray) -> int:
    """Number of opened inner walls."""
    return int(((cells & RIGHT_BIT) > 0).sum() + ((cells & DOWN_BIT) > 0).sum())


def reachable(cells: np.ndarray, start: tuple[int, int]) -> int:
    return int((bfs(cells, start) >= 0).sum())


@pytest.mark.parametrize(("rows", "cols"), [(1, 2), (1, 9), (2, 2), (5, 7), (12, 12), (31, 17)])
@pytest.mark.parametrize("loops", [0.0, 0.2])
def test_every_cell_reaches_every_other_and_neighbours_agree(
    rows: int, cols: int, loops: float
) -> None:
    for seed in range(10):
        cells = maze.generate(rows, cols, np.random.default_rng(seed), loops)
        assert maze.check(cells) == []
        assert reachable(cells, (0, 0)) == rows * cols
        if loops == 0.0:
            assert open_walls(cells) == rows * cols - 1  # a tree: one route only


def test_kruskal_and_boruvka_build_the_same_maze() -> None:
    for seed, (rows, cols) in enumerate([(3, 4), (20, 30), (64, 64), (150, 90)]):
        k = maze.generate(rows, cols, np.random.default_rng(seed), 0.05, method="kruskal")
        b = maze.generate(rows, cols, np.random.default_rng(seed), 0.05, method="boruvka")
        np.testing.assert_array_equal(k, b)


def test_loops_add_routes() -> None:
    rng = np.random.default_rng(0)
    tree = maze.generate(20, 20, np.random.default_rng(1))
    loopy = maze.generate(20, 20, np.random.default_rng(1), loops=0.3)
    extra = open_walls(loopy) - open_walls(tree)
    assert extra > 50  # each extra opening closes a cycle: a second route
    # the tree is contained in the loopy maze (same seed, same tree, then openings)
    assert ((tree & loopy) == tree).all()
    del rng


def test_same_seed_same_maze_different_seeds_differ() -> None:
    a = maze.generate(15, 15, np.random.default_rng(7))
    b = maze.generate(15, 15, np.random.default_rng(7))
    c = maze.generate(15, 15, np.random.default_rng(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_check_names_the_problem() -> None:
    cells = maze.generate(4, 4, np.random.default_rng(0))
    bad = cells.copy()
    bad[0, 0] |= 1  # opens through the top border
    assert any("top or bottom border" in p for p in maze.check(bad))
    bad = cells.copy()
    bad[1, 1] ^= 2  # its right side no longer matches the left side of (1, 2)
    assert "cells (1, 1) and (1, 2) disagree about their wall" in maze.check(bad)
    with pytest.raises(ValueError, match="loops must be in"):
        maze.generate(3, 3, np.random.default_rng(0), loops=2)


def brute_force(cells: np.ndarray, costs: np.ndarray, target: tuple[int, int]) -> np.ndarray:
    """Cheapest cost from every cell: try every simple path (tiny mazes only)."""
    rows, cols = cells.shape
    moves = list(zip(ACTION_BITS, ((-1, 0), (1, 0), (0, -1), (0, 1)), strict=True))
    out = np.full((rows, cols), -1, dtype=np.int64)

    def walk(cell: tuple[int, int], seen: set, cost: int, best: list[int]) -> None:
        if cell == target:
            best[0] = cost if best[0] < 0 else min(best[0], cost)
            return
        for bit, (dr, dc) in moves:
            if cells[cell] & bit:
                nxt = (cell[0] + dr, cell[1] + dc)
                if nxt not in seen:
                    walk(nxt, seen | {nxt}, cost + int(costs[nxt]), best)

    for r in range(rows):
        for c in range(cols):
            best = [-1]
            walk((r, c), {(r, c)}, 0, best)
            out[r, c] = best[0]
    return out


@pytest.mark.parametrize("seed", range(25))
def test_dijkstra_equals_brute_force_on_small_mazes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cells = maze.generate(3, 4, rng, loops=0.5)
    costs = rng.integers(1, 6, size=cells.shape)
    target = (int(rng.integers(3)), int(rng.integers(4)))
    expected = brute_force(cells, costs, target)
    np.testing.assert_array_equal(solver.dijkstra(cells, costs, target), expected)
    np.testing.assert_array_equal(solver.dial(cells, costs, target), expected)
    np.testing.assert_array_equal(solver.distances(cells, costs, target), expected)


def test_compiled_dijkstra_is_the_reference_on_one_maze_and_a_batch() -> None:
    rng = np.random.default_rng(7)
    cells = np.stack([maze.generate(12, 9, rng, loops=0.2) for _ in range(20)])
    costs = rng.integers(1, 1000, size=cells.shape)
    targets = np.stack([rng.integers(12, size=20), rng.integers(9, size=20)], axis=1)
    many = solver.distances_many(cells, costs, targets)
    for i in range(20):
        target = (int(targets[i, 0]), int(targets[i, 1]))
        expected = solver.dijkstra(cells[i], costs[i], target)
        np.testing.assert_array_equal(solver.distances(cells[i], costs[i], target), expected)
        np.testing.assert_array_equal(many[i], expected)
    walled = np.zeros((4, 4), dtype=np.uint8)  # no openings: only the target is reached
    assert (solver.distances(walled, np.ones((4, 4)), (1, 2)) == -1).sum() == 15


def test_dijkstra_on_unit_prices_is_a_bfs() -> None:
    for seed in range(10):
        cells = maze.generate(30, 40, np.random.default_rng(seed), loops=0.15)
        ones = np.ones(cells.shape, dtype=np.int32)
        np.testing.assert_array_equal(solver.dijkstra(cells, ones, (5, 6)), bfs(cells, (5, 6)))


def test_the_fast_path_matches_the_reference_on_a_large_maze() -> None:
    rng = np.random.default_rng(3)
    cells = maze.generate(300, 300, rng, loops=0.05)
    costs = np.where(rng.random(cells.shape) < 0.1, 4, 1)
    np.testing.assert_array_equal(
        solver.distances(cells, costs, (0, 0)), solver.dijkstra(cells, costs, (0, 0))
    )
