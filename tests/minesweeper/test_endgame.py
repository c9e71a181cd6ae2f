"""The end game searched exactly: its placements, its game tree, and its odds against play."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest

from agents.games.minesweeper import view_from_observation
from grid_envs.minesweeper import endgame
from grid_envs.minesweeper.solver import HIDDEN, MinesweeperSolver
from tests.minesweeper.test_solver import brute_force, random_position


def _reference(solver: MinesweeperSolver, cells: list[int], layouts: list[int]) -> dict[int, float]:
    """Each first cell's chance of winning with best play after it, from the game tree in
    full: every cell that is not a sure mine tried at every position, no shortcut for free
    reveals, no bound on a guess."""
    memo: dict[frozenset[int], float] = {}

    def win(group: list[int]) -> float:
        if len(group) == 1:
            return 1.0
        key = frozenset(group)
        if key not in memo:
            memo[key] = max(value(cell, group) for cell in cells if not _all_mines(cell, group))
        return memo[key]

    def value(cell: int, group: list[int]) -> float:
        around = sum(1 << j for j in solver.neighbours[cell])
        split: dict[int, list[int]] = {}
        for layout in group:
            if not layout >> cell & 1:
                split.setdefault((layout & around).bit_count(), []).append(layout)
        if len(split) == 1 and len(next(iter(split.values()))) == len(group):
            return 0.0  # a safe cell that tells nothing: no progress
        return sum(len(g) * win(g) for g in split.values()) / len(group)

    return {cell: value(cell, layouts) for cell in cells if not _all_mines(cell, layouts)}


def _all_mines(cell: int, layouts: list[int]) -> bool:
    return all(layout >> cell & 1 for layout in layouts)


@pytest.mark.parametrize("seed", range(30))
def test_placements_are_the_layouts_brute_force_finds(seed: int) -> None:
    position = random_position(seed)
    if position is None:
        return
    view, _ = position
    solver = MinesweeperSolver(5, 5, 5)
    found = endgame.placements(solver, view.ravel().tolist(), 10**6)
    assert found is not None and len(set(found)) == len(found)
    probs = brute_force(view, 5)
    for cell, p in probs.items():
        assert sum(m >> cell & 1 for m in found) / len(found) == pytest.approx(p)
    assert all(m.bit_count() == 5 for m in found)
    if len(found) > 2:  # a bound below the count gives up rather than cut the list
        assert endgame.placements(solver, view.ravel().tolist(), len(found) - 1) is None


def _end_game(
    seed: int, rows: int, cols: int, mines: int
) -> tuple[MinesweeperSolver, list[int], list[int]] | None:
    """A random position's solver, hidden cells and placements, where it has 2-400 of them."""
    position = random_position(seed, rows=rows, cols=cols, mines=mines)
    if position is None:
        return None
    solver = MinesweeperSolver(rows, cols, mines)
    flat = position[0].ravel().tolist()
    layouts = endgame.placements(solver, flat, 400)
    if layouts is None or len(layouts) < 2:
        return None
    return solver, solver.split(flat)[1], layouts


@pytest.mark.parametrize("seed", range(30))
def test_the_search_wins_as_often_as_the_whole_game_tree(seed: int) -> None:
    case = _end_game(seed, 4, 5, 4)
    if case is None:
        return
    solver, cells, layouts = case
    cell, win = endgame.EndGame(solver, cells, layouts, 10**6).best() or (-1, -1.0)
    values = _reference(solver, cells, layouts)
    assert win == pytest.approx(max(values.values()))
    assert values[cell] == pytest.approx(win)  # the cell it names is worth that much


class _Uncut(endgame.EndGame):
    """The search with every branch of every guess searched (nothing dropped)."""

    def _guess(self, position: int, shows: list[int], safe: int, beat: float) -> float | None:
        return super()._guess(position, shows, safe, float("-inf"))


@pytest.mark.parametrize("seed", range(30))
def test_dropping_a_guess_that_cannot_win_keeps_the_answer(seed: int) -> None:
    case = _end_game(seed, 5, 5, 5)
    if case is None:
        return
    solver, cells, layouts = case
    cut, uncut = (kind(solver, cells, layouts, 10**6) for kind in (endgame.EndGame, _Uncut))
    assert cut.best() == uncut.best()
    assert cut.positions <= uncut.positions


def test_too_many_positions_gives_up_and_the_solver_guesses_as_before() -> None:
    position = random_position(3, rows=5, cols=5, mines=5)
    assert position is not None
    view, _ = position
    solver = MinesweeperSolver(5, 5, 5)
    flat = view.ravel().tolist()
    layouts = endgame.placements(solver, flat, 10**6)
    assert layouts is not None and len(layouts) > 2
    assert endgame.EndGame(solver, solver.split(flat)[1], layouts, 1).best() is None


def test_the_chance_it_reckons_is_the_chance_it_wins() -> None:
    """Real games on the env: the first time each game's end is searched, the solver
    names its chance of winning with best play; over those games the wins match the mean
    of those chances (within three standard errors)."""
    env = gym.make("GridGames/Minesweeper-v0", first_click="zero")
    e = env.unwrapped
    chances, wins = [], []
    for seed in range(1500):
        solver = MinesweeperSolver(e.rows, e.cols, e.num_mines, "zero")
        obs, _ = env.reset(seed=seed)
        chance = None
        done, info = False, {}
        while not done:
            obs, _, term, trunc, info = env.step(solver.act(view_from_observation(obs)))
            done = term or trunc
            if chance is None and solver.win_chance is not None:
                chance = solver.win_chance
        if chance is not None:
            chances.append(chance)
            wins.append(float(info["is_success"]))
    assert len(chances) >= 50
    mean = float(np.mean(chances))
    spread = float(np.sqrt(np.sum(np.array(chances) * (1 - np.array(chances))))) / len(chances)
    assert abs(float(np.mean(wins)) - mean) < 3 * spread + 1e-9, (np.mean(wins), mean)
    assert 0.3 < mean < 1.0


def test_a_part_searched_alone_is_a_game_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wherever the solver searches one part of the frontier alone (160 expert games, where
    such parts come up mid-game): no hidden cell outside the part but a proved mine touches
    its cells, its layouts (found here by trying every assignment) all hold as many mines,
    and the cell it takes wins as often as the part's full game tree says the best cell
    does."""
    found: list[tuple[MinesweeperSolver, list[int], int, float]] = []  # (solver, view, cell, win)
    search = MinesweeperSolver.isolated_part

    def recorded(self: MinesweeperSolver, flat: list[int]) -> tuple[int, float] | None:
        best = search(self, flat)
        if best is not None:
            found.append((self, flat, *best))
        return best

    monkeypatch.setattr(MinesweeperSolver, "isolated_part", recorded)
    env = gym.make("GridGames/Minesweeper-Expert-v0", first_click="zero")
    e = env.unwrapped
    checked = 0
    for seed in range(140, 300):
        solver = MinesweeperSolver(e.rows, e.cols, e.num_mines, "zero")
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, term, trunc, _ = env.step(solver.act(view_from_observation(obs)))
            done = term or trunc
            for searched, flat, cell, win in found:
                cells, cons = next(p for p in searched.parts.parts if cell in p[0])
                inside = set(cells) | searched.known_mines
                assert all(
                    flat[j] != HIDDEN or j in inside for c in cells for j in searched.neighbours[c]
                )
                layouts = [
                    sum(1 << c for c, bit in zip(cells, bits, strict=True) if bit)
                    for bits in itertools.product((0, 1), repeat=len(cells))
                ]
                layouts = [m for m in layouts if all(_mines(m, cs) == n for cs, n in cons)]
                assert len({m.bit_count() for m in layouts}) == 1 and len(layouts) >= 2
                values = _reference(searched, cells, layouts)
                assert win == pytest.approx(max(values.values()))
                assert values[cell] == pytest.approx(win)
                checked += 1
            found.clear()
    assert checked >= 4


def _mines(layout: int, cells: frozenset[int]) -> int:
    return sum(layout >> c & 1 for c in cells)
