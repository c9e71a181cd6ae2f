"""The base environment: the contract every game keeps, implemented once.

A game subclasses :class:`GridEnv` and fills in small hooks (``_new_episode``,
``_legal_mask``, ``_apply``, ``_planes``, ``_game_info``, ``_ansi``, :meth:`draw`,
``_get_state``/``_set_state``) and names its actions (:meth:`action_text`,
:meth:`action_cells`). The base class does the shared work:

* actions outside the space raise ``ValueError`` naming the space;
* actions the mask forbids are a no-op: the state is unchanged, the reward is
  ``illegal_reward`` and ``info["illegal_action"]`` is True;
* the mask is exact after every reset and step and is returned both by
  :meth:`action_masks` (sb3-contrib's MaskablePPO) and in ``info["action_mask"]``;
* ``info["is_success"]`` is set at every step (stable-baselines3's evaluation reads it);
* when no action is legal in a state that is not terminal the episode ends
  (``terminated``), so a mask is never all False while an episode runs;
* observation views (``"planes"``, ``"compact"``, ``"rgb"``), rendering and
  exact snapshots with :meth:`snapshot` / :meth:`restore`;
* worlds for a search that plays fair (:meth:`sample_world`): a snapshot of what the
  player sees, the hidden parts and the random draws to come taken from the searcher's
  own generator.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import gymnasium as gym
import numpy as np

from grid_envs.core import checks
from grid_envs.core.render import HumanWindow

OBSERVATION_MODES = ("planes", "compact", "rgb")


def check_options(options: Any, known: tuple[str, ...]) -> dict[str, Any]:
    """``options`` as a new dict: None, or a mapping whose keys are all in ``known``; an
    unknown name is refused with the known ones, rather than ignored."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict of named options, got {options!r}")
    unknown = [k for k in options if k not in known]
    if unknown:
        takes = f"takes {', '.join(map(repr, known))}" if known else "takes none"
        raise ValueError(f"reset() takes no option {unknown[0]!r}; it {takes}")
    return dict(options)


def _copied_state(state: Any) -> dict[str, Any]:
    """A copy of a bit generator's state (nested dicts of numbers and arrays): what
    ``copy.deepcopy`` gives, several times faster (snapshots are taken in searches' loops)."""
    out: dict[str, Any] = {}
    for name, value in state.items():
        if isinstance(value, dict):
            value = _copied_state(value)
        elif isinstance(value, np.ndarray):
            value = value.copy()
        out[name] = value
    return out


@dataclass(frozen=True, eq=False)
class Snapshot:
    """Everything needed to put an env back exactly where it was."""

    game: Any  # the game's own state object (a deep copy)
    steps: int
    done: bool
    won: bool
    rng_state: dict[str, Any]
    mask: np.ndarray  # (n_actions,) bool
    # what the state must fit: the env's class, spaces and the game's settings, as
    # (name, value) pairs; restore() refuses a snapshot whose key is not its own
    key: tuple[tuple[str, Any], ...] = ()
    # the layout of the snapshot and of the game states in it (SNAPSHOT_FORMAT when made)
    format: int = 0


#: The layout of :class:`Snapshot` and of every game's state in it. A snapshot of another
#: format (one pickled by an earlier version, whose states had other fields) is refused by
#: name: it is taken again, not read field by field.
SNAPSHOT_FORMAT = 1


#: The snapshots this process made, each with the identity of its parts when made. Their
#: arrays are read-only, so one found unchanged here holds what the env itself held and
#: is restored without the gate's checks (a search restores thousands a second); any other
#: snapshot (unpickled, copied, or with a part replaced or made writeable) is checked whole.
_SEALED: weakref.WeakKeyDictionary[Snapshot, tuple[int, ...]] = weakref.WeakKeyDictionary()


def _inside(value: Any) -> list[Any] | None:
    """What a plain container holds: a tuple's items or a state object's attributes; None
    for anything else (an array, a number, a frozen object such as a level, whose arrays
    are the env's own and never written)."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, np.ndarray) or not hasattr(value, "__dict__"):
        return None
    kind = type(value)
    frozen = _FROZEN.get(kind)
    if frozen is None:
        frozen = _FROZEN[kind] = bool(
            getattr(getattr(kind, "__dataclass_params__", None), "frozen", False)
        )
    return None if frozen else list(vars(value).values())


_FROZEN: dict[type, bool] = {}


def _parts(game: Any) -> list[Any]:
    """The objects a game state is made of, two levels of plain containers deep."""
    found: list[Any] = []
    for part in _inside(game) or ():
        found.append(part)
        found.extend(_inside(part) or ())
    return found


def _seal(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` with its arrays made read-only and its parts' identity kept."""
    parts = [snapshot.mask, *_parts(snapshot.game)]
    for part in parts:
        if isinstance(part, np.ndarray):
            part.flags.writeable = False
    _SEALED[snapshot] = (id(snapshot.game), *map(id, parts))
    return snapshot


def _sealed(snapshot: Snapshot) -> bool:
    """Whether ``snapshot`` is one this process made and nobody changed since: the same
    parts, and none of its arrays made writeable again."""
    known = _SEALED.get(snapshot)
    if known is None:
        return False
    parts = [snapshot.mask, *_parts(snapshot.game)]
    if any(isinstance(p, np.ndarray) and p.flags.writeable for p in parts):
        return False
    return known == (id(snapshot.game), *map(id, parts))


class GridEnv(gym.Env[np.ndarray, np.int64]):
    """Shared machinery of the GridGames environments (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 8}  # noqa: RUF012
    #: Default reward for an action the mask forbids; games override it.
    default_illegal_reward: ClassVar[float] = -0.1

    #: The names ``reset(options=...)`` takes (a game adds its own, e.g. ``"level"``).
    reset_options: ClassVar[tuple[str, ...]] = ()
    #: The keys a person plays with (:meth:`action_for_key`), in a line; None: numbers.
    keys: ClassVar[str | None] = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """Every env refuses a setting's old name before anything is built."""
        if kwargs:
            checks.not_renamed(kwargs, checks.init_names(cast(Any, cls)))
        return super().__new__(cls)

    def __init__(
        self,
        *,
        n_actions: int,
        obs_shape: tuple[int, int],
        n_planes: int,
        render_mode: str | None = None,
        observation_mode: str = "planes",
        illegal_reward: float | None = None,
        tile_size: int = 24,
        planes_high: int | np.ndarray = 1,
        compact_high: int = 255,
        frame_shape: tuple[int, int] | None = None,
        time_limit: int | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        if observation_mode not in OBSERVATION_MODES:
            raise ValueError(
                f"observation_mode must be one of {OBSERVATION_MODES}, got {observation_mode!r}"
            )
        self.render_mode = render_mode
        self.observation_mode = observation_mode
        self.tile_size = checks.integer("tile_size", tile_size, 4, 128)
        self.illegal_reward = checks.real(
            "illegal_reward",
            self.default_illegal_reward if illegal_reward is None else illegal_reward,
        )
        #: Steps after which an episode is truncated (None: never). The env counts them
        #: itself, so that :meth:`restore` rewinds the count with the rest of the state.
        self.time_limit = checks.time_limit(time_limit)
        rows, cols = obs_shape
        self.obs_shape = (int(rows), int(cols))
        # cells drawn in an RGB frame: the grid, or more (Pikachu draws the ring around it)
        self.frame_shape = tuple(frame_shape) if frame_shape else self.obs_shape
        self.action_space: gym.spaces.Discrete = gym.spaces.Discrete(n_actions)
        if observation_mode == "planes":
            high = np.broadcast_to(np.asarray(planes_high, dtype=np.uint8), (n_planes, rows, cols))
            self.observation_space = gym.spaces.Box(
                0, high.copy(), (n_planes, rows, cols), dtype=np.uint8
            )
        elif observation_mode == "compact":
            self.observation_space = gym.spaces.Box(0, compact_high, (rows, cols), dtype=np.uint8)
        else:
            t = self.tile_size
            fr, fc = self.frame_shape
            self.observation_space = gym.spaces.Box(0, 255, (fr * t, fc * t, 3), dtype=np.uint8)
        self._n_actions = int(n_actions)
        self._mask = np.zeros(n_actions, dtype=bool)
        self._steps = 0
        self._done = True
        self._won = False
        self._started = False  # no game before the first reset (or restore)
        self._window: HumanWindow | None = None

    # ------------------------------------------------------------------ hooks
    def _new_episode(self, options: dict[str, Any]) -> None:
        """Set up a new game from ``self.np_random`` (and ``options``)."""
        raise NotImplementedError

    def _legal_mask(self) -> np.ndarray:
        """The exact (n_actions,) bool mask of the current state."""
        raise NotImplementedError

    def _apply(self, action: int) -> tuple[float, bool, bool]:
        """Play a legal action; return (reward, terminated, won)."""
        raise NotImplementedError

    def _apply_and_mask(self, action: int) -> tuple[float, bool, bool, np.ndarray, bool]:
        """:meth:`_apply`, then the new state's :meth:`_legal_mask` and whether it opens
        any action: (reward, terminated, won, mask, movable). A game whose compiled step
        writes the mask in the same call overrides this."""
        reward, terminated, won = self._apply(action)
        mask = self._legal_mask()
        # count_nonzero: faster than ndarray.any() on a mask this size
        return reward, terminated, won, mask, bool(np.count_nonzero(mask))

    def _planes(self) -> np.ndarray:
        """The observation planes, (n_planes, *obs_shape) uint8."""
        raise NotImplementedError

    def _compact(self) -> np.ndarray:
        """A (rows, cols) uint8 code grid; by default the index of the first set plane."""
        return self._planes().argmax(axis=0).astype(np.uint8)

    def _game_info(self) -> dict[str, Any]:
        return {}

    def _ansi(self) -> str:
        raise NotImplementedError

    def _rgb(self) -> np.ndarray:
        return self.draw(self._public_state(), self._done)

    def draw(self, state: Any, over: bool = False) -> np.ndarray:
        """An RGB frame, (rows, cols) of :attr:`frame_shape` cells of ``tile_size`` pixels,
        (h, w, 3) uint8, of ``state``: a game of this env's board, as :meth:`game_state`
        gives it; ``over`` says its episode has ended (Minesweeper then shows its mines).
        What ``render()`` and the ``"rgb"`` observation show, and how a native batch draws
        each of its envs: one drawing for both."""
        raise NotImplementedError

    def _get_state(self) -> Any:
        raise NotImplementedError

    def _check_game(self, game: Any) -> None:
        """The game's gate for a state from outside (a snapshot's, in :meth:`_get_state`'s
        form): refuse in one ``ValueError`` anything the compiled rules could not play
        safely (a type, a shape, a dtype, a value out of range, a broken invariant). Every
        game fills it in."""
        raise NotImplementedError

    def _set_state(self, state: Any) -> None:
        raise NotImplementedError

    def _set_own_state(self, state: Any) -> None:
        """:meth:`_set_state` for a state this env made (a sealed snapshot's): a game may
        then keep what it derived from the state rather than work it out again."""
        self._set_state(state)

    def _fresh(self, name: str) -> np.ndarray | None:
        """A view a game's step made in its compiled call, kept as ``(state, view)`` in the
        attribute ``name``: taken once, and only while the state is still the one it was
        made for (a reset or a restore puts in another); None otherwise."""
        made = getattr(self, name)
        setattr(self, name, None)
        return made[1] if made is not None and made[0] is self._public_state() else None

    def _public_state(self) -> Any:
        """The game's state object that planners read (see :meth:`game_state`)."""
        raise NotImplementedError

    def _sampled_state(self, rng: np.random.Generator) -> Any:
        """The game's state in :meth:`_get_state`'s form, with every part the player cannot
        see drawn from ``rng`` (the player's belief). By default a copy: every part of the
        state is in view. Games with hidden state (Minesweeper's mines) override it, and
        must read nothing hidden."""
        return copy.deepcopy(self._get_state())

    def _settings_key(self) -> tuple[tuple[str, Any], ...]:
        """The game's settings a state must fit besides the spaces, as (name, value) pairs
        (the snapshot check of :meth:`restore`); games add theirs."""
        return ()

    def _no_legal_action(self) -> float:
        """Called when a non-terminal state has no legal action; returns the extra reward.

        The episode then ends as a loss. Games override this to give their loss penalty.
        """
        return 0.0

    # ---------------------------------------------------------- gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._new_episode(self._options(options))
        self._started = True
        self._steps = 0
        self._done = False
        self._won = False
        self._mask = self._legal_mask()
        if not np.count_nonzero(self._mask):
            raise ValueError(
                f"{type(self).__name__}: the starting position has no legal action "
                f"(the level or board cannot be played)"
            )
        info = self._info(illegal=False)
        if self.render_mode == "human":
            self.render()
        return self._observation(), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        a = self._check_action(action)
        if self._done:
            raise RuntimeError("the episode has ended: call reset() before step()")
        self._steps += 1
        illegal = not self._mask[a]
        if illegal:
            reward, terminated = self.illegal_reward, False
        else:
            reward, terminated, won, self._mask, movable = self._apply_and_mask(a)
            self._won = won
            if not terminated and not movable:
                reward += self._no_legal_action()
                terminated = True
        truncated = (
            not terminated and self.time_limit is not None and (self._steps >= self.time_limit)
        )
        self._done = terminated or truncated
        info = self._info(illegal=illegal)
        if self.render_mode == "human":
            self.render()
        return self._observation(), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The legal actions now, (n_actions,) bool (the method MaskablePPO calls)."""
        return self._mask.copy()

    def render(self) -> Any:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode= to make()")
            return None
        self._check_started("render()")
        if self.render_mode == "ansi":
            return self._ansi()
        frame = self._rgb()
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            self._window = HumanWindow(title=type(self).__name__, fps=self.metadata["render_fps"])
        self._window.show(frame)
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None

    # --------------------------------------------------------- public extras
    @property
    def steps(self) -> int:
        """Steps taken in this episode, illegal ones included."""
        return self._steps

    @property
    def won(self) -> bool:
        return self._won

    @property
    def episode_over(self) -> bool:
        return self._done

    def snapshot(self) -> Snapshot:
        """An exact copy of the episode's state, random generator included."""
        self._check_started("snapshot()")
        return _seal(
            Snapshot(
                game=copy.deepcopy(self._get_state()),
                steps=self._steps,
                done=self._done,
                won=self._won,
                rng_state=_copied_state(self.np_random.bit_generator.state),
                mask=self._mask.copy(),
                key=self._snapshot_key(),
                format=SNAPSHOT_FORMAT,
            )
        )

    def game_state(self) -> Any:
        """A copy of the game's state dataclass (e.g. ``SokobanState``).

        This is the documented hook through which planning agents read the game; changing
        the copy never changes the env.
        """
        self._check_started("game_state()")
        return copy.deepcopy(self._public_state())

    @property
    def deterministic(self) -> bool:
        """Whether what a step leads to is fixed by what the player sees and the action: no
        hidden state and no random draw during play (Sokoban, the Knight, Pikachu without
        reshuffles). A search may then keep a winning line it found and play it out."""
        return False

    def sample_world(self, rng: np.random.Generator) -> Snapshot:
        """A snapshot of the game as the player sees it, for a search to :meth:`restore`
        into a copy of this env: the parts the player cannot see (Minesweeper's mines) are
        drawn from the player's belief, and the random generator that will draw the
        chance events to come (Lines98's spawns, a reshuffle) is a new one seeded from
        ``rng``. Nothing hidden is read: two envs that show the same game give the same
        world for the same ``rng``."""
        self._check_started("sample_world()")
        seed = int(rng.integers(2**63))
        bits = type(self.np_random.bit_generator)(seed)
        return _seal(
            Snapshot(
                game=self._sampled_state(rng),
                steps=self._steps,
                done=self._done,
                won=self._won,
                rng_state=dict(bits.state),
                mask=self._mask.copy(),
                key=self._snapshot_key(),
                format=SNAPSHOT_FORMAT,
            )
        )

    def new_episode(self, rng: np.random.Generator, options: dict[str, Any] | None = None) -> Any:
        """Set up a new game drawn with ``rng``, which becomes the env's generator, and
        return its state (not a copy). The step count, mask and time limit are left alone:
        this is how a batched env sets up env ``i``'s episode with env ``i``'s generator
        through the game's own code; a player calls :meth:`reset`."""
        self.np_random = rng
        self._new_episode(self._options(options))
        self._started = True
        return self._public_state()

    def restore(self, snapshot: Snapshot) -> None:
        """Put the env back exactly where :meth:`snapshot` found it: the game, the step
        count (and so the time limit's), the random generator and the mask.

        Raises ``ValueError`` for a snapshot of another env (another game, board, spaces
        or settings), of another format, or whose game breaks the game's rules (a value
        out of range, a board the game cannot hold: :meth:`_check_game`, the gate before
        the compiled rules), naming what is wrong; the env is then unchanged. The legal
        actions are worked out again from the game restored, never read from the
        snapshot.
        """
        if not isinstance(snapshot, Snapshot):
            raise ValueError(
                f"restore() takes a Snapshot made by snapshot(), got {type(snapshot).__name__}"
            )
        made = getattr(snapshot, "format", 0)
        if made != SNAPSHOT_FORMAT:
            raise ValueError(
                f"this snapshot has format {made!r} (an earlier grid-games made it); this "
                f"version reads format {SNAPSHOT_FORMAT}: take the snapshot again"
            )
        mine = self._snapshot_key()
        if snapshot.key != mine:
            theirs = dict(snapshot.key)
            differ = [
                f"{name} {theirs.get(name, 'unset')!r} (this env: {value!r})"
                for name, value in mine
                if theirs.get(name, "unset") != value
            ]
            raise ValueError(
                "this snapshot was taken of another env: " + ", ".join(differ or ["its key"])
            )
        if _sealed(snapshot):  # made here, unchanged: what the env itself held
            self._set_own_state(copy.deepcopy(snapshot.game))
            self._steps, self._done, self._won = snapshot.steps, snapshot.done, snapshot.won
            self.np_random.bit_generator.state = _copied_state(snapshot.rng_state)
            self._mask = snapshot.mask.copy()
            self._started = True
            return
        self._check_game(snapshot.game)  # as given: a copy could cast what it holds
        game = copy.deepcopy(snapshot.game)
        steps = checks.integer("the snapshot's steps", snapshot.steps, 0, self.time_limit)
        done = checks.flag("the snapshot's done", snapshot.done)
        won = checks.flag("the snapshot's won", snapshot.won)
        if not isinstance(snapshot.rng_state, dict):
            raise ValueError("the snapshot's generator state must be a dict")
        try:  # numpy checks a state whole before it takes it: refused, the env is unchanged
            self.np_random.bit_generator.state = _copied_state(snapshot.rng_state)
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(f"the snapshot's generator state cannot be read: {error}") from None
        self._set_state(game)
        self._steps, self._done, self._won = steps, done, won
        self._mask = self._legal_mask()
        self._started = True

    def observe(self) -> np.ndarray:
        """The current observation (what the last reset/step returned)."""
        self._check_started("observe()")
        return self._observation()

    def render_text(self) -> str:
        """The board as text, whatever the render mode."""
        self._check_started("render_text()")
        return self._ansi()

    def frame(self) -> np.ndarray:
        """The board as an RGB image, whatever the render mode (what a recording keeps)."""
        self._check_started("frame()")
        return self._rgb()

    @property
    def frame_offset(self) -> tuple[int, int]:
        """Where the board's cell (0, 0) lies in a frame, in cells: (1, 1) where the frame
        draws a ring around the board (Pikachu's paths run there), else (0, 0)."""
        rows, cols = self.obs_shape
        return (self.frame_shape[0] - rows) // 2, (self.frame_shape[1] - cols) // 2

    def action_text(self, action: int) -> str:
        """``action`` in a few words, as a replay names the move (``push left``, ``reveal
        (3, 4)``), for the position the env is in now: a move's words may depend on it."""
        return f"action {int(action)}"

    def action_cells(self, action: int) -> list[tuple[int, int]]:
        """The board cells ``action`` names in the position now (a replay outlines them):
        the ball moved and where to, the two tiles matched, the cell revealed."""
        return []

    def window_keys(self) -> list[str]:
        """Keys pressed in the ``"human"`` window since the last call (empty without one)."""
        return self._window.keys() if self._window is not None else []

    def action_for_key(self, key: str) -> int | None:
        """Map a key typed by a person to an action (``grid-games play``); None if unknown.

        The default accepts an action number; games map their own keys.
        """
        return int(key) if key.isdigit() and int(key) < self._n_actions else None

    def key_help(self) -> str:
        """What :meth:`action_for_key` reads, in a line (``grid-games play`` shows it)."""
        return self.keys or f"an action number, 0 to {self._n_actions - 1}"

    # --------------------------------------------------------------- helpers
    def _snapshot_key(self) -> tuple[tuple[str, Any], ...]:
        spaces = (self.observation_space, self.action_space)
        cached = getattr(self, "_spaces_text", None)
        if cached is None or cached[0][0] is not spaces[0] or cached[0][1] is not spaces[1]:
            # a Box's text costs more than a whole restore of most games: made once a space
            self._spaces_text = cached = (spaces, (str(spaces[0]), str(spaces[1])))
        return (
            ("env", type(self).__name__),
            ("observation_space", cached[1][0]),
            ("action_space", cached[1][1]),
            *self._settings_key(),
        )

    def _check_started(self, what: str) -> None:
        """Refuse ``what`` before the first reset: there is no game to read yet."""
        if not self._started:
            raise RuntimeError(f"{what} needs a game: call reset() first")

    def _options(self, options: Any, extra: tuple[str, ...] = ()) -> dict[str, Any]:
        """``reset``'s options as a new dict, checked: None or a dict whose keys are among
        the game's :attr:`reset_options` (and ``extra``, a batch's ``reset_mask``)."""
        return check_options(options, self.reset_options + extra)

    def _check_action(self, action: Any) -> int:
        if type(action) is int and 0 <= action < self._n_actions:  # the common case, first
            return action
        ok = isinstance(action, (int, np.integer)) and not isinstance(action, bool)
        if not ok and isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            ok = np.issubdtype(action.dtype, np.integer)
            action = action.reshape(()).item() if ok else action
        if not ok or not 0 <= int(action) < self._n_actions:
            raise ValueError(
                f"action {action!r} is outside the action space {self.action_space} "
                f"(an integer in [0, {self._n_actions - 1}])"
            )
        return int(action)

    def _observation(self) -> np.ndarray:
        if self.observation_mode == "planes":
            return self._planes()
        if self.observation_mode == "compact":
            return self._compact()
        return self._rgb()

    def _info(self, *, illegal: bool) -> dict[str, Any]:
        info = self._game_info()
        info["action_mask"] = self._mask.copy()
        info["illegal_action"] = illegal
        info["is_success"] = self._won
        return info
