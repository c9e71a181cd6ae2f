"""Drawing Sokoban: XSB-like text and numpy tiles."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

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


def ansi(codes: np.ndarray) -> str:
    """Text in XSB characters; rows are right-stripped like a level file."""
    return "\n".join("".join(_ANSI[v] for v in row).rstrip() for row in codes.tolist())


def rgb(codes: np.ndarray, tile: int) -> np.ndarray:
    return compose(codes, sprites(tile))
