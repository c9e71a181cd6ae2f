"""The Knight's registered ids and potential (see :mod:`grid_envs.core.spec`)."""

from grid_envs.core.spec import GameSpec, IdSpec, PotentialSpec

ENV = "grid_envs.knight.env:KnightEnv"
VECTOR = "grid_envs.knight.vector:KnightVectorEnv"

SPEC = GameSpec(
    name="knight",
    ids=(
        IdSpec("GridGames/Knight-v0", ENV, 400, {"rows": 9, "cols": 9},
               "The Knight, a generated 9x9 maze with monsters; energy = the cheapest route's "
               "cost", VECTOR),
        IdSpec("GridGames/Knight-Large-v0", ENV, 2500, {"rows": 25, "cols": 25},
               "The Knight, a generated 25x25 maze with monsters and loops", VECTOR),
    ),
    id_pattern="GridGames/Knight*",
    bench_id="GridGames/Knight-v0",
    potentials={
        "distance": PotentialSpec(
            "grid_envs.knight.solver:distance_potential",
            batch="grid_envs.knight.vector:distance_potentials",
            field="grid_envs.knight.solver:distance_field",
            batch_field="grid_envs.knight.vector:distance_fields",
        )
    },
    title="The Knight",
    agents="agents.games.knight:AGENTS",
    writer="grid_envs.knight.files:write_generated",
    solver="grid_envs.knight.files:solve_levels",
    picture_agent="dijkstra",
)  # fmt: skip
