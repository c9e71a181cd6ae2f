"""Sokoban's data: a level as read or generated, and the state of a game in play."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

Cell = tuple[int, int]

# Cell codes of the compact view and the channel order of the planes observation.
WALL, FLOOR, GOAL, BOX, BOX_ON_GOAL, PLAYER, PLAYER_ON_GOAL = range(7)
CHANNELS = ("wall", "floor", "goal", "box", "box_on_goal", "player", "player_on_goal")


@dataclass(frozen=True, eq=False)
class Level:
    """A Sokoban level. The room is ``floor``; everything else blocks (walls and outside)."""

    walls: np.ndarray  # (rows, cols) bool, the '#' cells
    floor: np.ndarray  # (rows, cols) bool, cells inside the room (player's region)
    goals: np.ndarray  # (rows, cols) bool
    boxes: np.ndarray  # (rows, cols) bool, the starting boxes
    player: Cell  # the starting cell
    meta: tuple[str, ...] = ()  # comment and metadata lines kept from the file
    line: int = 0  # first line of the board in its file (1-based), 0 if not from a file

    def __deepcopy__(self, memo: dict[int, object]) -> Level:
        return self  # immutable: its arrays are never written

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.floor.shape[0]), int(self.floor.shape[1]))

    @property
    def num_boxes(self) -> int:
        return int(self.boxes.sum())

    @property
    def title(self) -> str:
        """The ``Title:`` value if there is one, otherwise the last comment line."""
        for text in self.meta:
            if text.lower().startswith("title:"):
                return text.split(":", 1)[1].strip()
        comments = [t.lstrip(";").strip() for t in self.meta if t.startswith(";")]
        comments = [c for c in comments if c]
        return comments[-1] if comments else ""

    def same_puzzle(self, other: Level) -> bool:
        """True when both levels have the same room, goals, boxes and player."""
        return (
            self.player == other.player
            and np.array_equal(self.floor, other.floor)
            and np.array_equal(self.goals, other.goals)
            and np.array_equal(self.boxes, other.boxes)
        )


@dataclass(eq=False)
class SokobanState:
    """A game in play. ``floor`` and ``goals`` are shared with the level, never written."""

    floor: np.ndarray  # (rows, cols) bool
    goals: np.ndarray  # (rows, cols) bool
    boxes: np.ndarray  # (rows, cols) bool
    player: Cell
    pushes: int = 0
    moves: int = 0
    push_dist: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int32))
    # (rows, cols) int32: fewest pushes of a lone box to a goal, -1 if none (static per level)
    dead: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))
    # (rows, cols) bool: floor cells from which a box can reach no goal (static per level)
    room: Any = None  # rules.Room of floor and dead, made when first needed (static too)

    @classmethod
    def from_level(cls, level: Level, push_dist: np.ndarray) -> SokobanState:
        return cls(
            floor=level.floor, goals=level.goals, boxes=level.boxes.copy(),
            player=level.player, push_dist=push_dist, dead=level.floor & (push_dist < 0),
        )  # fmt: skip

    def __deepcopy__(self, memo: dict[int, object]) -> SokobanState:
        # The static arrays are shared on purpose: copying them would cost time, not safety.
        return SokobanState(
            floor=self.floor, goals=self.goals, boxes=self.boxes.copy(), player=self.player,
            pushes=self.pushes, moves=self.moves, push_dist=self.push_dist, dead=self.dead,
            room=self.room,
        )  # fmt: skip


def cell_codes(state: SokobanState, shape: tuple[int, int]) -> np.ndarray:
    """The (rows, cols) code grid of the compact view, ``shape`` large (the rest is wall)."""
    rows, cols = state.floor.shape
    codes = np.full(shape, WALL, dtype=np.uint8)
    view = codes[:rows, :cols]
    view[state.floor] = FLOOR
    view += state.goals.astype(np.uint8)  # FLOOR -> GOAL
    view[state.boxes] = BOX + state.goals[state.boxes]
    view[state.player] = PLAYER + state.goals[state.player]
    return codes
