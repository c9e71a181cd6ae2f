"""Sokoban's rules as small named predicates on a :class:`SokobanState` (no gymnasium here).

The eight actions are the source article's: four moves and four pushes.

====== ========== =========================================================
action name       legal when
====== ========== =========================================================
0      move up    the cell above is floor without a box
1      move down  likewise below
2      move left  likewise left
3      move right likewise right
4      push up    the cell above holds a box and the cell beyond it is free
5      push down  likewise below
6      push left  likewise left
7      push right likewise right
====== ========== =========================================================

Deadlocks (a box that can no longer reach a goal, so the level cannot be solved) are found by
*dead squares* (no goal is reachable from the cell by pushing, corners included) and *freeze
deadlocks* (a box off its goal that can move along neither axis, 2x2 blocks included). Both
tests are sound: they never call a solvable position dead.

A step's reward is :func:`step_reward`, for one env and for a batch alike.
"""

from __future__ import annotations

import copy
from collections import deque
from typing import Any, Protocol

import numpy as np

from grid_envs.core.grid import DIRECTIONS, flood_fill
from grid_envs.sokoban.state import Cell, Level, SokobanState

N_ACTIONS = 8
MOVE_UP, MOVE_DOWN, MOVE_LEFT, MOVE_RIGHT, PUSH_UP, PUSH_DOWN, PUSH_LEFT, PUSH_RIGHT = range(8)
ACTION_NAMES = tuple(
    f"{kind} {d}" for kind in ("move", "push") for d in ("up", "down", "left", "right")
)
LURD = "udlr"  # LURD letter of each direction (upper case when pushing)


class RewardSettings(Protocol):
    """What a step pays (the env's settings; see :class:`grid_envs.sokoban.env.SokobanEnv`)."""

    step_penalty: float
    box_on_reward: float
    box_off_penalty: float
    solve_reward: float

    @property
    def deadlock_penalty(self) -> float: ...


def step_reward(settings: RewardSettings, goal_change: Any, solved: Any, deadlock_ends: Any) -> Any:
    """The reward of a step: ``step_penalty``, plus ``box_on_reward`` when a push put a box
    on a goal (``goal_change`` > 0) or ``box_off_penalty`` when it took one off (< 0),
    ``solve_reward`` when the level is solved, ``deadlock_penalty`` when a deadlock ends
    the episode. Numbers for one env, arrays for a batch (the terms in this order, so both
    add the same floats)."""
    return (
        settings.step_penalty
        + (goal_change > 0) * settings.box_on_reward
        + (goal_change < 0) * settings.box_off_penalty
        + solved * settings.solve_reward
        + deadlock_ends * settings.deadlock_penalty
    )


def _free(state: SokobanState, r: int, c: int) -> bool:
    return bool(state.floor[r, c]) and not state.boxes[r, c]


def legal_mask(state: SokobanState) -> np.ndarray:
    """The exact (8,) bool mask: per direction, the move or the push, whichever is possible."""
    mask = np.zeros(N_ACTIONS, dtype=bool)
    pr, pc = state.player
    for d, (dr, dc) in enumerate(DIRECTIONS):
        r, c = pr + dr, pc + dc
        if not state.floor[r, c]:
            continue
        if not state.boxes[r, c]:
            mask[d] = True
        elif _free(state, r + dr, c + dc):
            mask[4 + d] = True
    return mask


def action_for_direction(state: SokobanState, direction: int) -> int:
    """The move or push in ``direction`` that is legal now (the move if neither is)."""
    dr, dc = DIRECTIONS[direction]
    r, c = state.player[0] + dr, state.player[1] + dc
    return 4 + direction if state.floor[r, c] and state.boxes[r, c] else direction


def apply_action(state: SokobanState, action: int) -> int:
    """Play a legal action in place; return the change in boxes on goals (-1, 0 or +1)."""
    d = action % 4
    dr, dc = DIRECTIONS[d]
    r, c = state.player[0] + dr, state.player[1] + dc
    state.player = (r, c)
    state.moves += 1
    if action < 4:
        return 0
    state.boxes[r, c] = False
    state.boxes[r + dr, c + dc] = True
    state.pushes += 1
    return int(state.goals[r + dr, c + dc]) - int(state.goals[r, c])


def boxes_on_goals(state: SokobanState) -> int:
    return int((state.boxes & state.goals).sum())


def is_solved(state: SokobanState) -> bool:
    """Every goal holds a box."""
    return not (state.goals & ~state.boxes).any()


def push_distances(floor: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """Fewest pushes that take a lone box from each cell to its nearest goal; -1 if none.

    A reverse search: from every goal, *pull* the box (the puller needs two free cells).
    Other boxes and the player's reachability are ignored, so this is a lower bound.
    """
    rows, cols = floor.shape
    dist = np.full((rows, cols), -1, dtype=np.int32)
    queue: deque[Cell] = deque()
    for r, c in np.argwhere(goals & floor):
        dist[r, c] = 0
        queue.append((int(r), int(c)))
    while queue:
        r, c = queue.popleft()
        for dr, dc in DIRECTIONS:
            r1, c1, r2, c2 = r + dr, c + dc, r + 2 * dr, c + 2 * dc
            if not (0 <= r2 < rows and 0 <= c2 < cols):
                continue
            if floor[r1, c1] and floor[r2, c2] and dist[r1, c1] < 0:
                dist[r1, c1] = dist[r, c] + 1
                queue.append((r1, c1))
    return dist


def dead_squares(floor: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """Floor cells from which a box can never be pushed onto any goal."""
    return floor & (push_distances(floor, goals) < 0)


def _blocked(state: SokobanState, cell: Cell, axis: int, seen: set[Cell]) -> bool:
    """Whether the box at ``cell`` cannot move along ``axis`` (0 vertical, 1 horizontal)."""
    r, c = cell
    dr, dc = (1, 0) if axis == 0 else (0, 1)
    a, b = (r - dr, c - dc), (r + dr, c + dc)
    if not state.floor[a] or not state.floor[b] or a in seen or b in seen:
        return True
    if state.dead[a] and state.dead[b]:
        return True
    return (state.boxes[a] and _frozen(state, a, seen)) or (
        state.boxes[b] and _frozen(state, b, seen)
    )


def _frozen(state: SokobanState, cell: Cell, seen: set[Cell]) -> bool:
    seen = seen | {cell}  # boxes under test count as walls, which ends circular checks
    return _blocked(state, cell, 0, seen) and _blocked(state, cell, 1, seen)


def is_frozen(state: SokobanState, cell: Cell) -> bool:
    """The box at ``cell`` can never move again (whatever the player does)."""
    return _frozen(state, cell, set())


def deadlocked_boxes(state: SokobanState) -> list[Cell]:
    """Boxes off goals that sit on a dead square or are frozen."""
    out = []
    for r, c in np.argwhere(state.boxes & ~state.goals):
        cell = (int(r), int(c))
        if state.dead[cell] or is_frozen(state, cell):
            out.append(cell)
    return out


def is_deadlocked(state: SokobanState) -> bool:
    """The level can no longer be solved (sound: dead squares and freeze deadlocks)."""
    if (state.boxes & state.dead).any():
        return True
    return bool(deadlocked_boxes(state))


def player_region(state: SokobanState) -> np.ndarray:
    """Cells the player can walk to without pushing, (rows, cols) bool."""
    return flood_fill(state.floor & ~state.boxes, state.player)


def new_state(level: Level) -> SokobanState:
    return SokobanState.from_level(level, push_distances(level.floor, level.goals))


def distance_to_goals(state: SokobanState) -> int:
    """Sum over boxes of their fewest pushes to the nearest goal (a simple lower bound).

    A box on a dead square counts as the largest distance in the level plus one.
    """
    d = state.push_dist[state.boxes]
    worst = int(state.push_dist.max()) + 1
    return int(np.where(d < 0, worst, d).sum())


def lurd_to_actions(state: SokobanState, lurd: str) -> list[int]:
    """Turn a LURD string into actions, checking each against the rules on a copy of ``state``.

    Raises ``ValueError`` naming the position of the first illegal or unknown letter.
    """
    s = copy.deepcopy(state)
    actions = []
    for k, ch in enumerate(lurd):
        if ch.lower() not in LURD:
            raise ValueError(f"LURD position {k}: unknown letter {ch!r} (use l u r d / L U R D)")
        a = LURD.index(ch.lower()) + (4 if ch.isupper() else 0)
        if not legal_mask(s)[a]:
            raise ValueError(f"LURD position {k}: {ch!r} ({ACTION_NAMES[a]}) is not legal there")
        apply_action(s, a)
        actions.append(a)
    return actions


def solves(level: Level | SokobanState, lurd: str) -> bool:
    """Whether the LURD moves, played by the rules from the level's start (or the state
    given), solve it; an illegal or unknown letter raises ``ValueError`` naming it."""
    state = new_state(level) if isinstance(level, Level) else copy.deepcopy(level)
    for action in lurd_to_actions(state, lurd):
        apply_action(state, action)
    return is_solved(state)


def actions_to_lurd(actions: list[int]) -> str:
    return "".join(LURD[a % 4].upper() if a >= 4 else LURD[a % 4] for a in actions)


def distance_potential(state: SokobanState) -> float:
    """Shaping potential: minus the boxes' total push distance to their nearest goals."""
    return -float(distance_to_goals(state))


def boxes_potential(state: SokobanState) -> float:
    """Shaping potential: the number of boxes on goals."""
    return float(boxes_on_goals(state))
