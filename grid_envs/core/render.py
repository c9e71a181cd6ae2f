"""The rendering kit: ANSI text, crisp RGB tiles drawn with numpy, and a pygame window.

An RGB frame is built from *sprites*: one (tile, tile, 3) image per cell code, composed
with a single fancy-indexing gather, so drawing a board costs a few numpy calls whatever
its size. Sprites are stacks of simple shapes (squares, discs, rings, diamonds, crosses,
glyphs of a 3x5 bitmap font); no asset file is read or downloaded.

pygame is imported only when a window is opened (``render_mode="human"``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

Color = tuple[int, int, int]
Layer = tuple[str, Color]  # (shape name, colour)

SHAPES = (
    "full", "square", "disc", "ring", "diamond", "cross", "dot", "frame", "small_square",
    "edge_up", "edge_down", "edge_left", "edge_right",
)  # fmt: skip

# A 3x5 bitmap font for digits and the few letters the games draw.
_FONT = {
    "0": ("111", "101", "101", "101", "111"),
    "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"),
    "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"),
    "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"),
    "7": ("111", "001", "010", "010", "010"),
    "8": ("111", "101", "111", "101", "111"),
    "9": ("111", "101", "111", "001", "111"),
    "E": ("111", "100", "111", "100", "111"),
    "F": ("111", "100", "111", "100", "100"),
    "K": ("101", "110", "100", "110", "101"),
    "X": ("101", "101", "010", "101", "101"),
    "?": ("111", "001", "010", "000", "010"),
    "!": ("010", "010", "010", "000", "010"),
}


@lru_cache(maxsize=256)
def shape_mask(shape: str, tile: int) -> np.ndarray:
    """A (tile, tile) bool mask of one of :data:`SHAPES` or ``"glyph:C"`` for a character."""
    if shape.startswith("glyph:"):
        return _glyph(shape[6:], tile)
    yy, xx = np.mgrid[0:tile, 0:tile].astype(np.float64) + 0.5
    c = tile / 2.0
    dy, dx = yy - c, xx - c
    r = np.hypot(dy, dx)
    inset = max(1, tile // 8)
    if shape == "full":
        return np.ones((tile, tile), dtype=bool)
    if shape == "square":
        m = np.zeros((tile, tile), dtype=bool)
        m[inset : tile - inset, inset : tile - inset] = True
        return m
    if shape == "small_square":
        k = tile // 3
        m = np.zeros((tile, tile), dtype=bool)
        m[k : tile - k, k : tile - k] = True
        return m
    if shape == "disc":
        return r <= tile * 0.38
    if shape == "ring":
        return (r <= tile * 0.40) & (r >= tile * 0.26)
    if shape == "dot":
        return r <= tile * 0.16
    if shape == "diamond":
        return np.abs(dy) + np.abs(dx) <= tile * 0.42
    if shape == "cross":
        w = max(1.0, tile * 0.08)
        band = (np.abs(dy - dx) <= w) | (np.abs(dy + dx) <= w)
        return band & (np.maximum(np.abs(dy), np.abs(dx)) <= tile * 0.36)
    if shape.startswith("edge_"):
        m = np.zeros((tile, tile), dtype=bool)
        side = {
            "edge_up": (slice(0, inset), slice(None)),
            "edge_down": (slice(tile - inset, tile), slice(None)),
            "edge_left": (slice(None), slice(0, inset)),
            "edge_right": (slice(None), slice(tile - inset, tile)),
        }
        if shape not in side:
            raise ValueError(f"unknown shape {shape!r}; known: {SHAPES} and 'glyph:C'")
        m[side[shape]] = True
        return m
    if shape == "frame":
        m = np.ones((tile, tile), dtype=bool)
        m[inset : tile - inset, inset : tile - inset] = False
        return m
    raise ValueError(f"unknown shape {shape!r}; known: {SHAPES} and 'glyph:C'")


def _glyph(char: str, tile: int) -> np.ndarray:
    if char not in _FONT:
        raise ValueError(f"no glyph for {char!r}; the font has {sorted(_FONT)}")
    bitmap = np.array([[b == "1" for b in row] for row in _FONT[char]], dtype=bool)
    scale = max(1, int(tile * 0.6) // 5)
    big = np.kron(bitmap, np.ones((scale, scale), dtype=bool))
    m = np.zeros((tile, tile), dtype=bool)
    h, w = big.shape
    top, left = (tile - h) // 2, (tile - w) // 2
    m[top : top + h, left : left + w] = big
    return m


def make_sprite(tile: int, background: Color, layers: Sequence[Layer] = ()) -> np.ndarray:
    """One cell image: a background colour with shapes painted over it in order."""
    sprite = np.empty((tile, tile, 3), dtype=np.uint8)
    sprite[:] = background
    for shape, color in layers:
        sprite[shape_mask(shape, tile)] = color
    return sprite


def compose(codes: np.ndarray, sprites: np.ndarray) -> np.ndarray:
    """Draw a (rows, cols) grid of sprite indices as a (rows*t, cols*t, 3) uint8 frame."""
    rows, cols = codes.shape
    t = sprites.shape[1]
    tiles = sprites[codes]  # (rows, cols, t, t, 3)
    return np.ascontiguousarray(tiles.transpose(0, 2, 1, 3, 4).reshape(rows * t, cols * t, 3))


def tiled(
    frames: Sequence[np.ndarray], gap: int = 4, background: Color = (236, 236, 240)
) -> np.ndarray:
    """Frames of one size in a grid as near square as the count allows, row by row, ``gap``
    pixels between them: how a batch of boards is drawn as one picture."""
    n = len(frames)
    h, w = frames[0].shape[:2]
    cols = int(np.ceil(np.sqrt(n)))
    rows = -(-n // cols)
    out = np.empty((rows * h + (rows - 1) * gap, cols * w + (cols - 1) * gap, 3), np.uint8)
    out[:] = background
    for k, frame in enumerate(frames):
        r, c = divmod(k, cols)
        out[r * (h + gap) : r * (h + gap) + h, c * (w + gap) : c * (w + gap) + w] = frame
    return out


def draw_polyline(
    frame: np.ndarray, cells: Sequence[tuple[int, int]], tile: int, color: Color, width: int = 2
) -> None:
    """Draw straight segments between cell centres (grid-aligned segments only)."""
    half = tile // 2
    h, w = frame.shape[:2]
    for (r0, c0), (r1, c1) in itertools.pairwise(cells):
        y0, y1 = sorted((r0 * tile + half, r1 * tile + half))
        x0, x1 = sorted((c0 * tile + half, c1 * tile + half))
        ys = slice(max(0, y0 - width // 2), min(h, y1 + width - width // 2))
        xs = slice(max(0, x0 - width // 2), min(w, x1 + width - width // 2))
        frame[ys, xs] = color


def no_display() -> str | None:
    """Why no window can open here, or None: on Linux a window needs an X or Wayland
    display (``DISPLAY``, ``WAYLAND_DISPLAY``) unless SDL is told which video driver to use
    (``SDL_VIDEODRIVER``, e.g. ``dummy`` for tests); without one SDL opens nothing and a
    game would wait for keys that never come."""
    import os
    import sys

    if not sys.platform.startswith("linux") or os.environ.get("SDL_VIDEODRIVER"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return "no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set)"


class HumanWindow:
    """A pygame window that shows RGB frames; pygame is imported on first use."""

    def __init__(self, title: str = "GridGames", fps: int = 8) -> None:
        missing = no_display()
        if missing:
            raise OSError(f'render_mode="human": {missing}')
        try:
            import pygame
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError(
                'render_mode="human" needs pygame: pip install "grid-games[human]"'
            ) from exc
        self._pg: Any = pygame
        self._title = title
        self._fps = fps
        self._screen: Any = None
        self._clock = pygame.time.Clock()

    def show(self, frame: np.ndarray) -> None:
        pg = self._pg
        h, w = frame.shape[:2]
        if self._screen is None or self._screen.get_size() != (w, h):
            pg.init()
            pg.display.set_caption(self._title)
            self._screen = pg.display.set_mode((w, h))
        surface = pg.surfarray.make_surface(np.ascontiguousarray(frame.transpose(1, 0, 2)))
        self._screen.blit(surface, (0, 0))
        pg.event.pump()
        pg.display.flip()
        self._clock.tick(self._fps)

    def keys(self) -> list[str]:
        """Key names pressed since the last call ('up', 'a', 'escape', ...); 'quit' on close."""
        pg = self._pg
        names = []
        for event in pg.event.get():
            if event.type == pg.QUIT:
                names.append("quit")
            elif event.type == pg.KEYDOWN:
                names.append(pg.key.name(event.key))
        return names

    def close(self) -> None:
        if self._screen is not None:
            self._pg.display.quit()
            self._screen = None
