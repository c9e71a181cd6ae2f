"""Lines98's baselines: a greedy move scorer and a look-ahead that plays the spawn through.

Both read the board from ``env.game_state()`` and the legal moves from the env's mask (the
BFS reachability of the rules). The heuristic counts *lines in the making*: every window of
``line_length`` cells in a row, column or diagonal whose balls are all of one colour is
worth ``4 ** balls`` (a full window is a line the move clears). The greedy agent scores all
legal moves at once with window counts, each on the board it leaves (with the announced
balls on it when it clears nothing); the look-ahead agent replays the best of them
exactly through the rules (the announced balls land on their known cells and their lines
clear) and judges the boards that result: free space first (a move that clears is taken
whenever one is there), then the lines in the making and the best move the board leaves.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

import numpy as np

from agents.base import Agent, Thought
from agents.games.spec import AgentsSpec
from agents.nets.registry import register_policy
from agents.registry import register_agent
from grid_envs.core.base_env import GridEnv
from grid_envs.core.grid import mirrored_cells
from grid_envs.lines98 import rules
from grid_envs.lines98.heuristic import CLEAR_BONUS, best_gain, move_gains, window_summary
from grid_envs.lines98.state import EMPTY, Lines98State

# What `grid-games train` starts from (AGENTS.training): a dense head over the 1,296 moves of
# a 6x6 board learns nothing, the lift-drop policy does; on Lines98-v0 the colour-lines
# policy, which reads the line windows, clones the greedy agent far better. `compare`
# (AGENTS.compare) teaches it with the greedy agent's moves: the look-ahead's games are too
# long for its budget (docs/teachers-by-game.md)

register_policy("colour-lines", "the board's line windows, read once per colour "
                "(Lines98-v0's default)", "agents.nets.board:ColourLinesExtractor")  # fmt: skip
register_policy("lift-drop", "a ball's lift and a cell's drop (Lines98-Small's default)",
                "agents.nets.board:LiftDropExtractor")  # fmt: skip

TRAINING: dict[str, dict[str, Any]] = {
    "GridGames/Lines98-v0": {"policy": "colour-lines"},
    "GridGames/Lines98-Small-v0": {"policy": "lift-drop"},
}
COMPARE: dict[str, dict[str, Any]] = {
    "GridGames/Lines98-v0": {"teacher": "greedy", "teacher_states": 5_000, "dagger_rounds": 1,
                             "teacher_epochs": 4, "timesteps": 5_000,
                             "skip_agents": ("lookahead", "judge"), "episodes": 50,
                             "search": {"episodes": 10, "network": "pretrained",
                                        "simulations": 12, "replies": 0, "beats": "greedy"}},
}  # fmt: skip
SEARCH: dict[str, dict[str, Any]] = {
    "GridGames/Lines98*": {"variant": "ordered", "simulations": 12}
}
JUDGE_POINTS = 100.0  # the look-ahead's units a point, as a search's leaf value: 20 a free cell


def mirrored_moves(
    shape: tuple[int, int], flip_rows: bool, flip_cols: bool, transpose: bool
) -> np.ndarray:
    """Where each move (source, target) goes when the board is mirrored
    (agents.train.cloning.ActionMap): lines run along rows, columns and both diagonals and
    balls land on free cells at random, so the rules know no orientation."""
    to = mirrored_cells(shape, flip_rows, flip_cols, transpose)
    return (to[:, None] * to.size + to[None, :]).ravel()


# the planes observation's board symmetries, for cloning
SYMMETRIES = {env_id: mirrored_moves for env_id in TRAINING}

LINES98_IDS = ("GridGames/Lines98*",)
LOST = -1e9  # the worth of a board the game ends on


def legal_moves(env: GridEnv) -> np.ndarray:
    """The env's legal moves (its cached mask) as (M, 2) flat (source, target) cells."""
    return rules.mask_to_moves(env.action_masks(), env.game_state().board.size)


class GreedyAgent(Agent):
    """The move that scores now, else the one that most grows the lines in the making on
    the board it leaves (the announced balls on it: :func:`spawn_gains`)."""

    name = "greedy"

    def best(self, env: GridEnv) -> list[int]:
        """The actions of every move that ties for the best gain (none: the game is over)."""
        s: Lines98State = env.game_state()
        e: Any = env
        moves = legal_moves(env)
        if not len(moves):
            return []
        gains = spawn_gains(s, moves, e.line_length, e.colours)
        size = s.board.size
        return [rules.move_to_action(int(src), int(dst), size)
                for src, dst in moves[gains >= gains.max() - 1e-9]]  # fmt: skip

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        return self._pick(self.best(env))

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """The legal moves with the greatest gains (:func:`spawn_gains`)."""
        s: Lines98State = env.game_state()
        e: Any = env
        moves = legal_moves(env)
        gains = spawn_gains(s, moves, e.line_length, e.colours)
        actions = [rules.move_to_action(int(a), int(b), s.board.size) for a, b in moves]
        return Thought(moves=Thought.best(actions, gains), weight="gain")

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        """A random one of the tied best moves, and all of them."""
        best = self.best(env)
        action = self._pick(best)
        return action, self.one_hot(env, best or [action])

    def _pick(self, best: list[int]) -> int:
        """A random one of ``best`` (0 where the game is over)."""
        return best[self.rng.integers(len(best))] if best else 0


class LookaheadAgent(Agent):
    """Plays its best candidates through the rules and the spawn, then the best reply.

    Each candidate is replayed exactly on a copy (its lines clear; if it clears nothing the
    announced balls land on their known cells and their lines clear), and the board that
    results is judged by ``free_weight`` per empty cell, the lines in the making, and
    ``follow_weight`` times the best greedy gain still open on it (``best_gain``; after a
    clear the announced balls are still known, so by :func:`spawn_gains`).
    ``free_weight`` outweighs any count of lines, so a move that clears (five cells freed
    and no spawn) is always taken. The ``candidates`` moves replayed are the first of
    :func:`candidate_order` (gains on the board the announced balls leave).

    Reply search: when no line clears after the best candidate (neither its own nor its
    spawn's), the board after it is known exactly, and so is every reply that would clear
    a line on it; only the balls announced next are not. For each of the ``replies`` best
    candidates the agent plays its own first step on that board (the ``reply_candidates``
    best replies, judged as above) and keeps the candidate whose best reply is worth most,
    plus ``first_weight`` times its own judgement. With ``futures=0`` (the default) the
    replies are judged on the board as the candidate leaves it, with no next announcement:
    a reply that clears nothing is judged without the three balls that would follow it, so
    candidates are compared on the boards they really leave, not on drawn luck. With
    ``futures > 0`` the agent instead draws that many announcements as the game would and
    averages the best reply over them; with ``common_futures`` every candidate meets the
    same draws (future ``f`` of each is drawn from one seed). ``replies=0`` plays the first
    step alone. ``max_seconds`` bounds the seconds a move may take: the search keeps the
    best candidate it has finished.
    """

    name = "lookahead"

    def __init__(
        self,
        env: Any = None,
        seed: int | None = None,
        candidates: int = 12,
        max_seconds: float = 0.5,
        free_weight: float = 2000.0,
        follow_weight: float = 0.5,
        clear_weight: float = 600.0,
        replies: int = 8,
        futures: int = 0,
        reply_candidates: int = 8,
        first_weight: float = 0.1,
        common_futures: bool = True,
    ) -> None:
        self.candidates, self.max_seconds = candidates, max_seconds
        self.free_weight, self.follow_weight = free_weight, follow_weight
        self.clear_weight = clear_weight
        self.replies, self.futures = replies, futures
        self.reply_candidates, self.first_weight = reply_candidates, first_weight
        self.common_futures = bool(common_futures)
        self._weighed: dict[int, Thought] = {}  # per env: the last move's candidates
        super().__init__(env, seed)

    def judge(self, state: Lines98State, length: int, colours: int) -> float:
        """The worth of the board after a move (``LOST`` if it is full: the game is over)."""
        board = state.board
        free = state.empty_cells
        if not free:
            return LOST
        summary = window_summary(board, length, colours)
        value = self.free_weight * free + float(summary[-1].sum())  # + potential(board)
        if self.follow_weight:
            moves = rules.mask_to_moves(rules.legal_mask(board), board.size)
            if len(moves) and state.announced:  # after a clear: the next spawn is known
                value += self.follow_weight * float(
                    spawn_gains(state, moves, length, colours).max()
                )
            elif len(moves):
                value += self.follow_weight * best_gain(
                    board, moves, length, colours, summary=summary
                )
        return value

    def first_steps(
        self, state: Lines98State, moves: np.ndarray, count: int, length: int, colours: int,
        scratch: np.random.Generator, deadline: float, order: np.ndarray | None = None,
    ) -> list[tuple[float, int, Lines98State]]:  # fmt: skip
        """The first ``count`` moves of ``order`` (indices of ``moves``; by default
        :func:`candidate_order`), each replayed on a copy of ``state`` (no new
        announcements) and judged: (value, move index, board after), best first. Stops
        early, after at least one, once ``deadline`` has passed."""
        judged = []
        if order is None:
            order = candidate_order(state, moves, length, colours)
        for k in order[:count].tolist():
            trial = copy.deepcopy(state)
            rules.play(trial, int(moves[k, 0]), int(moves[k, 1]), scratch, 0, colours, length)
            cleared = trial.balls_cleared - state.balls_cleared
            value = self.judge(trial, length, colours) + self.clear_weight * cleared
            judged.append((value, k, trial))
            if time.perf_counter() > deadline:
                break
        judged.sort(key=lambda x: -x[0])  # stable: ties keep the candidate order
        return judged

    def reply_value(
        self, after: Lines98State, spawn: int, length: int, colours: int,
        scratch: np.random.Generator, deadline: float, seeds: list[int] | None = None,
    ) -> float | None:  # fmt: skip
        """The best reply's judgement on the board ``after`` a candidate (``LOST`` where
        the board is full or stuck), or None if ``deadline`` passed first: on ``after`` as
        it is (``futures=0``), else the mean over ``futures`` drawn announcements (from
        ``seeds``, one a future, where given; else from ``scratch``)."""
        total, draws = 0.0, self.futures or 1
        for f in range(draws):
            if time.perf_counter() > deadline:
                return None
            future = copy.deepcopy(after)
            if self.futures:  # the next announcement, drawn as the game would
                draw = np.random.default_rng(seeds[f]) if seeds else scratch
                rules.announce(future, draw, spawn, colours)
            replies = rules.mask_to_moves(rules.legal_mask(future.board), future.board.size)
            if not len(replies):
                total += LOST
                continue
            best = self.first_steps(
                future, replies, self.reply_candidates, length, colours, scratch, deadline
            )
            total += best[0][0]
        return total / draws

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        moves = legal_moves(env)
        if not len(moves):
            return 0
        best = self.choose(env, moves, time.perf_counter() + self.max_seconds)
        e: Any = env
        return rules.move_to_action(int(moves[best, 0]), int(moves[best, 1]), e.rows * e.cols)

    def judged_first_steps(
        self, env: GridEnv, moves: np.ndarray, deadline: float, order: np.ndarray | None = None
    ) -> tuple[Lines98State, np.random.Generator, list[tuple[float, int, Lines98State]]]:
        """The position ``env`` shows, the generator of this move's draws (seeded from the
        agent's own) and the :meth:`first_steps` of its ``candidates`` from ``order`` on it,
        best first."""
        s: Lines98State = env.game_state()
        e: Any = env
        scratch = np.random.default_rng(int(self.rng.integers(2**63)))
        judged = self.first_steps(
            s, moves, self.candidates, e.line_length, e.colours, scratch, deadline, order
        )
        return s, scratch, judged

    def choose(
        self, env: GridEnv, moves: np.ndarray, deadline: float, order: np.ndarray | None = None
    ) -> int:
        """The index of the move to play among ``moves`` (the legal ones, at least one),
        its ``candidates`` taken from ``order`` (by default :func:`candidate_order`)."""
        s, scratch, judged = self.judged_first_steps(env, moves, deadline, order)
        e: Any = env
        length, colours = e.line_length, e.colours
        best = judged[0][1]
        weighed = judged_values = {k: value for value, k, _ in judged}  # each candidate's worth
        what = "the board it leaves, judged"
        if self.replies and judged[0][2].balls_cleared == s.balls_cleared:
            best_value = -np.inf
            common = self.common_futures and self.futures
            seeds = scratch.integers(2**63, size=self.futures).tolist() if common else None
            replied = {}
            for value, k, after in judged[: self.replies]:
                reply = self.reply_value(after, e.spawn, length, colours, scratch, deadline, seeds)
                if reply is None:  # out of time: the best candidate finished so far
                    break
                replied[k] = reply + self.first_weight * value
                if reply + self.first_weight * value > best_value:
                    best, best_value = k, reply + self.first_weight * value
            if replied:
                weighed, what = replied, "its best reply, judged"
        size = e.rows * e.cols
        actions = [rules.move_to_action(int(moves[k, 0]), int(moves[k, 1]), size) for k in weighed]
        replies = len(weighed) if weighed is not judged_values else 0
        self._weighed[id(env)] = Thought(
            Thought.best(actions, list(weighed.values())),
            what,
            facts={"candidates judged": len(judged), "replies weighed": replies},
        )
        return best

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """The candidates it weighed for this move and what each was worth: the board it
        leaves, or its best reply where it weighed replies."""
        return self._weighed.get(id(env)) or super().thoughts(env, observation)


class JudgeAgent(LookaheadAgent):
    """The look-ahead's first step alone: its ``candidates`` replayed exactly through the
    rules and the announced balls, and the one whose board it judges best played, with no
    replies and no clock (a seed gives the same moves on any machine). A teacher meant for
    a network: the judgement is mostly the free cells and a sum over the windows a move
    changes, the shape of the ``colour-lines`` policy's logits, which the replies' best
    move is not. As a teacher (:meth:`label`) it names every candidate judged as good as
    its choice."""

    name = "judge"

    def __init__(self, env: Any = None, seed: int | None = None, candidates: int = 12) -> None:
        super().__init__(env, seed, candidates=candidates, max_seconds=math.inf, replies=0)

    def label(self, env: GridEnv, observation: np.ndarray) -> tuple[int, np.ndarray]:
        moves = legal_moves(env)
        if not len(moves):
            return 0, self.one_hot(env, [0])
        _, _, judged = self.judged_first_steps(env, moves, math.inf)
        e: Any = env
        size = e.rows * e.cols
        best = [rules.move_to_action(int(moves[k, 0]), int(moves[k, 1]), size)
                for value, k, _ in judged if value >= judged[0][0] - 1e-9]  # fmt: skip
        return best[0], self.one_hot(env, best)


def lookahead_with_prior(
    env: GridEnv, logits: np.ndarray, candidates: int, rng: np.random.Generator,
    replies: int | None = None,
) -> tuple[int, Thought]:  # fmt: skip
    """The look-ahead's move (:class:`LookaheadAgent`, its weights, and its replies unless
    ``replies`` says how many: 0 is the judge's first step alone) with its ``candidates``
    proposed by a network: the legal moves its ``logits`` (over all actions) rank first,
    in that order, in place of :func:`candidate_order`. No clock: a seed gives the same
    move on any machine. The search's ``variant="ordered"``. Returns the move and what the
    look-ahead weighed for it (its :meth:`~LookaheadAgent.thoughts`)."""
    moves = legal_moves(env)
    if not len(moves):
        return 0, Thought()
    e: Any = env
    size = e.rows * e.cols
    order = np.argsort(-logits[moves[:, 0] * size + moves[:, 1]], kind="stable")
    agent = LookaheadAgent(seed=int(rng.integers(2**63)), candidates=candidates,
                           max_seconds=math.inf)  # fmt: skip
    if replies is not None:
        agent.replies = replies
    best = agent.choose(env, moves, math.inf, order)
    action = rules.move_to_action(int(moves[best, 0]), int(moves[best, 1]), size)
    return action, agent.thoughts(env, np.empty(0))


def judged_values(env: GridEnv, observations: np.ndarray) -> np.ndarray:
    """The look-ahead's judgement (:meth:`LookaheadAgent.judge`) of the positions shown,
    in points (``JUDGE_POINTS`` of its units a point): a search's leaf value from the
    algorithm in place of the value head (``leaf_value="algorithm"``). Reads the board and
    the announced balls from the observation's planes."""
    e: Any = getattr(env, "unwrapped", env)
    if e.observation_mode != "planes":
        raise ValueError(
            f"the look-ahead's judgement reads the planes observation, not {e.observation_mode!r}"
        )
    colours, length = e.colours, e.line_length
    values = np.empty(len(observations), dtype=np.float32)
    for i, planes in enumerate(observations):
        board = np.zeros(planes.shape[1:], dtype=np.int8)
        announced: dict[int, int] = {}
        for c in range(colours):
            board[planes[c] > 0] = c + 1
            announced.update((int(cell), c + 1) for cell in np.flatnonzero(planes[colours + c]))
        state = Lines98State(board, announced, line_length=length, colours=colours)
        values[i] = _JUDGE.judge(state, length, colours) / JUDGE_POINTS
    return values


def spawn_gains(state: Lines98State, moves: np.ndarray, length: int, colours: int) -> np.ndarray:
    """Each move's gain (``move_gains``) on the board it will leave.

    A move that clears a line (its gain holds ``CLEAR_BONUS``) or lands on an announced
    cell (the announcement moves away) counts its gain now; any other brings the announced
    balls in, so it counts its gain on the board with them on it: a spawn can complete,
    block or spoil what the move builds.
    """
    gains = move_gains(state.board, moves, length, colours)
    spawned = state.board.copy()
    flat = spawned.ravel()
    for cell, colour in state.announced.items():
        flat[cell] = colour
    after = move_gains(spawned, moves, length, colours)
    now = (gains >= CLEAR_BONUS) | (flat[moves[:, 1]] != EMPTY)
    return np.where(now, gains, after)


def candidate_order(
    state: Lines98State, moves: np.ndarray, length: int, colours: int
) -> np.ndarray:
    """The look-ahead's candidates, best first: by :func:`spawn_gains`."""
    return np.argsort(-spawn_gains(state, moves, length, colours), kind="stable")


_JUDGE = LookaheadAgent()  # its default weights (judge draws nothing)

register_agent(
    "greedy", GreedyAgent, LINES98_IDS, "the move that most grows one-colour lines (scores now)"
)
register_agent(
    "lookahead",
    LookaheadAgent,
    LINES98_IDS,
    "replays the best greedy moves through the spawn; keeps the roomiest board",
)
register_agent(
    "judge",
    JudgeAgent,
    LINES98_IDS,
    "the look-ahead's first step alone: the move whose board it judges best, no replies",
)

AGENTS = AgentsSpec(
    "lines98",
    training=TRAINING,
    compare=COMPARE,
    search=SEARCH,
    symmetries=SYMMETRIES,
    leaf_value=judged_values,
    ordered_search=lookahead_with_prior,
)
