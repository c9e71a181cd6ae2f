"""Drawing Sokoban: XSB-like text and numpy tiles."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from grid_envs.core.grid import flood_fill
from grid_envs.core.render import compose, make_sprite

OUTSIDE = 7  # render-only code for cells outside the room and the padding
_ANSI = "# .$*@+ "  # indexed by cell code (state.WALL ... PLAYER_ON_GOAL, OUTSIDE)

_FLOOR = (222, 214, 190)
_WALL = (92, 64, 51)
_GOAL = (200, 40, 40)


@lru_cache(maxsize=8)
def sprites(tile: int) -> np.ndarray:
    """One sprite per cell code, (8, tile, tile, 3) uint8."""
    return np.stack(
        [
            make_sprite(tile, _WALL, [("frame", (70, 46, 36))]),
            make_sprite(tile, _FLOOR),
            make_sprite(tile, _FLOOR, [("ring", _GOAL)]),
            make_sprite(
                tile,
                _FLOOR,
                [("square", (176, 112, 36)), ("frame", _FLOOR), ("cross", (120, 72, 20))],
            ),
            make_sprite(
                tile,
                _FLOOR,
                [("square", (60, 160, 70)), ("frame", _FLOOR), ("cross", (30, 100, 40))],
            ),
            make_sprite(tile, _FLOOR, [("disc", (40, 80, 200)), ("dot", (240, 240, 255))]),
            make_sprite(
                tile, _FLOOR, [("ring", _GOAL), ("disc", (40, 80, 200)), ("dot", (240, 240, 255))]
            ),
            make_sprite(tile, (24, 24, 28)),
        ]
    )


def outside(floor: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The cells of a ``shape`` grid drawn as outside the room, (rows, cols) bool: those
    joined to the grid's edge through cells that neither are floor nor touch it (8
    neighbours), as a level file leaves blank what lies beyond its walls. Read from the
    floor alone, so a position is drawn the same wherever it comes from (a level file, a
    generated level, a pool, a batch's env)."""
    rows, cols = floor.shape
    grown = np.zeros((shape[0] + 4, shape[1] + 4), dtype=bool)
    grown[2 : rows + 2, 2 : cols + 2] = floor
    near = grown.copy()
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            near[1:-1, 1:-1] |= grown[1 + dr : grown.shape[0] - 1 + dr,
                                      1 + dc : grown.shape[1] - 1 + dc]  # fmt: skip
    beyond = flood_fill(~near[1:-1, 1:-1], (0, 0))  # a ring around the grid joins its edge
    return beyond[1:-1, 1:-1]


def drawn_codes(codes: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """The compact view's ``codes`` with :data:`OUTSIDE` where the room ends."""
    drawn = codes.copy()
    drawn[outside(floor, codes.shape)] = OUTSIDE
    return drawn


def ansi(codes: np.ndarray) -> str:
    """Text in XSB characters; rows are right-stripped like a level file."""
    return "\n".join("".join(_ANSI[v] for v in row).rstrip() for row in codes.tolist())


def rgb(codes: np.ndarray, tile: int) -> np.ndarray:
    return compose(codes, sprites(tile))
