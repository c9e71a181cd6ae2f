"""The matching bound, compiled: a minimum-cost perfect matching of boxes to goals on push
distances (the Hungarian algorithm), and its repair after one box moved.

The same algorithm as the solver's pure-Python ``hungarian``, ``rematch`` and
``rematch_after_push``, in integers, with the same ties (columns scanned in order, the
first least slack taken), so that both searches find the same matching (tested).
"""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import compiled, uncounted
from grid_envs.sokoban.matching import BIG  # noqa: F401 (the tables' "unreachable", one value)

_INF = 1 << 50  # an unset slack in the augmenting path


@uncounted
def augment(cost, u, v, match, i, way, slack, seen):
    """Insert free row ``i`` (1-based) into the matching by one shortest augmenting path,
    as the solver's ``augment`` does (columns scanned in order, the first least slack
    taken), in integers. ``cost[r - 1, j - 1]``; ``match[j]`` the row of column j."""
    n = cost.shape[0]
    for j in range(n + 1):
        slack[j] = _INF
        seen[j] = 0
        way[j] = 0
    match[0] = i
    j0 = 0
    while True:
        seen[j0] = 1
        r = match[j0]
        best = _INF
        j1 = 0
        for j in range(1, n + 1):
            if seen[j]:
                continue
            cur = cost[r - 1, j - 1] - u[r] - v[j]
            if cur < slack[j]:
                slack[j] = cur
                way[j] = j0
            if slack[j] < best:
                best = slack[j]
                j1 = j
        for j in range(n + 1):
            if seen[j]:
                u[match[j]] += best
                v[j] -= best
            else:
                slack[j] -= best
        j0 = j1
        if match[j0] == 0:
            break
    while j0:
        j1 = way[j0]
        match[j0] = match[j1]
        j0 = j1


@uncounted
def matched_total(cost, match):
    total = 0
    for j in range(1, match.shape[0]):
        total += cost[match[j] - 1, j - 1]
    return total


@compiled
def hungarian(cost, u, v, match):
    """Minimum-cost perfect matching of the square ``cost`` into ``u``, ``v``, ``match``
    (length n + 1, 1-based); returns the total (>= BIG when none is finite)."""
    n = cost.shape[0]
    u[:] = 0
    v[:] = 0
    match[:] = 0
    way = np.zeros(n + 1, np.int64)
    slack = np.zeros(n + 1, np.int64)
    seen = np.zeros(n + 1, np.uint8)
    for i in range(1, n + 1):
        augment(cost, u, v, match, i, way, slack, seen)
    return matched_total(cost, match)


@uncounted
def matched_goal(match, k):
    """The goal (0-based column) matched to box ``k`` (0-based row)."""
    j = 1
    while match[j] != k + 1:
        j += 1
    return j - 1


@uncounted
def rematch(rows, k, before, u, v, match, way, slack, seen):
    """The matching after box ``k``'s costs changed (``rows[k]`` new, ``before`` old),
    from the optimal one before, in place, as the solver's ``rematch_after_push``: the
    row's potential moved to its least reduced cost, and when its matched goal is still
    tight the matching stands (returns -1: the total moved by the row's change alone);
    otherwise one augmenting path (returns the new total)."""
    n = rows.shape[0]
    r = k + 1
    j = matched_goal(match, k) + 1
    least = _INF
    for q in range(1, n + 1):
        x = rows[k, q - 1] - v[q]
        if x < least:
            least = x
    if rows[k, j - 1] - v[j] == least:
        u[r] = least
        return -1
    u[r] = 0
    match[j] = 0
    augment(rows, u, v, match, r, way, slack, seen)
    return matched_total(rows, match)


@uncounted
def rematch_row(rows, k, u, v, match, way, slack, seen):
    """The optimal matching after box ``k``'s row changed, in place, by one augmenting
    path from a zero potential (the solver's ``rematch``, for a move of many pushes);
    returns its total."""
    r = k + 1
    j = matched_goal(match, k) + 1
    u[r] = 0
    match[j] = 0
    augment(rows, u, v, match, r, way, slack, seen)
    return matched_total(rows, match)
