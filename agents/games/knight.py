"""The Knight's algorithmic baseline: follow Dijkstra's distances to the exit."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, Thought
from agents.games.spec import AgentsSpec
from agents.nets.registry import register_policy
from agents.registry import register_agent
from grid_envs.core.base_env import GridEnv
from grid_envs.core.grid import DIRECTIONS
from grid_envs.knight.rules import entry_cost
from grid_envs.knight.solver import cheapest_route, exit_distances
from grid_envs.knight.state import ACTION_BITS

# What `grid-games train` starts from (AGENTS.training): the registered generated mazes with
# the value-iteration policy, which can compute a maze's distances (a dense head cannot);
# `compare` (AGENTS.compare) teaches it with Dijkstra's moves.

register_policy("maze-vi", "value iteration over the maze (the Knight's default)",
                "agents.nets.board:MazeValueExtractor")  # fmt: skip


def _cell_kwargs(env_id: str, actions: int) -> dict[str, Any]:
    from grid_envs.knight.rules import KNIGHT_PLANE

    if actions != 4 or not env_id.startswith("GridGames/Knight"):
        raise ValueError(f"the knight-cell policy reads the Knight's planes; {env_id} is not his")
    return {"actions": actions, "player_planes": (KNIGHT_PLANE,)}


register_policy(
    "knight-cell", "the moves' logits read at the knight's cell off a CNN that covers the maze",
    "agents.nets.board:PlayerLogitsExtractor", _cell_kwargs,
)  # fmt: skip

TRAINING: dict[str, dict[str, Any]] = {
    "GridGames/Knight-v0": {"policy": "maze-vi", "shaping": "distance"},
}
COMPARE: dict[str, dict[str, Any]] = {
    "GridGames/Knight-v0": {"teacher": "dijkstra", "teacher_states": 6_000, "timesteps": 10_000,
                            "search": {"simulations": 16, "episodes": 100}},
}  # fmt: skip
SEARCH: dict[str, dict[str, Any]] = {"GridGames/Knight*": {"variant": "gumbel", "simulations": 16}}

KNIGHT_IDS = ("GridGames/Knight*",)


class DijkstraAgent(Agent):
    """Always steps onto a cheapest route, so it escapes with exactly the energy it has.

    From the knight's cell ``u`` it takes a move to a neighbour ``v`` with
    ``price(v) + dist(v) == dist(u)``; among several it prefers one holding an item.
    """

    name = "dijkstra"

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        s: Any = env.game_state()
        level = s.level
        dist = exit_distances(level)
        r, c = s.knight
        here = dist[r, c]
        best, best_key = None, None
        for action, bit in enumerate(ACTION_BITS):
            if not level.cells[r, c] & bit:
                continue
            dr, dc = DIRECTIONS[action]
            v = (r + dr, c + dc)
            price = entry_cost(bool(level.monsters[v]), level.monster_cost)
            key = (price + dist[v] - here, not s.items[v])  # on a cheapest route, items first
            if best_key is None or key < best_key:
                best, best_key = action, key
        assert best is not None
        return best

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """The cheapest route from the knight to the exit (Dijkstra's distances read
        forward from the knight's cell), its cost and the energy the knight has."""
        s: Any = env.game_state()
        route = [tuple(s.knight)]
        for action in cheapest_route(s.level, tuple(s.knight)):
            (r, c), (dr, dc) = route[-1], DIRECTIONS[action]
            route.append((r + dr, c + dc))
        left = int(exit_distances(s.level)[s.knight])
        return Thought(path=route, facts={"cheapest route left": left, "energy": int(s.energy)})


register_agent("dijkstra", DijkstraAgent, KNIGHT_IDS, "follows Dijkstra's cheapest route")

AGENTS = AgentsSpec(
    "knight",
    training=TRAINING,
    compare=COMPARE,
    search=SEARCH,
)
