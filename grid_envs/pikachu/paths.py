"""The path check: two tiles connect by at most 3 straight segments through empty cells.

The seed splits the check into six cases (a line, a Z inside the rectangle, a U or L
outside it). Every such path is one of two shapes with possibly empty segments:
horizontal-vertical-horizontal (the middle segment on some column ``x``) or
vertical-horizontal-vertical (the middle on some row ``y``). So scanning every column and
every row of the board *with its outer ring* covers all six cases at once. With prefix sums
of the occupied cells each candidate costs O(1), and numpy does the scan for every pair of
equal tiles together. The shortest valid path is kept, as the source article prefers, with its
corner points for drawing. The tests prove it exact against a breadth-first search over
(cell, direction, turns).
"""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import compiled
from grid_envs.pikachu.state import EMPTY, Cell


def _reach(occupied: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every cell, the first and last column its row's free run lets it reach.

    ``lo[..., r, c]`` and ``hi[..., r, c]`` bound the columns x such that every cell strictly
    between c and x, and x itself, is empty (x = c always qualifies): the straight legs of a
    path that leaves (r, c) sideways. Apply it to the transpose for the vertical legs.
    ``occupied`` is (rows, cols) or a batch (k, rows, cols).
    """
    w = occupied.shape[-1]
    index = np.arange(w)
    last = np.maximum.accumulate(np.where(occupied, index, -1), axis=-1)
    first = np.minimum.accumulate(np.where(occupied, index, w)[..., ::-1], axis=-1)[..., ::-1]
    lo = np.zeros(occupied.shape, dtype=np.int64)
    lo[..., 1:] = last[..., :-1] + 1
    hi = np.full(occupied.shape, w - 1, dtype=np.int64)
    hi[..., :-1] = first[..., 1:] - 1
    return lo, hi


def _valid_pivots(boards: np.ndarray, env: np.ndarray, a: np.ndarray, b: np.ndarray):
    """For both path shapes: which pivots give a free path from ``a[i]`` to ``b[i]`` on
    board ``env[i]`` of ``boards`` (k, rows, cols).

    Yields (valid, length) per shape, each of shape (P, span): shape 0 is
    horizontal-vertical-horizontal turning on padded column ``x``, shape 1 is
    vertical-horizontal-vertical on padded row ``y``; ``length`` is a callable so that
    callers that only ask *whether* the tiles connect skip it. A pivot is valid when both
    ends reach it along their straight legs (free runs, see ``_reach``) and the middle
    segment has no tile strictly between its two corners.
    """
    k, rows, cols = boards.shape
    occ = np.zeros((k, rows + 2, cols + 2), dtype=np.int32)
    occ[:, 1:-1, 1:-1] = boards != EMPTY
    e = env[:, None]
    r1, c1 = a[:, :1] + 1, a[:, 1:] + 1
    r2, c2 = b[:, :1] + 1, b[:, 1:] + 1
    for shape, grid in ((0, occ), (1, occ.transpose(0, 2, 1))):
        if shape == 1:  # the same scan on the transposed boards
            r1, c1, r2, c2 = c1, r1, c2, r2
        lo, hi = _reach(grid)
        counts = np.zeros((k, grid.shape[1] + 1, grid.shape[2]), dtype=np.int32)
        counts[:, 1:] = np.cumsum(grid, axis=1)  # occupied cells above each row, per column
        x = np.arange(grid.shape[2])[None, :]
        top, bottom = np.minimum(r1, r2), np.maximum(r1, r2)
        between = counts[e, bottom, x] - counts[e, np.minimum(top + 1, bottom), x]
        valid = (
            (x >= np.maximum(lo[e, r1, c1], lo[e, r2, c2]))
            & (x <= np.minimum(hi[e, r1, c1], hi[e, r2, c2]))
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


def _one_board(board: np.ndarray, pairs: int) -> tuple[np.ndarray, np.ndarray]:
    return board[None], np.zeros(pairs, dtype=np.int64)


def connects(
    board: np.ndarray, a: np.ndarray, b: np.ndarray, env: np.ndarray | None = None
) -> np.ndarray:
    """Whether a path of at most 3 segments joins ``a[i]`` and ``b[i]`` (no path built).
    With ``env``, ``board`` is a batch (k, rows, cols) and pair ``i`` lies on ``env[i]``.

    The same test as :func:`connect_pairs` without the lengths. For a batch, in O(1) a
    pair: per board and pair of rows, the columns free in every row strictly between them
    are one bit field, and the pivots both ends reach are a run of bits (building those
    fields costs more than it saves on one board, which scans the pivots)."""
    boards, env = _one_board(board, len(a)) if env is None else (board, env)
    k, rows, cols = boards.shape
    if k == 1 or max(rows, cols) + 2 > 63:  # one board, or wider than a bit field
        shapes = _valid_pivots(boards, env, a, b)
        ok = next(shapes)[0].any(axis=1)
        return ok | next(shapes)[0].any(axis=1)
    occ = np.zeros((k, rows + 2, cols + 2), dtype=bool)
    occ[:, 1:-1, 1:-1] = boards != EMPTY
    ok = np.zeros(len(a), dtype=bool)
    ends = (a[:, 0] + 1, a[:, 1] + 1, b[:, 0] + 1, b[:, 1] + 1)
    for grid, (r1, c1, r2, c2) in (
        (occ, ends),
        (occ.transpose(0, 2, 1), ends[1::-1] + ends[:1:-1]),
    ):
        height, width = grid.shape[1:]
        lo, hi = _reach(grid)
        bit = np.left_shift(np.uint64(1), np.arange(width, dtype=np.uint64))
        free = np.where(grid, np.uint64(0), bit).sum(axis=2, dtype=np.uint64)  # (k, height)
        every = np.uint64((1 << width) - 1)
        between = np.full((k, height, height), every, dtype=np.uint64)  # rows top < r < bottom
        for top in range(height - 2):
            between[:, top, top + 2 :] = np.bitwise_and.accumulate(free[:, top + 1 : -1], axis=1)
        first = np.maximum(lo[env, r1, c1], lo[env, r2, c2]).astype(np.uint64)
        last = np.minimum(hi[env, r1, c1], hi[env, r2, c2]).astype(np.int64)
        reach = np.where(
            last >= first.astype(np.int64),
            np.left_shift(np.uint64(1), (last + 1).astype(np.uint64))
            - np.left_shift(np.uint64(1), first),
            np.uint64(0),
        )
        ok |= (between[env, np.minimum(r1, r2), np.maximum(r1, r2)] & reach) != 0
    return ok


def connect_pairs(
    board: np.ndarray, a: np.ndarray, b: np.ndarray, env: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For pairs of cells ``a[i]``, ``b[i]`` (board coordinates, shape (P, 2)), whether a
    path of at most 3 segments joins them, and the shortest one.

    Returns (ok, length, kind, pivot): ``kind`` 0 for a horizontal-vertical-horizontal path
    turning on padded column ``pivot``, 1 for vertical-horizontal-vertical on padded row
    ``pivot``. The two ends must be distinct; they may be tiles or empty cells (the ends
    never block), and their kinds are not compared here. With ``env``, ``board`` is a batch
    (k, rows, cols) and pair ``i`` lies on board ``env[i]``.
    """
    boards, env = _one_board(board, len(a)) if env is None else (board, env)
    big = np.iinfo(np.int32).max
    results = []
    for valid, length in _valid_pivots(boards, env, a, b):
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
    """Corner points of the shortest path of at most 3 segments from a to b, or None: the
    env's own compiled test (:func:`connect_one`), the same path as :func:`connect_pairs`,
    ties included."""
    rows, cols = board.shape
    flat = np.ascontiguousarray(board).ravel()
    length, kind, pivot = connect_one(geometry(flat, rows, cols), a[0] * cols + a[1],
                                      b[0] * cols + b[1], cols, False)  # fmt: skip
    if length >= NO_PATH:
        return None
    out = np.zeros((4, 2), dtype=np.int64)
    points = corners_into(a[0], a[1], b[0], b[1], kind, pivot, out)
    return tuple((r, c) for r, c in out[:points].tolist())


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


def exposed(boards: np.ndarray) -> np.ndarray:
    """(k, rows * cols) bool for a batch (k, rows, cols): cells with an empty neighbour, the
    ring outside the board counting as empty. A path leaves a tile through an empty
    neighbour, so two tiles can only connect when both are exposed or they touch."""
    k, rows, cols = boards.shape
    free = np.ones((k, rows + 2, cols + 2), dtype=bool)
    free[:, 1:-1, 1:-1] = boards == EMPTY
    out = free[:, :-2, 1:-1] | free[:, 2:, 1:-1] | free[:, 1:-1, :-2] | free[:, 1:-1, 2:]
    return out.reshape(k, rows * cols)


def may_connect(
    open_cells: np.ndarray, env: np.ndarray, i: np.ndarray, j: np.ndarray, cols: int
) -> np.ndarray:
    """The pairs of flat cells (i < j, on board ``env``) worth a path check: both exposed
    (``open_cells`` from :func:`exposed`), or side by side."""
    touch = ((j - i == 1) & (j % cols != 0)) | (j - i == cols)
    return touch | (open_cells[env, i] & open_cells[env, j])


def _ends(cells: np.ndarray, cols: int) -> np.ndarray:
    """(row, col) of flat cells."""
    return np.stack([cells // cols, cells % cols], axis=1)


def _worth_checking(board: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """:func:`may_connect` for flat cells i < j of one board."""
    return may_connect(exposed(board[None]), np.zeros(len(i), dtype=np.int64), i, j, board.shape[1])


def connects_flat(board: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """:func:`connects` for flat cells i < j of one board (any tiles or none there), path
    checking only the pairs worth it (:func:`may_connect`)."""
    ok = np.zeros(len(i), dtype=bool)
    worth = _worth_checking(board, i, j) if len(i) else ok
    if worth.any():
        cols = board.shape[1]
        ok[worth] = connects(board, _ends(i[worth], cols), _ends(j[worth], cols))
    return ok


def _candidates(board: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of equal tiles worth a path check (:func:`may_connect`): flat cells i < j and
    their (row, col) ends."""
    firsts, seconds = same_kind_pairs(board)
    cols = board.shape[1]
    i, j = np.array(firsts, dtype=np.int64), np.array(seconds, dtype=np.int64)
    if len(i):
        worth = _worth_checking(board, i, j)
        i, j = i[worth], j[worth]
    return i, j, _ends(i, cols), _ends(j, cols)


def removable_with_lengths(board: np.ndarray) -> tuple[list[tuple[int, int]], list[int]]:
    """Flat index pairs (i < j) of equal tiles that connect now, and their path lengths."""
    i, j, a, b = _candidates(board)
    if not len(i):
        return [], []
    ok, length, _, _ = connect_pairs(board, a, b)
    return list(zip(i[ok].tolist(), j[ok].tolist(), strict=True)), length[ok].tolist()


def removable_pairs(board: np.ndarray) -> list[tuple[int, int]]:
    """Flat index pairs (i < j) of equal tiles that connect now (no lengths: a bit less)."""
    i, j, a, b = _candidates(board)
    if not len(i):
        return []
    ok = connects(board, a, b)
    return list(zip(i[ok].tolist(), j[ok].tolist(), strict=True))


# ---------------------------------------------------------------- compiled, one board
# The same path test over one board's arrays (grid_envs.core.jit), for the env's mask and
# removals: the single env and the batch (grid_envs.pikachu.rules) call these.
NO_PATH = 1 << 30


@compiled
def _runs(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_reach` of one padded occupancy grid."""
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
    """:func:`connect_pairs` for the flat cells ``a`` and ``b`` of the board ``shapes``
    (:func:`geometry`) describes: (length or ``NO_PATH``, kind, pivot)."""
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
    """:func:`corners` into ``out`` (4, 2); the number of points."""
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
