"""Minesweeper's algorithmic baseline: the logic and probability solver as an agent."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, Thought
from agents.games.spec import AgentsSpec
from agents.registry import register_agent
from grid_envs.core.base_env import GridEnv
from grid_envs.core.grid import mirrored_cells
from grid_envs.minesweeper import endgame
from grid_envs.minesweeper.solver import HIDDEN, MinesweeperSolver

# What `grid-games train` starts from (AGENTS.training): a reveal's logit is the CNN's output
# on its cell (far above a dense head: docs/training.md), on the 6x6 board with 4 mines of
# the published DQN results; `compare` (AGENTS.compare) teaches it with the solver's moves
TRAINING: dict[str, dict[str, Any]] = {
    "GridGames/Minesweeper-v0": {
        "env_kwargs": {"rows": 6, "cols": 6, "mines": 4},
        "policy": "cells",
    },
}
COMPARE: dict[str, dict[str, Any]] = {
    "GridGames/Minesweeper-v0": {"teacher": "solver", "teacher_states": 10_000,
                                 "timesteps": 60_000,
                                 "search": {"simulations": 32, "episodes": 100}},
}  # fmt: skip
# Gumbel MCTS over boards drawn from the belief (agents.search.tree): 64 simulations a move
SEARCH: dict[str, dict[str, Any]] = {
    "GridGames/Minesweeper*": {"variant": "gumbel", "simulations": 64}
}

# the board's symmetries, for cloning (agents.train.cloning.ActionMap): mines are placed
# uniformly and the first click is safe wherever it lands, so the rules know no orientation;
# a cell's reveal (and its flag) goes where the cell goes
SYMMETRIES = {"GridGames/Minesweeper-v0": mirrored_cells}

MINESWEEPER_IDS = ("GridGames/Minesweeper*",)


def view_from_observation(observation: np.ndarray) -> np.ndarray:
    """What a player sees, (rows, cols) int: -1 hidden, else the number shown."""
    obs = np.asarray(observation).astype(np.int16)  # uint8 would wrap -1 round to 255
    if obs.ndim == 3:  # planes: hidden, numbers 0-8, (flags)
        numbers = obs[1:10].argmax(axis=0)
        return np.where(obs[0] == 1, HIDDEN, numbers)
    if obs.ndim == 2:  # compact: 0-8 shown, 9 hidden, 10 flagged
        return np.where(obs >= 9, HIDDEN, obs)
    raise ValueError(f"the solver reads planes or compact observations, got shape {obs.shape}")


class MinesweeperSolverAgent(Agent):
    """Sure moves, then exact probabilities; it reads only the observation.

    Besides the observation it uses what any player is told: the board size, the number of
    mines and the first-click rule.
    """

    name = "solver"

    def __init__(self, env: Any = None, seed: int | None = None, end_game: bool = True) -> None:
        self._solvers: dict[int, MinesweeperSolver] = {}
        self.end_game = end_game  # False: guess by the rule of thumb to the last cell
        super().__init__(env, seed)

    def reset(self) -> None:
        for solver in self._solvers.values():
            solver.reset()

    def _solver(self, env: GridEnv) -> MinesweeperSolver:
        solver = self._solvers.get(id(env))
        if solver is None:
            e: Any = env
            solver = MinesweeperSolver(
                e.rows, e.cols, e.num_mines, e.first_click, end_game=self.end_game
            )
            self._solvers[id(env)] = solver
        return solver

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        return self._solver(env).act(view_from_observation(observation))

    def last_choice(self, env: GridEnv) -> str | None:
        """Which of the solver's rules chose its last move on ``env`` (one of
        :data:`~grid_envs.minesweeper.solver.CHOICES`; None before its first)."""
        return self._solver(env).last_choice

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """Each hidden cell's exact chance of a mine, given the numbers in view and the
        mines it has proved (the solver's own reckoning, worked out again for the board in
        view), which of its rules chose the move, the cells proved safe still to reveal,
        and, where few enough layouts are left to search the end game, its chance of
        winning with best play."""
        solver = self._solver(env)
        view = view_from_observation(observation)
        flat = view.ravel().tolist()
        heat = np.full(view.shape, np.nan)
        if all(v == HIDDEN for v in flat):  # the first click: nothing known but the count
            heat[:] = solver.mines / solver.size
        else:
            for cell, p in solver.probabilities(flat).items():
                heat.flat[cell] = p
            for cell in solver.known_mines:
                heat.flat[cell] = 1.0
        sure = sum(view.flat[c] == HIDDEN for c in solver.queue)
        facts: dict[str, Any] = {
            "chosen by": solver.last_choice,
            "mines proved": len(solver.known_mines),
            "safe cells queued": sure,
        }
        if not all(v == HIDDEN for v in flat):  # few layouts left: its end game's odds
            found = endgame.best_cell(solver, flat)
            if found is not None:
                facts["wins with best play"] = round(found[1], 3)
        return Thought(heat=heat, heat_name="mine probability", facts=facts)

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        """The cell it reveals, and with it every hidden cell it has proved safe (any order
        of the sure cells wins alike); a guess stands alone."""
        solver = self._solver(env)
        view = view_from_observation(observation).ravel()
        cell = solver.act(view)
        sure = [c for c in solver.queue if view[c] == HIDDEN]
        return cell, self.one_hot(env, [cell, *sure])


register_agent(
    "solver", MinesweeperSolverAgent, MINESWEEPER_IDS, "sure moves, then exact probabilities"
)

AGENTS = AgentsSpec(
    "minesweeper",
    training=TRAINING,
    compare=COMPARE,
    search=SEARCH,
    symmetries=SYMMETRIES,
)
