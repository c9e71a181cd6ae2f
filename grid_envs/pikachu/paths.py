"""The path check: two tiles connect by at most 3 straight segments through empty cells.

The seed splits the check into six cases (a line, a Z inside the rectangle, a U or L
outside it). Every such path is one of two shapes with possibly empty segments:
horizontal-vertical-horizontal (the middle segment on some column ``x``) or
vertical-horizontal-vertical (the middle on some row ``y``). So scanning every column and
every row of the board *with its outer ring* covers all six cases at once. With prefix sums
of the occupied cells each candidate costs O(1), and numpy does the scan for every pair of
equal tiles together. The shortest valid path is kept, as the seed prefers, with its
corner points for drawing. The tests prove it exact against a breadth-first search over
(cell, direction, turns).
"""

from __future__ import annotations

import numpy as np

from grid_envs.pikachu.state import EMPTY, Cell


def _reach(occupied: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every cell, the first and last column its row's free run lets it reach.

    ``lo[r, c]`` and ``hi[r, c]`` bound the columns x such that every cell strictly between
    c and x, and x itself, is empty (x = c always qualifies): the straight legs of a path
    that leaves (r, c) sideways. Apply it to the transpose for the vertical legs.
    """
    h, w = occupied.shape
    index = np.arange(w)[None, :]
    last = np.maximum.accumulate(np.where(occupied, index, -1), axis=1)
    first = np.minimum.accumulate(np.where(occupied, index, w)[:, ::-1], axis=1)[:, ::-1]
    lo = np.full((h, w), 0)
    lo[:, 1:] = last[:, :-1] + 1
    hi = np.full((h, w), w - 1)
    hi[:, :-1] = first[:, 1:] - 1
    return lo, hi


def _valid_pivots(board: np.ndarray, a: np.ndarray, b: np.ndarray):
    """For both path shapes: which pivots give a free path from ``a[i]`` to ``b[i]``.

    Yields (valid, length) per shape, each of shape (P, span): shape 0 is
    horizontal-vertical-horizontal turning on padded column ``x``, shape 1 is
    vertical-horizontal-vertical on padded row ``y``; ``length`` is a callable so that
    callers that only ask *whether* the tiles connect skip it. A pivot is valid when both
    ends reach it along their straight legs (free runs, see ``_reach``) and the middle
    segment has no tile strictly between its two corners.
    """
    rows, cols = board.shape
    occ = np.zeros((rows + 2, cols + 2), dtype=np.int32)
    occ[1:-1, 1:-1] = board != EMPTY
    r1, c1 = a[:, :1] + 1, a[:, 1:] + 1
    r2, c2 = b[:, :1] + 1, b[:, 1:] + 1
    for shape, grid in ((0, occ), (1, occ.T)):
        if shape == 1:  # the same scan on the transposed board
            r1, c1, r2, c2 = c1, r1, c2, r2
        lo, hi = _reach(grid)
        counts = np.zeros((grid.shape[0] + 1, grid.shape[1]), dtype=np.int32)
        counts[1:] = np.cumsum(grid, axis=0)  # occupied cells above each row, per column
        x = np.arange(grid.shape[1])[None, :]
        top, bottom = np.minimum(r1, r2), np.maximum(r1, r2)
        between = counts[bottom, x] - counts[np.minimum(top + 1, bottom), x]
        valid = (
            (x >= np.maximum(lo[r1, c1], lo[r2, c2]))
            & (x <= np.minimum(hi[r1, c1], hi[r2, c2]))
            & (between == 0)
        )
        yield (
            valid,
            (
                lambda r1=r1, c1=c1, r2=r2, c2=c2, x=x: (
                    np.abs(c1 - x) + np.abs(r1 - r2) + np.abs(x - c2)
                )
            ),
        )


def connects(board: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether a path of at most 3 segments joins ``a[i]`` and ``b[i]`` (no path built)."""
    shapes = _valid_pivots(board, a, b)
    ok = next(shapes)[0].any(axis=1)
    return ok | next(shapes)[0].any(axis=1)


def connect_pairs(
    board: np.ndarray, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For pairs of cells ``a[i]``, ``b[i]`` (board coordinates, shape (P, 2)), whether a
    path of at most 3 segments joins them, and the shortest one.

    Returns (ok, length, kind, pivot): ``kind`` 0 for a horizontal-vertical-horizontal path
    turning on padded column ``pivot``, 1 for vertical-horizontal-vertical on padded row
    ``pivot``. The two ends must be distinct; they may be tiles or empty cells (the ends
    never block), and their kinds are not compared here.
    """
    big = np.iinfo(np.int32).max
    results = []
    for valid, length in _valid_pivots(board, a, b):
        cost = np.where(valid, length(), big)
        best = cost.argmin(axis=1)
        results.append((cost[np.arange(len(cost)), best], best))
    (len_h, piv_h), (len_v, piv_v) = results
    use_v = len_v < len_h
    length = np.where(use_v, len_v, len_h)
    return length < big, length, use_v.astype(np.int8), np.where(use_v, piv_v, piv_h)


def corners(a: Cell, b: Cell, kind: int, pivot: int) -> tuple[Cell, ...]:
    """The path's corner points in board coordinates (the ring is row/column -1 or n)."""
    (ra, ca), (rb, cb) = a, b
    p = pivot - 1
    points = [a, (ra, p), (rb, p), b] if kind == 0 else [a, (p, ca), (p, cb), b]
    out = [points[0]]
    for q in points[1:]:
        if q != out[-1]:
            out.append(q)
    # drop middle points that lie on a straight line (a one- or two-segment path)
    i = 1
    while i < len(out) - 1:
        (r0, c0), (r1, c1), (r2, c2) = out[i - 1], out[i], out[i + 1]
        if (r0 == r1 == r2) or (c0 == c1 == c2):
            out.pop(i)
        else:
            i += 1
    return tuple(out)


def find_path(board: np.ndarray, a: Cell, b: Cell) -> tuple[Cell, ...] | None:
    """Corner points of the shortest path of at most 3 segments from a to b, or None."""
    ok, _, kind, pivot = connect_pairs(board, np.array([a]), np.array([b]))
    if not ok[0]:
        return None
    return corners(a, b, int(kind[0]), int(pivot[0]))


def same_kind_pairs(board: np.ndarray) -> tuple[list[int], list[int]]:
    """Every pair (i < j) of flat cells holding the same kind, grouped with one sort."""
    flat = board.ravel()
    occupied = np.flatnonzero(flat != EMPTY)
    kinds = flat[occupied]
    order = np.argsort(kinds, kind="stable")
    cells, values = occupied[order].tolist(), kinds[order].tolist()
    firsts: list[int] = []
    seconds: list[int] = []
    start, n = 0, len(cells)
    while start < n:
        end = start + 1
        while end < n and values[end] == values[start]:
            end += 1
        for x in range(start, end):
            for y in range(x + 1, end):
                firsts.append(cells[x])
                seconds.append(cells[y])
        start = end
    return firsts, seconds


def removable_with_lengths(board: np.ndarray) -> tuple[list[tuple[int, int]], list[int]]:
    """Flat index pairs (i < j) of equal tiles that connect now, and their path lengths."""
    firsts, seconds = same_kind_pairs(board)
    if not firsts:
        return [], []
    cols = board.shape[1]
    i, j = np.array(firsts), np.array(seconds)
    a = np.stack([i // cols, i % cols], axis=1)
    b = np.stack([j // cols, j % cols], axis=1)
    ok, length, _, _ = connect_pairs(board, a, b)
    keep = np.flatnonzero(ok).tolist()
    return [(firsts[k], seconds[k]) for k in keep], length[keep].tolist()


def removable_pairs(board: np.ndarray) -> list[tuple[int, int]]:
    """Flat index pairs (i < j) of equal tiles that connect now."""
    return removable_with_lengths(board)[0]
