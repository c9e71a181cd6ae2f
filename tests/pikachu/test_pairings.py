"""The pairing search: pairings listed, replayed relaxations, sound clauses, exact proofs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from grid_envs.pikachu.pairings import PairingSearch, matchings
from grid_envs.pikachu.paths import removable_pairs
from grid_envs.pikachu.rules import random_board
from grid_envs.pikachu.solver import plan, remove
from tests.pikachu.conftest import exhaustive


@pytest.mark.parametrize(("tiles", "count"), [(2, 1), (4, 3), (6, 15), (8, 105)])
def test_matchings_pair_off_every_tile(tiles: int, count: int) -> None:
    found = matchings(list(range(10, 10 + tiles)))
    assert len(found) == count
    assert len({tuple(m) for m in found}) == count
    for m in found:
        assert sorted(t for pair in m for t in pair) == list(range(10, 10 + tiles))
        assert all(t < u for t, u in m)


def clears_with(board: np.ndarray, partners: list[tuple[int, int]]) -> bool:
    """The game with the pairing fixed: remove partners that connect until none does."""
    board, left = board.copy(), set(partners)
    while left:
        ready = left & set(removable_pairs(board))
        if not ready:
            return False
        for pair in ready:
            board = remove(board, pair, "none")
        left -= ready
    return True


def every_full_choice(search: PairingSearch) -> list[tuple[int, ...]]:
    per_kind = [np.flatnonzero(search.choice_kind == k).tolist() for k in range(search.n_kinds)]
    return list(itertools.product(*per_kind))


def locking_board(seed: int) -> np.ndarray:
    """6x6: three kinds of four (27 full choices) and twelve of two, which lock each other."""
    tiles = np.repeat(np.arange(1, 16), [4] * 3 + [2] * 12).astype(np.int16)
    return np.random.default_rng(seed).permutation(tiles).reshape(6, 6)


def test_every_learned_clause_holds_for_every_full_choice() -> None:
    """A clause says: a choice that makes none of these pairings cannot clear the board."""
    tested, clauses = 0, 0
    for seed in range(40):
        board = locking_board(seed)
        search = PairingSearch(board)
        solution = search.solve()
        outcomes = {}
        for full in every_full_choice(search):
            held = np.isin(search.inc_choice, full)
            partners = [(int(t), int(u)) for t, u in search.pairs[search.inc_pair[held]]]
            outcomes[full] = clears_with(board, partners)
        assert (solution is not None) == any(outcomes.values())
        for clause in search.clauses:
            clauses += 1
            for full, cleared in outcomes.items():
                if not set(full) & set(clause.tolist()):
                    assert not cleared
                    tested += 1
    assert clauses > 20 and tested > 500  # clauses were learned and met many choices


def test_a_replayed_relaxation_equals_a_fresh_one() -> None:
    board = random_board(9, 16, 36, np.random.default_rng(3))
    search = PairingSearch(board)
    parent = search.relax(search.possible)
    rng = np.random.default_rng(0)
    differ = 0
    for _ in range(40):
        child = search.possible.copy()
        for kind in rng.choice(search.n_kinds, size=4, replace=False):
            options = np.flatnonzero(search.choice_kind == kind)
            child[options] = False
            child[rng.choice(options)] = True
        replayed, fresh = search.relax(child, parent), search.relax(child)
        assert replayed.ok == fresh.ok
        assert (replayed.board == fresh.board).all()
        differ += replayed is not parent
    assert differ > 5  # most children change the run somewhere


@pytest.mark.parametrize("counts", [(6, 4, 4, 2), (8, 4, 2, 2), (10, 2, 2, 2)])
def test_proofs_agree_with_exhaustive_search_for_larger_kinds(counts: tuple[int, ...]) -> None:
    """Kinds of 6 and 8 tiles go through the pairing search, of 10 through the partner search."""
    tiles = np.repeat(np.arange(1, len(counts) + 1), counts).astype(np.int16)
    outcomes = []
    for seed in range(25):
        board = np.random.default_rng(seed).permutation(tiles).reshape(4, 4)
        result = plan(board, max_seconds=None, node_limit=100_000)
        assert result.status != "gave_up"
        assert result.cleared == exhaustive(board)
        outcomes.append(result.cleared)
        if result.cleared:
            for move in result.moves:
                assert move in set(removable_pairs(board))
                board = remove(board, move, "none")
            assert not board.any()
    assert any(outcomes)


def test_a_prior_changes_the_order_never_the_answer() -> None:
    """Any score per pair (here random, as an untrained network gives) orders the pairings
    the search tries: the verdicts stay exhaustive search's, the clears stay clears, and
    the order does change the search on some boards."""
    tiles = np.repeat(np.arange(1, 5), (6, 4, 4, 2)).astype(np.int16)
    cells = 16
    differ = 0
    for seed in range(25):
        board = np.random.default_rng(seed).permutation(tiles).reshape(4, 4)
        prior = np.random.default_rng(100 + seed).normal(size=cells * (cells - 1) // 2)
        plain = plan(board, max_seconds=None, node_limit=100_000)
        ordered = plan(board, max_seconds=None, node_limit=100_000, prior=prior)
        assert ordered.status == plain.status == ("cleared" if exhaustive(board) else "unsolvable")
        differ += ordered.moves != plain.moves or ordered.nodes != plain.nodes
        for move in ordered.moves:
            assert move in set(removable_pairs(board))
            board = remove(board, move, "none")
        assert not ordered.cleared or not board.any()
    assert differ > 0


def test_the_benchmarks_hardest_deal_is_proved_unsolvable() -> None:
    """Deal 46 of benchmarks/pikachu_planner.py: no playout clears it, no proof came in 300 s
    before the pairing search; now it is proved in seconds."""
    board = random_board(9, 16, 36, np.random.default_rng(46))
    assert plan(board, max_seconds=None).status == "unsolvable"
