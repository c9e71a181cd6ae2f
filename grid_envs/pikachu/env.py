"""The Pikachu (Onet) gymnasium environment."""

from __future__ import annotations

from typing import Any

import numpy as np

from grid_envs.core import checks
from grid_envs.core.base_env import GridEnv
from grid_envs.core.jit import FIRST_ROW, compiled
from grid_envs.pikachu import render, rules
from grid_envs.pikachu.solver import plan
from grid_envs.pikachu.state import (
    GRAVITY,
    MAX_KINDS,
    ON_STUCK,
    TOTAL,
    PikachuState,
    check_board,
)


@compiled
def _step_views(
    board: np.ndarray, rows: int, cols: int, counters: np.ndarray, path: np.ndarray,
    action: int, gravity: int, reshuffle: bool, fixed: bool, pair_reward: float,
    win_reward: float, loss_reward: float, step_reward: float, mask: np.ndarray,
    planes: np.ndarray,
) -> tuple[float, bool, bool, bool]:  # fmt: skip
    """A single env's step in one compiled call: the rules' removal (:func:`rules._play`,
    the code a batch runs over its rows), the new mask into ``mask`` and the observation
    planes into ``planes``; (reward, terminated, won, stuck: the board is to be reshuffled,
    which draws, and the planes are then stale)."""
    result = rules._play(
        board, rows, cols, counters, path, action, gravity, reshuffle, fixed, pair_reward,
        win_reward, loss_reward, step_reward, mask,
    )  # fmt: skip
    rules._planes_into(board.reshape((1, board.size)), FIRST_ROW,
                       planes.reshape((1, planes.size)))  # fmt: skip
    return result


class PikachuEnv(GridEnv):
    """Clear the board by removing pairs of equal tiles joined by at most 3 segments.

    ## Description
    The Onet / Pikachu tile-matching game. Two tiles of the same kind can be removed when a
    path of at most 3 straight segments (2 turns) joins them through empty cells; the ring
    just outside the board counts as empty. The board is cleared when no tile is left. When
    no pair can be removed, ``on_stuck="shuffle"`` reshuffles the remaining tiles (always
    leaving a move when any layout has one) for a penalty, and ``"end"`` ends the episode.
    ``gravity`` makes tiles slide after each removal, as in the real game's later levels.

    ## Action Space
    ``Discrete(n * (n - 1) / 2)`` for ``n = rows * cols`` cells: one action per unordered
    pair of cells ``i < j`` (flat indices ``r * cols + c``), numbered row by row of the
    upper triangle: ``action = i * (2n - i - 1) / 2 + (j - i - 1)``. Convert with
    :func:`grid_envs.pikachu.rules.pair_to_action` / :func:`action_to_pair`. The mask holds
    exactly the removable pairs.

    ## Observation Space
    ``Box(0, 1, (kinds, rows, cols), uint8)``: plane ``k - 1`` marks the tiles of kind
    ``k``; empty cells are 0 everywhere. ``observation_mode="compact"`` gives the (rows, cols)
    grid of kinds (0 empty).

    ## Rewards
    ``pair_reward`` per pair, by default 1 / (number of pairs) so a cleared board earns 1.0,
    plus ``win_reward`` (+1) when the board is cleared; ``shuffle_reward`` (-0.1) per
    forced reshuffle; ``loss_reward`` (-1) when stuck with ``on_stuck="end"`` (or when no
    layout allows a move); ``step_reward`` (0) every legal move. A masked action pays
    ``illegal_reward`` (-0.05).

    ## Starting State
    A random board (every kind ``rows * cols / kinds`` times, an even number), or ``levels=``;
    a starting board without a move is reshuffled. ``solvable_only=True`` draws boards until
    the planner clears one within ``plan_nodes`` search nodes (a count, not a time limit, so
    that a seed gives the same board on any machine; the default clears every clearable deal
    of the benchmark's first 100 classic boards, which needed at most 285).

    ## Episode End
    Terminated: the board is cleared (``info["is_success"]``), or stuck with ``"end"``.
    Truncated: the registered time limit.

    ## Information
    ``reset`` and ``step`` return an ``info`` dict with:

    - ``action_mask``: (n,) bool, the legal actions now (as :meth:`action_masks`).
    - ``illegal_action``: whether the step's action was masked (a no-op).
    - ``is_success``: whether the game is won.
    - ``tiles_left``: tiles still on the board.
    - ``pairs_removed``: pairs removed this episode.
    - ``shuffles``: reshuffles so far (``on_stuck="shuffle"``).
    - ``path``: the corner points of the last removal, for drawing, as a (4, 2) int64
      array of (row, col) in order from the first tile to the second (the ring around the
      board is row or column -1, or rows or cols); rows past the path's corners, and every
      row before the first removal, are (-1, -1), which no corner is (a corner lies on a
      tile's row or column). ``path[(path != -1).any(axis=1)]`` keeps the corners.

    ## Arguments
    ``rows``, ``cols``, ``kinds`` (9, 16, 36: the classic board; with ``levels``, by default
    the board's own, and a board that does not fit those given is refused), ``levels`` (one
    board: an int array, 0 empty, kinds from 1, each an even number of times),
    ``on_stuck``, ``gravity`` (none, down, up, left, right), ``solvable_only``,
    ``plan_nodes``, the rewards (``pair_reward``, ``win_reward``, ``shuffle_reward``,
    ``loss_reward``, ``step_reward``), ``observation_mode``, ``render_mode``, ``tile_size``.

    ## Reference results
    Measured on this project's machine: docs/games/pikachu.md.

    ## Shaping
    ``--shaping mobility`` (the pairs removable now) made no difference where it was
    measured (docs/shaping.md): on the classic board a lost deal is lost many moves before it
    shows, which no one-step potential sees. Use the search (``--agent search``) or the
    planner as the teacher.

    ## Version History
    - v0: first release. Since 0.2.0 ``Pikachu-v0`` ends a stuck board lost
      (``on_stuck="end"``), so clearing a deal takes planning; the reshuffling rules it had
      are ``Pikachu-Shuffle-v0``.
    - Since 0.3.0 every game names its rewards one way (signed, added as given): ``win_reward``
      (was ``clear_reward``), ``loss_reward`` (``stuck_penalty``), ``shuffle_reward``
      (``shuffle_penalty``), ``illegal_reward`` (``illegal_action_penalty``); its level source
      is ``levels`` (was ``board``), as in Sokoban; an old name is refused with a message naming
      the new one.
    """

    keys = "R1 C1 R2 C2 matches the tiles at row R1, column C1 and row R2, column C2"
    shuffle_tries = rules.SHUFFLE_TRIES  # random layouts of a stuck board before the placed one
    default_illegal_reward = -0.05

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        rows: int | None = None,
        cols: int | None = None,
        kinds: int | None = None,
        levels: np.ndarray | list[list[int]] | None = None,
        on_stuck: str = "shuffle",
        gravity: str = "none",
        solvable_only: bool = False,
        plan_nodes: int = 2_000,
        pair_reward: float | None = None,
        win_reward: float = 1.0,
        shuffle_reward: float = -0.1,
        loss_reward: float = -1.0,
        step_reward: float = 0.0,
        illegal_reward: float | None = None,
        observation_mode: str = "planes",
        tile_size: int = 24,
        time_limit: int | None = None,
    ) -> None:
        checks.choice("on_stuck", on_stuck, ON_STUCK)
        checks.choice("gravity", gravity, GRAVITY)
        self.fixed_board, rows, cols, kinds = _board_settings(levels, rows, cols, kinds)
        self.rows, self.cols, self.kinds = int(rows), int(cols), int(kinds)
        self.on_stuck, self.gravity = on_stuck, gravity
        self.solvable_only = checks.flag("solvable_only", solvable_only)
        self.plan_nodes = checks.integer("plan_nodes", plan_nodes, 1)
        if pair_reward is not None:
            pair_reward = checks.real("pair_reward", pair_reward)
        rewards = checks.reals(
            win_reward=win_reward,
            shuffle_reward=shuffle_reward,
            loss_reward=loss_reward,
            step_reward=step_reward,
        )
        cells = rows * cols
        super().__init__(
            n_actions=rules.n_pairs(cells),
            obs_shape=(rows, cols),
            n_planes=self.kinds,
            render_mode=render_mode,
            observation_mode=observation_mode,
            illegal_reward=illegal_reward,
            tile_size=tile_size,
            compact_high=max(self.kinds, 1),
            frame_shape=(rows + 2, cols + 2),  # the ring around the board, where paths run
            time_limit=time_limit,
        )
        self.rewards = rules.Rewards(pair_reward, **rewards)
        self.state = PikachuState(np.zeros((rows, cols), dtype=np.int16), total=1)
        self._mask_key = b""
        self._mask_value = np.zeros(0, dtype=bool)
        # the observation planes a step's compiled call made, for the state it left
        self._fresh_planes: tuple[PikachuState, np.ndarray] | None = None

    # ------------------------------------------------------------- episode
    def _new_board(self) -> np.ndarray:
        if self.fixed_board is not None:
            return self.fixed_board.copy()
        for _ in range(50 if self.solvable_only else 1):
            board = rules.random_board(self.rows, self.cols, self.kinds, self.np_random)
            if not self.solvable_only or self._planner_clears(board):
                return board
        raise RuntimeError("no board the planner clears was found in 50 draws")

    def _planner_clears(self, board: np.ndarray) -> bool:
        """The exact search alone, on a node budget: the same verdict on every machine."""
        return plan(board, self.gravity, max_seconds=None, node_limit=self.plan_nodes).cleared

    @property
    def random_deals(self) -> bool:
        """Whether each episode deals a random board (no fixed board, no planner check):
        the deal then runs compiled, for one env and for a batch alike."""
        return self.fixed_board is None and not self.solvable_only

    @property
    def total_pairs(self) -> int:
        """The pairs this episode's deal started with (the state's counter)."""
        return int(self.state.counters[TOTAL])

    def _new_episode(self, options: dict[str, Any]) -> None:
        if self.random_deals:  # dealt, with its mask, by the compiled rule
            flat = np.empty(self.rows * self.cols, dtype=np.int16)
            mask = np.empty(self._n_actions, dtype=bool)
            rules.deal(flat, self.rows, self.cols, self.kinds, self.np_random, mask)
            board = flat.reshape(self.rows, self.cols)
            self._mask_key, self._mask_value = board.tobytes(), mask
        else:
            board = self._new_board()
        self.state = PikachuState(board, total=max(1, int(np.count_nonzero(board)) // 2))
        if not self._mask_now().any() and self.state.tiles_left:
            rules.shuffle(board, self.np_random)  # no penalty: the deal itself was stuck

    def _mask_now(self) -> np.ndarray:
        """The mask of the board as it is, computed once per board: the stuck check in
        ``_apply`` and the base env's mask after the step share it."""
        key = self.state.board.tobytes()
        if key != self._mask_key:
            self._mask_key = key
            self._mask_value = rules.legal_mask(self.state.board)
        return self._mask_value

    def _legal_mask(self) -> np.ndarray:
        return self._mask_now()

    def _apply(self, action: int) -> tuple[float, bool, bool]:
        return self._apply_and_mask(action)[:3]

    def _apply_and_mask(self, action: int) -> tuple[float, bool, bool, np.ndarray, bool]:
        s, r = self.state, self.rewards
        board = rules.contiguous_board(s)
        mask = np.empty(self._n_actions, dtype=bool)  # the board's after the step
        planes = np.empty((self.kinds, self.rows, self.cols), dtype=np.uint8)
        reward, terminated, won, stuck = _step_views(
            board, self.rows, self.cols, s.counters, s.path, action,
            GRAVITY.index(self.gravity), self.on_stuck == "shuffle", r.pair_reward is not None,
            float(r.pair_reward or 0.0), float(r.win_reward), float(r.loss_reward),
            float(r.step_reward), mask, planes,
        )  # fmt: skip
        if stuck:  # the only part of a step that draws, and it changes the board
            reward, terminated, won = rules.unstick(s, reward, self.np_random, r, mask,
                                                    self.shuffle_tries)  # fmt: skip
        else:
            self._fresh_planes = (s, planes)
        self._mask_key, self._mask_value = s.board.tobytes(), mask
        # a game the step leaves in play has a move: the step unstuck the board, or ended it
        return float(reward), bool(terminated), bool(won), mask, not terminated

    # ------------------------------------------------------------ views
    def _planes(self) -> np.ndarray:
        fresh = self._fresh("_fresh_planes")
        if fresh is not None:
            return fresh
        board = self.state.board.reshape(1, -1)
        return rules.planes(board, self.kinds, self.rows, self.cols)[0]

    def _compact(self) -> np.ndarray:
        return self.state.board.astype(np.uint8)

    def _ansi(self) -> str:
        return render.ansi(self.state.board)

    def draw(self, state: PikachuState, over: bool = False) -> np.ndarray:
        return render.rgb(state.board, self.kinds, self.tile_size, state.last_path)

    def action_text(self, action: int) -> str:
        """``(r, c) and (r, c)``: the two tiles matched."""
        (r1, c1), (r2, c2) = self.action_cells(action)
        return f"({r1}, {c1}) and ({r2}, {c2})"

    def action_cells(self, action: int) -> list[tuple[int, int]]:
        i, j = rules.action_to_pair(int(action), self.rows * self.cols)
        return [divmod(i, self.cols), divmod(j, self.cols)]

    def _game_info(self) -> dict[str, Any]:
        s = self.state
        return {
            "tiles_left": s.tiles_left,
            "pairs_removed": s.removed,
            "shuffles": s.shuffles,
            "path": s.path.copy(),
        }

    # -------------------------------------------------------- snapshots
    def _get_state(self) -> Any:
        return self.state

    def _set_state(self, state: Any) -> None:
        self.state = state

    def _check_game(self, game: Any) -> None:
        checks.instance("the snapshot's game", game, PikachuState)
        game.check(self.rows, self.cols, self.kinds)

    @property
    def deterministic(self) -> bool:
        """The board is in view; only a reshuffle (``on_stuck="shuffle"``) draws."""
        return self.on_stuck != "shuffle"

    def _public_state(self) -> PikachuState:
        return self.state

    def action_for_key(self, key: str) -> int | None:
        """``r1,c1,r2,c2``: the two tiles to match."""
        parts = key.replace(",", " ").split()
        if len(parts) == 4 and all(p.isdigit() for p in parts):
            r1, c1, r2, c2 = (int(p) for p in parts)
            cells = self.rows * self.cols
            if max(r1, r2) < self.rows and max(c1, c2) < self.cols and (r1, c1) != (r2, c2):
                return rules.pair_to_action(r1 * self.cols + c1, r2 * self.cols + c2, cells)
            return None
        return super().action_for_key(key)


def _board_settings(
    levels: Any, rows: int | None, cols: int | None, kinds: int | None
) -> tuple[np.ndarray | None, int, int, int]:
    """The fixed board ``levels`` gives (None for random deals) and the board's rows,
    columns and kinds, checked: the settings given, which a fixed board must fit, else the
    fixed board's own, else the classic board's (9, 16, 36)."""
    if levels is None:
        rows, cols, kinds = rows or 9, cols or 16, kinds or 36
        rows = checks.side("rows", rows, 1, checks.MAX_PAIR_SIDE)
        cols = checks.side("cols", cols, 1, checks.MAX_PAIR_SIDE)
        kinds = checks.integer("kinds", kinds, 1, MAX_KINDS)
        rules.random_board(rows, cols, kinds, np.random.default_rng(0))  # validates
        return None, rows, cols, kinds
    try:
        fixed = np.asarray(levels)
    except ValueError:
        fixed = np.zeros(0)
    if fixed.ndim != 2 or not np.issubdtype(fixed.dtype, np.integer) or (fixed < 0).any():
        raise ValueError("levels must be one board, a 2-D array of kinds (0 empty, 1.. tiles)")
    checks.shape("the board's shape", fixed.shape, checks.MAX_PAIR_SIDE)
    rows = checks.side("rows", fixed.shape[0] if rows is None else rows, 1, checks.MAX_PAIR_SIDE)
    cols = checks.side("cols", fixed.shape[1] if cols is None else cols, 1, checks.MAX_PAIR_SIDE)
    kinds = checks.integer("kinds", max(1, int(fixed.max())) if kinds is None else kinds, 1,
                           MAX_KINDS)  # fmt: skip
    if fixed.shape != (rows, cols):
        raise ValueError(
            f"levels: a {fixed.shape[0]}x{fixed.shape[1]} board, but this env's board is "
            f"{rows}x{cols}; pass rows={fixed.shape[0]}, cols={fixed.shape[1]} with it"
        )
    if fixed.max(initial=0) > kinds:
        raise ValueError(
            f"levels: the board holds kind {int(fixed.max())}, but this env has {kinds} kinds "
            f"(one observation plane each); pass kinds={int(fixed.max())} or more with it"
        )
    return check_board(fixed.astype(np.int16), rows, cols, kinds), rows, cols, kinds
