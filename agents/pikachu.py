"""Pikachu's baselines: a greedy rule and a planner that searches for a full clear."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register_agent
from grid_envs.core.base_env import GridEnv
from grid_envs.pikachu.paths import removable_with_lengths
from grid_envs.pikachu.rules import pair_to_action
from grid_envs.pikachu.solver import plan, remove

# The configuration `grid-games train` uses by default (agents.sb3.DEFAULTS): on Pikachu-v0 a
# pair's logit is read off the board (a dense head over its 10,296 pairs clones the planner no
# better than chance); on Pikachu-Small-v0, with gravity the order of removals matters (random
# clears 70%, the planner 99%); `compare` teaches Pikachu-v0 as registered (agents.sb3.COMPARE)
TRAINING: dict[str, dict[str, Any]] = {
    "GridGames/Pikachu-v0": {"policy": "pairs"},
    "GridGames/Pikachu-Small-v0": {
        "env_kwargs": {"rows": 6, "cols": 6, "kinds": 9, "on_stuck": "end", "gravity": "down"}
    },
}
COMPARE: dict[str, dict[str, Any]] = {  # the planner plays a deal in about 3 s: too slow to
    # evaluate on 100 deals here, or to label the learner's own states (it replans on each)
    "GridGames/Pikachu-v0": {"teacher": "planner", "teacher_states": 1_000, "dagger_rounds": 1,
                             "timesteps": 10_000, "skip_agents": ("planner",)},
}  # fmt: skip

PIKACHU_IDS = ("GridGames/Pikachu*",)


def shortest_pairs(board: np.ndarray) -> list[int]:
    """The actions of the removable pairs joined by the shortest path, in board order."""
    pairs, lengths = removable_with_lengths(board)
    if not pairs:
        return []
    shortest = min(lengths)
    ranked = sorted(zip(pairs, lengths, strict=True))
    return [pair_to_action(*pair, board.size) for pair, length in ranked if length == shortest]


def greedy_action(board: np.ndarray) -> int | None:
    """The removable pair with the shortest path (ties: the first in board order)."""
    best = shortest_pairs(board)
    return best[0] if best else None


class GreedyAgent(Agent):
    """Removes the pair joined by the shortest path."""

    name = "greedy"

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        action = greedy_action(env.game_state().board)
        return 0 if action is None else action

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        """The first of the pairs the shortest paths join, and all of them."""
        best = shortest_pairs(env.game_state().board) or [0]
        return best[0], self.one_hot(env, best)


class PlannerAgent(Agent):
    """Plans a full clear from the env's state (``time_limit`` seconds) and follows it.

    It replans when the board is not the one it expected (a reshuffle, gravity it did not
    plan for, a reset) and falls back to the greedy rule when the planner finds no clear.
    """

    name = "planner"

    def __init__(self, env: Any = None, seed: int | None = None, time_limit: float = 1.0) -> None:
        self.time_limit = time_limit
        self._plans: dict[int, tuple[list[int], list[bytes]]] = {}
        super().__init__(env, seed)

    def reset(self) -> None:
        self._plans.clear()

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        board = env.game_state().board
        e: Any = env
        actions, expected = self._plans.get(id(env), ([], []))
        if not actions or expected[0] != board.tobytes():
            actions, expected = [], []
            result = plan(board, e.gravity, self.time_limit)
            if result.cleared:
                sim = board.copy()
                for pair in result.moves:
                    expected.append(sim.tobytes())
                    actions.append(pair_to_action(*pair, board.size))
                    sim = remove(sim, pair, e.gravity)
        if actions:
            self._plans[id(env)] = (actions[1:], expected[1:])
            return actions[0]
        self._plans.pop(id(env), None)
        action = greedy_action(board)
        return 0 if action is None else action


register_agent("greedy", GreedyAgent, PIKACHU_IDS, "the pair with the shortest path")
register_agent("planner", PlannerAgent, PIKACHU_IDS, "search for a full clear, 1 s a plan")
