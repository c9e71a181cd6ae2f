"""The Lines98 gymnasium environment: keep the board from filling up by lining up colours."""

from __future__ import annotations

from typing import Any

import numpy as np

from grid_envs.core import checks
from grid_envs.core.base_env import GridEnv
from grid_envs.core.jit import FIRST_ROW, compiled, lone, over_threads
from grid_envs.lines98 import render, rules
from grid_envs.lines98.state import N_ANN, Lines98State


def planes_batch(
    boards: np.ndarray, ann_cell: np.ndarray, ann_colour: np.ndarray, held: np.ndarray,
    colours: int,
) -> np.ndarray:  # fmt: skip
    """The observation planes (k, 2C, rows, cols) of a batch of boards and their announced
    balls (each board's announced cells and colours (k, S), the first ``held[b]`` of row
    b): a plane per colour for the balls, then one per colour for the announced balls.
    Allocated by numpy (huge pages for a large array, where numba's allocation page-faults
    through it) and filled by compiled code split over the cores (:func:`over_threads`)."""
    k, rows, cols = boards.shape
    planes = np.empty((k, 2 * colours, rows, cols), dtype=np.uint8)
    flat = planes.reshape(k, 2 * colours * rows * cols)

    def fill(idx: np.ndarray) -> np.ndarray:
        return _planes_into(boards, ann_cell, ann_colour, held, colours, flat, idx)

    over_threads(fill, np.arange(k))
    return planes


@compiled
def _planes_into(
    boards: np.ndarray, ann_cell: np.ndarray, ann_colour: np.ndarray, held: np.ndarray,
    colours: int, flat: np.ndarray, idx: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """:func:`planes_batch` of the boards ``idx`` into the same rows of ``flat`` (k, 2C *
    cells); ``idx``."""
    _, rows, cols = boards.shape
    n = rows * cols
    for b in idx:
        flat[b] = 0
        board = boards[b].ravel()
        for cell in range(n):
            if board[cell]:
                flat[b, (int(board[cell]) - 1) * n + cell] = 1
        for s in range(held[b]):
            flat[b, (colours + int(ann_colour[b, s]) - 1) * n + ann_cell[b, s]] = 1
    return idx


def announced_info(
    ann_cell: np.ndarray, ann_colour: np.ndarray, held: np.ndarray, cols: int, spawn: int
) -> np.ndarray:  # fmt: skip
    """``info["announced"]`` of a batch of games, (k, spawn, 3) int64: each game's
    announced balls as rows (row, col, colour) in the order they were announced (each
    board's cells and colours (k, S), the first ``held[b]`` of row b), then rows of -1
    where fewer are announced (only on a nearly full board). Allocated by numpy, filled by
    compiled code (an array made in compiled code costs more to hand back)."""
    out = np.empty((len(held), spawn, 3), dtype=np.int64)
    _announced_into(ann_cell, ann_colour, held, cols, out)
    return out


@compiled
def _announced_into(
    ann_cell: np.ndarray, ann_colour: np.ndarray, held: np.ndarray, cols: int, out: np.ndarray
) -> None:  # fmt: skip
    """:func:`announced_info` into ``out``."""
    for b in range(len(held)):
        for s in range(out.shape[1]):
            if s < held[b]:
                cell = ann_cell[b, s]
                out[b, s, 0], out[b, s, 1], out[b, s, 2] = (
                    cell // cols,
                    cell % cols,
                    ann_colour[b, s],
                )
            else:
                out[b, s] = -1


@compiled
def _step_views(
    board: np.ndarray, rows: int, cols: int, ann_cell: np.ndarray, ann_colour: np.ndarray,
    counters: np.ndarray, cleared: np.ndarray, action: int, rngs: Any, count: int,
    colours: int, line_length: int, target_score: int, rewards: np.ndarray, mask: np.ndarray,
    planes: np.ndarray, announced: np.ndarray,
) -> tuple[float, bool, bool, bool]:  # fmt: skip
    """A single env's step in one compiled call (``rngs``: :func:`lone`): the rules'
    step, then the new mask into ``mask``, the observation planes into ``planes`` (2C *
    cells) and ``info["announced"]`` into ``announced`` (spawn, 3), the same code a batch
    runs over its rows; (reward, terminated, won, whether any move is legal)."""
    reward, terminated, won = rules._step(
        board, rows, cols, ann_cell, ann_colour, counters, cleared, action, rngs, 0, count,
        colours, line_length, target_score, rewards,
    )  # fmt: skip
    movable = rules._mask_one(board, rows, cols, mask)
    n = rows * cols
    held = counters[N_ANN : N_ANN + 1]
    one_cell, one_colour = ann_cell.reshape((1, n)), ann_colour.reshape((1, n))
    _planes_into(board.reshape((1, rows, cols)), one_cell, one_colour, held, colours,
                 planes.reshape((1, planes.size)), FIRST_ROW)  # fmt: skip
    _announced_into(one_cell, one_colour, held, cols, announced.reshape((1, count, 3)))
    return reward, terminated, won, movable


class Lines98Env(GridEnv):
    """Lines98 (Color Lines): move a ball along a free path; five in a row of one colour clear.

    ## Description
    A ``rows`` x ``cols`` board with balls of ``colours`` colours. A move takes a ball to an
    empty cell joined to it by a 4-connected path of empty cells (found by BFS; announced
    balls do not block). Every line of ``line_length`` or more balls of one colour through
    the moved ball (horizontal, vertical or diagonal) is cleared and scored. If the move
    cleared nothing, the ``spawn`` announced balls appear on their cells (lines they
    complete are cleared and scored too) and ``spawn`` new balls are announced, on cells
    drawn uniformly from the free ones (exactly that many, unless fewer cells are free).
    A ball moved onto an announced cell sends that announcement to another free cell drawn
    uniformly, as the real game does. A move that empties the board also brings the
    announced balls in. The game starts with exactly ``initial`` balls and ends when the
    board is full.

    ## Action Space
    ``Discrete(n * n)`` with ``n = rows * cols``: action ``source * n + target`` for flat
    cells ``r * cols + c`` (``rules.move_to_action`` / ``rules.action_to_move``). The mask
    opens exactly the moves of a ball to a cell its free region reaches, computed after the
    spawns of the step.

    ## Observation Space
    ``Box(0, 1, (2 * colours, rows, cols), uint8)``: planes ``0..C-1`` the balls of colour
    1..C, planes ``C..2C-1`` the announced balls of colour 1..C (position and colour, as the
    source article's negative colours). ``observation_mode="compact"`` gives one code per cell: 0
    empty, 1..C a ball, C+1..2C an announced ball.

    ## Rewards
    The points scored in the step: 2 a cleared ball (once, even on two
    crossing lines) plus 2 for each ball a line has beyond ``line_length``; lines completed
    by spawned balls score too; ``step_reward`` (0) every legal move; ``win_reward`` (0) when
    the score reaches ``target_score``; ``loss_reward`` (0) when the board fills;
    ``illegal_reward`` (-1) for a masked move (the state does not change).

    ## Starting State
    ``initial`` balls of uniform colours on uniformly drawn cells and ``spawn`` announced.

    ## Episode End
    Terminated when the board is full (a loss) or, with ``target_score``, when the score
    reaches it (a win, ``info["is_success"]``). Truncated by the registered time limit.

    ## Information
    ``reset`` and ``step`` return an ``info`` dict with:

    - ``action_mask``: (n,) bool, the legal actions now (as :meth:`action_masks`).
    - ``illegal_action``: whether the step's action was masked (a no-op).
    - ``is_success``: whether the game is won.
    - ``score``: the points so far.
    - ``balls_cleared``: balls removed in lines so far.
    - ``moves``: moves made.
    - ``empty_cells``: free cells on the board.
    - ``announced``: the balls that come next, a (spawn, 3) int array of rows (row, col,
      colour) in the order they were announced, then rows of -1 if fewer are announced
      (only on a nearly full board).

    ## Arguments
    ``rows``, ``cols`` (9, 9), ``colours`` (7), ``line_length`` (5), ``initial`` (5),
    ``spawn`` (3), ``target_score`` (None), ``step_reward``, ``win_reward``, ``loss_reward``,
    ``illegal_reward``, ``observation_mode``, ``render_mode``, ``tile_size``.

    ## Reference results
    Measured on this project's machine: docs/games/lines98.md.

    ## Shaping
    ``--shaping lines`` (the lines in the making) made no difference where it was measured
    (docs/shaping.md). Teach instead (``--teacher greedy``, or the look-ahead with
    ``--warm-teacher greedy``).

    ## Version History
    - v0: first release.
    - Since 0.3.0 every game names its rewards one way (signed, added as given): ``loss_reward``
      (was ``game_over_penalty``), ``illegal_reward`` (``illegal_action_penalty``); an old name
      is refused with a message naming the new one.
    - Since 0.3.0 ``info["announced"]`` is a (spawn, 3) int array (was a list of tuples),
      so a batch gives one (num_envs, spawn, 3) array.
    """

    keys = "R1 C1 R2 C2 moves the ball at row R1, column C1 to row R2, column C2"
    default_illegal_reward = -1.0

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        rows: int = 9,
        cols: int = 9,
        colours: int = 7,
        line_length: int = 5,
        initial: int = 5,
        spawn: int = 3,
        target_score: int | None = None,
        loss_reward: float = 0.0,
        step_reward: float = 0.0,
        win_reward: float = 0.0,
        illegal_reward: float | None = None,
        observation_mode: str = "planes",
        tile_size: int = 24,
        time_limit: int | None = None,
    ) -> None:
        rows = checks.side("rows", rows, 2, checks.MAX_PAIR_SIDE)
        cols = checks.side("cols", cols, 2, checks.MAX_PAIR_SIDE)
        colours = checks.integer("colours", colours, 1, 120)
        line_length = checks.integer("line_length", line_length, 2, max(rows, cols))
        initial = checks.integer("initial", initial, 1, rows * cols - 1)
        spawn = checks.integer("spawn", spawn, 1, rows * cols - 1)
        if target_score is not None:
            target_score = checks.integer("target_score", target_score, 1)
        rewards = checks.reals(
            loss_reward=loss_reward, step_reward=step_reward, win_reward=win_reward
        )
        self.rows, self.cols, self.colours = rows, cols, colours
        self.line_length, self.initial, self.spawn = int(line_length), int(initial), int(spawn)
        self.target_score = target_score
        self.rewards = rules.Rewards(**rewards)
        self._reward_array = self.rewards.as_array()
        n = self.rows * self.cols
        super().__init__(
            n_actions=n * n,
            obs_shape=(self.rows, self.cols),
            n_planes=2 * self.colours,
            render_mode=render_mode,
            observation_mode=observation_mode,
            illegal_reward=illegal_reward,
            tile_size=tile_size,
            compact_high=2 * self.colours,
            time_limit=time_limit,
        )
        self.state: Lines98State | None = None
        self._fresh_planes: tuple[Lines98State, np.ndarray] | None = None
        self._fresh_announced: tuple[Lines98State, np.ndarray] | None = None

    # ------------------------------------------------------------- episode
    def _new_episode(self, options: dict[str, Any]) -> None:
        self.state = rules.new_game(
            self.np_random, self.rows, self.cols, self.colours, self.initial, self.spawn,
            self.line_length,
        )  # fmt: skip

    def _legal_mask(self) -> np.ndarray:
        assert self.state is not None
        return rules.legal_mask(self.state.board)

    def _apply(self, action: int) -> tuple[float, bool, bool]:
        return self._apply_and_mask(action)[:3]

    def _apply_and_mask(self, action: int) -> tuple[float, bool, bool, np.ndarray, bool]:
        s = self.state
        assert s is not None
        mask = np.empty(s.flat.size**2, dtype=bool)
        planes = np.empty((2 * self.colours, self.rows, self.cols), dtype=np.uint8)
        announced = np.empty((self.spawn, 3), dtype=np.int64)
        reward, terminated, won, movable = _step_views(
            s.flat, self.rows, self.cols, s.ann_cell, s.ann_colour, s.counters, s.cleared,
            action, lone(self.np_random), self.spawn, self.colours, self.line_length,
            self.target_score or 0, self._reward_array, mask, planes, announced,
        )  # fmt: skip
        # made with the step: the observation and the info of this step take them once
        self._fresh_planes, self._fresh_announced = (s, planes), (s, announced)
        return float(reward), bool(terminated), bool(won), mask, bool(movable)

    def _no_legal_action(self) -> float:
        return self.rewards.loss_reward

    # ------------------------------------------------------------ views
    def _announced(
        self, state: Lines98State | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The announced balls of ``state`` (default: the game's) as a batch of one's (1, S)
        cells and colours and (1,) count, views of the state's arrays."""
        s = self.state if state is None else state
        assert s is not None
        return s.ann_cell[None], s.ann_colour[None], s.counters[N_ANN : N_ANN + 1]

    def _planes(self) -> np.ndarray:
        assert self.state is not None
        fresh = self._fresh("_fresh_planes")
        if fresh is not None:
            return fresh
        board = self.state.board[None]
        return planes_batch(board, *self._announced(), self.colours)[0]

    def _codes(self, state: Lines98State | None = None) -> np.ndarray:
        s = self.state if state is None else state
        assert s is not None
        return render.codes(s.board[None], *self._announced(s), self.colours)[0]

    def _compact(self) -> np.ndarray:
        return self._codes()

    def _ansi(self) -> str:
        s = self.state
        assert s is not None
        return f"{render.ansi(self._codes(), self.colours)}\nscore {s.score}  moves {s.moves}"

    def draw(self, state: Lines98State, over: bool = False) -> np.ndarray:
        return render.rgb(self._codes(state), self.colours, self.tile_size)

    def action_text(self, action: int) -> str:
        """``(r, c) to (r, c)``: the ball moved and where to."""
        (r1, c1), (r2, c2) = self.action_cells(action)
        return f"({r1}, {c1}) to ({r2}, {c2})"

    def action_cells(self, action: int) -> list[tuple[int, int]]:
        source, target = rules.action_to_move(action, self.rows * self.cols)
        return [divmod(source, self.cols), divmod(target, self.cols)]

    def _game_info(self) -> dict[str, Any]:
        s = self.state
        assert s is not None
        announced = self._fresh("_fresh_announced")
        if announced is None:
            announced = announced_info(*self._announced(), self.cols, self.spawn)[0]
        return {
            "score": s.score,
            "balls_cleared": s.balls_cleared,
            "moves": s.moves,
            "empty_cells": s.empty_cells,
            "announced": announced,
        }

    # -------------------------------------------------------- snapshots
    def _get_state(self) -> Any:
        return self.state

    def _set_state(self, state: Any) -> None:
        self.state = state

    def _check_game(self, game: Any) -> None:
        checks.instance("the snapshot's game", game, Lines98State)
        game.check(self.rows, self.cols, self.colours, self.line_length)

    def _settings_key(self) -> tuple[tuple[str, Any], ...]:
        return (("line_length", self.line_length), ("spawn", self.spawn))

    def _public_state(self) -> Lines98State:
        assert self.state is not None
        return self.state

    def action_for_key(self, key: str) -> int | None:
        """``r1,c1,r2,c2``: the ball to move and where to."""
        parts = key.replace(",", " ").split()
        if len(parts) == 4 and all(p.isdigit() for p in parts):
            r1, c1, r2, c2 = (int(p) for p in parts)
            if max(r1, r2) < self.rows and max(c1, c2) < self.cols:
                n = self.rows * self.cols
                return rules.move_to_action(r1 * self.cols + c1, r2 * self.cols + c2, n)
            return None
        return super().action_for_key(key)
