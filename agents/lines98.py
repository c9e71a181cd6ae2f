"""Lines98's baselines: a greedy move scorer and a look-ahead that plays the spawn through.

Both read the board from ``env.game_state()`` and the legal moves from the env's mask (the
BFS reachability of the rules). The heuristic counts *lines in the making*: every window of
``line_length`` cells in a row, column or diagonal whose balls are all of one colour is
worth ``4 ** balls`` (a full window is a line the move clears). The greedy agent scores all
legal moves at once with window counts; the look-ahead agent replays its best candidates
exactly through the rules (the announced balls land on their known cells and their lines
clear) and judges the boards that result, mostly by free space, within a time budget.
"""

from __future__ import annotations

import copy
import time
from functools import lru_cache
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register_agent
from grid_envs.core.base_env import GridEnv
from grid_envs.lines98 import rules
from grid_envs.lines98.state import EMPTY, Lines98State

LINES98_IDS = ("GridGames/Lines98*",)
CLEAR_BONUS = 3000.0


@lru_cache(maxsize=16)
def windows(rows: int, cols: int, length: int) -> np.ndarray:
    """Every run of ``length`` cells in a line direction, (W, length) flat cells."""
    out = []
    for dr, dc in rules.LINE_DIRECTIONS:
        for r in range(rows):
            for c in range(cols):
                cells = [(r + k * dr, c + k * dc) for k in range(length)]
                if all(0 <= rr < rows and 0 <= cc < cols for rr, cc in cells):
                    out.append([rr * cols + cc for rr, cc in cells])
    return np.array(out, dtype=np.int64).reshape(-1, length)


@lru_cache(maxsize=16)
def cell_windows(rows: int, cols: int, length: int) -> np.ndarray:
    """(cells, K): the windows each cell lies in, padded with the index W (no window)."""
    w = windows(rows, cols, length)
    lists: list[list[int]] = [[] for _ in range(rows * cols)]
    for k, cells in enumerate(w.tolist()):
        for cell in cells:
            lists[cell].append(k)
    width = max(len(x) for x in lists)
    return np.array([x + [len(w)] * (width - len(x)) for x in lists], dtype=np.int64)


@lru_cache(maxsize=16)
def incidence(rows: int, cols: int, length: int) -> np.ndarray:
    """(cells, W + 1) bool: whether the cell lies in the window (never in the padding)."""
    w = windows(rows, cols, length)
    inc = np.zeros((rows * cols, len(w) + 1), dtype=bool)
    for k, cells in enumerate(w.tolist()):
        inc[cells, k] = True
    return inc


def window_values(length: int) -> np.ndarray:
    """The worth of a one-colour window holding k balls (k = 0..length).

    ``4 ** k - 1``, and a full window (a line that clears: five balls off the board and no
    spawn) is worth ``CLEAR_BONUS`` more.
    """
    values = 4.0 ** np.arange(length + 1) - 1
    values[length] += CLEAR_BONUS
    return values


def potential(board: np.ndarray, length: int, colours: int) -> float:
    """The sum of the one-colour windows' worth on ``board``."""
    w = windows(*board.shape, length)
    balls = board.ravel()[w]
    counts = np.zeros((len(w), colours + 1), dtype=np.int64)
    np.add.at(counts, (np.arange(len(w))[:, None], balls), 1)
    total = length - counts[:, 0]
    pure = counts[:, 1:].max(axis=1) == total
    return float(window_values(length)[total][pure].sum())


def move_gains(board: np.ndarray, moves: np.ndarray, length: int, colours: int) -> np.ndarray:
    """For every move (source, target), the change of ``potential`` it makes (no spawn).

    Only the windows through the source or the target change, and only in the moved
    colour: a window gains the ball if it holds the target, loses it if it holds the
    source (both: no change), and is worth something only while one colour fills it.
    """
    rows, cols = board.shape
    w = windows(rows, cols, length)
    values = window_values(length)
    balls = board.ravel()[w]
    counts = np.zeros((len(w) + 1, colours + 1), dtype=np.int64)  # + the padding window
    np.add.at(counts, (np.arange(len(w))[:, None], balls), 1)
    counts[len(w), 0] = length  # the padding window: empty, never changes
    total = length - counts[:, 0]
    ranked = np.sort(counts[:, 1:], axis=1)
    top = ranked[:, -1]
    second = ranked[:, -2] if colours > 1 else np.zeros_like(top)
    old = np.where(top == total, values[total], 0.0)
    src, dst = moves[:, 0], moves[:, 1]
    colour = board.ravel()[src].astype(np.int64)[:, None]
    table = cell_windows(rows, cols, length)
    gain = np.zeros(len(moves))
    for cells, sign, other in ((src, -1, dst), (dst, 1, src)):
        k = table[cells]  # (M, K) windows through this end of the move
        inside_other = incidence(rows, cols, length)[other[:, None], k]
        delta = np.where(inside_other | (k == len(w)), 0, sign)
        mine = counts[k, colour]
        others = total[k] - mine
        biggest_other = np.where(mine == top[k], second[k], top[k])
        new_mine = np.clip(mine + delta, 0, length)
        new = np.where(
            others == 0,
            values[new_mine],
            np.where((new_mine == 0) & (biggest_other == others), values[others], 0.0),
        )
        gain += (new - old[k]).sum(axis=1)
    return gain


def legal_moves(env: GridEnv) -> np.ndarray:
    n = env.game_state().board.size
    legal = np.flatnonzero(env.action_masks())
    return np.stack([legal // n, legal % n], axis=1)


class GreedyAgent(Agent):
    """The move that scores now, else the one that most grows the lines in the making."""

    name = "greedy"

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        s: Lines98State = env.game_state()
        e: Any = env
        moves = legal_moves(env)
        if not len(moves):
            return 0
        gains = move_gains(s.board, moves, e.line_length, e.colours)
        best = np.flatnonzero(gains >= gains.max() - 1e-9)
        src, dst = moves[best[self.rng.integers(len(best))]]
        return rules.move_to_action(int(src), int(dst), s.board.size)


class LookaheadAgent(Agent):
    """Plays the best greedy candidates through the rules and the spawn; keeps the best.

    Each candidate is replayed exactly on a copy (its lines clear; if it clears nothing the
    announced balls land on their known cells and their lines clear), and the board that
    results is judged by ``free_weight`` per empty cell, the lines in the making, and the
    best greedy gain still open on it. ``candidates`` bounds the moves replayed and
    ``time_limit`` the seconds a move may take.
    """

    name = "lookahead"

    def __init__(
        self,
        env: Any = None,
        seed: int | None = None,
        candidates: int = 12,
        time_limit: float = 0.5,
        free_weight: float = 300.0,
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
            legal = np.flatnonzero(rules.legal_mask(board))
            if len(legal):
                n = board.size
                moves = np.stack([legal // n, legal % n], axis=1)
                value += self.follow_weight * float(move_gains(board, moves, length, colours).max())
        return value

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        start = time.perf_counter()
        s: Lines98State = env.game_state()
        e: Any = env
        length, colours, n = e.line_length, e.colours, s.board.size
        moves = legal_moves(env)
        if not len(moves):
            return 0
        gains = move_gains(s.board, moves, length, colours)
        order = np.argsort(-gains, kind="stable")[: self.candidates]
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


register_agent(
    "greedy", GreedyAgent, LINES98_IDS, "the move that most grows one-colour lines (scores now)"
)
register_agent(
    "lookahead",
    LookaheadAgent,
    LINES98_IDS,
    "replays the best greedy moves through the spawn; keeps the roomiest board",
)
