"""A plain breadth-first search over pushes: the exact reference for small levels.

It finds the fewest pushes (not moves) that solve a level, pruning only dead squares, which
is sound, so its answer is exact. It is slow on big levels on purpose: it is the oracle that
the generator's difficulty report and the solver's tests are checked against.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from grid_envs.sokoban import rules
from grid_envs.sokoban.state import Level, SokobanState


def min_pushes(level: Level, max_states: int = 2_000_000) -> int | None:
    """Fewest pushes that solve ``level``; None if unsolvable; raise if over ``max_states``."""
    _rows, cols = level.shape
    floor = level.floor.ravel().tolist()
    dead = rules.dead_squares(level.floor, level.goals).ravel().tolist()
    goals = frozenset(int(i) for i in level.goals.ravel().nonzero()[0])
    offsets = (-cols, cols, -1, 1)
    start_boxes = frozenset(int(i) for i in level.boxes.ravel().nonzero()[0])
    player = level.player[0] * cols + level.player[1]

    def region(boxes: frozenset[int], start: int) -> tuple[int, list[int]]:
        seen = {start}
        stack = [start]
        while stack:
            i = stack.pop()
            for o in offsets:
                j = i + o
                if j not in seen and floor[j] and j not in boxes:
                    seen.add(j)
                    stack.append(j)
        return min(seen), list(seen)

    key0 = region(start_boxes, player)[0]
    if start_boxes == goals:
        return 0
    seen_states = {(start_boxes, key0)}
    queue = deque([(start_boxes, player, 0)])
    while queue:
        boxes, p, depth = queue.popleft()
        _, cells = region(boxes, p)
        reach = set(cells)
        for b in boxes:
            for o in offsets:
                if b - o in reach:
                    t = b + o
                    if floor[t] and t not in boxes and not dead[t]:
                        nb = (boxes - {b}) | {t}
                        if nb == goals:
                            return depth + 1
                        key = (nb, region(nb, b)[0])
                        if key not in seen_states:
                            if len(seen_states) >= max_states:
                                raise RuntimeError(f"BFS passed {max_states} states")
                            seen_states.add(key)
                            queue.append((nb, b, depth + 1))
    return None


def position_key(boxes: int, player: int, cells: int) -> int:
    """One int for a position: the boxes' bitboard and the player's flat cell."""
    return boxes * cells + player


def move_distances(state: SokobanState, max_states: int = 200_000) -> dict[int, int] | None:
    """Fewest moves (walk steps and pushes alike) that solve the level from every position
    reachable from ``state``, keyed by :func:`position_key`; -1 where the level can no
    longer be solved. None where more than ``max_states`` positions are reachable.

    Two breadth-first searches over the whole position graph: forward from ``state`` to
    list the positions and their successors, then backward from the solved ones (a layer
    at a time, in numpy). Positions with a box on a dead square are listed but not
    followed, so every distance is exact.
    """
    cols = state.floor.shape[1]
    cells = state.floor.size
    floor = state.floor.ravel().tolist()
    dead = rules.bits(rules.dead_squares(state.floor, state.goals))
    goals = rules.bits(state.goals)
    # per floor cell, its floor neighbours: (cell, its bit, the cell beyond's bit or 0)
    steps = [
        [(c + o, 1 << (c + o), (1 << (c + 2 * o)) if floor[c + 2 * o] else 0)
         for o in (-cols, cols, -1, 1) if floor[c + o]] if floor[c] else []
        for c in range(cells)
    ]  # fmt: skip
    start = position_key(rules.bits(state.boxes), state.player[0] * cols + state.player[1], cells)
    index = {start: 0}
    keys = [start]
    children: list[int] = []  # every position's successors, one after another
    counts: list[int] = []  # how many each position has
    solved: list[int] = []
    for i, key in enumerate(keys):  # keys grows as positions are found: a BFS queue
        boxes, player = divmod(key, cells)
        if boxes & goals == goals or boxes & dead:  # a box on a dead square is never solved
            counts.append(0)
            if boxes & goals == goals:
                solved.append(i)
            continue
        before = len(children)
        for n, here, beyond in steps[player]:
            if boxes & here:
                if not beyond or boxes & beyond:
                    continue
                child = (boxes ^ here ^ beyond) * cells + n
            else:
                child = boxes * cells + n
            j = index.get(child)
            if j is None:
                j = index[child] = len(keys)
                keys.append(child)
            children.append(j)
        counts.append(len(children) - before)
        if len(keys) > max_states:
            return None
    dist = _backward_distances(np.asarray(counts), np.asarray(children, dtype=np.int64), solved)
    return dict(zip(keys, dist.tolist(), strict=True))


def _backward_distances(counts: np.ndarray, children: np.ndarray, solved: list[int]) -> np.ndarray:
    """Each position's BFS distance to the nearest of ``solved`` along the edges
    (position k has the ``counts[k]`` successors that follow in ``children``); -1 if none."""
    n = len(counts)
    parents = np.repeat(np.arange(n), counts)
    order = np.argsort(children, kind="stable")
    parents, into = parents[order], children[order]  # the edges grouped by their head
    first = np.searchsorted(into, np.arange(n + 1))
    dist = np.full(n, -1, dtype=np.int64)
    frontier = np.asarray(solved, dtype=np.int64)
    dist[frontier] = 0
    depth = 0
    while frontier.size:
        depth += 1
        lo, sizes = first[frontier], first[frontier + 1] - first[frontier]
        total = int(sizes.sum())
        if not total:
            break
        # the edges into the frontier, gathered without a Python loop
        at = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(total)
        found = parents[at]
        frontier = np.unique(found[dist[found] < 0])
        dist[frontier] = depth
    return dist
