"""Sokoban's registered ids and potentials (see :mod:`grid_envs.core.spec`)."""

from grid_envs.core.spec import GameSpec, IdSpec, PotentialSpec

ENV = "grid_envs.sokoban.env:SokobanEnv"
VECTOR = "grid_envs.sokoban.vector:SokobanVectorEnv"

SPEC = GameSpec(
    name="sokoban",
    ids=(
        IdSpec("GridGames/Sokoban-v0", ENV, 120, {"rows": 10, "cols": 10, "num_boxes": 4},
               "Sokoban, generated 10x10 rooms with 4 boxes (Boxoban conditions)", VECTOR),
        IdSpec("GridGames/Sokoban-Small-v0", ENV, 60, {"rows": 7, "cols": 7, "num_boxes": 2},
               "Sokoban, generated 7x7 rooms with 2 boxes, for quick experiments", VECTOR),
        IdSpec("GridGames/SokobanPush-v0", "grid_envs.sokoban.push_env:SokobanPushEnv", 80,
               {"rows": 10, "cols": 10, "num_boxes": 4},
               "Sokoban with one action per push (box cell x direction); the player walks "
               "by BFS"),  # no native batch: Gymnasium's SyncVectorEnv
    ),
    id_pattern="GridGames/Sokoban*",
    bench_id="GridGames/Sokoban-v0",
    potentials={
        "distance": PotentialSpec("grid_envs.sokoban.rules:distance_potential",
                                  batch="grid_envs.sokoban.vector:distance_potentials"),
        "boxes": PotentialSpec("grid_envs.sokoban.rules:boxes_potential",
                               batch="grid_envs.sokoban.vector:boxes_potentials"),
        "matching": PotentialSpec("grid_envs.sokoban.solver:matching_potential"),
        "solver": PotentialSpec("grid_envs.sokoban.solver:solver_potential"),
    },
    title="Sokoban",
    agents="agents.games.sokoban:AGENTS",
    writer="grid_envs.sokoban.files:write_generated",
    solver="grid_envs.sokoban.files:solve_levels",
    picture_agent="solver",
)  # fmt: skip
