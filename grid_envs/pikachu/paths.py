"""The path check: two tiles connect by at most 3 straight segments through empty cells.

The source article splits the check into six cases (a line, a Z inside the rectangle, a U
or L outside it). Every such path is one of two shapes with possibly empty segments:
horizontal-vertical-horizontal (the middle segment on some column ``x``) or
vertical-horizontal-vertical (the middle on some row ``y``). So scanning every column and
every row of the board *with its outer ring* covers all six cases at once: a pivot is
valid when both tiles reach it along their free runs (how far each sees along its row, or
column) and the middle segment has no tile strictly between its corners (a prefix sum of
the occupied cells), so each candidate costs O(1). The shortest valid path is kept, the
leftmost (topmost) pivot among equals, as the source article prefers, with its corner
points for drawing. Only tiles side by side, or both with an empty side, can connect, so
the others are not scanned.

It is compiled (:mod:`grid_envs.core.jit`), written once over one board's arrays: the
envs' masks and removals (:mod:`grid_envs.pikachu.rules`), the solver and the agents all
call it. The tests prove it exact against a breadth-first search over (cell, direction,
turns).
"""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import compiled
from grid_envs.pikachu.state import EMPTY, Cell


def corners(a: Cell, b: Cell, kind: int, pivot: int) -> tuple[Cell, ...]:
    """The path's corner points in board coordinates (the ring is row/column -1 or n), for
    a path of ``kind`` 0 (horizontal-vertical-horizontal, turning on padded column
    ``pivot``) or 1 (vertical-horizontal-vertical, on padded row ``pivot``)."""
    out = np.zeros((4, 2), dtype=np.int64)
    points = corners_into(a[0], a[1], b[0], b[1], kind, pivot, out)
    return tuple((r, c) for r, c in out[:points].tolist())


def find_path(board: np.ndarray, a: Cell, b: Cell) -> tuple[Cell, ...] | None:
    """Corner points of the shortest path of at most 3 segments from a to b, or None
    (:func:`connect_one`)."""
    rows, cols = board.shape
    flat = np.ascontiguousarray(board).ravel()
    length, kind, pivot = connect_one(geometry(flat, rows, cols), a[0] * cols + a[1],
                                      b[0] * cols + b[1], cols, False)  # fmt: skip
    return None if length >= NO_PATH else corners(a, b, kind, pivot)


def connects_flat(board: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Whether each pair of flat cells i < j of one board (any tiles or none there)
    connects (:func:`connects_many`)."""
    rows, cols = board.shape
    flat = np.ascontiguousarray(board).ravel()
    return connects_many(flat, rows, cols, np.asarray(i, dtype=np.int64),
                         np.asarray(j, dtype=np.int64))  # fmt: skip


def removable_with_lengths(board: np.ndarray) -> tuple[list[tuple[int, int]], list[int]]:
    """Flat index pairs (i < j) of equal tiles that connect now, and their path lengths
    (by kind, then by cell; compiled, :func:`removable`)."""
    rows, cols = board.shape
    i, j, length = removable(np.ascontiguousarray(board).ravel(), rows, cols, True)
    return list(zip(i.tolist(), j.tolist(), strict=True)), length.tolist()


def removable_pairs(board: np.ndarray) -> list[tuple[int, int]]:
    """Flat index pairs (i < j) of equal tiles that connect now (by kind, then by cell)."""
    rows, cols = board.shape
    i, j, _ = removable(np.ascontiguousarray(board).ravel(), rows, cols, False)
    return list(zip(i.tolist(), j.tolist(), strict=True))


# ---------------------------------------------------------------- compiled, one board
NO_PATH = 1 << 30


@compiled
def _runs(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every cell of a padded occupancy grid, the first and last column its row's free
    run lets it reach: ``lo[r, c]`` and ``hi[r, c]`` bound the columns x such that every
    cell strictly between c and x, and x itself, is empty (x = c always qualifies), the
    straight legs of a path that leaves (r, c) sideways. The transpose's give the vertical
    legs."""
    h, w = grid.shape
    lo = np.empty((h, w), dtype=np.int64)
    hi = np.empty((h, w), dtype=np.int64)
    for y in range(h):
        last = -1
        for x in range(w):
            lo[y, x] = last + 1
            if grid[y, x]:
                last = x
        first = w
        for x in range(w - 1, -1, -1):
            hi[y, x] = first - 1
            if grid[y, x]:
                first = x
    return lo, hi


@compiled
def _above(grid: np.ndarray) -> np.ndarray:
    """(h + 1, w): the occupied cells of each column in the rows above each row."""
    h, w = grid.shape
    count = np.zeros((h + 1, w), dtype=np.int64)
    for y in range(h):
        for x in range(w):
            count[y + 1, x] = count[y, x] + grid[y, x]
    return count


@compiled
def geometry(board: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, ...]:
    """What the path test of one board (flat) reads: the padded occupancy, its row runs and
    counts above, and the same for its transpose (the column runs)."""
    occ = np.zeros((rows + 2, cols + 2), dtype=np.int64)
    for cell in range(rows * cols):
        if board[cell] != EMPTY:
            occ[cell // cols + 1, cell % cols + 1] = 1
    turned = occ.T.copy()
    lo_r, hi_r = _runs(occ)
    lo_c, hi_c = _runs(turned)
    return occ, lo_r, hi_r, _above(occ), lo_c, hi_c, _above(turned)


@compiled
def _best_pivot_of(
    lo: np.ndarray, hi: np.ndarray, count: np.ndarray, r1: int, c1: int, r2: int, c2: int,
    first_only: bool,
) -> tuple[int, int]:  # fmt: skip
    """(length, pivot) of the shortest horizontal-vertical-horizontal path on a padded grid
    (the leftmost pivot among equals), ``NO_PATH`` if none; with ``first_only``, the first
    pivot found."""
    first = max(lo[r1, c1], lo[r2, c2])
    last = min(hi[r1, c1], hi[r2, c2])
    top, bottom = min(r1, r2), max(r1, r2)
    inner = min(top + 1, bottom)
    best, pivot = NO_PATH, 0
    for x in range(first, last + 1):
        if count[bottom, x] - count[inner, x] == 0:
            length = abs(c1 - x) + (bottom - top) + abs(x - c2)
            if length < best:
                best, pivot = length, x
                if first_only:
                    break
    return best, pivot


@compiled
def connect_one(
    shapes: tuple[np.ndarray, ...], a: int, b: int, cols: int, first_only: bool
) -> tuple[int, int, int]:  # fmt: skip
    """The shortest path joining the flat cells ``a`` and ``b`` (the ends never block) on
    the board ``shapes`` (:func:`geometry`) describes: (length, or ``NO_PATH`` when there is
    none; kind, 0 for horizontal-vertical-horizontal turning on padded column ``pivot``, 1
    for vertical-horizontal-vertical on padded row ``pivot``; pivot). With ``first_only``,
    the first path found (enough to say whether they connect)."""
    _, lo_r, hi_r, above_r, lo_c, hi_c, above_c = shapes
    r1, c1, r2, c2 = a // cols + 1, a % cols + 1, b // cols + 1, b % cols + 1
    across, x = _best_pivot_of(lo_r, hi_r, above_r, r1, c1, r2, c2, first_only)
    if first_only and across < NO_PATH:
        return across, 0, x
    down, y = _best_pivot_of(lo_c, hi_c, above_c, c1, r1, c2, r2, first_only)
    if down < across:
        return down, 1, y
    return across, 0, x


@compiled
def corners_into(
    ra: int, ca: int, rb: int, cb: int, kind: int, pivot: int, out: np.ndarray
) -> int:  # fmt: skip
    """The corner points of a path (:func:`connect_one`'s kind and pivot) into ``out``
    (4, 2), points on a straight line dropped; the number of points."""
    p = pivot - 1
    points = np.empty((4, 2), dtype=np.int64)
    points[0, 0], points[0, 1], points[3, 0], points[3, 1] = ra, ca, rb, cb
    if kind == 0:
        points[1, 0], points[1, 1], points[2, 0], points[2, 1] = ra, p, rb, p
    else:
        points[1, 0], points[1, 1], points[2, 0], points[2, 1] = p, ca, p, cb
    n = 0
    for k in range(4):
        if n == 0 or points[k, 0] != out[n - 1, 0] or points[k, 1] != out[n - 1, 1]:
            out[n, 0], out[n, 1] = points[k, 0], points[k, 1]
            n += 1
    i = 1
    while i < n - 1:  # drop middle points on a straight line
        same_row = out[i - 1, 0] == out[i, 0] == out[i + 1, 0]
        same_col = out[i - 1, 1] == out[i, 1] == out[i + 1, 1]
        if same_row or same_col:
            out[i : n - 1] = out[i + 1 : n].copy()
            n -= 1
        else:
            i += 1
    return n


@compiled
def open_cells(occ: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The cells of one board with an empty side (the ring outside the board counting as
    empty), from its padded occupancy: a path leaves a tile through one."""
    out = np.empty(rows * cols, dtype=np.bool_)
    for cell in range(rows * cols):
        r, c = cell // cols + 1, cell % cols + 1
        out[cell] = not (occ[r - 1, c] and occ[r + 1, c] and occ[r, c - 1] and occ[r, c + 1])
    return out


@compiled
def _worth(i: int, j: int, cols: int, open_side: np.ndarray) -> bool:
    """Whether flat cells i < j are worth a path check: side by side, or both open."""
    touch = (j - i == 1 and j % cols != 0) or j - i == cols
    return touch or (open_side[i] and open_side[j])


@compiled
def candidates(
    board: np.ndarray, rows: int, cols: int, occ: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The pairs (i < j) of equal tiles worth a path check, by kind, then by cell."""
    n = rows * cols
    top = 0
    for cell in range(n):
        top = max(top, board[cell])
    start = np.zeros(top + 2, dtype=np.int64)  # the tiles by kind, cells ascending
    for cell in range(n):
        if board[cell] != EMPTY:
            start[board[cell] + 1] += 1
    for k in range(1, top + 2):
        start[k] += start[k - 1]
    tiles = np.empty(n, dtype=np.int64)
    fill = start.copy()
    for cell in range(n):
        if board[cell] != EMPTY:
            tiles[fill[board[cell]]] = cell
            fill[board[cell]] += 1
    open_side = open_cells(occ, rows, cols)
    most = 0
    for kind in range(1, top + 1):
        size = start[kind + 1] - start[kind]
        most += size * (size - 1) // 2
    first = np.empty(most, dtype=np.int64)
    second = np.empty(most, dtype=np.int64)
    found = 0
    for kind in range(1, top + 1):
        for x in range(start[kind], start[kind + 1]):
            for y in range(x + 1, start[kind + 1]):
                if _worth(tiles[x], tiles[y], cols, open_side):
                    first[found], second[found] = tiles[x], tiles[y]
                    found += 1
    return first[:found], second[:found]


@compiled
def removable(
    board: np.ndarray, rows: int, cols: int, lengths: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The pairs (i < j) of equal tiles that connect, by kind, then by cell, and (with
    ``lengths``) their shortest paths' lengths."""
    shapes = geometry(board, rows, cols)
    first, second = candidates(board, rows, cols, shapes[0])
    keep = np.zeros(len(first), dtype=np.bool_)
    length = np.zeros(len(first), dtype=np.int64)
    for t in range(len(first)):
        length[t] = connect_one(shapes, first[t], second[t], cols, not lengths)[0]
        keep[t] = length[t] < NO_PATH
    return first[keep], second[keep], length[keep]


@compiled
def connects_many(
    board: np.ndarray, rows: int, cols: int, first: np.ndarray, second: np.ndarray
) -> np.ndarray:  # fmt: skip
    """Whether each pair of flat cells (i < j, tiles or not) connects, path checking only
    the pairs worth it."""
    shapes = geometry(board, rows, cols)
    open_side = open_cells(shapes[0], rows, cols)
    ok = np.zeros(len(first), dtype=np.bool_)
    for t in range(len(first)):
        if _worth(first[t], second[t], cols, open_side):
            ok[t] = connect_one(shapes, first[t], second[t], cols, True)[0] < NO_PATH
    return ok
