"""A plain breadth-first search over pushes: the exact reference for small levels.

It finds the fewest pushes (not moves) that solve a level, pruning only dead squares, which
is sound, so its answer is exact. It is slow on big levels on purpose: it is the oracle that
the generator's difficulty report and the solver's tests are checked against.
"""

from __future__ import annotations

from collections import deque

from grid_envs.sokoban import rules
from grid_envs.sokoban.state import Level


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
