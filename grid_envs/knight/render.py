"""Drawing the Knight's maze: walls on cell edges, the knight, exit, monsters and items."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from grid_envs.core.render import compose, make_sprite
from grid_envs.knight.state import DOWN_BIT, LEFT_BIT, RIGHT_BIT, UP_BIT

# overlay per cell, drawn over its walls
NONE, MONSTER, ITEM, EXIT, KNIGHT = range(5)
_FLOOR = (235, 228, 205)
_WALL = (60, 45, 35)
_OVERLAYS = {
    NONE: [],
    MONSTER: [("diamond", (150, 30, 160)), ("dot", (255, 220, 0))],
    ITEM: [("small_square", (230, 170, 0))],
    EXIT: [("frame", (30, 150, 60)), ("small_square", (30, 150, 60))],
    KNIGHT: [("disc", (30, 70, 200)), ("glyph:K", (255, 255, 255))],
}
_EDGES = (
    (UP_BIT, "edge_up"),
    (RIGHT_BIT, "edge_right"),
    (DOWN_BIT, "edge_down"),
    (LEFT_BIT, "edge_left"),
)


@lru_cache(maxsize=8)
def sprites(tile: int) -> np.ndarray:
    """Sprite ``bits * 5 + overlay`` for every wall layout and overlay, (80, t, t, 3)."""
    out = []
    for bits in range(16):
        walls = [(name, _WALL) for bit, name in _EDGES if not bits & bit]
        for overlay in range(5):
            out.append(make_sprite(tile, _FLOOR, [*_OVERLAYS[overlay], *walls]))
    return np.stack(out)


def overlay_codes(shape: tuple[int, int], knight: tuple[int, int], exit_: tuple[int, int],
                  monsters: np.ndarray, items: np.ndarray) -> np.ndarray:  # fmt: skip
    over = np.zeros(shape, dtype=np.uint8)
    over[items] = ITEM
    over[monsters] = MONSTER
    over[exit_] = EXIT
    over[knight] = KNIGHT
    return over


def rgb(cells: np.ndarray, over: np.ndarray, tile: int) -> np.ndarray:
    return compose(cells.astype(np.int64) * 5 + over, sprites(tile))


def ansi(cells: np.ndarray, over: np.ndarray) -> str:
    """A (2 rows + 1) x (2 cols + 1) character drawing: '#' walls, K knight, E exit,
    M monster, $ item."""
    rows, cols = cells.shape
    grid = [["#"] * (2 * cols + 1) for _ in range(2 * rows + 1)]
    marks = {NONE: " ", MONSTER: "M", ITEM: "$", EXIT: "E", KNIGHT: "K"}
    for r in range(rows):
        for c in range(cols):
            grid[2 * r + 1][2 * c + 1] = marks[int(over[r, c])]
            if cells[r, c] & RIGHT_BIT:
                grid[2 * r + 1][2 * c + 2] = " "
            if cells[r, c] & DOWN_BIT:
                grid[2 * r + 2][2 * c + 1] = " "
    return "\n".join("".join(row) for row in grid)
