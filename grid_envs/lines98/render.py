"""Drawing Lines98: balls as coloured discs, announced balls as small dots of their colour."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from grid_envs.core.render import compose, make_sprite

_BACK = (200, 200, 200)
_FRAME = (150, 150, 150)
_COLOURS = [
    (220, 40, 40), (40, 160, 60), (40, 90, 220), (240, 200, 30), (160, 60, 200),
    (30, 190, 200), (120, 70, 30), (240, 120, 170), (20, 20, 20),
]  # fmt: skip
_LETTERS = "RGBYPCOKW"


@lru_cache(maxsize=8)
def sprites(tile: int, colours: int) -> np.ndarray:
    """Sprite 0 an empty cell; 1..C a ball of colour k; C+1..2C an announced ball."""
    empty = make_sprite(tile, _BACK, [("frame", _FRAME)])
    balls = [
        make_sprite(tile, _BACK, [("frame", _FRAME), ("disc", _COLOURS[k % len(_COLOURS)])])
        for k in range(colours)
    ]
    announced = [
        make_sprite(tile, _BACK, [("frame", _FRAME), ("dot", _COLOURS[k % len(_COLOURS)])])
        for k in range(colours)
    ]
    return np.stack([empty, *balls, *announced])


def announced_cells(
    ann_cell: np.ndarray, ann_colour: np.ndarray, held: np.ndarray, cols: int
) -> tuple[np.ndarray, ...]:
    """(board, row, col, colour) arrays of every announced ball of a batch of boards, from
    each board's announced cells and colours (k, S), the first ``held[b]`` of row b."""
    board, slot = np.nonzero(np.arange(ann_cell.shape[1]) < np.asarray(held)[:, None])
    cell = ann_cell[board, slot]
    return board, cell // cols, cell % cols, ann_colour[board, slot].astype(np.int64)


def codes(
    boards: np.ndarray, ann_cell: np.ndarray, ann_colour: np.ndarray, held: np.ndarray,
    colours: int,
) -> np.ndarray:  # fmt: skip
    """For a batch of boards (k, rows, cols) and their announced balls: uint8 codes 0 empty,
    1..C a ball, C+k an announced ball of colour k (the compact view)."""
    out = boards.astype(np.uint8)
    board, row, col, colour = announced_cells(ann_cell, ann_colour, held, boards.shape[2])
    out[board, row, col] = colours + colour
    return out


def rgb(code_grid: np.ndarray, colours: int, tile: int) -> np.ndarray:
    return compose(code_grid, sprites(tile, colours))


def ansi(code_grid: np.ndarray, colours: int) -> str:
    """Balls as capital letters (R, G, B, ...), announced balls lower case, '.' empty."""

    def char(v: int) -> str:
        if v == 0:
            return "."
        k = (v - 1) % colours
        letter = _LETTERS[k] if k < len(_LETTERS) else str(k + 1)
        return letter if v <= colours else letter.lower()

    return "\n".join(" ".join(char(int(v)) for v in row) for row in code_grid.tolist())
