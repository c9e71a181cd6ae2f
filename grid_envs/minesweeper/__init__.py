"""Minesweeper: open every safe cell (source article: flood fill, "loang"); the solver sees
only what a player sees and weighs the frontier's mine placements exactly."""

from grid_envs.minesweeper.env import MinesweeperEnv
from grid_envs.minesweeper.solver import MinesweeperSolver
from grid_envs.minesweeper.state import MinesweeperState

__all__ = ["MinesweeperEnv", "MinesweeperSolver", "MinesweeperState"]
