"""Dijkstra on the maze: the cheapest cost from every cell to the exit.

Entering a cell costs its price (1, or ``monster_cost`` for a monster's cell); all prices are
positive, so Dijkstra's algorithm is exact. :func:`dijkstra` is written here with a binary
heap, as the source article prescribes, and is the reference.
:func:`dial` is a bucket queue (Dial's algorithm, exact for small integer prices), about
twice as fast in plain Python. :func:`distances`, which the envs, the generator and the
level pools call, runs the heap version compiled (:func:`grid_envs.core.jit.compiled`), over
a hundred times faster on small mazes; :func:`distances_many` runs it over a batch of levels
in one compiled loop (how a level pool shipped with the package gets its maps back). The
tests check each against the reference, and the reference against a BFS on unit prices and
brute force on small mazes.
"""

from __future__ import annotations

import heapq

import numpy as np

from grid_envs.core.jit import compiled
from grid_envs.knight.rules import level_costs
from grid_envs.knight.state import ACTION_BITS, KnightLevel, KnightState

UNREACHABLE = -1


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


@compiled
def _dijkstra_into(cells: np.ndarray, price: np.ndarray, target: int, dist: np.ndarray) -> None:
    """:func:`dijkstra` over one maze (cells and prices (rows, cols), the target a flat
    cell), written into ``dist`` (any integer type; -1 where the target cannot be reached).
    The binary heap is an array of ``d << 32 | cell`` keys, which order as (d, cell) do."""
    cols = cells.shape[1]
    flat, cost = cells.ravel(), price.ravel()
    out = dist.ravel()
    out[:] = UNREACHABLE
    out[target] = 0
    heap = np.empty(4 * flat.size + 1, dtype=np.int64)  # each cell is pushed at most 4 times
    heap[0], size = target, 1
    while size:
        entry = heap[0]
        size -= 1
        last, i = heap[size], 0  # sift the last key down from the root
        while True:
            child = 2 * i + 1
            if child >= size:
                break
            if child + 1 < size and heap[child + 1] < heap[child]:
                child += 1
            if heap[child] >= last:
                break
            heap[i] = heap[child]
            i = child
        heap[i] = last
        d, v = entry >> 32, entry & 0xFFFFFFFF
        if d > out[v]:
            continue
        nd = d + cost[v]  # moving u -> v costs v's price; walls are symmetric
        bits = flat[v]
        for bit, off in ((1, -cols), (4, cols), (8, -1), (2, 1)):  # up, down, left, right
            if bits & bit:
                u = v + off
                if out[u] < 0 or nd < out[u]:
                    out[u] = nd
                    key, j = (nd << 32) | u, size  # sift the new key up
                    size += 1
                    while j > 0 and heap[(j - 1) // 2] > key:
                        heap[j] = heap[(j - 1) // 2]
                        j = (j - 1) // 2
                    heap[j] = key


@compiled
def _distances_many(cells: np.ndarray, price: np.ndarray, targets: np.ndarray,
                    dist: np.ndarray) -> None:  # fmt: skip
    for i in range(cells.shape[0]):
        _dijkstra_into(cells[i], price[i], targets[i], dist[i])


def distances(cells: np.ndarray, costs: np.ndarray, target: tuple[int, int]) -> np.ndarray:
    """Cheapest cost to ``target`` from every cell ((rows, cols) int64, -1 where it cannot
    be reached): :func:`dijkstra`, compiled."""
    dist = np.empty(cells.shape, dtype=np.int64)
    _dijkstra_into(np.ascontiguousarray(cells), np.ascontiguousarray(costs, dtype=np.int64),
                   target[0] * cells.shape[1] + target[1], dist)  # fmt: skip
    return dist


def distances_many(cells: np.ndarray, costs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """:func:`distances` for a batch: ``cells`` and ``costs`` (n, rows, cols), ``targets``
    (n, 2); returns (n, rows, cols) int32."""
    dist = np.empty(cells.shape, dtype=np.int32)
    flat = targets[:, 0].astype(np.int64) * cells.shape[2] + targets[:, 1]
    _distances_many(np.ascontiguousarray(cells), np.ascontiguousarray(costs, dtype=np.int64),
                    flat, dist)  # fmt: skip
    return dist


def exit_distances(level: KnightLevel) -> np.ndarray:
    """Dijkstra from the level's exit, computed once per level (levels are immutable) and
    kept on the level (``level.exit_dist``). Read only: the array is shared."""
    found = level.exit_dist
    if found is None:
        found = distances(level.cells, level_costs(level), level.exit)
        object.__setattr__(level, "exit_dist", found)  # a cache on a frozen level
    return found


def distance_potential(state: KnightState) -> float:
    """Shaping potential: minus the cheapest cost from the knight's cell to the exit."""
    return -float(exit_distances(state.level)[state.knight])


def distance_field(state: KnightState) -> np.ndarray:
    """The ``"distance"`` potential with the knight on each cell: minus each cell's cheapest
    cost to the exit, (rows, cols) float64 (what :func:`distance_potential` reads one cell
    of)."""
    dist = exit_distances(state.level)
    return np.where(dist == UNREACHABLE, -np.inf, -dist.astype(np.float64))


def cheapest_route(level: KnightLevel, start: tuple[int, int] | None = None) -> list[int]:
    """The actions (0 up, 1 down, 2 left, 3 right) of a cheapest route from ``start`` (the
    level's by default) to the exit: each step enters an open neighbour whose cost to the
    exit plus its own price is the cost from here (Dijkstra's map read forward)."""
    dist, price = exit_distances(level), level_costs(level)
    (r, c), actions = start or level.start, []
    moves = ((-1, 0), (1, 0), (0, -1), (0, 1))
    while (r, c) != level.exit:
        for action, (bit, (dr, dc)) in enumerate(zip(ACTION_BITS, moves, strict=True)):
            nr, nc = r + dr, c + dc
            if level.cells[r, c] & bit and dist[nr, nc] + price[nr, nc] == dist[r, c]:
                actions.append(action)
                r, c = nr, nc
                break
        else:  # pragma: no cover - a Dijkstra map always has a next step
            raise RuntimeError(f"no cheapest step from {(r, c)}")
    return actions
