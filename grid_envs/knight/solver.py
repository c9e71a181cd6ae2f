"""Dijkstra on the maze: the cheapest cost from every cell to the exit.

Entering a cell costs its price (1, or ``monster_cost`` for a monster's cell); all prices are
positive, so Dijkstra's algorithm is exact. :func:`dijkstra` is written here with a binary
heap, as the source article prescribes, and is the reference (a million cells in about 1.4 s).
:func:`dial` is a bucket queue (Dial's algorithm, exact for small integer prices), about
twice as fast, which :func:`distances` uses for large mazes; the tests check it against the
reference, and both against a BFS on unit prices and brute force on small mazes.
"""

from __future__ import annotations

import heapq

import numpy as np

from grid_envs.knight.state import ACTION_BITS, KnightLevel, KnightState

UNREACHABLE = -1
SMALL = 40_000  # cells: below this the reference heap version is used


def _steps(cols: int) -> tuple[tuple[int, int], ...]:
    # (bit, flat offset) per action direction: up, down, left, right
    return tuple(zip(ACTION_BITS, (-cols, cols, -1, 1), strict=True))


def dijkstra(cells: np.ndarray, costs: np.ndarray, target: tuple[int, int]) -> np.ndarray:
    """Cheapest cost from every cell to ``target`` (-1 where it cannot be reached)."""
    rows, cols = cells.shape
    flat_cells = cells.ravel().tolist()
    price = costs.ravel().tolist()
    steps = _steps(cols)
    inf = float("inf")
    dist = [inf] * (rows * cols)
    t = target[0] * cols + target[1]
    dist[t] = 0
    heap = [(0, t)]
    while heap:
        d, v = heapq.heappop(heap)
        if d > dist[v]:
            continue
        # moving u -> v costs price[v]; walls are symmetric, so v's openings lead to u
        nd = d + price[v]
        bits = flat_cells[v]
        for bit, off in steps:
            if bits & bit:
                u = v + off
                if nd < dist[u]:
                    dist[u] = nd
                    heapq.heappush(heap, (nd, u))
    out = np.array([UNREACHABLE if x == inf else x for x in dist], dtype=np.int64)
    return out.reshape(rows, cols)


def dial(cells: np.ndarray, costs: np.ndarray, target: tuple[int, int]) -> np.ndarray:
    """The same distances with a bucket queue (prices are small positive integers)."""
    rows, cols = cells.shape
    flat_cells = cells.ravel().tolist()
    price = costs.ravel().tolist()
    steps = _steps(cols)
    n = rows * cols
    width = max(price) + 1  # a circular array of buckets covers every pending distance
    dist = [-1] * n
    done = bytearray(n)
    t = target[0] * cols + target[1]
    dist[t] = 0
    buckets: list[list[int]] = [[] for _ in range(width)]
    buckets[0].append(t)
    pending = 1
    d = 0
    while pending:
        bucket = buckets[d % width]
        while bucket:
            v = bucket.pop()
            pending -= 1
            if done[v] or dist[v] != d:
                continue
            done[v] = 1
            nd = d + price[v]
            bits = flat_cells[v]
            for bit, off in steps:
                if bits & bit:
                    u = v + off
                    if not done[u] and (dist[u] < 0 or nd < dist[u]):
                        dist[u] = nd
                        buckets[nd % width].append(u)
                        pending += 1
        d += 1
    return np.array(dist, dtype=np.int64).reshape(rows, cols)


def distances(cells: np.ndarray, costs: np.ndarray, target: tuple[int, int]) -> np.ndarray:
    """Cheapest cost to ``target`` from every cell: the heap version for small mazes, the
    bucket queue (faster in pure Python, same answers) for large ones."""
    if cells.size <= SMALL:
        return dijkstra(cells, costs, target)
    return dial(cells, costs, target)


def exit_distances(level: KnightLevel) -> np.ndarray:
    """Dijkstra from the level's exit, computed once per level (levels are immutable) and
    kept on the level (``level.exit_dist``). Read only: the array is shared."""
    found = level.exit_dist
    if found is None:
        found = distances(level.cells, level.costs(), level.exit)
        object.__setattr__(level, "exit_dist", found)  # a cache on a frozen level
    return found


def distance_potential(state: KnightState) -> float:
    """Shaping potential: minus the cheapest cost from the knight's cell to the exit."""
    return -float(exit_distances(state.level)[state.knight])
