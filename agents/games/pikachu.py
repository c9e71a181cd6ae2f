"""Pikachu's baselines: a greedy rule and a planner that searches for a full clear."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, Thought
from agents.games.spec import AgentsSpec
from agents.nets.registry import register_policy
from agents.registry import register_agent
from grid_envs.core.base_env import GridEnv
from grid_envs.pikachu.paths import removable_pairs, removable_with_lengths
from grid_envs.pikachu.rules import pair_to_action
from grid_envs.pikachu.solver import plan, proved_dead_after, remove, safety_ranks
from grid_envs.pikachu.state import EMPTY

# What `grid-games train` starts from (AGENTS.training): on Pikachu-v0 a pair's logit is read
# off the board (a dense head over its 10,296 pairs clones the planner no better than
# chance); on Pikachu-Small-v0, with gravity, the order of removals matters; `compare`
# (AGENTS.compare) teaches Pikachu-v0 as registered

register_policy("pairs", "a key product per pair of cells (Pikachu's default)",
                "agents.nets.pairs:PairLogitsExtractor")  # fmt: skip
register_policy("kind-pairs", "the pairs policy, blind to the kinds' names",
                "agents.nets.pairs:KindPairsExtractor")  # fmt: skip

TRAINING: dict[str, dict[str, Any]] = {
    "GridGames/Pikachu-v0": {"policy": "pairs"},
    "GridGames/Pikachu-Small-v0": {
        "env_kwargs": {"rows": 6, "cols": 6, "kinds": 9, "on_stuck": "end", "gravity": "down"}
    },
}
COMPARE: dict[str, dict[str, Any]] = {  # the planner is too slow to evaluate on many deals
    # here, or to label many of the learner's own states
    "GridGames/Pikachu-v0": {"teacher": "planner", "teacher_states": 250, "dagger_rounds": 1,
                             "timesteps": 5_000, "skip_agents": ("planner",),
                             "search": {"episodes": 40, "network": "pretrained",
                                        "beats": "greedy"}},
}  # fmt: skip
# Without reshuffles a deal is deterministic: the planner's exact search over pairings,
# the network's logits ordering the pairings it tries, 2,000 nodes a search; with
# reshuffles, Gumbel MCTS
SEARCH: dict[str, dict[str, Any]] = {
    "GridGames/Pikachu-v0": {"variant": "exact", "simulations": 2000},
    "GridGames/Pikachu*": {"variant": "gumbel", "simulations": 32},
}

PIKACHU_IDS = ("GridGames/Pikachu*",)


def clear_with_prior(env: GridEnv, logits: np.ndarray, nodes: int) -> tuple[str, list[int], int]:
    """The search ``variant="exact"`` (agents.search.tree): the planner's exact search for a
    clear of ``env``'s board with ``nodes`` nodes and no clock (the same answer on any
    machine), trying each kind's pairings in the order of the summed ``logits`` of their
    pairs. Returns the status, the clear's actions, and the nodes used."""
    board = env.game_state().board
    result = plan(board, getattr(env, "gravity", "none"), None, nodes, prior=logits)
    return result.status, [pair_to_action(i, j, board.size) for i, j in result.moves], result.nodes


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

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """The removable pairs by the length of the path that joins them, shortest first."""
        board = env.game_state().board
        pairs, lengths = removable_with_lengths(board)
        actions = [pair_to_action(*pair, board.size) for pair in pairs]
        return Thought(
            moves=Thought.best(actions, -np.asarray(lengths, dtype=float)),
            weight="minus the path's length", facts={"removable pairs": len(pairs)},
        )  # fmt: skip

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        """The first of the pairs the shortest paths join, and all of them."""
        best = shortest_pairs(env.game_state().board) or [0]
        return best[0], self.one_hot(env, best)


def mobility(board: np.ndarray) -> tuple[list[tuple[int, int]], list[int]]:
    """The removable pairs in board order, and the removable pairs each leaves behind (no
    gravity: a pair that connects now connects after any removal)."""
    pairs = sorted(removable_pairs(board))
    return pairs, [len(removable_pairs(remove(board, pair, "none"))) for pair in pairs]


def most_mobile_pairs(board: np.ndarray) -> list[int]:
    """The actions of the removable pairs that leave the most removable pairs behind, in
    board order (:func:`mobility`)."""
    pairs, left = mobility(board)
    if not pairs:
        return []
    most = max(left)
    return [pair_to_action(*pair, board.size) for pair, n in zip(pairs, left, strict=True)
            if n == most]  # fmt: skip


class MobilityAgent(Agent):
    """Removes the pair after which the most pairs can be removed: a look one move ahead
    at how far the board is from being stuck (the ``mobility`` potential)."""

    name = "mobility"

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        best = most_mobile_pairs(env.game_state().board)
        return best[0] if best else 0

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """Each removable pair with the number of removable pairs it leaves."""
        board = env.game_state().board
        pairs, left = mobility(board)
        actions = [pair_to_action(*pair, board.size) for pair in pairs]
        return Thought(moves=Thought.best(actions, left), weight="pairs left after it")

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        """The first of the pairs that leave the most moves, and all of them."""
        best = most_mobile_pairs(env.game_state().board) or [0]
        return best[0], self.one_hot(env, best)


class PlannerAgent(Agent):
    """Plans a full clear from the env's state (``max_seconds`` seconds) and follows it.

    Without gravity a removal only frees cells, so a plan stays a clear after any of its
    pairs is removed early, in any order: the agent keeps its plan while the board holds
    exactly the tiles of the plan's pairs not yet removed (whoever removed the others), and
    replans otherwise (a pair off the plan, a reshuffle, a reset). With gravity it keeps a
    plan only while the board is the one it expected. Where the planner finds no clear it
    falls back to the greedy rule.
    """

    name = "planner"

    def __init__(self, env: Any = None, seed: int | None = None, max_seconds: float = 1.0) -> None:
        self.max_seconds = max_seconds
        self._plans: dict[int, _Plan] = {}
        super().__init__(env, seed)

    def reset(self) -> None:
        self._plans.clear()

    def _plan(self, env: GridEnv) -> _Plan | None:
        """The env's plan, kept or made afresh; None where the planner finds no clear."""
        board = env.game_state().board
        gravity = getattr(env, "gravity", "none")
        kept = self._plans.get(id(env))
        if kept is not None and kept.follow(board, gravity):
            return kept
        result = plan(board, gravity, self.max_seconds)
        if not result.cleared:
            self._plans.pop(id(env), None)
            return None
        self._plans[id(env)] = made = _Plan(board, result.moves, gravity)
        return made

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        board = env.game_state().board
        current = self._plan(env)
        if current is not None:
            return pair_to_action(*current.next_pair(), board.size)
        action = greedy_action(board)
        return 0 if action is None else action

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """The pairs its plan still holds to clear the board, or that it found no clear
        and plays greedy."""
        current = self._plans.get(id(env))
        if current is None:
            return Thought(facts={"plan": "no clear found: the shortest path's pair"})
        left = len(current.pairs) - (current.gravity == "none")  # this move's pair included
        return Thought(facts={"pairs left in the plan after this move": max(left, 0)})

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        """The plan's next pair, and as its equals every legal pair not known to spoil the
        clear: the plan's pairs that connect now, the safe pairs (a kind's last two tiles,
        or a kind whose tiles can all be paired off now), and any other pair unless the
        board it leaves is proved impossible to clear (:func:`proved_dead_after`).

        Without gravity the order of a plan's connecting pairs does not matter, and most
        pairs off the plan are as good (another pairing of their kind clears too), so
        cloning is asked to learn which pairs lose, not the planner's order or its choice
        among equal pairings. Where no clear is known (a lost board) every legal pair is
        named: such a state teaches nothing. With gravity the plan's next pair alone."""
        action = self.act(env, observation)
        current = self._plans.get(id(env))
        if current is None:
            return action, env.action_masks()
        if current.gravity != "none":
            return action, self.one_hot(env, [action])
        board = env.game_state().board
        now = set(removable_pairs(board))
        sure = (now & set(current.pairs)) | set(safe_pairs(board, now))
        equals = sure | {p for p in now - sure if not proved_dead_after(board, p, self.max_seconds)}
        return action, self.one_hot(env, [pair_to_action(i, j, board.size) for i, j in equals])


class _Plan:
    """A clear's pairs in order, and how to tell whether it still holds on a board."""

    def __init__(self, board: np.ndarray, moves: tuple[tuple[int, int], ...], gravity: str):
        self.gravity = gravity
        self.pairs = list(moves)
        self.board = board.copy()  # with gravity: the board the next pair is played on

    def follow(self, board: np.ndarray, gravity: str) -> bool:
        """Bring the plan up to ``board``: drop the pairs already removed (by whoever
        removed them) and say whether the rest still clears it; the plan is left as it was
        where it does not."""
        if gravity != self.gravity:
            return False
        if gravity != "none":
            return bool(np.array_equal(board, self.board))
        flat, mine = board.ravel(), self.board.ravel()
        left = [(i, j) for i, j in self.pairs if flat[i] != EMPTY or flat[j] != EMPTY]
        cells = [c for pair in left for c in pair]
        if np.count_nonzero(flat) != len(cells) or not np.array_equal(flat[cells], mine[cells]):
            return False
        self.pairs = left
        return True

    def next_pair(self) -> tuple[int, int]:
        """The plan's next pair; with gravity the plan moves on to the board it leaves."""
        pair = self.pairs[0]
        if self.gravity != "none":
            self.pairs = self.pairs[1:]
            self.board = remove(self.board, pair, self.gravity)
        return pair


def safe_pairs(board: np.ndarray, removable: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pairs among ``removable`` that cannot spoil a clear without gravity: a kind's
    last two tiles, or a pair of a kind whose four tiles make two removable pairs now."""
    pairs = sorted(removable)
    return [pair for pair, rank in zip(pairs, safety_ranks(board, pairs), strict=True) if rank < 2]


register_agent("greedy", GreedyAgent, PIKACHU_IDS, "the pair with the shortest path")
register_agent("mobility", MobilityAgent, PIKACHU_IDS, "the pair that leaves the most moves")
register_agent("planner", PlannerAgent, PIKACHU_IDS, "search for a full clear, 1 s a plan")

AGENTS = AgentsSpec(
    "pikachu",
    training=TRAINING,
    compare=COMPARE,
    search=SEARCH,
    exact_search=clear_with_prior,
)
