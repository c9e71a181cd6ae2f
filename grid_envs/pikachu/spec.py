"""Pikachu's registered ids and potential (see :mod:`grid_envs.core.spec`)."""

from grid_envs.core.spec import GameSpec, IdSpec, PotentialSpec

ENV = "grid_envs.pikachu.env:PikachuEnv"
VECTOR = "grid_envs.pikachu.vector:PikachuVectorEnv"

SPEC = GameSpec(
    name="pikachu",
    ids=(
        IdSpec("GridGames/Pikachu-v0", ENV, 400,
               {"rows": 9, "cols": 16, "kinds": 36, "on_stuck": "end"},
               "Pikachu (Onet), the classic 9x16 board of 36 kinds x 4; a stuck board is lost",
               VECTOR),
        IdSpec("GridGames/Pikachu-Shuffle-v0", ENV, 400,
               {"rows": 9, "cols": 16, "kinds": 36, "on_stuck": "shuffle"},
               "Pikachu (Onet), 9x16, reshuffled when stuck: forgiving, every agent clears it",
               VECTOR),
        IdSpec("GridGames/Pikachu-Small-v0", ENV, 100, {"rows": 6, "cols": 6, "kinds": 9},
               "Pikachu (Onet) on a 6x6 board of 9 kinds x 4, for quick learning", VECTOR),
    ),
    id_pattern="GridGames/Pikachu*",
    bench_id="GridGames/Pikachu-v0",
    potentials={"mobility": PotentialSpec("grid_envs.pikachu.solver:mobility_potential")},
    title="Pikachu (Onet)",
    agents="agents.games.pikachu:AGENTS",
    picture_agent="planner",
)  # fmt: skip
