"""Lines98's registered ids and potential (see :mod:`grid_envs.core.spec`)."""

from grid_envs.core.spec import GameSpec, IdSpec, PotentialSpec

ENV = "grid_envs.lines98.env:Lines98Env"
VECTOR = "grid_envs.lines98.vector:Lines98VectorEnv"

SPEC = GameSpec(
    name="lines98",
    ids=(
        IdSpec("GridGames/Lines98-v0", ENV, 10_000, {},
               "Lines98 (Color Lines), 9x9 with 7 colours, lines of 5, 3 balls announced a turn",
               VECTOR),
        IdSpec("GridGames/Lines98-Small-v0", ENV, 200,
               {"rows": 6, "cols": 6, "colours": 3, "line_length": 4, "initial": 3, "spawn": 2,
                "target_score": 100},
               "Lines98 on a 6x6 board, 3 colours, lines of 4, 2 balls a turn; won at 100 points",
               VECTOR),
    ),
    id_pattern="GridGames/Lines98*",
    bench_id="GridGames/Lines98-v0",
    potentials={"lines": PotentialSpec("grid_envs.lines98.heuristic:lines_potential")},
    title="Lines98",
    agents="agents.games.lines98:AGENTS",
    picture_agent="greedy",
)  # fmt: skip
