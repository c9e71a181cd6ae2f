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

import bisect
from collections.abc import Callable

import numpy as np

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
    """Corner points of the shortest path of at most 3 segments from a to b, or None.

    The pivot scan of :func:`connect_pairs` for one pair, in plain Python (a few us where
    the array version costs about as much as a whole mask): the same path, ties included.
    """
    occ = np.zeros((board.shape[0] + 2, board.shape[1] + 2), dtype=bool)
    occ[1:-1, 1:-1] = board != EMPTY
    (r1, c1), (r2, c2) = (a[0] + 1, a[1] + 1), (b[0] + 1, b[1] + 1)
    h = _best_pivot(occ.tolist(), r1, c1, r2, c2)
    v = _best_pivot(occ.T.tolist(), c1, r1, c2, r2)
    if h is None and v is None:
        return None
    if v is not None and (h is None or v[0] < h[0]):
        return corners(a, b, 1, v[1])
    assert h is not None
    return corners(a, b, 0, h[1])


def _best_pivot(
    grid: list[list[bool]], r1: int, c1: int, r2: int, c2: int
) -> tuple[int, int] | None:
    """(length, column) of the shortest horizontal-vertical-horizontal path from (r1, c1)
    to (r2, c2) on a padded occupancy ``grid``, the leftmost among equals; None if none."""
    row1, row2 = grid[r1], grid[r2]
    first = max(_run_end(row1, c1, -1), _run_end(row2, c2, -1))
    last = min(_run_end(row1, c1, 1), _run_end(row2, c2, 1))
    top, bottom = min(r1, r2), max(r1, r2)
    best = None
    for x in range(first, last + 1):
        if any(grid[r][x] for r in range(top + 1, bottom)):
            continue
        length = abs(c1 - x) + (bottom - top) + abs(x - c2)
        if best is None or length < best[0]:
            best = (length, x)
    return best


def _run_end(row: list[bool], c: int, step: int) -> int:
    """The farthest column from ``c`` along ``row`` (``step`` -1 left, 1 right) that a
    straight leg reaches through empty cells (``c`` itself if its neighbour is taken)."""
    x = c
    while 0 <= x + step < len(row) and not row[x + step]:
        x += step
    return x


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


class RemovablePairs:
    """The removable pairs of one board on bit fields, kept up to date as pairs go (the
    single env's mask).

    Each row and column of the padded board is an integer, a bit per free cell, and a
    tile's straight legs reach a run of those bits (a few shifts find its two ends). The
    middle segment of a horizontal-vertical-horizontal path on column ``x`` needs ``x``
    free in every row strictly between the two tiles: the AND of those rows. So two tiles
    connect when their row runs and that AND share a bit, or the same holds for their
    column runs and the columns between them. Only tiles with an empty side are paired this
    way (as in :func:`may_connect`); equal tiles side by side always connect.

    :meth:`pairs` builds all that from the board, except when the board is the one it last
    saw with two tiles emptied (a removal without gravity): then only the two cells' bits,
    the tiles they open and the runs in their rows and columns change.
    """

    def __init__(self) -> None:
        self.board: np.ndarray | None = None  # the board the fields below describe (a copy)

    def pairs(self, board: np.ndarray, first: bool = False) -> list[tuple[int, int]]:
        """The removable pairs (i < j, flat cells) of ``board``; with ``first``, only the
        first found (enough to tell whether there is one)."""
        last = self.board
        if last is not None and last.shape == board.shape:
            changed = np.flatnonzero(last.ravel() != board.ravel())
            if len(changed) == 2 and not board.ravel()[changed].any():
                self._empty(changed.tolist())
                last.ravel()[changed] = EMPTY
                return self._pairs(first)
            if not len(changed):
                return self._pairs(first)
        self._build(board)
        return self._pairs(first)

    # -- the fields --------------------------------------------------------------------

    def _build(self, board: np.ndarray) -> None:
        rows, cols = board.shape
        self.board = board.copy()
        self.cols, self.h, self.w = cols, rows + 2, cols + 2
        free = np.ones((rows + 2, cols + 2), dtype=bool)
        free[1:-1, 1:-1] = board == EMPTY
        self.row_free = _bit_rows(free)
        self.col_free = _bit_rows(free.T)
        self.kinds = board.ravel().tolist()
        self.touching = _touching(board)  # equal tiles side by side
        # the tiles with an empty side: cell -> (cell, row, col) padded and the runs of its
        # legs, worked out when its kind has two open tiles (None until then)
        cells = np.flatnonzero(exposed(board[None])[0] & (board.ravel() != EMPTY))
        self.open: dict[int, tuple[int, int, int, int, int] | None] = dict.fromkeys(cells.tolist())
        groups: dict[int, list[int]] = {}  # kind -> its open tiles, ascending
        for kind, cell in zip(board.ravel()[cells].tolist(), cells.tolist(), strict=True):
            groups.setdefault(kind, []).append(cell)
        self.groups = groups

    def _legs(self, cell: int) -> tuple[int, int, int, int, int]:
        """Record the runs of ``cell``'s two straight legs: from the cell up to where the
        trailing ones of the bits beyond it stop, down to just past the last taken bit
        below it."""
        r, c = cell // self.cols + 1, cell % self.cols + 1
        line = self.row_free[r]
        ahead = line >> (c + 1)
        across = (1 << (c + (~ahead & (ahead + 1)).bit_length())) - (
            1 << (~line & ((1 << c) - 1)).bit_length()
        )
        line = self.col_free[c]
        ahead = line >> (r + 1)
        down = (1 << (r + (~ahead & (ahead + 1)).bit_length())) - (
            1 << (~line & ((1 << r) - 1)).bit_length()
        )
        legs = self.open[cell] = (cell, r, c, across, down)
        return legs

    def _empty(self, cells: list[int]) -> None:
        """Two tiles left the board: their bits, the tiles beside them (now open) and the
        legs that ran up to them."""
        cols, kinds, near = self.cols, self.kinds, []
        rows_hit, cols_hit = set(), set()
        for cell in cells:
            r, c = cell // cols + 1, cell % cols + 1
            self.row_free[r] |= 1 << c
            self.col_free[c] |= 1 << r
            rows_hit.add(r)
            cols_hit.add(c)
            if cell in self.open:
                del self.open[cell]
                self.groups[kinds[cell]].remove(cell)
            kinds[cell] = EMPTY
            near += [cell - cols, cell + cols]
            if c > 1:
                near.append(cell - 1)
            if c < cols:
                near.append(cell + 1)
        self.touching = [(i, j) for i, j in self.touching if kinds[i] and kinds[j]]
        stale = [
            legs[0]
            for legs in self.open.values()
            if legs is not None and (legs[1] in rows_hit or legs[2] in cols_hit)
        ]
        for cell in stale:
            self.open[cell] = None  # its legs may run further now
        for cell in near:
            if 0 <= cell < len(kinds) and kinds[cell] and cell not in self.open:
                self.open[cell] = None
                bisect.insort(self.groups.setdefault(kinds[cell], []), cell)

    # -- the pairs ---------------------------------------------------------------------

    def _pairs(self, first: bool) -> list[tuple[int, int]]:
        open_tiles = self.open
        found = [(i, j) for i, j in self.touching if i not in open_tiles or j not in open_tiles]
        if first and found:
            return found[:1]
        rows_between = _between(self.row_free, (1 << self.w) - 1)
        cols_between = _between(self.col_free, (1 << self.h) - 1)
        for cells in self.groups.values():
            if len(cells) < 2:
                continue
            tiles = [open_tiles[cell] or self._legs(cell) for cell in cells]
            for k, (i, ri, ci, across_i, down_i) in enumerate(tiles):
                for j, rj, cj, across_j, down_j in tiles[k + 1 :]:
                    pivots = across_i & across_j  # columns both reach along their rows
                    if pivots and pivots & rows_between(ri, rj):  # i < j: ri <= rj
                        found.append((i, j))
                        if first:
                            return found
                        continue
                    pivots = down_i & down_j  # rows both reach along their columns
                    if pivots and pivots & (
                        cols_between(ci, cj) if ci < cj else cols_between(cj, ci)
                    ):
                        found.append((i, j))
                        if first:
                            return found
        return found


def _between(lines: list[int], every: int) -> Callable[[int, int], int]:
    """The AND of ``lines`` strictly between two indices (``every`` bit if none), each pair
    of indices worked out once."""
    kept: dict[int, int] = {}
    size = len(lines)

    def between(low: int, high: int) -> int:
        key = low * size + high
        out = kept.get(key)
        if out is None:
            out = every
            for line in lines[low + 1 : high]:
                out &= line
            kept[key] = out
        return out

    return between


def _bit_rows(mask: np.ndarray) -> list[int]:
    """Each row of a bool array as an integer, bit x for column x."""
    packed = np.packbits(mask, axis=1, bitorder="little")  # rows padded to whole bytes
    whole, width = int.from_bytes(packed.tobytes(), "little"), 8 * packed.shape[1]
    row = (1 << width) - 1
    return [(whole >> (y * width)) & row for y in range(len(packed))]


def _touching(board: np.ndarray) -> list[tuple[int, int]]:
    """Equal tiles side by side, flat (i < j)."""
    cols = board.shape[1]
    tile = board != EMPTY
    right = (board[:, :-1] == board[:, 1:]) & tile[:, 1:]
    down = (board[:-1] == board[1:]) & tile[1:]
    out = [(a + a // (cols - 1), a + a // (cols - 1) + 1) for a in np.flatnonzero(right).tolist()]
    return out + [(a, a + cols) for a in np.flatnonzero(down).tolist()]
