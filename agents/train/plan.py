"""A training run resolved once: what a :class:`~agents.train.config.TrainConfig` means on
this machine, worked out before anything is built or written.

:func:`plan_run` refuses a configuration that cannot run (:mod:`agents.train.checks`, and
the machine's memory), then settles everything the later stages read: whether the run
steps the native batch, the network's class and arguments, bfloat16, how often it saves
and evaluates, and the board symmetries cloning may see the labels through. The stages
that follow (the run folder, the envs and the model, the teaching, PPO; see
:func:`agents.train.sb3.train`) read the plan's fields instead of asking the
configuration's rules again, so each rule is applied in one place, once a run.

* Our observations are uint8 *planes* (0/1, Knight's energy up to 255), not images:
  ``normalize_images=False`` keeps SB3 from dividing them by 255.
* A board network (:mod:`agents.nets.board`, named in :mod:`agents.nets.registry`) reads
  the actions' logits off a CNN's output cell by cell instead of a dense layer over every
  action.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from agents.nets.common import PRECISIONS, bf16_native, load_torch, small_grid_cnn
from agents.nets.registry import policy_spec
from agents.train.checks import check_config
from agents.train.config import TrainConfig, symmetries_of
from agents.train.models import DQN_BUFFER


@dataclass(frozen=True)
class RunPlan:
    """A checked :class:`TrainConfig` and what it resolves to.

    ``shape`` and ``actions``: the env's observation shape and number of actions (before
    a potential plane is added); ``batched``: the run steps the native batch; ``bf16``:
    the network computes in bfloat16; ``policy`` and ``policy_kwargs``: what SB3 builds the
    network from; ``checkpoint_every`` and ``eval_every``: timesteps between checkpoints
    and between evaluations; ``symmetries``: the board symmetries cloning may use
    (:func:`agents.train.cloning.board_symmetries`), None where the game declares none."""

    config: TrainConfig
    shape: tuple[int, ...]
    actions: int
    batched: bool
    bf16: bool
    policy: Any
    policy_kwargs: dict[str, Any]
    checkpoint_every: int
    eval_every: int
    symmetries: list[Any] | None


def plan_run(config: TrainConfig) -> RunPlan:
    """Check ``config`` (every refusal one line naming the setting) and resolve it."""
    check_config(config)
    return resolve_run(config)


def resolve_run(config: TrainConfig) -> RunPlan:
    """What a checked ``config`` resolves to (:func:`plan_run` checks it first): a run
    refuses here only what resolving finds, a network that does not fit the env or the
    memory the run would need."""
    from agents.train.batch import has_native_batch
    from agents.train.cloning import board_symmetries

    shape, actions = _spaces(config)
    bf16 = uses_bf16(config)
    policy, kwargs = policy_of(config, actions, bf16)
    check_training_memory(config, shape, actions)
    mirrors = symmetries_of(config.env_id)
    every = config.eval_freq  # PPO evaluates at most once a rollout
    if config.algo != "dqn":
        every = max(every, config.n_envs * config.n_steps)
    return RunPlan(
        config, shape, actions,
        batched=config.vec_env == "batched" and has_native_batch(config.env_id),
        bf16=bf16, policy=policy, policy_kwargs=kwargs,
        checkpoint_every=checkpoint_every(config), eval_every=every,
        symmetries=None if mirrors is None else board_symmetries(shape, mirrors),
    )  # fmt: skip


def _spaces(config: TrainConfig) -> tuple[tuple[int, ...], int]:
    """The env's observation shape and number of actions, from one made and closed."""
    probe = gym.make(config.env_id, **config.env_kwargs)
    try:
        shape = tuple(probe.observation_space.shape or (1,))
        return shape, int(probe.action_space.n)  # type: ignore[attr-defined]
    finally:
        probe.close()


def uses_bf16(config: TrainConfig) -> bool:
    """Whether a run's network computes in bfloat16 (asked for, or "auto" on a device
    that does it in hardware)."""
    if config.precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {config.precision!r}")
    if config.precision != "auto":
        return config.precision == "bf16"
    device = config.device
    if device == "auto":
        device = "cuda" if load_torch().cuda.is_available() else "cpu"
    return bf16_native(device)


def policy_of(
    config: TrainConfig, actions: int, bf16: bool | None = None
) -> tuple[Any, dict[str, Any]]:
    """The policy class (or SB3's name for it) and its kwargs, for ``actions`` actions, in
    bfloat16 where ``bf16`` (None: as :func:`uses_bf16` says)."""
    policy = policy_spec(config.policy)  # refuses a name no game registered
    bf16 = uses_bf16(config) if bf16 is None else bf16
    size = _net_size(config)
    if policy.extractor is None:  # SB3's CnnPolicy
        return "CnnPolicy", {
            "features_extractor_class": small_grid_cnn(),
            "features_extractor_kwargs": {"features_dim": config.features_dim, "bf16": bf16,
                                          **size},
            "normalize_images": False,
        }  # fmt: skip
    if config.algo == "dqn":
        raise ValueError(
            f"the {config.policy} policy is an actor-critic: train it with PPO or MaskablePPO"
        )
    extra = policy.kwargs(config.env_id, actions)  # refuses an env it cannot serve
    load_torch()
    from agents.nets import board as bp
    from grid_envs.core.spec import load

    kwargs: dict[str, Any] = {
        "normalize_images": False,
        "features_extractor_class": load(policy.extractor),
        "features_extractor_kwargs": {**extra, "bf16": bf16, **size},
    }
    return (bp.MaskableLogitsPolicy if config.algo == "maskable-ppo" else bp.LogitsPolicy), kwargs


def _net_size(config: TrainConfig) -> dict[str, int]:
    """The extractor's ``width`` and ``depth`` where the config sets them; a depth only for
    the policies built of stacked convolutions (not "cnn", two layers, nor "maze-vi", whose
    sweeps are the board's size)."""
    size = {}
    for name, value in (("width", config.net_width), ("depth", config.net_depth)):
        if value is None:
            continue
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"net_{name} must be a whole number of at least 1, got {value!r}")
        size[name] = value
    if "depth" in size and config.policy in ("cnn", "maze-vi"):
        raise ValueError(f"the {config.policy} policy has no depth to set; leave net_depth out")
    return size


def check_training_memory(config: TrainConfig, shape: tuple[int, ...], actions: int) -> None:
    """Refuse, before the envs and the model are built, a run the machine cannot hold: the
    envs (a mask and an observation each, twice), PPO's rollout (each of ``n_envs *
    n_steps`` states kept as float32 observations, a mask and a few numbers; DQN's replay
    buffer alike) and the network, whose convolutions of ``width`` channels hold about ``9 *
    width**2`` weights a layer, each with its gradient and two moments of Adam, and whose
    minibatch's activations hold ``width`` numbers a cell a layer, forward and back."""
    from grid_envs.core import machine

    obs = int(np.prod(shape))
    states = DQN_BUFFER if config.algo == "dqn" else config.n_envs * config.n_steps
    rollout = states * (4 * obs + actions + 64) + config.n_envs * 2 * (actions + obs)
    width = config.net_width or 64
    depth = config.net_depth or 4
    cells = int(np.prod(shape[-2:]))
    weights = 16 * ((depth + 2) * 9 * width**2 + width * (actions + obs))
    activations = 3 * 4 * config.batch_size * width * cells * (depth + 2)
    machine.check_fits(
        f"training {config.env_id} with {config.n_envs:,} envs x {config.n_steps:,} steps "
        f"and a network {width} channels wide", rollout + weights + activations,
        "make --n-envs, --n-steps, --batch-size or --net-width smaller",
    )  # fmt: skip


def checkpoint_every(config: TrainConfig) -> int:
    """Timesteps between checkpoints: ``checkpoint_freq``, or a 20th of the budget (at
    least 1,000 steps, at most 100,000), so that the first one comes early."""
    if config.checkpoint_freq:
        return config.checkpoint_freq
    return min(100_000, max(1_000, config.timesteps // 20))
