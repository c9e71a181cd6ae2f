"""The rendering kit: shapes, glyphs, composition and the window's missing-pygame message."""

from __future__ import annotations

import numpy as np
import pytest

from grid_envs.core.render import SHAPES, compose, draw_polyline, make_sprite, shape_mask


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("tile", [8, 16, 24])
def test_shapes_are_nonempty_and_inside_the_tile(shape: str, tile: int) -> None:
    m = shape_mask(shape, tile)
    assert m.shape == (tile, tile) and m.any()


def test_shapes_differ() -> None:
    masks = {s: shape_mask(s, 16).tobytes() for s in SHAPES}
    assert len(set(masks.values())) == len(SHAPES)


def test_glyphs_for_digits_differ() -> None:
    glyphs = {shape_mask(f"glyph:{d}", 20).tobytes() for d in "0123456789"}
    assert len(glyphs) == 10
    with pytest.raises(ValueError, match="no glyph"):
        shape_mask("glyph:#", 20)
    with pytest.raises(ValueError, match="unknown shape"):
        shape_mask("star", 20)


def test_compose_places_each_sprite_in_its_cell() -> None:
    sprites = np.stack([make_sprite(4, (0, 0, 0)), make_sprite(4, (255, 0, 0))])
    frame = compose(np.array([[0, 1], [1, 0]]), sprites)
    assert frame.shape == (8, 8, 3)
    assert (frame[:4, 4:, 0] == 255).all() and (frame[:4, :4] == 0).all()


def test_polyline_draws_between_centres() -> None:
    frame = np.zeros((30, 30, 3), dtype=np.uint8)
    draw_polyline(frame, [(0, 0), (0, 2), (2, 2)], tile=10, color=(9, 9, 9))
    assert (frame[5, 5:25] == 9).all() and (frame[5:25, 25] == 9).all()
    assert (frame[20, 5] == 0).all()
