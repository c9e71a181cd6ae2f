"""Minesweeper: open every safe cell (source article: flood fill, "loang"); the solver sees
only what a player sees and weighs the frontier's mine placements exactly."""

from typing import TYPE_CHECKING

from grid_envs.core.spec import lazy_exports

if TYPE_CHECKING:
    from grid_envs.minesweeper.env import MinesweeperEnv
    from grid_envs.minesweeper.solver import MinesweeperSolver
    from grid_envs.minesweeper.state import MinesweeperState

# the names below load their modules on first use: ``import grid_envs`` reads this
# package's spec only
__getattr__ = lazy_exports(
    __name__,
    {
        "MinesweeperEnv": "env",
        "MinesweeperSolver": "solver",
        "MinesweeperState": "state",
    },
)

__all__ = ["MinesweeperEnv", "MinesweeperSolver", "MinesweeperState"]
