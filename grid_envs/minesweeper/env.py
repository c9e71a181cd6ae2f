"""The Minesweeper gymnasium environment."""

from __future__ import annotations

from typing import Any

import numpy as np

from grid_envs.core import checks
from grid_envs.core.base_env import GridEnv
from grid_envs.minesweeper import render, rules
from grid_envs.minesweeper.belief import MineBelief
from grid_envs.minesweeper.rules import FLAG_PLANE, HIDDEN_PLANE, N_NUMBER_PLANES, number_plane
from grid_envs.minesweeper.solver import HIDDEN as HIDDEN_VIEW
from grid_envs.minesweeper.state import FLAGGED, HIDDEN, MinesweeperState

_PLANE_IDS = np.arange(1 + N_NUMBER_PLANES, dtype=np.uint8).reshape(-1, 1, 1)


def planes_view(revealed: np.ndarray, counts: np.ndarray, flags: np.ndarray | None) -> np.ndarray:
    """The observation planes of a board (rows, cols), or of a batch (k, rows, cols) with the
    planes on axis 1: hidden, revealed 0..8, and flagged when ``flags`` is given."""
    code = number_plane(counts.astype(np.uint8))  # each cell's plane
    code[~revealed] = HIDDEN_PLANE
    planes = (code[..., None, :, :] == _PLANE_IDS).view(np.uint8)
    if flags is None:
        return planes
    flagged = (flags & ~revealed)[..., None, :, :].view(np.uint8)
    return np.concatenate([planes, flagged], axis=code.ndim - 2)


def compact_view(revealed: np.ndarray, counts: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """The compact view (a count where revealed, ``HIDDEN``, ``FLAGGED``), for a board or a
    batch."""
    out = np.where(revealed, counts, HIDDEN).astype(np.uint8)
    out[flags & ~revealed] = FLAGGED
    return out


class MinesweeperEnv(GridEnv):
    """Reveal every safe cell without touching a mine.

    ## Description
    The classic game. A revealed cell shows how many of its 8 neighbours hold a mine; a
    cell with none opens its whole zero region and the numbered border (the source article's flood
    fill, done without recursion). The mines are placed from the env's seed; under
    ``first_click="safe"`` or ``"zero"`` they are placed at the first reveal, away from it.

    ## Action Space
    ``Discrete(rows * cols)``: action ``r * cols + c`` reveals cell ``(r, c)``. With
    ``allow_flags=True`` it is ``Discrete(2 * rows * cols)`` and action
    ``rows * cols + r * cols + c`` toggles a flag on a hidden cell. Flags only guard cells
    (a flagged cell cannot be revealed until unflagged) and never change the outcome.

    | Actions                          | Legal when                   |
    |----------------------------------|------------------------------|
    | ``0 .. rows*cols - 1``           | the cell is hidden, no flag  |
    | ``rows*cols .. 2*rows*cols - 1`` | the cell is hidden (flags)   |

    ## Observation Space
    ``Box(0, 1, (10, rows, cols), uint8)``: plane 0 is 1 on hidden cells, plane ``1 + n``
    on revealed cells showing ``n`` (0-8); with flags an 11th plane marks flagged cells.
    Mines are never shown. ``observation_mode="compact"`` gives a (rows, cols) grid holding
    the number of revealed cells, 9 for hidden and 10 for flagged ones.

    ## Rewards
    ``progress_reward`` (1.0) shared over the safe cells: revealing k of S safe cells pays
    ``k / S``, so a won game sums to exactly 1.0 of progress whatever the board. Winning adds
    ``win_reward`` (+1), revealing a mine pays ``loss_reward`` (-1), and every legal move
    adds ``step_reward`` (0: flag toggles pay nothing else); a masked action pays
    ``illegal_reward`` (-0.05) and changes nothing. Returns therefore compare across board
    sizes: a win is 2.0, a loss 1.0 * progress - 1.

    ## Starting State
    All cells hidden; mines placed now (``"any"``) or at the first reveal.

    ## Episode End
    Terminated: every safe cell revealed (``info["is_success"]``) or a mine revealed.
    Truncated: the registered time limit (twice the number of cells).

    ## Information
    ``reset`` and ``step`` return an ``info`` dict with:

    - ``action_mask``: (n,) bool, the legal actions now (as :meth:`action_masks`).
    - ``illegal_action``: whether the step's action was masked (a no-op).
    - ``is_success``: whether the game is won.
    - ``revealed``: safe cells open.
    - ``mines_left``: mines minus flags.
    - ``first_click``: the first-click rule (``"safe"``, ``"zero"`` or ``"any"``).
    - ``mines``: once the episode ends, the (rows, cols) bool layout.

    ## Arguments
    - ``rows``, ``cols``, ``mines``: the board (beginner 9x9/10 by default); a ``ValueError``
      names the limit when the mines do not fit the first-click rule.
    - ``first_click``: ``"safe"`` (default), ``"zero"`` or ``"any"``.
    - ``allow_flags``: add the flag actions and plane.
    - ``progress_reward``, ``win_reward``, ``loss_reward``, ``step_reward``,
      ``illegal_reward``.
    - ``observation_mode``, ``render_mode``, ``tile_size``.

    ## Reference results
    Measured on this project's machine: docs/games/minesweeper.md.

    ## Shaping
    No potential ships: what a reveal uncovers is chance. The solver's exact probabilities
    reach the network as a teacher instead (``--teacher solver``, the shipped network).

    ## Version History
    - v0: first release.
    - Since 0.3.0 every game names its rewards one way (signed, added as given): ``loss_reward``
      (was ``loss_penalty``), ``illegal_reward`` (``illegal_action_penalty``); an old name is
      refused with a message naming the new one.
    """

    keys = "R C reveals the cell at row R, column C; f R C flags it (with allow_flags)"
    default_illegal_reward = -0.05

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        rows: int = 9,
        cols: int = 9,
        mines: int = 10,
        first_click: str = "safe",
        allow_flags: bool = False,
        progress_reward: float = 1.0,
        win_reward: float = 1.0,
        loss_reward: float = -1.0,
        step_reward: float = 0.0,
        illegal_reward: float | None = None,
        observation_mode: str = "planes",
        tile_size: int = 24,
        time_limit: int | None = None,
    ) -> None:
        rows, cols = checks.side("rows", rows), checks.side("cols", cols)
        mines = checks.integer("mines", mines)
        checks.choice("first_click", first_click, rules.FIRST_CLICK_RULES)
        rules.check_board(rows, cols, mines, first_click)
        rewards = checks.reals(
            progress_reward=progress_reward,
            win_reward=win_reward,
            loss_reward=loss_reward,
            step_reward=step_reward,
        )
        self.rows, self.cols, self.num_mines = rows, cols, mines
        self.first_click = first_click
        self.allow_flags = checks.flag("allow_flags", allow_flags)
        n = rows * cols
        super().__init__(
            n_actions=2 * n if allow_flags else n,
            obs_shape=(rows, cols),
            n_planes=rules.n_planes(allow_flags),
            render_mode=render_mode,
            observation_mode=observation_mode,
            illegal_reward=illegal_reward,
            tile_size=tile_size,
            compact_high=FLAGGED,
            time_limit=time_limit,
        )
        self.rewards = rules.Rewards(**rewards)
        self.state = MinesweeperState.empty(rows, cols, mines, first_click)
        # the planes of ``self.state`` kept up to date cell by cell (a reveal of a number, a
        # flag), built again after a flood; None when they must be built from the state
        self._plane_cache: np.ndarray | None = None
        self._fresh_planes = self._planes()  # every cell hidden
        self._opened = self._flagged = 0  # safe cells revealed, flags: counted as they change
        self._belief: tuple[bytes, MineBelief] | None = None  # the last view's, for searches

    # ------------------------------------------------------------- episode
    def _new_episode(self, options: dict[str, Any]) -> None:
        self.state = MinesweeperState.empty(self.rows, self.cols, self.num_mines, self.first_click)
        self._plane_cache = self._fresh_planes.copy() if self.observation_mode == "planes" else None
        self._opened = self._flagged = 0
        if self.first_click == "any":
            rules.place_mines(self.state, self.np_random, None)

    def _legal_mask(self) -> np.ndarray:
        s = self.state
        if not self.allow_flags:  # no flag is ever set: the hidden cells
            return ~s.revealed.reshape(-1)
        return np.concatenate([rules.legal_reveals(s).ravel(), (~s.revealed).ravel()])

    def _apply(self, action: int) -> tuple[float, bool, bool]:
        s = self.state
        n = self.rows * self.cols
        cell = divmod(action % n, self.cols)
        planes = self._plane_cache
        if action >= n:
            rules.toggle_flag(s, cell)
            self._flagged += 1 if s.flags[cell] else -1
            if planes is not None:  # a flag goes on or off a hidden cell
                planes[FLAG_PLANE][cell] = s.flags[cell]
            return rules.flag_reward(self.rewards), False, False
        opened = rules.reveal(s, cell, self.np_random)
        if opened < 0:
            return rules.mine_reward(self.rewards), True, False
        self._opened += opened
        number = int(s.counts[cell])
        if number and opened == 1:  # one number revealed: two cells of the planes
            if planes is not None:
                planes[HIDDEN_PLANE][cell] = 0
                planes[number_plane(number)][cell] = 1
        else:  # a flood: it lifted the flags inside it; the planes are built again
            self._plane_cache = None
            self._flagged = int(np.count_nonzero(s.flags))
        won = self._opened == s.safe_cells  # rules.is_won, counted
        return rules.reveal_reward(self.rewards, opened, s.safe_cells, won), won, won

    # ------------------------------------------------------------ views
    def _planes(self) -> np.ndarray:
        if self._plane_cache is None:
            s = self.state
            flags = s.flags if self.allow_flags else None
            self._plane_cache = planes_view(s.revealed, s.counts, flags)
        return self._plane_cache.copy()

    def _compact(self) -> np.ndarray:
        s = self.state
        return compact_view(s.revealed, s.counts, s.flags)

    def _render_codes(self, s: MinesweeperState, over: bool) -> np.ndarray:
        mines = s.mines if over and s.placed else None
        return render.codes(s.revealed, s.counts, s.flags, mines, s.exploded)

    def _ansi(self) -> str:
        return render.ansi(self._render_codes(self.state, self.episode_over))

    def draw(self, state: MinesweeperState, over: bool = False) -> np.ndarray:
        return render.rgb(self._render_codes(state, over), self.tile_size)

    def action_text(self, action: int) -> str:
        """``reveal (r, c)`` or ``flag (r, c)``."""
        flag, (r, c) = self._action_cell(action)
        return f"{'flag' if flag else 'reveal'} ({r}, {c})"

    def action_cells(self, action: int) -> list[tuple[int, int]]:
        return [self._action_cell(action)[1]]

    def _action_cell(self, action: int) -> tuple[bool, tuple[int, int]]:
        flag, cell = divmod(int(action), self.rows * self.cols)
        r, c = divmod(cell, self.cols)
        return bool(flag), (r, c)

    def _game_info(self) -> dict[str, Any]:
        s = self.state
        info: dict[str, Any] = {
            "revealed": self._opened,
            "mines_left": self.num_mines - self._flagged,
            "first_click": self.first_click,
        }
        if self._done and s.placed:
            info["mines"] = s.mines.copy()
        return info

    # -------------------------------------------------------- snapshots
    def _get_state(self) -> Any:
        return self.state

    def _check_game(self, game: Any) -> None:
        """Minesweeper's gate for a snapshot's game: this env's board and rules, boolean
        masks of its shape, the mines' count and their neighbour counts as placing makes
        them, no flag or reveal on a mine, and its caches what the mines give."""
        s = checks.instance("the snapshot's game", game, MinesweeperState)
        board = (self.rows, self.cols, self.num_mines, self.first_click)
        if (s.rows, s.cols, s.num_mines, s.first_click) != board:
            raise ValueError(
                f"the snapshot's game is {s.rows}x{s.cols} with {s.num_mines} mines and a "
                f"{s.first_click!r} first click, not this env's {board}"
            )
        shape = (self.rows, self.cols)
        mines = checks.array("the snapshot's mines", s.mines, shape, bool)
        counts = checks.array("the snapshot's counts", s.counts, shape, np.uint8, 0, 8)
        revealed = checks.array("the snapshot's revealed", s.revealed, shape, bool)
        flags = checks.array("the snapshot's flags", s.flags, shape, bool)
        placed = checks.flag("the snapshot's placed", s.placed)
        if placed and (int(mines.sum()) != self.num_mines
                       or not np.array_equal(counts, rules.neighbour_counts(mines))):  # fmt: skip
            raise ValueError("the snapshot's mines or their counts are not a placed board's")
        if not placed and (mines.any() or revealed.any()):
            raise ValueError("the snapshot has mines or reveals before its mines are placed")
        if (revealed & (mines | flags)).any():
            raise ValueError("the snapshot reveals a mine or a flagged cell")
        if s.exploded is not None and not mines[checks.cell("exploded", s.exploded, shape)]:
            raise ValueError(f"the snapshot's exploded cell {s.exploded} holds no mine")
        if s.runs is not None and s.runs != rules.zero_runs(counts == 0, mines):
            raise ValueError("the snapshot's zero runs are not its board's")
        if s.zero_bits is not None and s.zero_bits != rules.zero_bits(counts, mines):
            raise ValueError("the snapshot's zero cells are not its board's")

    def _set_state(self, state: Any) -> None:
        self.state = state
        self._plane_cache = None
        self._opened = int(np.count_nonzero(state.revealed))
        self._flagged = int(np.count_nonzero(state.flags))

    def _sampled_state(self, rng: np.random.Generator) -> MinesweeperState:
        """The game in view with its mines drawn from the player's belief
        (:class:`~grid_envs.minesweeper.belief.MineBelief`): every layout that fits the
        revealed numbers alike. Before the first click of the ``safe`` and ``zero`` rules
        no mine is placed yet; the world's own generator places them at its first click."""
        s = self.state
        if not s.placed:
            return MinesweeperState.empty(self.rows, self.cols, self.num_mines, self.first_click)
        view = np.where(s.revealed, s.counts.astype(np.int16), HIDDEN_VIEW)
        key = view.tobytes()
        if self._belief is None or self._belief[0] != key:  # one belief per view
            self._belief = (key, MineBelief(view, self.num_mines))
        mines = self._belief[1].sample(rng)
        return MinesweeperState(
            self.rows, self.cols, self.num_mines, self.first_click, mines,
            rules.neighbour_counts(mines), s.revealed.copy(), s.flags.copy(), placed=True,
        )  # fmt: skip

    def _settings_key(self) -> tuple[tuple[str, Any], ...]:
        return (("mines", self.num_mines), ("first_click", self.first_click))

    def _public_state(self) -> MinesweeperState:
        return self.state

    def action_for_key(self, key: str) -> int | None:
        """``r,c`` reveals row r, column c; ``f r,c`` toggles a flag (with allow_flags)."""
        text = key.strip().lower()
        flag = text.startswith("f")
        parts = text.lstrip("f").replace(",", " ").split()
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            r, c = int(parts[0]), int(parts[1])
            if r < self.rows and c < self.cols and (self.allow_flags or not flag):
                return (self.rows * self.cols if flag else 0) + r * self.cols + c
            return None
        return super().action_for_key(key)
