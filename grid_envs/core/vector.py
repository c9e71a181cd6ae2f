"""The native batched env: the contract of :mod:`grid_envs.core.base_env`, for a whole batch.

A game subclasses :class:`GridVectorEnv`, names its single env (``env_class``, built from
the same keyword arguments: spaces, settings and rewards come from it) and fills in array
hooks over the batch (``_reset_envs``, ``_masks``, ``_apply``, ``_observations``,
``_infos``, ``_no_legal_action``). The base class does
the shared work, exactly as ``gymnasium.make`` + Gymnasium's ``SyncVectorEnv`` would over N
single envs, so that the same seeds and actions give the same trajectories:

* seeds: ``reset(seed=s)`` seeds env ``i`` with ``s + i`` (a list seeds each env), with
  Gymnasium's ``np_random``; each env keeps its own generator, so its random draws are
  exactly those of a single env with that seed;
* autoreset in Gymnasium's three modes (``autoreset_mode=``): next step (the default: the
  step after an episode ends resets that env, ignores its action and returns reward 0), same
  step (the ending step returns the new episode's observation, the last one in
  ``info["final_obs"]`` and its infos in ``info["final_info"]``), or disabled (the caller
  resets ended envs with ``reset(options={"reset_mask": mask})``, which resets just those);
* the single env's time limit (``time_limit``, or a shorter ``max_episode_steps`` given to
  ``make_vec``): ``truncated`` once an episode has taken that many steps, illegal ones
  included;
* illegal actions: a no-op with ``illegal_reward`` and ``info["illegal_action"]``;
* masks for the whole batch: :meth:`action_masks` (num_envs, n) and ``info["action_mask"]``,
  fresh copies; with ``copy_masks=False`` both are a read-only view of the batch's own mask
  array, which the next step or reset rewrites (a caller that reads the masks before it
  steps again, as SB3's rollout and ``grid-games bench`` do, saves a copy of
  ``num_envs * n`` bytes a step: 27 MB for 4,096 Lines98-v0 boards, 42 MB for Pikachu-v0);
* ``info`` in Gymnasium's vector layout: per key an array over the batch plus a boolean
  ``_key`` array saying which envs have it;
* ``render_mode="rgb_array"``: :meth:`render` draws every env as the single env draws it
  (:meth:`GridEnv.draw`), tiled into one picture, env ``i`` at row ``i // k``, column
  ``i % k`` of a grid ``k = ceil(sqrt(num_envs))`` wide.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from grid_envs.core import checks, machine
from grid_envs.core.base_env import GridEnv


class GridVectorEnv(VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """Shared machinery of the native batched envs (see the module docstring)."""

    metadata = {  # noqa: RUF012
        "autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"], "render_fps": 8
    }  # fmt: skip
    #: the largest picture :meth:`render` draws, in bytes
    MAX_FRAME_BYTES = 1 << 28

    env_class: type[GridEnv]  # the game's single env: its settings are the batch's

    def __init__(
        self,
        num_envs: int,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy_masks: bool = True,
        **kwargs: Any,
    ) -> None:
        checks.integer("num_envs", num_envs, 1, checks.MAX_BATCH)
        self.copy_masks = checks.flag("copy_masks", copy_masks)
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            modes = [m.value for m in AutoresetMode]
            raise ValueError(
                f"autoreset_mode must be one of {modes}, got {autoreset_mode!r}"
            ) from None
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        render_mode = kwargs.pop("render_mode", None)  # the template draws, opens nothing
        if render_mode not in (None, "rgb_array"):
            raise ValueError(
                f"a native batch renders render_mode='rgb_array' (every env in one picture) "
                f"or None, got {render_mode!r}"
            )
        template = self.env_class(**kwargs)
        if template.observation_mode == "rgb":
            raise ValueError("the batched envs give 'planes' or 'compact' observations, not 'rgb'")
        self.num_envs = int(num_envs)
        self._check_memory(template)  # before the batch's spaces, which hold a bound an env
        self.template = template  # spaces, settings and rewards come from one single env
        self.single_observation_space = template.observation_space
        self.single_action_space = template.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.n_actions = int(template.action_space.n)
        # the one given to make_vec, which gymnasium.make puts in a TimeLimit wrapper
        self.wrapper_steps = (
            None if max_episode_steps is None
            else checks.integer("max_episode_steps", max_episode_steps, 1)
        )  # fmt: skip
        # the single env's own time limit, or a shorter one given to make_vec
        limits = [n for n in (template.time_limit, self.wrapper_steps) if n is not None]
        self.max_episode_steps = min(limits) if limits else None
        self.illegal_reward = template.illegal_reward
        self.render_mode = render_mode
        self.rngs: list[np.random.Generator] = []  # one per env, from reset()
        self._typed_rngs: Any = None  # the same, as compiled rules take them (_generators)
        self.steps = np.zeros(self.num_envs, dtype=np.int64)
        self.won = np.zeros(self.num_envs, dtype=bool)
        self.mask = np.zeros((self.num_envs, self.n_actions), dtype=bool)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)

    def _check_memory(self, template: GridEnv) -> None:
        """Refuse, before anything is allocated, a batch the machine cannot hold: per env
        its mask (and the copy a step hands out) and its observation (the batch's planes
        and the copy a step returns), next to the memory available now."""
        obs_bytes = int(np.prod(template.observation_space.shape or (1,)))  # uint8 planes
        actions = int(template.action_space.n)
        # the mask and the copy a step hands out; the planes, their copy, the space's bounds
        per_env = 2 * actions + 4 * obs_bytes
        spec = getattr(template, "spec", None)
        name = spec.id if spec is not None else type(template).__name__
        machine.check_fits(
            f"a batch of {self.num_envs:,} {name} envs ({actions:,} actions, "
            f"{obs_bytes:,}-byte observations each)", self.num_envs * per_env,
            "make fewer envs or a smaller board",
        )  # fmt: skip

    # ------------------------------------------------------------------ hooks
    def _reset_envs(self, idx: np.ndarray, options: dict[str, Any]) -> None:
        """Start new games in the envs ``idx``, drawing from ``self.rngs[i]``."""
        raise NotImplementedError

    def _masks(self, idx: np.ndarray) -> np.ndarray:
        """The exact (len(idx), n_actions) masks of the envs ``idx`` (what the default
        :meth:`_update_masks` stores; a game whose rules write masks in place overrides
        that instead)."""
        raise NotImplementedError

    def _apply(self, idx: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        """Play legal ``actions`` in the envs ``idx``; (rewards, terminated, won) arrays."""
        raise NotImplementedError

    def _observations(self) -> np.ndarray:
        """The batch's observations, in the template's observation mode."""
        raise NotImplementedError

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        """The game's info keys over the batch (``done``: the envs whose episode ended)."""
        return {}

    def _bind_views(self) -> None:
        """Point the batch's views (flat aliases of its arrays, a game's board as a row
        of the batch's) at its own arrays. A copy or an unpickled batch gets separate
        arrays for a view and its base, so :meth:`__setstate__` calls this again; games
        that keep views set them here."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A copied or unpickled batch plays exactly as the original: its views are bound
        to its own arrays again (:meth:`_bind_views`)."""
        self.__dict__.update(state)
        self._bind_views()

    # ---------------------------------------------------------- gymnasium API
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_typed_rngs"] = None  # rebuilt from the copied generators when next used
        return state

    def _generators(self) -> Any:
        """The envs' generators as compiled rules take them (:func:`jit.generators`), the
        same objects; made when first asked for after a reset that reseeds."""
        if self._typed_rngs is None:
            from grid_envs.core.jit import generators

            self._typed_rngs = generators(self.rngs)
        return self._typed_rngs

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start new episodes: in every env, or with ``options={"reset_mask": mask}`` in
        the envs where ``mask`` (num_envs,) bool is True (the others carry on). Seeds as
        Gymnasium gives them: an int seeds env ``i`` with ``seed + i``, a list one each."""
        options = self.template._options(options, ("reset_mask",))
        rows = options.pop("reset_mask", None)
        seeds = self._seeds(seed)
        idx = np.arange(self.num_envs) if rows is None else self._reset_rows(rows)
        if seed is not None:
            self._typed_rngs = None  # the envs reseeded have new generators
        if not self.rngs:
            self.rngs = [seeding.np_random(s)[0] for s in seeds]
        else:
            for i in idx.tolist():
                if seeds[i] is not None:
                    self.rngs[i] = seeding.np_random(seeds[i])[0]
        self._start(idx, options)
        self._autoreset[idx] = False
        none = np.zeros(self.num_envs, dtype=bool)
        infos = self._all_infos(none, none)
        if rows is not None:  # Gymnasium's layout: the infos of the envs that were reset
            for key in [k for k in infos if k.startswith("_")]:
                infos[key] = infos[key] & rows
        return self._observations(), infos

    def _seeds(self, seed: int | list[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"got {len(seeds)} seeds for {self.num_envs} envs")
        return seeds

    def _reset_rows(self, rows: Any) -> np.ndarray:
        """The envs a ``reset_mask`` names, checked."""
        if not (isinstance(rows, np.ndarray) and rows.dtype == np.bool_):
            raise ValueError(f"reset_mask must be a numpy bool array, got {type(rows).__name__}")
        if rows.shape != (self.num_envs,):
            raise ValueError(f"reset_mask must have shape ({self.num_envs},), got {rows.shape}")
        if not self.rngs:
            raise ValueError("the first reset() starts every env: leave reset_mask out of it")
        return np.flatnonzero(rows)

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self.rngs:
            raise RuntimeError("call reset() before step()")
        if self.autoreset_mode is AutoresetMode.DISABLED and self._autoreset.any():
            raise RuntimeError(
                f"env {int(np.flatnonzero(self._autoreset)[0])} has ended and autoreset is "
                "disabled: reset it with reset(options={'reset_mask': mask}) first"
            )
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(
                f"actions must be {self.num_envs} integers, got {actions.dtype} {actions.shape}"
            )
        bad = (actions < 0) | (actions >= self.n_actions)
        if bad.any():
            raise ValueError(
                f"action {actions[bad][0]!r} is outside the action space "
                f"Discrete({self.n_actions}) (env {int(np.flatnonzero(bad)[0])})"
            )
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        restart = np.flatnonzero(self._autoreset)
        if len(restart):
            self._start(restart, {})
        active = ~self._autoreset
        self.steps[active] += 1
        rows = np.arange(self.num_envs)
        illegal = active & ~self.mask[rows, actions]
        rewards[illegal] = self.illegal_reward
        legal = np.flatnonzero(active & ~illegal)
        if len(legal):
            r, t, w = self._apply(legal, actions[legal])
            rewards[legal] = r
            terminated[legal] = t
            self.won[legal] = w
            stuck = legal[~t & ~self._update_masks(legal)]
            if len(stuck):  # a live position with no legal action ends the episode
                rewards[stuck] += self._no_legal_action(stuck)
                terminated[stuck] = True
        truncated = self._truncated(active, terminated)
        ended = terminated | truncated
        infos = self._all_infos(illegal, terminated)
        obs = self._observations()
        if self.autoreset_mode is not AutoresetMode.SAME_STEP:
            self._autoreset = ended
        elif ended.any():
            obs, infos = self._restart_now(ended, illegal, obs, infos)
        return obs, rewards, terminated, truncated, infos

    def _truncated(self, active: np.ndarray, terminated: np.ndarray) -> np.ndarray:
        """The envs whose episode the time limit ends now, as a single env ends it: its own
        limit truncates an episode that did not end otherwise (a game won on its last
        allowed step is won, not truncated), and a ``max_episode_steps`` given to
        ``make_vec`` truncates at that step whatever else happened, as the ``TimeLimit``
        wrapper ``gymnasium.make`` adds for it does."""
        own = self.template.time_limit
        truncated = np.zeros(self.num_envs, dtype=bool)
        if own is not None:
            truncated |= ~terminated & (self.steps >= own)
        if self.wrapper_steps is not None:
            truncated |= self.steps >= self.wrapper_steps
        return active & truncated

    def _restart_now(
        self, ended: np.ndarray, illegal: np.ndarray, obs: np.ndarray, infos: dict[str, Any]
    ) -> tuple[np.ndarray, dict[str, Any]]:  # fmt: skip
        """Same-step autoreset: the ended envs start their new episodes now; their last
        observations and infos go to ``final_obs`` and ``final_info``."""
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(ended).tolist():
            final_obs[i] = obs[i]
        if not self.copy_masks:  # the restarts rewrite the rows of the view
            infos["action_mask"] = self.mask.copy()
        self._start(np.flatnonzero(ended), {})
        now = self._all_infos(illegal & ~ended, np.zeros(self.num_envs, dtype=bool))
        now["final_obs"], now["_final_obs"] = final_obs, ended.copy()
        now["final_info"], now["_final_info"] = infos, ended
        return self._observations(), now

    def action_masks(self) -> np.ndarray:
        """The legal actions of every env now, (num_envs, n_actions) bool: a copy, or with
        ``copy_masks=False`` a read-only view that the next step or reset rewrites."""
        return self._masks_out()

    def _masks_out(self) -> np.ndarray:
        if self.copy_masks:
            return self.mask.copy()
        view = self.mask.view()
        view.flags.writeable = False
        return view

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """Every env's board as the single env draws it, tiled into one (h, w, 3) uint8
        picture (see the module doc); None, with a warning, without a render mode. One
        picture, where Gymnasium's sync batch gives a tuple of frames: what a person
        watching a batch, and a video of it, want."""
        if self.render_mode is None:
            from gymnasium import logger

            logger.warn("render() called without a render_mode; pass render_mode= to make_vec()")
            return None
        if not self.rngs:
            raise RuntimeError("render() needs a game in every env: call reset() first")
        first = self._frame(0)
        h, w, _ = first.shape
        if self.num_envs * h * w * 3 > self.MAX_FRAME_BYTES:
            raise ValueError(
                f"render(): {self.num_envs:,} boards of {w}x{h} pixels would take "
                f"{self.num_envs * h * w * 3 / 2**20:,.0f} MiB, over the "
                f"{self.MAX_FRAME_BYTES / 2**20:,.0f} MiB a picture may take; draw fewer envs "
                f"or a smaller tile_size"
            )
        from grid_envs.core.render import tiled

        return tiled([first, *(self._frame(i) for i in range(1, self.num_envs))])

    def _frame(self, i: int) -> np.ndarray:
        """Env ``i`` drawn by the single env's own drawing; an episode that has just ended
        (its env restarts at the next step) is drawn as over."""
        return self.template.draw(self._state_of_env(i), bool(self._autoreset[i]))

    def game_state(self, i: int) -> Any:
        """A copy of env ``i``'s game as the single env's state dataclass (what
        :meth:`GridEnv.game_state` gives): the hook through which planners, teachers and
        potentials read one game of the batch. Changing the copy never changes the env."""
        if not 0 <= i < self.num_envs or not self.rngs:
            raise IndexError(f"env {i} is not a started env of the {self.num_envs}")
        return self._state_of_env(int(i))

    def _state_of_env(self, i: int) -> Any:
        """Env ``i``'s game as the single env's state (a copy); games fill this in."""
        raise NotImplementedError

    # --------------------------------------------------------------- helpers
    def _start(self, idx: np.ndarray, options: dict[str, Any]) -> None:
        self._reset_envs(idx, options)
        self.steps[idx] = 0
        self.won[idx] = False
        if not self._update_masks(idx).all():
            raise ValueError(f"{type(self).__name__}: a starting position has no legal action")

    def _update_masks(self, idx: np.ndarray) -> np.ndarray:
        """Recompute the masks of the envs ``idx`` into ``self.mask``; whether each has a
        legal action. A game whose rules write masks in place overrides it."""
        masks = self._masks(idx)
        self.mask[idx] = masks
        return np.asarray(masks.any(axis=1))

    def _single_episode(self, i: int, options: dict[str, Any]) -> Any:
        """A new episode set up by the single env's own code with env ``i``'s generator;
        the game state it made (the batched env copies what it needs)."""
        return self.template.new_episode(self.rngs[i], options)

    def _no_legal_action(self, idx: np.ndarray) -> float | np.ndarray:
        """The extra reward of the envs ``idx``, live but with no legal action (then lost)."""
        return 0.0

    def _all_infos(self, illegal: np.ndarray, done: np.ndarray) -> dict[str, Any]:
        infos = self._infos(done)
        infos["action_mask"] = self._masks_out()
        infos["illegal_action"] = illegal.copy()
        infos["is_success"] = self.won.copy()
        for key in [k for k in infos if not k.startswith("_")]:
            infos.setdefault(f"_{key}", np.ones(self.num_envs, dtype=bool))
        return infos
