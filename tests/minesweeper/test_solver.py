"""The Minesweeper solver: exact probabilities, sound deductions, wins, observation only."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from agents import make_agent
from agents.games.minesweeper import view_from_observation
from grid_envs.minesweeper import endgame
from grid_envs.minesweeper.env import MinesweeperEnv
from grid_envs.minesweeper.solver import CHOICES, HIDDEN, MinesweeperSolver


def brute_force(view: np.ndarray, mines: int) -> dict[int, float]:
    """P(mine) of every hidden cell: enumerate every layout consistent with the view."""
    rows, cols = view.shape
    flat = view.ravel()
    hidden = [i for i in range(flat.size) if flat[i] == HIDDEN]
    numbered = [(i, flat[i]) for i in range(flat.size) if flat[i] != HIDDEN]
    nbrs = {
        i: [
            (i // cols + dr) * cols + (i % cols + dc)
            for dr in (-1, 0, 1)
            for dc in (-1, 0, 1)
            if (dr or dc) and 0 <= i // cols + dr < rows and 0 <= i % cols + dc < cols
        ]
        for i, _ in numbered
    }
    tally = dict.fromkeys(hidden, 0)
    total = 0
    for combo in itertools.combinations(hidden, mines):
        chosen = set(combo)
        if all(sum(j in chosen for j in nbrs[i]) == v for i, v in numbered):
            total += 1
            for c in combo:
                tally[c] += 1
    return {c: tally[c] / total for c in hidden}


def random_position(seed: int, rows: int = 5, cols: int = 5, mines: int = 5) -> tuple:
    """A game played a few random safe reveals in (the test peeks to stay alive)."""
    env = MinesweeperEnv(rows=rows, cols=cols, mines=mines)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(int(rng.integers(1, 4))):
        s = env.state
        if s.placed:
            options = np.flatnonzero((~s.mines & ~s.revealed).ravel())
        else:
            options = np.arange(rows * cols)
        obs, _, done, _, _ = env.step(int(rng.choice(options)))
        if done:
            return None
    return view_from_observation(obs), env


@pytest.mark.parametrize("seed", range(40))
def test_probabilities_equal_brute_force(seed: int) -> None:
    position = random_position(seed)
    if position is None:
        return
    view, _env = position
    solver = MinesweeperSolver(5, 5, 5)
    expected = brute_force(view, 5)
    got = solver.probabilities(view.ravel().tolist())
    assert set(got) == set(expected)
    for cell, p in expected.items():
        assert got[cell] == pytest.approx(p, abs=1e-9), cell


def test_deductions_are_sound_and_a_proved_mine_is_never_revealed() -> None:
    for seed in range(150):
        env = gym.make("GridGames/Minesweeper-Intermediate-v0")
        agent = make_agent("solver", env, seed=seed)
        obs, _ = env.reset(seed=seed)
        solver = None
        done = False
        while not done:
            action, _ = agent.predict(obs)
            solver = solver or next(iter(agent._solvers.values()))
            s = env.unwrapped.state
            assert int(action) not in solver.known_mines
            if s.placed:
                assert all(s.mines.ravel()[m] for m in solver.known_mines)  # proofs hold
                for cell in solver.queue:  # cells proved safe are safe
                    assert not s.mines.ravel()[cell]
            obs, _, done, _, _ = env.step(int(action))


@pytest.mark.parametrize(("rows", "cols", "rule", "cell"), [
    (9, 9, "zero", (2, 2)), (16, 16, "zero", (2, 2)), (16, 30, "zero", (3, 3)),
    (4, 4, "zero", (1, 1)),
    (3, 3, "zero", (1, 1)), (9, 9, "safe", (0, 0)),
])  # fmt: skip
def test_the_first_click_goes_where_the_rule_makes_it_best(
    rows: int, cols: int, rule: str, cell: tuple[int, int]
) -> None:
    solver = MinesweeperSolver(rows, cols, 3, first_click=rule)
    assert divmod(solver.opening(), cols) == cell


def _guesses(
    board: tuple[int, int, int], games: int, **options: Any
) -> Iterator[tuple[MinesweeperSolver, list[int], int, dict[int, float]]]:
    """Every guess the solver makes in ``games`` games (seeds 0 on) of ``board`` (rows,
    cols, mines) under ``zero``: the solver, the view as a flat list, the cell it took and
    the chances of a mine it reckoned."""
    rows, cols, mines = board
    for seed in range(games):
        env = MinesweeperEnv(rows=rows, cols=cols, mines=mines, first_click="zero")
        obs, _ = env.reset(seed=seed)
        solver = MinesweeperSolver(rows, cols, mines, first_click="zero", **options)
        done = False
        while not done:
            flat = view_from_observation(obs).ravel().tolist()
            before = solver.last_probabilities
            cell = solver.act(view_from_observation(obs))
            probs = solver.last_probabilities
            if probs is not before and probs and min(probs.values()) > 0.0:
                yield solver, flat, cell, probs
            obs, _, done, _, _ = env.step(cell)


def test_a_guess_with_look_ahead_is_as_safe_as_the_safest_cell() -> None:
    """The look-ahead only chooses among the safest cells: at every guess of 100 games the
    cell taken has the least chance of a mine, or is one of an unavoidable 50/50, and its
    progress is a chance."""
    guesses = 0
    for solver, flat, cell, probs in _guesses((9, 9, 10), 100, lookahead=4):
        guesses += 1
        safest = probs[cell] == pytest.approx(min(probs.values()))
        assert safest or cell == solver.fifty_fifty(flat, probs)
        progress = solver._progress(flat, probs, cell)
        assert 0.0 <= progress <= 1.0 + 1e-9
    assert guesses >= 10


@pytest.mark.parametrize("reach", [True, False])
def test_the_look_ahead_weighs_the_safest_cells_a_number_lies_two_from(reach: bool) -> None:
    """Over 40 expert games, a rule-of-thumb guess outside the LOOKAHEAD safest cells
    (ranked by their odds of a zero) is one of the safest with a number in view two cells
    straight from it, and is taken only with ``reach``."""
    beyond = 0
    for solver, flat, cell, probs in _guesses((16, 30, 99), 40, reach=reach):
        if solver.last_choice != "rule of thumb":
            continue
        safest = min(probs.values())
        near = [c for c, p in probs.items() if p <= safest + 1e-9]
        near.sort(key=lambda c: (probs[c], -solver._clear(flat, probs, c), c))
        if cell in near[: solver.lookahead]:
            continue
        beyond += 1
        r, c = divmod(cell, solver.cols)
        two = [(r + 2, c), (r - 2, c), (r, c + 2), (r, c - 2)]
        assert cell in near and any(
            0 <= y < solver.rows and 0 <= x < solver.cols and flat[y * solver.cols + x] >= 0
            for y, x in two
        )
    assert (beyond > 0) == reach


def test_an_unavoidable_fifty_fifty_is_taken_before_a_safer_guess() -> None:
    """Cells (4, 5) and (5, 5) share one mine, and with (3, 5) proved a mine every number
    touches both or neither: the solver flips that coin before guessing one of the cells
    at 1/3 up the right-hand column."""
    view = np.array([
        [1, 1, 0, 1, -1, -1], [-1, 1, 0, 2, 3, -1], [1, 1, 0, 2, -1, -1],
        [1, 1, 0, 2, -1, -1], [-1, 1, 0, 1, 3, -1], [1, 1, 0, 0, 1, -1],
    ])  # fmt: skip
    solver = MinesweeperSolver(6, 6, 8, end_game=False)
    cell = solver.act(view)
    probs = solver.last_probabilities
    assert cell in (29, 35) and min(probs.values()) == pytest.approx(1 / 3)
    flat = view.ravel().tolist()
    layouts = endgame.placements(solver, flat, 10_000)
    assert layouts is not None
    _assert_indistinguishable(solver, flat, layouts, cell)


def test_every_fifty_fifty_the_solver_names_is_one() -> None:
    """Wherever the solver takes a 50/50 in 200 games of 16x16 with 40 mines (checked
    where at most 20,000 layouts fit the view), one of its two cells is a mine in every
    layout, and swapping them gives a layout that fits and shows every other hidden cell
    the same number: no reveal could ever tell them apart."""
    checked = 0
    for solver, flat, cell, probs in _guesses((16, 16, 40), 200, end_game=False):
        if cell == solver.fifty_fifty(flat, probs):
            layouts = endgame.placements(solver, flat, 20_000)
            if layouts is not None:
                _assert_indistinguishable(solver, flat, layouts, cell)
                checked += 1
    assert checked >= 10


def _assert_indistinguishable(
    solver: MinesweeperSolver, flat: list[int], layouts: list[int], a: int
) -> None:
    """``a`` and its partner (any hidden cell: the two share a number, not always a side)
    hold one mine in every layout, and swapping them maps the layouts onto themselves,
    every other hidden cell's number unchanged."""
    partners = [
        b for b, v in enumerate(flat)
        if v == HIDDEN and b != a and all(((m >> a) ^ (m >> b)) & 1 for m in layouts)
    ]  # fmt: skip
    assert partners
    b = partners[0]
    known = sum(1 << m for m in solver.known_mines)
    fits = set(layouts)
    for mask in layouts:
        swapped = mask ^ (1 << a) ^ (1 << b)
        assert swapped in fits
        for c, v in enumerate(flat):
            if v == HIDDEN and c not in (a, b) and not (mask | known) >> c & 1:
                shown = [(m | known) for m in (mask, swapped)]
                counts = [sum(m >> j & 1 for j in solver.neighbours[c]) for m in shown]
                assert counts[0] == counts[1]


def test_layouts_with_some_cells_fixed_are_counted_exactly() -> None:
    """``layouts_with``: at guesses of 60 games of 16x16 with 40 mines (where at most 20,000
    layouts fit the view), the layouts with one to three hidden cells fixed as mines or
    clear, counted from the view's own parts (read off each part's list of placements) and
    afresh (the parts walked again with the cells fixed), are the listed layouts that
    agree (with none fixed, all of them)."""
    rng = np.random.default_rng(5)
    checked = 0
    for solver, flat, _, _ in _guesses((16, 16, 40), 60, end_game=False):
        layouts = endgame.placements(solver, flat, 20_000)
        if layouts is None:
            continue
        hidden = [c for c, v in enumerate(flat) if v == HIDDEN and c not in solver.known_mines]
        assert solver.layouts_with(flat, set(), set()) == len(layouts)
        for _ in range(3):
            fixed = rng.choice(
                hidden, size=min(len(hidden), int(rng.integers(1, 4))), replace=False
            )
            mines = {int(c) for c in fixed if rng.random() < 0.5}
            clear = {int(c) for c in fixed} - mines
            want = sum(
                all(m >> c & 1 for c in mines) and not any(m >> c & 1 for c in clear)
                for m in layouts
            )
            assert solver.layouts_with(flat, mines, clear) == want
            assert solver.layouts_with(flat, mines, clear, solver.parts) == want
            checked += 1
    assert checked >= 30


def test_every_pseudo_fifty_fifty_the_solver_names_is_one() -> None:
    """Wherever the solver names a pseudo-50/50 in 150 games of 16x16 with 40 mines (the
    end game guessed, so that it comes up often; checked where at most 20,000 layouts fit
    the view), every layout in which the cell holds a mine has a twin that fits, the
    pattern's mines swapped (a pair across or down, a 2x2 block's diagonals), in which
    every cell clear in both shows the same number: that layout could only be told from
    its twin by revealing a cell of the pattern."""
    checked = 0
    for solver, flat, _, probs in _guesses((16, 16, 40), 150, end_game=False):
        cell = solver.pseudo_fifty_fifty(flat, probs)
        if cell is None:
            continue
        layouts = endgame.placements(solver, flat, 20_000)
        if layouts is None:
            continue
        fits = set(layouts)
        known = sum(1 << m for m in solver.known_mines)
        for mask in (m for m in layouts if m >> cell & 1):
            assert any(
                _twin_fits(solver, flat, mask, known, fits, ones + others)
                for all_ones, all_others, _ in solver.patterns
                for ones, others in zip(all_ones.tolist(), all_others.tolist(), strict=True)
                if cell in ones + others
            )
        checked += 1
    assert checked >= 5


def _twin_fits(
    solver: MinesweeperSolver,
    flat: list[int],
    mask: int,
    known: int,
    fits: set[int],
    tiles: list[int],
) -> bool:
    """Whether swapping which of the pattern's ``tiles`` hold mines in layout ``mask``
    (half of them do, on one side) gives a layout that fits and shows every cell clear in
    both the same number."""
    held = [mask >> t & 1 for t in tiles]
    if sum(held) * 2 != len(tiles) or held[: len(tiles) // 2] not in (
        [1] * (len(tiles) // 2),
        [0] * (len(tiles) // 2),
    ):
        return False
    swapped = mask
    for t in tiles:
        swapped ^= 1 << t
    if swapped not in fits:
        return False
    for c, v in enumerate(flat):
        if v == HIDDEN and not ((mask | swapped | known) >> c & 1):
            counts = [
                sum((m | known) >> j & 1 for j in solver.neighbours[c]) for m in (mask, swapped)
            ]
            if counts[0] != counts[1]:
                return False
    return True


def test_progress_counts_a_number_that_proves_a_neighbour_safe() -> None:
    """A hidden cell beside a revealed 1 whose one mine is known: whatever the cell shows,
    the rules then prove more cells safe, so its progress is 1."""
    view = np.full((3, 4), HIDDEN)
    view[0, 0] = 1  # its hidden neighbours: (0, 1), (1, 0), (1, 1)
    solver = MinesweeperSolver(3, 4, 2)
    solver.known_mines = {1 * 4 + 0}  # (1, 0) is the 1's mine
    flat = view.ravel().tolist()
    probs = {c: 0.2 for c in range(12) if flat[c] == HIDDEN and c != 4}
    # (0, 1) is safe by the 1; reveal (1, 1): its number never leaves (0, 1) unproved
    assert solver._progress(flat, probs, 5) == pytest.approx(1.0, abs=1e-3)  # rare numbers skipped


def test_every_move_names_the_rule_that_chose_it() -> None:
    """``last_choice`` over 60 expert games (the test peeks at the mines): the first click
    is the opening, a move called sure is never a mine, a 50/50 is an even chance, an end
    game's move is the end game's best cell, and the rules named are the solver's."""
    env = gym.make("GridGames/Minesweeper-Expert-v0", first_click="zero")
    base: Any = env.unwrapped
    solver = MinesweeperSolver(base.rows, base.cols, base.num_mines, "zero")
    seen: set[str] = set()
    for seed in range(60):
        obs, _ = env.reset(seed=seed)
        done, first = False, True
        while not done:
            view = view_from_observation(obs)
            cell = solver.act(view)
            choice = solver.last_choice
            assert choice in CHOICES and (choice == "opening") == first
            if choice == "sure":
                assert not base.state.mines.flat[cell]
            if choice == "50/50":
                assert solver.last_probabilities[cell] == pytest.approx(0.5)
            if choice == "end game":  # the end game's own best cell, worked out again
                assert (cell, solver.win_chance) == endgame.best_cell(solver, view.ravel().tolist())
            seen.add(choice)
            obs, _, done, _, _ = env.step(cell)
            first = False
    assert {"opening", "sure", "end game", "rule of thumb"} <= seen


def test_the_benchmark_plays_only_the_presets_it_is_given() -> None:
    """``benchmarks/minesweeper_solver.py --presets``: one row a rule and preset asked for,
    the games played; a preset it does not know is refused by name."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "minesweeper_solver.py"
    command = [sys.executable, str(script), "--games", "3", "--rules", "zero"]
    done = subprocess.run(
        [*command, "--presets", "beginner"], capture_output=True, text=True, check=True
    )
    rows = [line.split() for line in done.stdout.splitlines()[1:]]
    assert [row[:3] for row in rows] == [["zero", "beginner", "3"]]
    refused = subprocess.run([*command, "--presets", "huge"], capture_output=True, text=True)
    assert refused.returncode == 2 and "invalid choice: 'huge'" in refused.stderr


def test_the_benchmark_counts_each_lost_game_once_by_its_rule() -> None:
    """``--losses``: under the row, the games lost by the rule that chose the losing move;
    they add up to the games the row lost."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "minesweeper_solver.py"
    done = subprocess.run(
        [sys.executable, str(script), "--games", "40", "--seed", "100000", "--rules", "zero",
         "--presets", "intermediate", "--losses"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    row, lost_by = done.stdout.splitlines()[1:]
    games, won = int(row.split()[2]), int(row.split()[3])
    assert lost_by.startswith("  lost by: ")
    counts = [part.rsplit(" (", 1)[0].rsplit(" ", 1) for part in lost_by[11:].split(", ")]
    assert all(choice in CHOICES for choice, _ in counts)
    assert sum(int(n) for _, n in counts) == games - won > 0
