"""Sokoban's algorithmic baseline: the push-search solver as an agent."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from agents.base import Agent, Thought
from agents.games.spec import AgentsSpec
from agents.nets.registry import register_policy
from agents.registry import register_agent
from grid_envs.core.base_env import GridEnv
from grid_envs.core.grid import bfs_distances, mirrored_directions
from grid_envs.sokoban import rules
from grid_envs.sokoban.bfs import MoveTable, move_distances, position_key
from grid_envs.sokoban.push_env import SokobanPushEnv, push_action
from grid_envs.sokoban.solver import solve
from grid_envs.sokoban.state import SokobanState

# What `grid-games train` starts from (AGENTS.training): the registered boards, the moves and
# pushes read at the player's cell off a CNN that covers the room, twice over on the 10x10
# rooms (a deeper trunk clones the fewest-moves agent better: docs/teachers-by-game.md);
# `compare` (AGENTS.compare) teaches it on Sokoban-Small-v0 (7x7, 2 boxes) with that agent


def _player_kwargs(env_id: str, actions: int) -> dict[str, Any]:
    from grid_envs.sokoban.state import PLAYER, PLAYER_ON_GOAL

    if actions != 8 or not env_id.startswith("GridGames/Sokoban"):
        raise ValueError(
            f"the player policy reads Sokoban's planes and its 8 moves and pushes; "
            f"{env_id} has {actions} actions"
        )
    return {"actions": actions, "player_planes": (PLAYER, PLAYER_ON_GOAL)}


register_policy("player", "the moves' logits read at the player's cell (Sokoban's default)",
                "agents.nets.board:PlayerLogitsExtractor", _player_kwargs)  # fmt: skip

TRAINING: dict[str, dict[str, Any]] = {
    "GridGames/Sokoban-v0": {"policy": "player", "net_depth": 8},
    "GridGames/Sokoban-Small-v0": {"policy": "player"},
}
COMPARE: dict[str, dict[str, Any]] = {  # sampled: its most likely move walks in circles
    "GridGames/Sokoban-Small-v0": {"teacher": "optimal", "teacher_states": 20_000,
                                   "teacher_epochs": 6, "timesteps": 30_000, "sample": True,
                                   "search": {"simulations": 250, "episodes": 100}},
}  # fmt: skip
# The search each id plays by default (agents.search.tree): a best-first search for a whole
# solution, 250 network evaluations a move (Gumbel MCTS walks in circles where values
# barely differ; docs/search.md has both measured)
SEARCH: dict[str, dict[str, Any]] = {"GridGames/Sokoban*": {"variant": "levin", "simulations": 250}}


def mirrored_actions(
    shape: tuple[int, int], flip_rows: bool, flip_cols: bool, transpose: bool
) -> np.ndarray:
    """Where each move and push goes when the board is mirrored (agents.train.cloning.ActionMap):
    the rules know no orientation, so cloning may learn from every mirror image."""
    moves = mirrored_directions(flip_rows, flip_cols, transpose)
    return np.concatenate([moves, moves + 4])


# the planes observation's board symmetries (the compact view's too); not SokobanPush-v0's
SYMMETRIES = {env_id: mirrored_actions for env_id in ("GridGames/Sokoban-v0",
                                                      "GridGames/Sokoban-Small-v0")}  # fmt: skip

SOKOBAN_IDS = ("GridGames/Sokoban-v0", "GridGames/Sokoban-Small-v0", "GridGames/SokobanPush-v0")


class SokobanSolverAgent(Agent):
    """Plans with the push-search solver from the env's state, then follows the plan.

    The state comes from ``env.game_state()``. After each action the agent predicts the
    next state; if the env's state differs (a reset, another player's move, a level
    change) it plans again, unless only the player moved: then it walks the shortest way to
    the plan's next push and goes on with the plan. If the solver gives up or proves the
    position unsolvable, the agent plays a random legal action and tries again at the next
    step. As a teacher (:meth:`label`) it names every walk step as short as its own.

    Args:
        mode: the solver's mode, ``"fast"`` (default) or ``"optimal"``.
        max_seconds: seconds the solver may spend on one plan.
    """

    name = "solver"

    def __init__(
        self, env: Any = None, seed: int | None = None, mode: str = "fast", max_seconds: float = 5.0
    ) -> None:
        self.mode = mode
        self.max_seconds = max_seconds
        self._plans: dict[int, tuple[list[int], list[tuple[bytes, tuple[int, int]]]]] = {}
        self.last_result: Any = None
        super().__init__(env, seed)

    def reset(self) -> None:
        self._plans.clear()

    @staticmethod
    def _key(s: SokobanState) -> tuple[bytes, tuple[int, int]]:
        return (s.boxes.tobytes(), s.player)

    def _plan(self, env: GridEnv, s: SokobanState) -> tuple[list[int], list[Any]]:
        result = solve(s, mode=self.mode, max_seconds=self.max_seconds)
        self.last_result = result
        if not result.solved:
            return [], []
        actions, expected = [], []
        sim = copy.deepcopy(s)
        pushes_only = isinstance(env, SokobanPushEnv)
        cols = env.obs_shape[1]
        for a in rules.lurd_to_actions(sim, result.solution):
            if pushes_only and a < 4:
                rules.apply_action(sim, a)
                continue
            if pushes_only:
                dr, dc = rules.DIRECTIONS[a - 4]
                box = (sim.player[0] + dr, sim.player[1] + dc)
                actions.append(push_action(box, a - 4, cols))
            else:
                actions.append(a)
            expected.append(self._key(sim))  # the state in which this action is played
            rules.apply_action(sim, a)
        return actions, expected

    def _next(self, env: GridEnv) -> tuple[int, tuple[int, int] | None]:
        """The plan's next action (replanning where the state is not the one it expected),
        and where that action is a walk step, the cell the walk leads to (the next push's)."""
        s = env.game_state()
        plan = self._plans.get(id(env))
        if plan is None or not plan[0] or plan[1][0] != self._key(s):
            plan = self._rewalk(env, s, plan) or self._plan(env, s)
            self._plans[id(env)] = plan
        actions, expected = plan
        if not actions:
            legal = np.flatnonzero(env.action_masks())
            return int(legal[self.rng.integers(len(legal))]), None
        self._plans[id(env)] = (actions[1:], expected[1:])
        if actions[0] >= 4 or isinstance(env, SokobanPushEnv):
            return actions[0], None
        push = next(k for k, a in enumerate(actions) if a >= 4)  # a plan ends with a push
        return actions[0], expected[push][1]

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        return self._next(env)[0]

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """The plan it follows after this move (LURD, a push in capitals; pushes alone on
        ``SokobanPush``) and the pushes left in it; or that it has no plan."""
        plan = self._plans.get(id(env))
        if plan is None or (not plan[0] and not env.game_state().boxes.any()):
            return super().thoughts(env, observation)
        rest = plan[0]
        if not rest and (self.last_result is None or not self.last_result.solved):
            status = getattr(self.last_result, "status", "no plan")
            return Thought(facts={"plan": f"none ({status}): a random move"})
        pushes = len(rest) if isinstance(env, SokobanPushEnv) else sum(a >= 4 for a in rest)
        text = str(len(rest)) + " pushes" if isinstance(env, SokobanPushEnv) else (
            rules.actions_to_lurd(rest) or "solved by this move")  # fmt: skip
        return Thought(facts={"plan after this move": _shortened(text), "pushes left": pushes})

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        """The plan's next action; where that is a step of the walk to the next push,
        every step that shortens that walk as much (the plan's walk is one shortest path
        among many). A push, or a random action when no plan holds, stands alone."""
        s = env.game_state()
        action, target = self._next(env)
        if target is None:
            return action, self.one_hot(env, [action])
        shorter = self._shortening(self._walk_distances(s, target), s.player)
        return action, self.one_hot(env, [action, *shorter])

    @staticmethod
    def _walk_distances(s: SokobanState, target: tuple[int, int]) -> np.ndarray:
        """Each cell's walking distance to ``target``, the boxes where they stand."""
        return bfs_distances(s.floor & ~s.boxes, target)

    @staticmethod
    def _shortening(dist: np.ndarray, cell: tuple[int, int]) -> list[int]:
        """The moves from ``cell`` one step nearer the target of ``dist``."""
        r, c = cell
        return [d for d, (dr, dc) in enumerate(rules.DIRECTIONS)
                if dist[r + dr, c + dc] == dist[r, c] - 1 >= 0]  # fmt: skip

    def _rewalk(self, env: GridEnv, s: SokobanState, plan: Any) -> Any:
        """The plan again from a player who walked off it with the boxes where the plan's
        next push expects them: a shortest walk to that push, then the plan's pushes (no
        new search). None where that does not hold."""
        if plan is None or not plan[0] or isinstance(env, SokobanPushEnv):
            return None
        actions, expected = plan
        push = next((k for k, a in enumerate(actions) if a >= 4), None)
        boxes = s.boxes.tobytes()
        if push is None or expected[push][0] != boxes:
            return None
        target = expected[push][1]
        dist = self._walk_distances(s, target)
        if dist[s.player] < 0:
            return None
        walk, keys, (r, c) = [], [], s.player
        while (r, c) != target:  # the boxes stay put while the player walks
            keys.append((boxes, (r, c)))
            step = self._shortening(dist, (r, c))[0]
            walk.append(step)
            r, c = r + rules.DIRECTIONS[step][0], c + rules.DIRECTIONS[step][1]
        return walk + actions[push:], keys + expected[push:]


class SokobanOptimalAgent(SokobanSolverAgent):
    """Plays the fewest moves: a breadth-first search backward from the solved positions
    (:func:`grid_envs.sokoban.bfs.move_distances`, once a room) gives every position its
    exact distance to the solution, and the agent plays a random one of the actions that
    shorten it by one. As a teacher it names them all: every action that starts a
    fewest-moves solution, in any position the learner reaches. Where more than
    ``max_states`` positions can be solved, it plays and teaches as ``solver`` does.

    Args:
        max_states: the most positions one room's table may hold.
        mode, max_seconds: the fallback solver's (see ``solver``).
    """

    name = "optimal"

    def __init__(
        self, env: Any = None, seed: int | None = None, max_states: int = 1_000_000,
        mode: str = "fast", max_seconds: float = 5.0,
    ) -> None:  # fmt: skip
        self.max_states = max_states
        # per env: the level's room (floor and goals) and its table, None where too large
        self._tables: dict[int, tuple[bytes, MoveTable | None]] = {}
        super().__init__(env, seed, mode, max_seconds)

    def reset(self) -> None:
        super().reset()
        self._tables.clear()

    def best(self, env: GridEnv) -> list[int] | None:
        """The legal actions that start a fewest-moves solution from the env's position
        (all legal actions where none solves any more); None where the table is too large."""
        s = env.game_state()
        cells, cols = s.floor.size, s.floor.shape[1]
        boxes, player = rules.bits(s.boxes), s.player[0] * cols + s.player[1]
        room = s.floor.tobytes() + s.goals.tobytes()
        mine = self._tables.get(id(env))
        if mine is None or mine[0] != room:  # a table holds every position of its room
            mine = self._tables[id(env)] = (room, move_distances(s, self.max_states))
        table = mine[1]
        if table is None:
            return None
        legal = np.flatnonzero(rules.legal_mask(s))
        here = table[position_key(boxes, player, cells)]
        if here < 0:
            return [int(a) for a in legal]
        good = []
        for a in legal:
            d = int(a) % 4
            n = player + (-cols, cols, -1, 1)[d]
            child = boxes ^ (1 << n) ^ (1 << (2 * n - player)) if a >= 4 else boxes
            if table[position_key(child, n, cells)] == here - 1:
                good.append(int(a))
        return good

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        return self.label(env, observation)[0]

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """The moves that start a fewest-moves solution here, and how many moves that is
        (read again from the room's table, which the move just chosen was read from)."""
        good = self.best(env)
        if good is None:
            return super().thoughts(env, observation)
        s = env.game_state()
        cols = s.floor.shape[1]
        table = self._tables[id(env)][1]
        assert table is not None
        key = position_key(rules.bits(s.boxes), s.player[0] * cols + s.player[1], s.floor.size)
        left = int(table[key])
        return Thought(
            moves=[(a, 1.0) for a in good], weight="starts a fewest-moves solution",
            facts={"fewest moves to solve": left if left >= 0 else "none: unsolvable"},
        )  # fmt: skip

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        good = self.best(env)
        if good is None:
            return super().label(env, observation)
        action = good[self.rng.integers(len(good))]
        return action, self.one_hot(env, good)


def _shortened(text: str, most: int = 60) -> str:
    """``text`` cut to ``most`` characters, an ellipsis saying so."""
    return text if len(text) <= most else text[: most - 1] + "…"


register_agent(
    "solver", SokobanSolverAgent, SOKOBAN_IDS, "push-search solver (fast mode), replans on surprise"
)
register_agent(
    "optimal", SokobanOptimalAgent, SOKOBAN_IDS[:2],
    "fewest moves, from a breadth-first search over every position (up to 1M a room)",
)  # fmt: skip

AGENTS = AgentsSpec(
    "sokoban",
    training=TRAINING,
    compare=COMPARE,
    search=SEARCH,
    symmetries=SYMMETRIES,
)
