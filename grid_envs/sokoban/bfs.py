"""A plain breadth-first search over pushes: the exact reference for small levels.

It finds the fewest pushes (not moves) that solve a level, pruning only dead squares, which
is sound, so its answer is exact. It is slow on big levels on purpose: it is the oracle that
the generator's difficulty report and the solver's tests are checked against.
"""

from __future__ import annotations

from collections import deque

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
    list the positions and their successors, then backward from the solved ones. Positions
    with a box on a dead square are listed but not followed, so every distance is exact.
    """
    cols = state.floor.shape[1]
    cells = state.floor.size
    floor = state.floor.ravel().tolist()
    dead = rules.bits(state.floor & (rules.push_distances(state.floor, state.goals) < 0))
    goals = rules.bits(state.goals)
    offsets = (-cols, cols, -1, 1)
    start = position_key(rules.bits(state.boxes), state.player[0] * cols + state.player[1], cells)
    index = {start: 0}
    keys = [start]
    successors: list[list[int]] = []
    solved: list[int] = []
    for i, key in enumerate(keys):  # keys grows as positions are found: a BFS queue
        boxes, player = divmod(key, cells)
        children: list[int] = []
        successors.append(children)
        if boxes & goals == goals:
            solved.append(i)
            continue
        if boxes & dead:  # listed (at -1), not followed: a box there is never solved
            continue
        for o in offsets:
            n = player + o
            if not floor[n]:
                continue
            if (boxes >> n) & 1:
                t = n + o
                if not floor[t] or (boxes >> t) & 1:
                    continue
                child = (boxes ^ (1 << n) ^ (1 << t)) * cells + n
            else:
                child = boxes * cells + n
            j = index.get(child)
            if j is None:
                if len(keys) >= max_states:
                    return None
                j = index[child] = len(keys)
                keys.append(child)
            children.append(j)
    predecessors: list[list[int]] = [[] for _ in keys]
    for i, children in enumerate(successors):
        for j in children:
            predecessors[j].append(i)
    dist = [-1] * len(keys)
    for i in solved:
        dist[i] = 0
    queue = deque(solved)
    while queue:
        j = queue.popleft()
        for i in predecessors[j]:
            if dist[i] < 0:
                dist[i] = dist[j] + 1
                queue.append(i)
    return dict(zip(keys, dist, strict=True))
