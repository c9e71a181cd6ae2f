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
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from grid_envs.core.grid import DIRECTIONS, flood_fill
from grid_envs.core.jit import compiled
from grid_envs.sokoban.state import Cell, Level, SokobanState

N_ACTIONS = 8
MOVE_UP, MOVE_DOWN, MOVE_LEFT, MOVE_RIGHT, PUSH_UP, PUSH_DOWN, PUSH_LEFT, PUSH_RIGHT = range(8)
ACTION_NAMES = tuple(
    f"{kind} {d}" for kind in ("move", "push") for d in ("up", "down", "left", "right")
)
LURD = "udlr"  # LURD letter of each direction (upper case when pushing)


@dataclass(frozen=True)
class Rewards:
    """What a step pays (the env's reward settings, :class:`grid_envs.sokoban.env.SokobanEnv`;
    ``loss_reward`` is paid when a deadlock ends the episode)."""

    step_reward: float
    box_on_reward: float
    box_off_reward: float
    win_reward: float
    loss_reward: float


def step_reward(settings: Rewards, goal_change: Any, solved: Any, deadlock_ends: Any) -> Any:
    """The reward of a step: ``step_reward``, plus ``box_on_reward`` when a push put a box
    on a goal (``goal_change`` > 0) or ``box_off_reward`` when it took one off (< 0),
    ``win_reward`` when the level is solved, ``loss_reward`` when a deadlock ends
    the episode. Numbers for one env, arrays for a batch (the terms in this order, so both
    add the same floats)."""
    return (
        settings.step_reward
        + (goal_change > 0) * settings.box_on_reward
        + (goal_change < 0) * settings.box_off_reward
        + solved * settings.win_reward
        + deadlock_ends * settings.loss_reward
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


@compiled
def _push_distances_into(floor: np.ndarray, goals: np.ndarray, dist: np.ndarray) -> None:
    """:func:`push_distances` of one room, written into ``dist`` (any integer type)."""
    rows, cols = floor.shape
    queue = np.empty(rows * cols, dtype=np.int64)
    head = tail = 0
    for r in range(rows):
        for c in range(cols):
            dist[r, c] = -1
            if goals[r, c] and floor[r, c]:
                dist[r, c] = 0
                queue[tail] = r * cols + c
                tail += 1
    while head < tail:
        r, c = divmod(queue[head], cols)
        head += 1
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            r1, c1, r2, c2 = r + dr, c + dc, r + 2 * dr, c + 2 * dc
            inside = 0 <= r2 < rows and 0 <= c2 < cols
            if inside and floor[r1, c1] and floor[r2, c2] and dist[r1, c1] < 0:
                dist[r1, c1] = dist[r, c] + 1
                queue[tail] = r1 * cols + c1
                tail += 1


@compiled
def _push_distances_many(floor: np.ndarray, goals: np.ndarray, dist: np.ndarray) -> None:
    for i in range(floor.shape[0]):
        _push_distances_into(floor[i], goals[i], dist[i])


def push_distances(floor: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """Fewest pushes that take a lone box from each cell to its nearest goal; -1 if none.

    A reverse search: from every goal, *pull* the box (the puller needs two free cells).
    Other boxes and the player's reachability are ignored, so this is a lower bound.
    Compiled (:func:`grid_envs.core.jit.compiled`); :func:`push_distances_many` runs the
    same search over a batch of rooms.
    """
    dist = np.empty(floor.shape, dtype=np.int32)
    _push_distances_into(np.ascontiguousarray(floor), np.ascontiguousarray(goals), dist)
    return dist


def push_distances_many(floor: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """:func:`push_distances` of ``n`` rooms, ``floor`` and ``goals`` (n, rows, cols) bool;
    returns (n, rows, cols) int16."""
    dist = np.empty(floor.shape, dtype=np.int16)
    _push_distances_many(np.ascontiguousarray(floor), np.ascontiguousarray(goals), dist)
    return dist


def dead_squares(floor: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """Floor cells from which a box can never be pushed onto any goal."""
    return floor & (push_distances(floor, goals) < 0)


class Room(NamedTuple):
    """A room's fixed cells as the freeze test reads them, in flat row-major cells: dead
    squares and goals are bitboards (Python ints, bit ``cell`` set), as the boxes are. The
    room's border is wall, so a floor cell's four neighbours are always in it."""

    is_floor: list[bool]
    dead: int  # bitboard of the dead squares
    width: int
    goals: int  # bitboard of the goals


def bits(mask: np.ndarray) -> int:
    """The bitboard of a bool array's true cells (flat, row-major)."""
    packed = np.packbits(np.ascontiguousarray(mask, dtype=bool).ravel(), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def room_of(state: SokobanState) -> Room:
    """The :class:`Room` of a state's level (kept on the state: it never changes)."""
    if state.room is None:
        state.room = new_room(state)
    room: Room = state.room
    return room


def new_room(state: SokobanState) -> Room:
    """The :class:`Room` a state's floor, dead squares and goals make."""
    return Room(
        state.floor.ravel().tolist(), bits(state.dead), state.floor.shape[1], bits(state.goals)
    )


def frozen(room: Room, boxes: int, cell: int, seen: int = 0) -> bool:
    """The box at flat ``cell`` can never move again, whatever the player does: along each
    axis a wall, two dead squares, or a box that is frozen itself holds it. Boxes under
    test (``seen``) count as walls, which ends circular checks. The freeze test of the
    single env, the batched env and the solver."""
    seen |= 1 << cell
    is_floor, dead, width, _ = room
    for step in (width, 1):
        a, b = cell - step, cell + step
        if not is_floor[a] or not is_floor[b] or (seen >> a) & 1 or (seen >> b) & 1:
            continue  # a wall (or a box under test) holds it along this axis
        if (dead >> a) & 1 and (dead >> b) & 1:
            continue
        if (boxes >> a) & 1 and frozen(room, boxes, a, seen):
            continue
        if (boxes >> b) & 1 and frozen(room, boxes, b, seen):
            continue
        return False
    return True


def freezes_after_push(room: Room, boxes: int, cell: int) -> bool:
    """After a box was pushed onto flat ``cell`` of a position with no frozen box off its
    goal: is one frozen now? Only boxes joined to the pushed one through neighbouring
    boxes can have changed (a box leaving a cell frees, never holds), so those are tested."""
    width = room.width
    group, todo = 1 << cell, [cell]
    while todo:
        here = todo.pop()
        for near in (here - width, here + width, here - 1, here + 1):
            if (boxes >> near) & 1 and not (group >> near) & 1:
                group |= 1 << near
                todo.append(near)
    return any(frozen(room, boxes, c) for c in bit_cells(group & ~room.goals))


def bit_cells(board: int) -> list[int]:
    """The cells of a bitboard's set bits, lowest first."""
    out = []
    while board:
        low = board & -board
        out.append(low.bit_length() - 1)
        board ^= low
    return out


def is_frozen(state: SokobanState, cell: Cell) -> bool:
    """The box at ``cell`` can never move again (whatever the player does)."""
    room = room_of(state)
    return frozen(room, bits(state.boxes), cell[0] * room.width + cell[1])


def deadlocked_boxes(state: SokobanState) -> list[Cell]:
    """Boxes off goals that sit on a dead square or are frozen."""
    room, boxes = room_of(state), bits(state.boxes)
    return [
        divmod(c, room.width)
        for c in bit_cells(boxes & ~room.goals)
        if (room.dead >> c) & 1 or frozen(room, boxes, c)
    ]


def is_deadlocked(state: SokobanState) -> bool:
    """The level can no longer be solved (sound: dead squares and freeze deadlocks)."""
    if (state.boxes & state.dead).any():
        return True
    return bool(deadlocked_boxes(state))


def deadlocked_after_push(state: SokobanState, cell: Cell, before: bool) -> bool:
    """:func:`is_deadlocked` after a push that moved a box onto ``cell``, from whether the
    position was deadlocked ``before``: a position that was not can only become so through
    the pushed box (on a dead square, or frozen with the boxes joined to it)."""
    if before:
        return is_deadlocked(state)
    if state.dead[cell]:  # a goal is never a dead square
        return True
    room = room_of(state)
    return freezes_after_push(room, bits(state.boxes), cell[0] * room.width + cell[1])


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
