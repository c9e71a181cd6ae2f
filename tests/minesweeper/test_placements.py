"""The compiled walk over a part's mine placements: every placement, in the order a plain
recursive backtracking meets them, the same steps counted and the same draws made."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from grid_envs.minesweeper.placements import combined
from grid_envs.minesweeper.solver import MinesweeperSolver

Constraints = list[tuple[frozenset[int], int]]


def _part(seed: int) -> tuple[list[int], Constraints]:
    """Up to 12 cells under 2-6 random numbers, each number's mines a count that some
    placement meets or, now and then, one that none does."""
    rng = np.random.default_rng(seed)
    cells = list(range(int(rng.integers(3, 13))))
    truth = rng.random(len(cells)) < 0.4
    cons = []
    for _ in range(int(rng.integers(2, 7))):
        members = rng.choice(
            cells, size=int(rng.integers(1, min(6, len(cells)) + 1)), replace=False
        )
        need = int(truth[members].sum()) + (1 if rng.random() < 0.05 else 0)
        cons.append((frozenset(int(c) for c in members), need))
    return sorted({c for cs, _ in cons for c in cs}), cons


class _Stop(Exception):
    """The reference walk stops: ``within`` its steps or not."""

    def __init__(self, within: bool) -> None:
        self.within = within


def _reference(
    order: list[int], cons: Constraints, max_nodes: int, most: int = -1, rng: Any = None
) -> tuple[bool, list[tuple[int, ...]]]:
    """The walk written plainly, recursively: (within max_nodes, placements in order)."""
    found: list[tuple[int, ...]] = []
    nodes = 0

    def fits(assign: list[int]) -> bool:
        given = dict(zip(order, assign, strict=False))
        for cs, need in cons:
            known = [given[c] for c in cs if c in given]
            if sum(known) > need or sum(known) + len(cs) - len(known) < need:
                return False
        return True

    def place(assign: list[int]) -> None:
        nonlocal nodes
        nodes += 1
        if nodes > max_nodes:
            raise _Stop(False)
        if len(assign) == len(order):
            found.append(tuple(assign))
            if len(found) == most:
                raise _Stop(True)
            return
        first = int(rng.integers(2)) if rng is not None else 0
        for value in (first, 1 - first):
            if fits([*assign, value]):
                place([*assign, value])

    try:
        place([])
    except _Stop as stop:
        return stop.within, found
    return True, found


@pytest.mark.parametrize("seed", range(60))
def test_the_walk_meets_every_placement_in_the_plain_walks_order(seed: int) -> None:
    cells, cons = _part(seed)
    solver = MinesweeperSolver(4, 4, 3)
    walked = solver.walk(cells, cons, per_cell=True)
    assert walked is not None and sorted(walked.order) == cells
    ok, want = _reference(walked.order, cons, solver.max_nodes)
    assert ok and walked.found == len(want)
    brute = [
        a for a in itertools.product((0, 1), repeat=len(cells))
        if all(sum(a[walked.order.index(c)] for c in cs) == need for cs, need in cons)
    ]  # fmt: skip
    assert sorted(want) == sorted(brute)
    for k in range(len(cells) + 1):
        of_k = [a for a in want if sum(a) == k]
        assert walked.counts[k] == len(of_k)
        assert walked.tally[k].tolist() == [sum(a[i] for a in of_k) for i in range(len(cells))]
    kept = solver.walk(cells, cons, most=3)
    assert kept is not None and [tuple(r) for r in kept.leaves.tolist()] == want[:3]
    for limit in (1, 5, 17):  # out of steps: None where the plain walk runs out too
        solver.max_nodes = limit
        ok, _ = _reference(walked.order, cons, limit)
        assert (solver.walk(cells, cons) is not None) == ok
    solver.max_nodes = 400_000
    draws, plain = np.random.default_rng(seed), np.random.default_rng(seed)
    drawn = solver.walk(cells, cons, most=1, rng=draws)
    ok, first = _reference(walked.order, cons, 400_000, 1, plain)
    assert drawn is not None and [tuple(r) for r in drawn.leaves.tolist()] == first[:1]
    assert draws.integers(1 << 30) == plain.integers(1 << 30)  # the same draws made


def test_parts_combine_as_a_product_in_the_mine_count() -> None:
    # part one: 1 placement with no mine, 2 with one; part two: 3 with one mine
    assert combined([{0: 1, 1: 2}, {1: 3}]) == {1: 3, 2: 6}
    assert combined([]) == {0: 1}
    # against a count of the joint placements, listed
    parts = [{0: 1, 1: 3, 2: 3}, {1: 2, 2: 1}, {0: 1, 3: 4}]
    listed: dict[int, int] = {}
    for ks in itertools.product(*(list(p.items()) for p in parts)):
        mines, count = sum(k for k, _ in ks), int(np.prod([c for _, c in ks]))
        listed[mines] = listed.get(mines, 0) + count
    assert combined(parts) == listed
