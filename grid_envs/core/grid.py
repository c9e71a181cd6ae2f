"""Grid helpers shared by every game: directions, neighbourhoods, BFS and flood fill.

All searches are iterative (a queue, never recursion), so a 1000x1000 board cannot hit
Python's recursion limit. Cells are ``(row, col)`` tuples in the public helpers; the
hot loops work on flat indices ``row * cols + col``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from functools import lru_cache

import numpy as np

Cell = tuple[int, int]

# The four directions in the order every game's action tables use: up, down, left, right.
UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3
DIRECTIONS: tuple[Cell, ...] = ((-1, 0), (1, 0), (0, -1), (0, 1))
DIRECTION_NAMES = ("up", "down", "left", "right")

# 8-neighbourhood offsets (Minesweeper's numbers, Lines98's diagonals).
NEIGHBOURS_8: tuple[Cell, ...] = (
    (-1, -1), (-1, 0), (-1, 1),
    (0, -1),           (0, 1),
    (1, -1),  (1, 0),  (1, 1),
)  # fmt: skip


def mirrored_directions(flip_rows: bool, flip_cols: bool, transpose: bool) -> np.ndarray:
    """Where each of :data:`DIRECTIONS` goes under :func:`mirror_board`: (4,) int, the
    index of the direction it becomes."""
    out = []
    for dr, dc in DIRECTIONS:
        dr, dc = -dr if flip_rows else dr, -dc if flip_cols else dc
        out.append(DIRECTIONS.index((dc, dr) if transpose else (dr, dc)))
    return np.asarray(out)


def mirror_board(
    board: np.ndarray, flip_rows: bool, flip_cols: bool, transpose: bool
) -> np.ndarray:
    """``board`` (its last two axes rows and columns) with its rows flipped, then its
    columns, then transposed: a view. The one order every board symmetry here follows."""
    board = board[..., ::-1, :] if flip_rows else board
    board = board[..., ::-1] if flip_cols else board
    return board.swapaxes(-1, -2) if transpose else board


def mirrored_cells(
    shape: tuple[int, int], flip_rows: bool, flip_cols: bool, transpose: bool
) -> np.ndarray:
    """Where each flat cell of a ``shape`` board goes under :func:`mirror_board`:
    (rows * cols,) int, the flat cell it becomes."""
    board = mirror_board(np.arange(shape[0] * shape[1]).reshape(shape), flip_rows, flip_cols,
                         transpose)  # fmt: skip
    to = np.empty(board.size, dtype=np.int64)
    to[board.ravel()] = np.arange(board.size)
    return to


def neighbours(cell: Cell, shape: tuple[int, int], connectivity: int = 4) -> Iterator[Cell]:
    """Yield the in-bounds neighbours of ``cell`` (4- or 8-connected)."""
    offsets = _offsets(connectivity)
    r, c = cell
    for dr, dc in offsets:
        rr, cc = r + dr, c + dc
        if 0 <= rr < shape[0] and 0 <= cc < shape[1]:
            yield rr, cc


def _offsets(connectivity: int) -> tuple[Cell, ...]:
    if connectivity == 4:
        return DIRECTIONS
    if connectivity == 8:
        return NEIGHBOURS_8
    raise ValueError(f"connectivity must be 4 or 8, got {connectivity!r}")


def flat_neighbour_table(
    shape: tuple[int, int], connectivity: int = 4
) -> tuple[tuple[int, ...], ...]:
    """For each flat index, the flat indices of its in-bounds neighbours (cached: the table
    is built once per board shape)."""
    return flat_offset_table(shape, _offsets(connectivity))


@lru_cache(maxsize=32)
def flat_offset_table(
    shape: tuple[int, int], offsets: tuple[Cell, ...]
) -> tuple[tuple[int, ...], ...]:
    """For each flat index, the flat indices of the cells ``offsets`` away that lie on the
    board, in the order of ``offsets`` (cached: built once per board shape and offsets)."""
    rows, cols = shape
    table: list[tuple[int, ...]] = []
    for r in range(rows):
        for c in range(cols):
            table.append(
                tuple(
                    (r + dr) * cols + (c + dc)
                    for dr, dc in offsets
                    if 0 <= r + dr < rows and 0 <= c + dc < cols
                )
            )
    return tuple(table)


def bfs_distances(passable: np.ndarray, start: Cell, connectivity: int = 4) -> np.ndarray:
    """Steps from ``start`` to every cell through ``passable`` cells; -1 where unreachable.

    ``start`` itself need not be passable (a ball that moves off its own cell, say).
    """
    rows, cols = passable.shape
    free = passable.ravel().tolist()
    table = flat_neighbour_table((rows, cols), connectivity)
    dist = [-1] * (rows * cols)
    s = start[0] * cols + start[1]
    dist[s] = 0
    queue = deque([s])
    while queue:
        i = queue.popleft()
        d = dist[i] + 1
        for j in table[i]:
            if free[j] and dist[j] < 0:
                dist[j] = d
                queue.append(j)
    return np.array(dist, dtype=np.int32).reshape(rows, cols)


def flood_fill(passable: np.ndarray, start: Cell, connectivity: int = 4) -> np.ndarray:
    """The connected region of ``passable`` cells that contains ``start`` (bool mask)."""
    return bfs_distances(passable, start, connectivity) >= 0
