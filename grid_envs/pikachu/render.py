"""Drawing Pikachu boards: each kind a distinct coloured symbol, the last path as a line."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from grid_envs.core.render import compose, draw_polyline, make_sprite

_BACK = (30, 34, 40)
_TILE = (236, 232, 220)
_COLOURS = [
    (220, 40, 40), (40, 120, 220), (40, 170, 70), (230, 150, 20), (150, 60, 190),
    (20, 170, 170), (200, 60, 140), (120, 90, 40), (90, 90, 90), (170, 200, 30),
    (0, 90, 120), (240, 90, 60),
]  # fmt: skip
_SHAPES = ("disc", "diamond", "square", "cross")


@lru_cache(maxsize=8)
def sprites(tile: int, kinds: int) -> np.ndarray:
    """Sprite 0 is an empty cell; sprite k (1..kinds) a tile of kind k."""
    out = [make_sprite(tile, _BACK)]
    for k in range(kinds):
        colour = _COLOURS[k % len(_COLOURS)]
        shape = _SHAPES[(k // len(_COLOURS)) % len(_SHAPES)]
        layers = [("square", _TILE), (shape, colour)]
        if k >= len(_COLOURS) * len(_SHAPES):  # more kinds than pictures: add a ring
            layers.append(("ring", (0, 0, 0)))
        out.append(make_sprite(tile, _BACK, layers))
    return np.stack(out)


def rgb(board: np.ndarray, kinds: int, tile: int, path: tuple[tuple[int, int], ...]) -> np.ndarray:
    """The board with its outer ring (where paths may run), and the last path drawn."""
    padded = np.zeros((board.shape[0] + 2, board.shape[1] + 2), dtype=np.int64)
    padded[1:-1, 1:-1] = board
    frame = compose(padded, sprites(tile, kinds))
    if len(path) > 1:
        draw_polyline(
            frame, [(r + 1, c + 1) for r, c in path], tile, (255, 220, 0), max(2, tile // 8)
        )
    return frame


def ansi(board: np.ndarray) -> str:
    width = len(str(int(board.max()))) if board.any() else 1
    return "\n".join(
        " ".join("." * width if v == 0 else f"{int(v):0{width}d}" for v in row) for row in board
    )
