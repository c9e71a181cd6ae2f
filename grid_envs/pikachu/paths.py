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


def _prefix(occupied: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inclusive-exclusive prefix sums along rows and along columns (padded board)."""
    h, w = occupied.shape
    row = np.zeros((h, w + 1), dtype=np.int32)
    row[:, 1:] = np.cumsum(occupied, axis=1)
    col = np.zeros((h + 1, w), dtype=np.int32)
    col[1:, :] = np.cumsum(occupied, axis=0)
    return row, col


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
    rows, cols = board.shape
    occ = np.zeros((rows + 2, cols + 2), dtype=np.int32)
    occ[1:-1, 1:-1] = board != EMPTY
    row_sum, col_sum = _prefix(occ)
    ra, ca = a[:, 0] + 1, a[:, 1] + 1
    rb, cb = b[:, 0] + 1, b[:, 1] + 1

    def h_count(r: np.ndarray, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
        lo, hi = np.minimum(c1, c2), np.maximum(c1, c2)
        return row_sum[r, hi + 1] - row_sum[r, lo]

    def v_count(c: np.ndarray, r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
        lo, hi = np.minimum(r1, r2), np.maximum(r1, r2)
        return col_sum[hi + 1, c] - col_sum[lo, c]

    big = np.iinfo(np.int32).max
    results = []
    for shape, span in ((0, cols + 2), (1, rows + 2)):
        x = np.arange(span)[None, :]  # the pivot column (HVH) or row (VHV)
        r1, c1, r2, c2 = ra[:, None], ca[:, None], rb[:, None], cb[:, None]
        oa, ob = occ[r1, c1], occ[r2, c2]  # the ends do not block (usually both are tiles)
        if shape == 0:
            leg1 = h_count(r1, c1, x) - oa
            mid = v_count(x, r1, r2) - (x == c1) * oa - (x == c2) * ob
            leg2 = h_count(r2, x, c2) - ob
            turn_c = occ[r1, x] * (x != c1)  # the corner cells must be empty unless a or b
            turn_d = occ[r2, x] * (x != c2)
            length = np.abs(c1 - x) + np.abs(r1 - r2) + np.abs(x - c2)
        else:
            leg1 = v_count(c1, r1, x) - oa
            mid = h_count(x, c1, c2) - (x == r1) * oa - (x == r2) * ob
            leg2 = v_count(c2, x, r2) - ob
            turn_c = occ[x, c1] * (x != r1)
            turn_d = occ[x, c2] * (x != r2)
            length = np.abs(r1 - x) + np.abs(c1 - c2) + np.abs(x - r2)
        valid = (leg1 == 0) & (mid == 0) & (leg2 == 0) & (turn_c == 0) & (turn_d == 0)
        cost = np.where(valid, length, big)
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
