"""GridGames: classic grid games as Gymnasium environments.

Importing this package registers every ``GridGames/*`` id, so that
``gymnasium.make("GridGames/Sokoban-v0")`` works (and ``"grid_envs:GridGames/Sokoban-v0"``
without an import). The games themselves are imported only when an env is made.
"""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import register, registry

__version__ = "0.2.0"

# id -> (entry point, max_episode_steps, kwargs, one-line summary for `grid-games list`)
ENVS: dict[str, tuple[str, int | None, dict[str, Any], str]] = {
    "GridGames/Sokoban-v0": (
        "grid_envs.sokoban.env:SokobanEnv", 120, {"rows": 10, "cols": 10, "num_boxes": 4},
        "Sokoban, generated 10x10 rooms with 4 boxes (Boxoban conditions)",
    ),
    "GridGames/Sokoban-Small-v0": (
        "grid_envs.sokoban.env:SokobanEnv", 60, {"rows": 7, "cols": 7, "num_boxes": 2},
        "Sokoban, generated 7x7 rooms with 2 boxes, for quick experiments",
    ),
    "GridGames/SokobanPush-v0": (
        "grid_envs.sokoban.push_env:SokobanPushEnv", 80, {"rows": 10, "cols": 10, "num_boxes": 4},
        "Sokoban with one action per push (box cell x direction); the player walks by BFS",
    ),
    "GridGames/Minesweeper-v0": (
        "grid_envs.minesweeper.env:MinesweeperEnv", 162, {"rows": 9, "cols": 9, "mines": 10},
        "Minesweeper beginner, 9x9 with 10 mines, safe first click",
    ),
    "GridGames/Minesweeper-Intermediate-v0": (
        "grid_envs.minesweeper.env:MinesweeperEnv", 512, {"rows": 16, "cols": 16, "mines": 40},
        "Minesweeper intermediate, 16x16 with 40 mines, safe first click",
    ),
    "GridGames/Minesweeper-Expert-v0": (
        "grid_envs.minesweeper.env:MinesweeperEnv", 960, {"rows": 16, "cols": 30, "mines": 99},
        "Minesweeper expert, 16 rows x 30 cols with 99 mines, safe first click",
    ),
    "GridGames/Knight-v0": (
        "grid_envs.knight.env:KnightEnv", 400, {"rows": 9, "cols": 9},
        "The Knight, a generated 9x9 maze with monsters; energy = the cheapest route's cost",
    ),
    "GridGames/Knight-Large-v0": (
        "grid_envs.knight.env:KnightEnv", 2500, {"rows": 25, "cols": 25},
        "The Knight, a generated 25x25 maze with monsters and loops",
    ),
    "GridGames/Pikachu-v0": (
        "grid_envs.pikachu.env:PikachuEnv", 400,
        {"rows": 9, "cols": 16, "kinds": 36, "on_stuck": "end"},
        "Pikachu (Onet), the classic 9x16 board of 36 kinds x 4; a stuck board is lost",
    ),
    "GridGames/Pikachu-Shuffle-v0": (
        "grid_envs.pikachu.env:PikachuEnv", 400,
        {"rows": 9, "cols": 16, "kinds": 36, "on_stuck": "shuffle"},
        "Pikachu (Onet), 9x16, reshuffled when stuck: forgiving, every agent clears it",
    ),
    "GridGames/Pikachu-Small-v0": (
        "grid_envs.pikachu.env:PikachuEnv", 100, {"rows": 6, "cols": 6, "kinds": 9},
        "Pikachu (Onet) on a 6x6 board of 9 kinds x 4, for quick learning",
    ),
    "GridGames/Lines98-v0": (
        "grid_envs.lines98.env:Lines98Env", 10_000, {},
        "Lines98 (Color Lines), 9x9 with 7 colours, lines of 5, 3 balls announced a turn",
    ),
    "GridGames/Lines98-Small-v0": (
        "grid_envs.lines98.env:Lines98Env", 200,
        {"rows": 6, "cols": 6, "colours": 3, "line_length": 4, "initial": 3, "spawn": 2,
         "target_score": 100},
        "Lines98 on a 6x6 board, 3 colours, lines of 4, 2 balls a turn; won at 100 points",
    ),
}  # fmt: skip


# entry point module -> its native batched env (``gymnasium.make_vec(...,
# vectorization_mode="vector_entry_point")``); SokobanPush falls back to Gymnasium's
VECTOR_ENTRY_POINTS = {
    "grid_envs.minesweeper.env": "grid_envs.minesweeper.vector:MinesweeperVectorEnv",
    "grid_envs.knight.env": "grid_envs.knight.vector:KnightVectorEnv",
    "grid_envs.sokoban.env": "grid_envs.sokoban.vector:SokobanVectorEnv",
    "grid_envs.lines98.env": "grid_envs.lines98.vector:Lines98VectorEnv",
    "grid_envs.pikachu.env": "grid_envs.pikachu.vector:PikachuVectorEnv",
}


def _register_all() -> None:
    for env_id, (entry_point, steps, kwargs, _) in ENVS.items():
        if env_id not in registry:
            # The env keeps its own time limit (``time_limit``, as MiniGrid's ``max_steps``)
            # rather than Gymnasium's TimeLimit wrapper: restore() rewinds the step count
            # with the rest of the state, and Sokoban's deadlock penalty is defined from it.
            kwargs = {**kwargs, "time_limit": steps}
            vector = VECTOR_ENTRY_POINTS.get(entry_point.split(":")[0])
            register(
                id=env_id, entry_point=entry_point, vector_entry_point=vector, kwargs=kwargs,
            )  # fmt: skip


_register_all()
