"""The path check: two tiles connect by at most 3 straight segments through empty cells.

The source article splits the check into six cases (a line, a Z inside the rectangle, a U
or L outside it). Every such path is one of two shapes with possibly empty segments:
horizontal-vertical-horizontal (the middle segment on some column ``x``) or
vertical-horizontal-vertical (the middle on some row ``y``). So scanning every column and
every row of the board *with its outer ring* covers all six cases at once: a pivot is
valid when both tiles reach it along their free runs (how far each sees along its row, or
column) and the middle segment has no tile strictly between its corners. Each padded row
and column is one 64-bit field of its occupied places, so a tile's run is two bit counts,
the pivots both ends reach are an AND of two runs, and the pivots a middle segment may use
are what the OR of the lines it crosses leaves free: every pivot of a pair at once, in a
few instructions, without a branch. The shortest valid path is kept, the leftmost (topmost)
pivot among equals, as the source article prefers, with its corner points for drawing.
Only tiles side by side, or both with an empty side, can connect, so the others are not
tested. A board side is at most :data:`MAX_SIDE` cells.

It is compiled (:mod:`grid_envs.core.jit`), written once over one board's arrays: the
envs' masks and removals (:mod:`grid_envs.pikachu.rules`), the solver and the agents all
call it. The tests prove it exact against a breadth-first search over (cell, direction,
turns).
"""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import compiled, inlined, leading_zeros, trailing_zeros
from grid_envs.pikachu.state import EMPTY, Cell

NO_PATH = 1 << 30
#: The longest board side the path test takes: a padded row or column (the side and its
#: ring) is one 64-bit field.
MAX_SIDE = 60


def check_side(rows: int, cols: int) -> None:
    """Refuse a board wider than the path test takes, naming the limit."""
    if max(rows, cols) > MAX_SIDE:
        raise ValueError(
            f"the path test takes boards of at most {MAX_SIDE} cells a side, got {rows}x{cols}"
        )


def flat_board(board: np.ndarray) -> tuple[np.ndarray, int, int]:
    """``board`` (rows, cols) as the compiled rules take it: flat and contiguous, with its
    rows and columns (:func:`check_side`)."""
    rows, cols = board.shape
    check_side(rows, cols)
    return np.ascontiguousarray(board).ravel(), rows, cols


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
    flat, rows, cols = flat_board(board)
    length, kind, pivot = connect_one(geometry(flat, rows, cols), a[0] * cols + a[1],
                                      b[0] * cols + b[1], cols, False)  # fmt: skip
    return None if length >= NO_PATH else corners(a, b, kind, pivot)


def connects_flat(board: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Whether each pair of flat cells i < j of one board (any tiles or none there)
    connects (:func:`connects_many`)."""
    flat, rows, cols = flat_board(board)
    return connects_many(flat, rows, cols, np.asarray(i, dtype=np.int64),
                         np.asarray(j, dtype=np.int64))  # fmt: skip


def removable_with_lengths(board: np.ndarray) -> tuple[list[tuple[int, int]], list[int]]:
    """Flat index pairs (i < j) of equal tiles that connect now, and their path lengths
    (by kind, then by cell; compiled, :func:`removable`)."""
    i, j, length = removable(*flat_board(board), True)
    return list(zip(i.tolist(), j.tolist(), strict=True)), length.tolist()


def removable_pairs(board: np.ndarray) -> list[tuple[int, int]]:
    """Flat index pairs (i < j) of equal tiles that connect now (by kind, then by cell)."""
    i, j, _ = removable(*flat_board(board), False)
    return list(zip(i.tolist(), j.tolist(), strict=True))


# ---------------------------------------------------------------- compiled, one board
@compiled
def _span(lo: int, hi: int) -> int:
    """The bits lo..hi (inclusive) of a field."""
    return ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)


@compiled
def run(line: int, at: int, width: int) -> int:
    """The free run of place ``at`` of a padded line of ``width`` places (``line``: the bits
    of its occupied places): the places x such that every place strictly between ``at`` and
    x, and x itself, is empty, ``at`` always among them. The straight legs of a path that
    leaves the cell along that line."""
    others = line & ~(1 << at)
    lo = 64 - leading_zeros(others & ((1 << at) - 1))  # past the last tile before it
    hi = at + trailing_zeros((others | (1 << width)) >> (at + 1))  # before the next one
    return _span(lo, hi)


@compiled
def geometry(board: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """What the path test of one board (flat) reads, as 64-bit fields: the occupied padded
    columns of each padded row, and the occupied padded rows of each padded column."""
    row_bits = np.zeros(rows + 2, dtype=np.int64)
    col_bits = np.zeros(cols + 2, dtype=np.int64)
    for r in range(rows):
        for c in range(cols):
            tile = np.int64(board[r * cols + c] != EMPTY)
            row_bits[r + 1] |= tile << (c + 1)
            col_bits[c + 1] |= tile << (r + 1)
    return row_bits, col_bits


@inlined
def is_open(row_bits: np.ndarray, col_bits: np.ndarray, r: int, c: int) -> bool:
    """Whether the padded cell (r, c) has an empty side (a path can leave it). (Written
    without branches, as the compiled rules' inner loops are: on a random board, a branch
    the processor mispredicts costs more than the work it would skip.)"""
    return ((row_bits[r] >> (c - 1)) & 5 != 5) | ((col_bits[c] >> (r - 1)) & 5 != 5)


@inlined
def _unblocked(pivots: int, lines: np.ndarray, lo: int, hi: int) -> int:
    """The ``pivots`` (bits: lines) on which no tile stands at the places strictly between
    ``lo`` and ``hi``: the middle segments left free. The pivots both ends reach are few,
    so they are tested one by one."""
    between = _span(lo + 1, hi - 1) if hi - lo > 1 else 0
    free = 0
    while pivots:
        at = trailing_zeros(pivots)
        free |= int(lines[at] & between == 0) << at
        pivots &= pivots - 1
    return free


@inlined
def _pivots(
    shapes: tuple[np.ndarray, np.ndarray], r1: int, c1: int, r2: int, c2: int
) -> tuple[int, int]:  # fmt: skip
    """The pivots of the paths joining the padded cells (r1, c1) and (r2, c2), as bits:
    the padded columns where a horizontal-vertical-horizontal path can turn (both ends
    reach it along their rows, and no tile of the rows between stands on it), and the
    padded rows where a vertical-horizontal-vertical one can."""
    row_bits, col_bits = shapes
    across = run(row_bits[r1], c1, len(col_bits)) & run(row_bits[r2], c2, len(col_bits))
    down = run(col_bits[c1], r1, len(row_bits)) & run(col_bits[c2], r2, len(row_bits))
    across = _unblocked(across, col_bits, min(r1, r2), max(r1, r2))
    down = _unblocked(down, row_bits, min(c1, c2), max(c1, c2))
    return across, down


@compiled
def _shortest(pivots: int, p1: int, p2: int, middle: int, first_only: bool) -> tuple[int, int]:
    """(length, pivot) of the shortest path through one of ``pivots`` (bits), the lowest
    pivot among equals, ``NO_PATH`` if none; with ``first_only``, the lowest pivot."""
    best, pivot = NO_PATH, 0
    while pivots:
        x = trailing_zeros(pivots)
        length = abs(p1 - x) + middle + abs(x - p2)
        if length < best:
            best, pivot = length, x
            if first_only:
                break
        pivots &= pivots - 1
    return best, pivot


@inlined
def connects(shapes: tuple[np.ndarray, np.ndarray], r1: int, c1: int, r2: int, c2: int) -> bool:
    """Whether the padded cells (r1, c1) and (r2, c2) connect (:func:`connect_one`'s
    verdict alone)."""
    across, down = _pivots(shapes, r1, c1, r2, c2)
    return (across | down) != 0


@compiled
def places(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The padded row and column of every flat cell (an inner loop's look-up: a division
    by a number known only at run time costs tens of cycles)."""
    row_of = np.empty(rows * cols, dtype=np.int64)
    col_of = np.empty(rows * cols, dtype=np.int64)
    for r in range(rows):
        for c in range(cols):
            row_of[r * cols + c], col_of[r * cols + c] = r + 1, c + 1
    return row_of, col_of


@compiled
def connect_one(
    shapes: tuple[np.ndarray, np.ndarray], a: int, b: int, cols: int, first_only: bool
) -> tuple[int, int, int]:  # fmt: skip
    """The shortest path joining the flat cells ``a`` and ``b`` (the ends never block) on
    the board ``shapes`` (:func:`geometry`) describes: (length, or ``NO_PATH`` when there is
    none; kind, 0 for horizontal-vertical-horizontal turning on padded column ``pivot``, 1
    for vertical-horizontal-vertical on padded row ``pivot``; pivot). With ``first_only``,
    the first path found (enough to say whether they connect)."""
    r1, c1, r2, c2 = a // cols + 1, a % cols + 1, b // cols + 1, b % cols + 1
    across, down = _pivots(shapes, r1, c1, r2, c2)
    along, x = _shortest(across, c1, c2, abs(r1 - r2), first_only)
    if first_only and along < NO_PATH:
        return along, 0, x
    turned, y = _shortest(down, r1, r2, abs(c1 - c2), first_only)
    if turned < along:
        return turned, 1, y
    return along, 0, x


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


@inlined
def _touching(i: int, j: int, cols: int, at_left: bool) -> bool:
    """Whether flat cells i < j are side by side (``at_left``: j starts a row)."""
    return j - i == cols or (j - i == 1 and not at_left)


@inlined
def _worth(i: int, j: int, cols: int, at_left: bool, open_i: bool, open_j: bool) -> bool:
    """Whether flat cells i < j are worth a path check: side by side, or both open."""
    return _touching(i, j, cols, at_left) | (open_i & open_j)


@inlined
def _closed(row_bits: np.ndarray, r: int) -> int:
    """The tiles of padded row ``r`` whose four sides are tiles, as bits."""
    line = row_bits[r]
    return line & (line << 1) & (line >> 1) & row_bits[r - 1] & row_bits[r + 1]


@inlined
def _action(i: int, j: int, n: int) -> int:
    """The action of the pair of flat cells i < j on a board of ``n`` cells."""
    return i * (2 * n - i - 1) // 2 + (j - i - 1)


@compiled
def mask_into(board: np.ndarray, rows: int, cols: int, out: np.ndarray) -> bool:
    """Write the (n_pairs,) mask of ``board`` (flat) into ``out``: every pair of equal
    tiles joined by a path of at most 3 segments. Whether any pair is.

    Only tiles side by side, or both open, can be joined (:func:`_worth`). A tile is
    closed when its four sides are tiles, and the bits of each row say which at once; a
    closed tile pairs only with an equal tile beside it, and the open tiles, gathered by
    kind, pair with the open tiles of their kind, a path test for those not side by side."""
    n = rows * cols
    out[:] = False
    shapes = geometry(board, rows, cols)
    row_bits = shapes[0]
    top = 0
    for cell in range(n):
        top = max(top, board[cell])
    start = np.zeros(top + 2, dtype=np.int64)  # the open tiles by kind
    opened = np.empty((2, 2 * n), dtype=np.int64)  # open tiles and their padded (r, c)
    legal = False
    m = 0
    for r in range(1, rows + 1):
        closed = _closed(row_bits, r)
        bits = row_bits[r] & ~closed
        while bits:
            c = trailing_zeros(bits)
            cell = (r - 1) * cols + c - 1
            opened[0, m], opened[1, m] = cell, r << 8 | c  # then them by kind, from n
            m += 1
            start[board[cell]] += 1
            bits &= bits - 1
        while closed:  # inside the board: its four neighbours are tiles
            c = trailing_zeros(closed)
            cell = (r - 1) * cols + c - 1
            kind = board[cell]
            if board[cell + 1] == kind:
                out[_action(cell, cell + 1, n)] = legal = True
            if board[cell + cols] == kind:
                out[_action(cell, cell + cols, n)] = legal = True
            if board[cell - 1] == kind and not (_closed(row_bits, r) >> (c - 1)) & 1:
                out[_action(cell - 1, cell, n)] = legal = True
            if board[cell - cols] == kind and not (_closed(row_bits, r - 1) >> c) & 1:
                out[_action(cell - cols, cell, n)] = legal = True
            closed &= closed - 1
    for k in range(1, top + 1):  # start[k]: the open tiles of kinds below k
        start[k] += start[k - 1]
    for k in range(top, 0, -1):
        start[k] = start[k - 1]
    start[0] = 0
    for t in range(m):
        kind = board[opened[0, t]]
        opened[0, n + start[kind]], opened[1, n + start[kind]] = opened[0, t], opened[1, t]
        start[kind] += 1  # then: the open tiles of kinds up to this one
    for kind in range(1, top + 1):
        for x in range(n + start[kind - 1], n + start[kind]):
            i, r1, c1 = opened[0, x], opened[1, x] >> 8, opened[1, x] & 255
            for y in range(x + 1, n + start[kind]):
                j, r2, c2 = opened[0, y], opened[1, y] >> 8, opened[1, y] & 255
                joined = _touching(i, j, cols, c2 == 1) or connects(shapes, r1, c1, r2, c2)
                out[_action(i, j, n)] = joined
                legal |= joined
    return legal


@compiled
def removable(
    board: np.ndarray, rows: int, cols: int, lengths: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The pairs (i < j) of equal tiles that connect (:func:`mask_into`), by kind, then
    by cell, and (with ``lengths``) their shortest paths' lengths."""
    n = rows * cols
    mask = np.empty(n * (n - 1) // 2, dtype=np.bool_)
    found = 0
    if mask_into(board, rows, cols, mask):
        found = mask.sum()
    first = np.empty(found, dtype=np.int64)
    second = np.empty(found, dtype=np.int64)
    length = np.zeros(found, dtype=np.int64)
    order = np.argsort(board.astype(np.int64) * n + np.arange(n), kind="mergesort")
    t = 0
    for x in range(n):  # by kind, then by cell: each tile with the later ones of its kind
        i = order[x]
        y = x + 1
        while board[i] != EMPTY and y < n and board[order[y]] == board[i]:
            if mask[_action(i, order[y], n)]:
                first[t], second[t] = i, order[y]
                t += 1
            y += 1
    if lengths:
        shapes = geometry(board, rows, cols)
        for t in range(found):
            length[t] = connect_one(shapes, first[t], second[t], cols, False)[0]
    return first, second, length


@compiled
def connects_many(
    board: np.ndarray, rows: int, cols: int, first: np.ndarray, second: np.ndarray
) -> np.ndarray:  # fmt: skip
    """Whether each pair of flat cells (i < j, tiles or not) connects, path checking only
    the pairs worth it."""
    shapes = geometry(board, rows, cols)
    row_bits, col_bits = shapes[0], shapes[1]
    row_of, col_of = places(rows, cols)
    ok = np.zeros(len(first), dtype=np.bool_)
    for t in range(len(first)):
        i, j = first[t], second[t]
        r1, c1, r2, c2 = row_of[i], col_of[i], row_of[j], col_of[j]
        open_i = is_open(row_bits, col_bits, r1, c1)
        open_j = is_open(row_bits, col_bits, r2, c2)
        worth = _worth(i, j, cols, c2 == 1, open_i, open_j)
        ok[t] = worth and connects(shapes, r1, c1, r2, c2)
    return ok
