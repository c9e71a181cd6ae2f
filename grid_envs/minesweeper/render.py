"""Drawing Minesweeper: text and numpy tiles in the classic colours."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from grid_envs.core.render import compose, make_sprite

# render codes: 0-8 revealed numbers, 9 hidden, 10 flag, 11 mine shown at the end,
# 12 the mine that exploded, 13 a wrong flag shown at the end
HIDDEN, FLAG, MINE, EXPLODED, WRONG_FLAG = 9, 10, 11, 12, 13
_ANSI = "012345678#F*X!"
_OPEN = (200, 200, 200)
_DIGIT_COLORS = [
    (0, 0, 0), (0, 0, 255), (0, 128, 0), (255, 0, 0), (0, 0, 128),
    (128, 0, 0), (0, 128, 128), (0, 0, 0), (128, 128, 128),
]  # fmt: skip


@lru_cache(maxsize=8)
def sprites(tile: int) -> np.ndarray:
    raised = [("full", (240, 240, 240)), ("square", (160, 160, 160))]
    out = [make_sprite(tile, _OPEN, [("frame", (170, 170, 170))])]
    for n in range(1, 9):
        out.append(
            make_sprite(tile, _OPEN, [("frame", (170, 170, 170)), (f"glyph:{n}", _DIGIT_COLORS[n])])
        )
    out.append(make_sprite(tile, (120, 120, 120), raised))
    out.append(
        make_sprite(
            tile, (120, 120, 120), [*raised, ("diamond", (220, 30, 30)), ("dot", (0, 0, 0))]
        )
    )
    out.append(make_sprite(tile, _OPEN, [("disc", (20, 20, 20)), ("dot", (240, 240, 240))]))
    out.append(make_sprite(tile, (230, 40, 40), [("disc", (20, 20, 20))]))
    out.append(make_sprite(tile, (120, 120, 120), [*raised, ("cross", (220, 30, 30))]))
    return np.stack(out)


def codes(revealed: np.ndarray, counts: np.ndarray, flags: np.ndarray, mines: np.ndarray | None,
          exploded: tuple[int, int] | None) -> np.ndarray:  # fmt: skip
    """Render codes; ``mines`` is given only once the game is over."""
    out = np.where(revealed, counts, HIDDEN).astype(np.uint8)
    out[flags & ~revealed] = FLAG
    if mines is not None:
        out[mines & ~flags] = MINE
        out[flags & ~mines] = WRONG_FLAG
        if exploded is not None:
            out[exploded] = EXPLODED
    return out


def ansi(c: np.ndarray) -> str:
    return "\n".join(" ".join(_ANSI[v] for v in row) for row in c.tolist())


def rgb(c: np.ndarray, tile: int) -> np.ndarray:
    return compose(c, sprites(tile))
