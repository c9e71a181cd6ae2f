"""The Sokoban gymnasium environment."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grid_envs.core import checks
from grid_envs.core.base_env import GridEnv
from grid_envs.core.grid import DIRECTION_NAMES, DIRECTIONS, DOWN, LEFT, RIGHT, UP
from grid_envs.core.pool import AUTO
from grid_envs.sokoban import render, rules
from grid_envs.sokoban.generator import SokobanGenerator
from grid_envs.sokoban.levels import BoxobanDirectory, check_level, parse_xsb, read_collection
from grid_envs.sokoban.pool import SokobanLevelPool
from grid_envs.sokoban.state import (
    BOX,
    CHANNELS,
    FLOOR,
    PLAYER,
    Level,
    SokobanState,
    cell_codes,
)

LevelSpec = str | Path | Level | Sequence[Level] | None
_KEYS = {"w": UP, "up": UP, "k": UP, "s": DOWN, "down": DOWN, "j": DOWN,
         "a": LEFT, "left": LEFT, "h": LEFT, "d": RIGHT, "right": RIGHT, "l": RIGHT}  # fmt: skip
_CHANNEL_IDS = np.arange(len(CHANNELS), dtype=np.uint8)[:, None, None]


def load_levels(levels: LevelSpec) -> list[Level] | BoxobanDirectory:
    """Resolve the ``levels=`` argument: a Level, a list, XSB text, a file or a directory.

    Every level of a list, text or file is checked playable here; a Boxoban directory's are
    checked as episodes draw them.
    """
    items: list[Level]
    if isinstance(levels, Level):
        items = [levels]
    elif isinstance(levels, (str, Path)):
        text = str(levels)
        if not text.strip():
            raise ValueError("levels is empty: give an XSB file, a Boxoban directory or XSB text")
        path = Path(text)
        if "\n" in text:
            items = parse_xsb(text)
        elif path.is_dir():
            return BoxobanDirectory(path)
        elif path.exists():
            items = read_collection(path)
        else:
            raise ValueError(
                f"levels={text!r} is neither an XSB file, a Boxoban directory nor XSB text"
            )
    else:
        items = list(levels) if isinstance(levels, (list, tuple)) else []
        if not items or not all(isinstance(x, Level) for x in items):
            raise ValueError(f"levels must be a path, XSB text or a list of Level, got {levels!r}")
    for k, level in enumerate(items):
        where = f" (line {level.line})" if level.line else ""
        check_level(level, f"level {k}{where}")
        check_playable(rules.new_state(level), f"level {k}{where}")
    return items


def check_playable(state: SokobanState, name: str) -> None:
    """Refuse a level that starts deadlocked (a box off its goal on a dead square, or
    frozen): it could never be solved."""
    stuck = rules.deadlocked_boxes(state)
    if stuck:
        r, c = stuck[0]
        raise ValueError(
            f"{name} is deadlocked at the start: the box at row {r + 1}, column {c + 1} "
            f"can never reach a goal, so the level cannot be solved"
        )


class SokobanEnv(GridEnv):
    """Push every box onto a goal.

    ## Description
    The classic warehouse puzzle. The player walks on the floor and pushes boxes, one at a
    time, never pulls. The level is solved when every goal holds a box. Levels are generated
    (solvable by construction, see :class:`SokobanGenerator`) or read from XSB files, XSB
    text or a local Boxoban directory (``levels=``).

    ## Action Space
    ``Discrete(8)``, the source article's moves and pushes; the mask opens at most one per
    direction.

    | Num | Action     | Legal when                                          |
    |-----|------------|-----------------------------------------------------|
    | 0   | move up    | the cell above is floor without a box               |
    | 1   | move down  | the cell below is floor without a box               |
    | 2   | move left  | the cell left is floor without a box                |
    | 3   | move right | the cell right is floor without a box               |
    | 4   | push up    | a box is above and the cell beyond it is free floor |
    | 5   | push down  | likewise below                                      |
    | 6   | push left  | likewise left                                       |
    | 7   | push right | likewise right                                      |

    A masked action leaves the state unchanged, costs ``illegal_reward`` and sets
    ``info["illegal_action"]``.

    ## Observation Space
    ``Box(0, 1, (7, rows, cols), uint8)``: one-hot planes in the order wall, floor, goal,
    box, box on goal, player, player on goal (exactly one plane is 1 in every cell). Levels
    smaller than ``obs_shape`` sit in the top-left corner and the rest is wall.
    ``observation_mode="compact"`` gives the (rows, cols) grid of those plane indices and
    ``"rgb"`` the rendered image.

    ## Rewards
    The gym-sokoban / Boxoban / Jumanji anchor: ``-0.1`` per step, ``+1`` for a box pushed
    onto a goal, ``-1`` for a box pushed off one, ``+10`` when solved. A deadlock ends the
    episode with ``loss_reward``, by default ``step_reward x time_limit`` (``-12`` at
    120 steps; ``-10`` without a limit), so a loss never pays better than running out of
    steps would have.
    A masked action pays ``illegal_reward`` (default ``-0.1``, a wasted step).

    ## Starting State
    A new generated level (or one drawn from ``levels``; ``options={"level": i}`` picks
    level ``i``, ``options={"level": Level or XSB text}`` plays that level).

    ## Episode End
    Terminated: solved (``info["is_success"]``), or deadlocked (dead square or frozen box
    off its goal; only when ``terminate_on_deadlock``), or no legal action left.
    Truncated: by the time limit given at registration (120 steps for ``Sokoban-v0``).

    ## Information
    ``reset`` and ``step`` return an ``info`` dict with:

    - ``action_mask``: (n,) bool, the legal actions now (as :meth:`action_masks`).
    - ``illegal_action``: whether the step's action was masked (a no-op).
    - ``is_success``: whether the game is won.
    - ``boxes_on_target``, ``num_boxes``: boxes on goals, and boxes in all.
    - ``solved``: the level is solved (as ``is_success``).
    - ``deadlocked``: a box can no longer reach a goal (dead square or freeze).
    - ``level_index``: the level's index in the level list or the pool (-1 otherwise).
    - ``pushes``, ``moves``: pushes and steps made this episode.
    - ``optimal_pushes``: the solver's proved optimum for a generated level with
      ``min_pushes`` set, else None.

    ## Arguments
    - ``levels``: XSB path, Boxoban directory, XSB text, a ``Level`` or a list of them.
    - ``generator``: a :class:`SokobanGenerator`; by default one of ``rows x cols`` with
      ``num_boxes`` boxes (10, 10, 4) and ``min_pushes`` (0: no difficulty floor; when set,
      ``info["optimal_pushes"]`` reports the solver's proved optimum).
    - ``level_pool``: generated levels are drawn from a pool of this many
      (:class:`~grid_envs.sokoban.pool.SokobanLevelPool`: level ``k`` is seeded by
      ``(pool_seed, k)`` and generated the first time an episode draws it, each episode
      picks ``k`` with the env's generator, and ``info["level_index"]`` is ``k``), so a
      reset of a level met before costs a copy, not a search. ``"auto"`` (the default):
      100,000 levels for rooms of up to 100 cells, 10,000 for larger ones; ``None``: a
      fresh level every episode. ``pool_seed`` picks another pool: evaluate on
      ``pool_seed=1`` to play levels that training on the default pool never met.
    - ``obs_shape``: the observation grid; by default the largest level or the generator's.
    - ``level_order``: ``"random"`` (seeded) or ``"sequential"`` for level lists.
    - ``step_reward``, ``box_on_reward``, ``box_off_reward``, ``win_reward``,
      ``loss_reward``, ``illegal_reward``: the rewards above.
    - ``terminate_on_deadlock``: end the episode at a deadlock (default True).
    - ``time_limit``: the step limit (a positive integer or None), after which the episode
      is truncated; it also sets the default deadlock penalty. Registration passes the
      registered limit; ``make(id, time_limit=N)`` changes it.
    - ``observation_mode``, ``render_mode``, ``tile_size``: views and drawing.

    ## Reference results
    Measured on this project's machine: docs/games/sokoban.md.

    ## Shaping
    ``--shaping matching`` (a matching bound on the pushes left; ``solver``, ``distance``
    and ``boxes`` too) made no difference where it was measured (docs/shaping.md), and keeping
    a deadlock's potential (``--shaping-at-loss kept``) does harm. Teach instead (``--teacher
    optimal``), and search (``--agent search``).

    ## Version History
    - v0: first release. Since 0.2.0 generated levels come from a pool of 100,000 by
      default (``level_pool="auto"``): the same distribution of levels, other levels for
      a given seed than before; ``level_pool=None`` gives a fresh level every episode.
    - Since 0.3.0 every game names its rewards one way (signed, added as given): ``step_reward``
      (was ``step_penalty``), ``win_reward`` (``solve_reward``), ``loss_reward``
      (``deadlock_penalty``), ``box_off_reward`` (``box_off_penalty``), ``illegal_reward``
      (``illegal_action_penalty``); an old name is refused with a message naming the new one.
    """

    reset_options = ("level",)
    keys = "w a s d, h j k l, the arrow keys or up/down/left/right walk and push"

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        levels: LevelSpec = None,
        generator: SokobanGenerator | None = None,
        rows: int = 10,
        cols: int = 10,
        num_boxes: int = 4,
        min_pushes: int = 0,
        level_pool: int | str | None = AUTO,
        pool_seed: int = 0,
        obs_shape: tuple[int, int] | None = None,
        level_order: str = "random",
        step_reward: float = -0.1,
        box_on_reward: float = 1.0,
        box_off_reward: float = -1.0,
        win_reward: float = 10.0,
        loss_reward: float | None = None,
        terminate_on_deadlock: bool = True,
        time_limit: int | None = None,
        illegal_reward: float | None = None,
        observation_mode: str = "planes",
        tile_size: int = 24,
    ) -> None:
        checks.choice("level_order", level_order, ("random", "sequential"))
        rewards = checks.reals(step_reward=step_reward, box_on_reward=box_on_reward,
                               box_off_reward=box_off_reward, win_reward=win_reward)  # fmt: skip
        if loss_reward is not None:
            loss_reward = checks.real("loss_reward", loss_reward)
        if obs_shape is not None:
            obs_shape = checks.shape("obs_shape", obs_shape)
        self._set_levels(levels, generator, rows, cols, num_boxes, min_pushes, level_pool,
                         pool_seed, level_order)  # fmt: skip
        super().__init__(
            n_actions=rules.N_ACTIONS,
            obs_shape=obs_shape or self._default_shape(),
            n_planes=len(CHANNELS),
            render_mode=render_mode,
            observation_mode=observation_mode,
            illegal_reward=illegal_reward,
            tile_size=tile_size,
            compact_high=len(CHANNELS) - 1,
            time_limit=time_limit,
        )
        self.level_order = level_order
        if loss_reward is None:  # by default what the steps of an episode could lose
            limit = self.time_limit
            loss_reward = -abs(rewards["step_reward"]) * limit if limit else -10.0
        self.rewards = rules.Rewards(**rewards, loss_reward=loss_reward)
        self.terminate_on_deadlock = checks.flag("terminate_on_deadlock", terminate_on_deadlock)
        # the episode: its level, its state, and what the info reports of them
        self.next_index = 0  # the next level of a list played in order
        self.level: Level | None = None
        self.level_index = -1
        self.state: SokobanState | None = None
        self.deadlocked = False
        self.optimal_pushes: int | None = None
        self._codes = np.zeros(self.obs_shape, dtype=np.uint8)

    def _set_levels(
        self, levels: LevelSpec, generator: SokobanGenerator | None, rows: int, cols: int,
        num_boxes: int, min_pushes: int, level_pool: int | str | None, pool_seed: int,
        level_order: str,
    ) -> None:  # fmt: skip
        """Where the episodes' levels come from: ``levels`` (a list played at random or in
        order, or a Boxoban folder), or a generator, pooled unless ``level_pool`` is None."""
        checks.one_of_sources(levels=levels, generator=generator)
        if generator is not None:
            checks.instance("generator", generator, SokobanGenerator)
        self.levels = load_levels(levels) if levels is not None else None
        if level_order == "sequential" and not isinstance(self.levels, list):
            raise ValueError(
                "level_order='sequential' plays a list of levels (an XSB file or text) in "
                "order; generated levels and a Boxoban folder have no order to follow"
            )
        self.generator = generator
        if self.levels is None and generator is None:
            self.generator = SokobanGenerator(rows, cols, num_boxes, min_pushes=min_pushes)
        self.pool: SokobanLevelPool | None = SokobanLevelPool.for_env(
            self.generator, level_pool, pool_seed
        )

    def _default_shape(self) -> tuple[int, int]:
        if isinstance(self.levels, list):
            return (max(lv.shape[0] for lv in self.levels), max(lv.shape[1] for lv in self.levels))
        if isinstance(self.levels, BoxobanDirectory):
            first = self.levels.file_levels(0)
            return (max(lv.shape[0] for lv in first), max(lv.shape[1] for lv in first))
        assert self.generator is not None
        return self.generator.shape

    # ------------------------------------------------------------- episode
    def _pick_level(self, choice: Any) -> tuple[int, Level]:
        if isinstance(choice, Level):
            return -1, check_level(choice, "options['level']")
        if isinstance(choice, str):
            return -1, parse_xsb(choice)[0]
        if isinstance(self.levels, list):
            if choice is not None:
                if not isinstance(choice, (int, np.integer)) or not 0 <= choice < len(self.levels):
                    raise ValueError(
                        f"options['level'] must be an index in [0, {len(self.levels) - 1}], "
                        f"a Level or XSB text, got {choice!r}"
                    )
                return int(choice), self.levels[int(choice)]
            if self.level_order == "sequential":
                i = self.next_index % len(self.levels)
                self.next_index += 1
            else:
                i = int(self.np_random.integers(len(self.levels)))
            return i, self.levels[i]
        if choice is not None:
            raise ValueError("options['level'] as an index needs a level list (levels=...)")
        if self.levels is not None:
            return self.levels.sample(self.np_random)
        assert self.generator is not None
        if self.pool is not None:
            index = self.pool.draw(self.np_random)
            level = self.pool[index]  # generated now if no episode drew it before
            self.optimal_pushes = self.pool.optimal(index)
            return index, level
        generated = self.generator.generate(self.np_random)
        self.optimal_pushes = generated.optimal_pushes
        return -1, generated.level

    def _new_episode(self, options: dict[str, Any]) -> None:
        self.optimal_pushes = None
        choice = options.get("level")
        generated = choice is None and self.levels is None
        index, level = self._pick_level(choice)
        rows, cols = level.shape
        if rows > self.obs_shape[0] or cols > self.obs_shape[1]:
            raise ValueError(
                f"level {index} is {rows}x{cols}, larger than obs_shape {self.obs_shape}; "
                f"pass obs_shape= to make()"
            )
        self.level, self.level_index = level, index
        if self.pool is not None and index >= 0:  # a pooled level: its start was worked out once
            push_dist = self.pool.push_dist[index].astype(np.int32)
            self.state = SokobanState.from_level(level, push_dist)
            self.deadlocked = bool(self.pool.deadlocked[index])
        else:
            state = rules.new_state(level)
            if not generated:
                check_playable(state, f"level {index}" if index >= 0 else "the level")
            self.state = state
            self.deadlocked = rules.is_deadlocked(state)
        self._redraw()

    def _redraw(self) -> None:
        assert self.state is not None
        self._codes = cell_codes(self.state, self.obs_shape)
        self._count_boxes()

    def _count_boxes(self) -> None:
        """The info's box counts, kept as pushes change them (not summed every step)."""
        s = self.state
        assert s is not None
        self._on_goals, self._num_boxes = rules.boxes_on_goals(s), int(s.goals.sum())

    def _legal_mask(self) -> np.ndarray:
        assert self.state is not None
        return rules.legal_mask(self.state)

    def _apply(self, action: int) -> tuple[float, bool, bool]:
        s = self.state
        assert s is not None
        old = s.player
        delta = rules.apply_action(s, action)
        self._on_goals += delta
        # the codes change by fixed amounts (a goal adds the same to every code): the player
        # leaves a floor cell, enters a floor or a box's cell, and a box enters a floor cell
        codes = self._codes
        codes[old] -= PLAYER - FLOOR
        if action < 4:
            codes[s.player] += PLAYER - FLOOR
            return rules.step_reward(self.rewards, 0, False, False), False, False
        codes[s.player] += PLAYER - BOX
        d = DIRECTIONS[action % 4]
        box = (s.player[0] + d[0], s.player[1] + d[1])
        codes[box] += BOX - FLOOR
        if rules.is_solved(s):
            return rules.step_reward(self.rewards, delta, True, False), True, True
        self.deadlocked = rules.deadlocked_after_push(s, box, self.deadlocked)
        ends = self.deadlocked and self.terminate_on_deadlock
        return rules.step_reward(self.rewards, delta, False, ends), ends, False

    def _no_legal_action(self) -> float:
        self.deadlocked = True
        return self.rewards.loss_reward

    # ------------------------------------------------------------ views
    def _planes(self) -> np.ndarray:
        return (self._codes[None] == _CHANNEL_IDS).view(np.uint8)

    def _compact(self) -> np.ndarray:
        return self._codes.copy()

    def _ansi(self) -> str:
        assert self.state is not None
        return render.ansi(render.drawn_codes(self._codes, self.state.floor))

    def draw(self, state: SokobanState, over: bool = False) -> np.ndarray:
        codes = cell_codes(state, self.obs_shape)
        return render.rgb(render.drawn_codes(codes, state.floor), self.tile_size)

    def action_text(self, action: int) -> str:
        """``move up`` ... ``push right``."""
        verb = "push" if action >= 4 else "move"
        return f"{verb} {DIRECTION_NAMES[int(action) % 4]}"

    def action_cells(self, action: int) -> list[tuple[int, int]]:
        """The player's cell and the one it steps to (the box's, for a push)."""
        assert self.state is not None
        (r, c), (dr, dc) = self.state.player, DIRECTIONS[int(action) % 4]
        return [(r, c), (r + dr, c + dc)]

    def _game_info(self) -> dict[str, Any]:
        s = self.state
        assert s is not None
        return {
            "boxes_on_target": self._on_goals,
            "num_boxes": self._num_boxes,
            "solved": self._won,
            "deadlocked": self.deadlocked,
            "level_index": self.level_index,
            "pushes": s.pushes,
            "moves": s.moves,
            "optimal_pushes": self.optimal_pushes,  # known when the generator proved it
        }

    # -------------------------------------------------------- snapshots
    def _get_state(self) -> Any:
        return (self.state, self.level, self.level_index, self.deadlocked,
                self._codes, self.next_index, self.optimal_pushes)  # fmt: skip

    def _set_state(self, state: Any) -> None:
        self._set_own_state(state)
        self._redraw()  # the codes from the state: a snapshot's own are not read

    def _set_own_state(self, state: Any) -> None:
        (self.state, self.level, self.level_index, self.deadlocked,
         self._codes, self.next_index, self.optimal_pushes) = state  # fmt: skip
        self._count_boxes()

    def _check_game(self, game: Any) -> None:
        """Sokoban's gate for a snapshot's game: its level a valid one that fits the board
        (:func:`check_level`), and the position on it: the boxes as many as the goals, on
        the floor (or a level's decoration), the player on a free floor cell, counts that
        count."""
        if not isinstance(game, tuple) or len(game) != 7:
            raise ValueError("the snapshot's game must be the 7 parts snapshot() takes")
        s, level, index, deadlocked, _, next_index, optimal = game
        check_level(level, "the snapshot's level")
        rows, cols = level.shape
        if rows > self.obs_shape[0] or cols > self.obs_shape[1]:
            raise ValueError(f"the snapshot's level is {rows}x{cols}, larger than {self.obs_shape}")
        checks.instance("the snapshot's state", s, SokobanState)
        shape = level.shape
        for name in ("floor", "goals"):
            if not np.array_equal(checks.array(name, getattr(s, name), shape, bool),
                                  getattr(level, name)):  # fmt: skip
                raise ValueError(f"the snapshot's {name} is not its level's")
        boxes = checks.array("the snapshot's boxes", s.boxes, shape, bool)
        if boxes.sum() != level.goals.sum() or (boxes & ~s.floor & ~level.boxes).any():
            raise ValueError("the snapshot's boxes are not as many as its goals, on its floor")
        player = checks.cell("the snapshot's player", s.player, shape)
        if not s.floor[player] or boxes[player]:
            raise ValueError(f"the snapshot's player {player} is not on a free floor cell")
        checks.integer("the snapshot's pushes", s.pushes, 0)
        checks.integer("the snapshot's moves", s.moves, 0)
        checks.array("the snapshot's dead squares", s.dead, shape, bool)
        checks.array("the snapshot's push distances", s.push_dist, shape, np.int32, -1)
        if s.room is not None and s.room != rules.new_room(s):
            raise ValueError("the snapshot's room is not its level's")
        checks.integer("the snapshot's level index", index, -1)
        checks.integer("the snapshot's next index", next_index, 0)
        checks.flag("the snapshot's deadlock", deadlocked)
        if optimal is not None:
            checks.integer("the snapshot's fewest pushes", optimal, 0)

    @property
    def deterministic(self) -> bool:
        """Sokoban hides nothing and draws nothing during play."""
        return True

    def _public_state(self) -> SokobanState:
        assert self.state is not None
        return self.state

    def action_for_key(self, key: str) -> int | None:
        """w/a/s/d, arrows or h/j/k/l: the move or push in that direction."""
        if key.lower() in _KEYS and self.state is not None:
            return rules.action_for_direction(self.state, _KEYS[key.lower()])
        return super().action_for_key(key)
