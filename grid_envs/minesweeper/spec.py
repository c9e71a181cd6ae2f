"""Minesweeper's registered ids (see :mod:`grid_envs.core.spec`)."""

from grid_envs.core.spec import GameSpec, IdSpec

ENV = "grid_envs.minesweeper.env:MinesweeperEnv"
VECTOR = "grid_envs.minesweeper.vector:MinesweeperVectorEnv"

SPEC = GameSpec(
    name="minesweeper",
    ids=(
        IdSpec("GridGames/Minesweeper-v0", ENV, 162, {"rows": 9, "cols": 9, "mines": 10},
               "Minesweeper beginner, 9x9 with 10 mines, safe first click", VECTOR),
        IdSpec("GridGames/Minesweeper-Intermediate-v0", ENV, 512,
               {"rows": 16, "cols": 16, "mines": 40},
               "Minesweeper intermediate, 16x16 with 40 mines, safe first click", VECTOR),
        IdSpec("GridGames/Minesweeper-Expert-v0", ENV, 960,
               {"rows": 16, "cols": 30, "mines": 99},
               "Minesweeper expert, 16 rows x 30 cols with 99 mines, safe first click", VECTOR),
    ),
    id_pattern="GridGames/Minesweeper*",
    bench_id="GridGames/Minesweeper-v0",
    title="Minesweeper",
    agents="agents.games.minesweeper:AGENTS",
    picture_agent="solver",
)  # fmt: skip
