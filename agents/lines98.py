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
import time
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register_agent
from grid_envs.core.base_env import GridEnv
from grid_envs.lines98 import rules
from grid_envs.lines98.heuristic import CLEAR_BONUS, best_gain, move_gains, potential
from grid_envs.lines98.state import EMPTY, Lines98State

LINES98_IDS = ("GridGames/Lines98*",)


def legal_moves(env: GridEnv) -> np.ndarray:
    """The env's legal moves (its cached mask) as (M, 2) flat (source, target) cells."""
    return rules.mask_to_moves(env.action_masks(), env.game_state().board.size)


class GreedyAgent(Agent):
    """The move that scores now, else the one that most grows the lines in the making on
    the board it leaves (the announced balls on it: :func:`spawn_gains`)."""

    name = "greedy"

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        s: Lines98State = env.game_state()
        e: Any = env
        moves = legal_moves(env)
        if not len(moves):
            return 0
        gains = spawn_gains(s, moves, e.line_length, e.colours)
        best = np.flatnonzero(gains >= gains.max() - 1e-9)
        src, dst = moves[best[self.rng.integers(len(best))]]
        return rules.move_to_action(int(src), int(dst), s.board.size)


class LookaheadAgent(Agent):
    """Plays its best candidates through the rules and the spawn; keeps the best.

    Each candidate is replayed exactly on a copy (its lines clear; if it clears nothing the
    announced balls land on their known cells and their lines clear), and the board that
    results is judged by ``free_weight`` per empty cell, the lines in the making, and
    ``follow_weight`` times the best greedy gain still open on it (``best_gain``; after a
    clear the announced balls are still known, so by :func:`spawn_gains`).
    ``free_weight`` outweighs any count of lines, so a move that clears (five cells freed
    and no spawn) is always taken. The ``candidates`` moves replayed are the first of
    :func:`candidate_order` (gains on the board the announced balls leave); ``time_limit``
    bounds the seconds a move may take.
    """

    name = "lookahead"

    def __init__(
        self,
        env: Any = None,
        seed: int | None = None,
        candidates: int = 12,
        time_limit: float = 0.5,
        free_weight: float = 2000.0,
        follow_weight: float = 0.5,
        clear_weight: float = 600.0,
    ) -> None:
        self.candidates, self.time_limit = candidates, time_limit
        self.free_weight, self.follow_weight = free_weight, follow_weight
        self.clear_weight = clear_weight
        super().__init__(env, seed)

    def judge(self, state: Lines98State, length: int, colours: int) -> float:
        board = state.board
        value = self.free_weight * float((board == EMPTY).sum())
        value += potential(board, length, colours)
        if self.follow_weight:
            moves = rules.mask_to_moves(rules.legal_mask(board), board.size)
            if len(moves) and state.announced:  # after a clear: the next spawn is known
                value += self.follow_weight * float(
                    spawn_gains(state, moves, length, colours).max()
                )
            elif len(moves):
                value += self.follow_weight * best_gain(board, moves, length, colours)
        return value

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        start = time.perf_counter()
        s: Lines98State = env.game_state()
        e: Any = env
        length, colours, n = e.line_length, e.colours, s.board.size
        moves = legal_moves(env)
        if not len(moves):
            return 0
        order = candidate_order(s, moves, length, colours)[: self.candidates]
        best, best_value = int(order[0]), -np.inf
        scratch = np.random.default_rng(int(self.rng.integers(2**63)))
        for k in order.tolist():
            trial = copy.deepcopy(s)
            src, dst = int(moves[k, 0]), int(moves[k, 1])
            rules.play(trial, src, dst, scratch, 0, colours, length)  # announce nothing new
            cleared = trial.balls_cleared - s.balls_cleared
            value = self.judge(trial, length, colours) + self.clear_weight * cleared
            if value > best_value:
                best, best_value = k, value
            if time.perf_counter() - start > self.time_limit:
                break
        return rules.move_to_action(int(moves[best, 0]), int(moves[best, 1]), n)


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


register_agent(
    "greedy", GreedyAgent, LINES98_IDS, "the move that most grows one-colour lines (scores now)"
)
register_agent(
    "lookahead",
    LookaheadAgent,
    LINES98_IDS,
    "replays the best greedy moves through the spawn; keeps the roomiest board",
)
