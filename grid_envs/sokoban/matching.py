"""The push search's lower bound in pure Python: a minimum-cost perfect matching of boxes to
goals on push distances (the Hungarian algorithm), and its repair after a move.

The solver's pure-Python searches and its potentials use these; the compiled searches use
the same algorithm with the same ties (:mod:`grid_envs.sokoban.compiled.matching`), which
the tests hold to these.
"""

from __future__ import annotations

BIG = 1 << 20  # "unreachable" in the distance tables; any sum >= BIG is infeasible


def _augment(
    rows: list[list[int]], u: list[float], v: list[float], match: list[int], i: int
) -> None:
    """Insert free row ``i`` (1-based) into the matching: one shortest augmenting path.

    ``match[j]`` is the row matched to column j (1-based, 0 if none); ``u``, ``v`` are
    feasible potentials (``u[r] + v[j] <= cost``), kept feasible. O(n^2).

    Each step of the textbook version adds the step's ``delta`` to the potentials of every
    column reached so far and takes it off every other column's slack. Here the deltas are
    summed in ``total`` instead: a column's stored slack is its slack plus ``total``, and
    a reached column's potentials change once at the end by the deltas since it was
    reached. Costs are integers, so the arithmetic is exact and the result the same.
    """
    inf = float("inf")
    n = len(rows)
    way = [0] * (n + 1)
    slack = [inf] * (n + 1)  # slack[j] + total: the textbook's minv[j]
    match[0] = i
    j0 = 0
    total = 0.0
    free = list(range(1, n + 1))  # the columns not reached yet, in order
    reached = [0]
    since = [0.0]  # ``total`` when each column of ``reached`` was reached
    while True:
        row = rows[match[j0] - 1]
        # the row's potential has not moved yet: its column was reached at this ``total``
        base = u[match[j0]] - total
        best = inf
        j1 = 0
        for j in free:
            cur = row[j - 1] - v[j] - base
            m = slack[j]
            if cur < m:
                m = slack[j] = cur
                way[j] = j0
            if m < best:
                best = m
                j1 = j
        total = best
        free.remove(j1)
        reached.append(j1)
        since.append(total)
        j0 = j1
        if match[j0] == 0:
            break
    for j, t in zip(reached, since, strict=True):
        u[match[j]] += total - t
        v[j] -= total - t
    while j0:
        j1 = way[j0]
        match[j0] = match[j1]
        j0 = j1


def hungarian(cost: list[list[int]]) -> tuple[int, list[float], list[float], list[int]]:
    """Minimum-cost perfect matching of a square matrix (rows to columns).

    Returns (total cost, row potentials, column potentials, match) where ``match[j]`` is the
    row (1-based) of column ``j`` (1-based); the rest lets :func:`rematch` reuse the work.
    """
    n = len(cost)
    u = [0.0] * (n + 1)
    v = [0.0] * (n + 1)
    match = [0] * (n + 1)
    for i in range(1, n + 1):
        _augment(cost, u, v, match, i)
    return _total(cost, match), u, v, match


Matching = tuple[list[float], list[float], list[int]]  # row and column potentials, match


def rematch(cost: list[list[int]], old: Matching, row: int) -> tuple[int, Matching]:
    """The optimal matching after row ``row`` (0-based) of ``cost`` changed. O(n^2).

    ``old`` comes from :func:`hungarian` (or an earlier ``rematch``) on the old matrix and
    is not modified. Potentials stay feasible: column potentials only fall, and the changed
    row restarts at 0, below every reduced cost.
    """
    u, v, match = old[0][:], old[1][:], old[2][:]
    r = row + 1
    u[r] = 0.0
    match[match.index(r, 1)] = 0
    _augment(cost, u, v, match, r)
    return _total(cost, match), (u, v, match)


def rematch_after_push(
    cost: list[list[int]], old: Matching, row: int, before: list[int], total: int
) -> tuple[int, Matching]:
    """:func:`rematch` after one push moved the box of row ``row`` (its costs were
    ``before``), when the old optimal total was ``total``. Raising or lowering that row's
    potential to its least reduced cost keeps every potential feasible; if the row's
    matched goal is then still tight, the old matching is still optimal (complementary
    slackness): O(n) instead of O(n^2). That holds whenever the push brought the box one
    push nearer its matched goal, and often otherwise."""
    u, v, match = old
    r = row + 1
    j = match.index(r, 1)
    costs = cost[row]
    least = min([c - v[k] for k, c in enumerate(costs, 1)])
    if costs[j - 1] - v[j] == least:
        u = u[:]
        u[r] = least
        return total - before[j - 1] + costs[j - 1], (u, v, match)
    return rematch(cost, old, row)


def _total(cost: list[list[int]], match: list[int]) -> int:
    total = 0
    for j in range(1, len(match)):
        total += cost[match[j] - 1][j - 1]
    return total
