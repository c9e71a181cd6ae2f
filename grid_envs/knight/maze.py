"""Maze generation on URDL cells by colour merging (union-find), and maze checks.

Every wall between two neighbouring cells gets a distinct random rank (a permutation drawn
from the RNG); the maze is the *minimum spanning tree* of the grid under those ranks, so
every cell reaches every other by exactly one path. That is the source article's colour
merging: cells start in colours of their own and an opening is made only between two
colours, which then merge.

* :func:`kruskal` does it as the source article describes, one wall at a time in weight
  order, with a handwritten union-find (path halving, union by size): near-linear, used for
  small mazes.
* :func:`boruvka` merges colours in vectorised rounds (every colour opens its lightest wall
  to another colour; the colours then merge by pointer jumping), a handful of numpy passes
  per round and at most log2(cells) rounds: a million cells in well under two seconds.

With distinct ranks the minimum spanning tree is unique, so both build the *same* maze
from the same seed (the tests check it), and which one runs never changes a level.
``loops`` then opens a share of the remaining walls, so that several routes exist.
"""

from __future__ import annotations

import numpy as np

from grid_envs.knight.state import DOWN_BIT, LEFT_BIT, RIGHT_BIT, UP_BIT

SMALL = 40_000  # cells; larger mazes use the vectorised rounds


def walls(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The inner walls as cell pairs (a, b), flat indices: horizontal ones, then vertical."""
    idx = np.arange(rows * cols, dtype=np.int32).reshape(rows, cols)
    a = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    b = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    return a, b


def kruskal(n: int, a: np.ndarray, b: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Walls opened by Kruskal's algorithm taking walls in ``order`` (bool per wall)."""
    parent = list(range(n))
    size = [1] * n
    opened = np.zeros(len(a), dtype=bool)
    a_list, b_list = a.tolist(), b.tolist()
    merges = 0
    for w in order.tolist():
        x, y = a_list[w], b_list[w]
        while parent[x] != x:  # find with path halving
            parent[x] = parent[parent[x]]
            x = parent[x]
        while parent[y] != y:
            parent[y] = parent[parent[y]]
            y = parent[y]
        if x == y:
            continue
        if size[x] < size[y]:
            x, y = y, x
        parent[y] = x  # union by size: the two colours become one
        size[x] += size[y]
        opened[w] = True
        merges += 1
        if merges == n - 1:
            break
    return opened


def boruvka(n: int, a: np.ndarray, b: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The same spanning tree by Boruvka's rounds of colour merging, vectorised.

    ``order`` lists the walls from lightest to heaviest, as for :func:`kruskal`.
    """
    opened = np.zeros(len(a), dtype=bool)
    colour = np.arange(n, dtype=np.int32)
    ids = np.arange(n, dtype=np.int32)
    ea, eb, eid = a[order], b[order], order.astype(np.int32)  # walls, lightest first
    while True:
        ca, cb = colour[ea], colour[eb]
        cross = ca != cb
        if not cross.any():
            return opened
        ea, eb, eid, ca, cb = ea[cross], eb[cross], eid[cross], ca[cross], cb[cross]
        # each colour's lightest wall to another colour: the first time it appears
        m = len(eid)
        first = np.full(n, m, dtype=np.int32)
        positions = np.arange(m, dtype=np.int32)
        np.minimum.at(first, ca, positions)
        np.minimum.at(first, cb, positions)
        src = np.flatnonzero(first < m).astype(np.int32)
        chosen = first[src]
        opened[eid[chosen]] = True
        # hook each colour onto the colour across its chosen wall
        hook = ids.copy()
        hook[src] = np.where(ca[chosen] == src, cb[chosen], ca[chosen])
        # two colours that chose the same wall point at each other: the smaller is the root
        root = (hook[hook] == ids) & (ids < hook)
        hook[root] = ids[root]
        while True:  # pointer jumping until every colour points at its root
            nxt = hook[hook]
            if np.array_equal(nxt, hook):
                break
            hook = nxt
        colour = hook[colour]


def build_cells(
    rows: int, cols: int, a: np.ndarray, b: np.ndarray, opened: np.ndarray
) -> np.ndarray:
    """URDL cell values from the opened walls."""
    cells = np.zeros(rows * cols, dtype=np.uint8)
    n_h = rows * (cols - 1)
    h, v = opened[:n_h], opened[n_h:]
    ha, hb = a[:n_h][h], b[:n_h][h]
    va, vb = a[n_h:][v], b[n_h:][v]
    cells[ha] |= RIGHT_BIT
    cells[hb] |= LEFT_BIT
    cells[va] |= DOWN_BIT
    cells[vb] |= UP_BIT
    return cells.reshape(rows, cols)


def generate(
    rows: int, cols: int, rng: np.random.Generator, loops: float = 0.0, method: str = "auto"
) -> np.ndarray:
    """A maze in which every cell reaches every other; ``loops`` in [0, 1] opens extra walls."""
    if rows < 1 or cols < 1:
        raise ValueError(f"a maze needs at least one row and column, got {rows}x{cols}")
    if not 0.0 <= loops <= 1.0:
        raise ValueError(f"loops must be in [0, 1], got {loops!r}")
    if method not in ("auto", "kruskal", "boruvka"):
        raise ValueError(f"method must be 'auto', 'kruskal' or 'boruvka', got {method!r}")
    n = rows * cols
    a, b = walls(rows, cols)
    order = rng.permutation(len(a))  # the walls from lightest to heaviest
    if method == "kruskal" or (method == "auto" and n <= SMALL):
        opened = kruskal(n, a, b, order)
    else:
        opened = boruvka(n, a, b, order)
    if loops > 0:
        opened |= rng.random(len(a)) < loops
    return build_cells(rows, cols, a, b, opened)


def check(cells: np.ndarray) -> list[str]:
    """Problems with a maze: neighbours that disagree, openings through the border."""
    problems = []
    if (cells > 15).any():
        problems.append("a cell value is above 15")
    if (cells[0] & UP_BIT).any() or (cells[-1] & DOWN_BIT).any():
        problems.append("a cell opens through the top or bottom border")
    if (cells[:, 0] & LEFT_BIT).any() or (cells[:, -1] & RIGHT_BIT).any():
        problems.append("a cell opens through the left or right border")
    down = (cells[:-1] & DOWN_BIT) > 0
    up = (cells[1:] & UP_BIT) > 0
    for r, c in np.argwhere(down != up):
        problems.append(f"cells ({r}, {c}) and ({r + 1}, {c}) disagree about their wall")
    right = (cells[:, :-1] & RIGHT_BIT) > 0
    left = (cells[:, 1:] & LEFT_BIT) > 0
    for r, c in np.argwhere(right != left):
        problems.append(f"cells ({r}, {c}) and ({r}, {c + 1}) disagree about their wall")
    return problems
