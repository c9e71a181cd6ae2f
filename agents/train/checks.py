"""The refusals of a training run, before anything is built or written: settings a run
cannot start with (:func:`check_config`), a potential the game lacks, a teacher run that
cannot start, a device that is not there. Each is one ``ValueError`` naming the setting."""

from __future__ import annotations

from agents.nets.common import load_torch
from agents.train.config import VEC_ENVS, TrainConfig
from agents.train.models import ALGOS


def check_device(device: str) -> None:
    """Refuse a device torch does not know, or CUDA where there is none (stable-baselines3
    would fall back to the CPU without a word)."""
    if device == "auto":
        return
    torch = load_torch()
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError):
        kind = None
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {device!r}")
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: torch sees no CUDA device here; use cpu or auto")


def check_config(config: TrainConfig) -> None:
    """Refuse settings a run cannot start with, before anything is built or written."""
    if config.algo not in ALGOS:
        raise ValueError(f"algo must be one of {ALGOS}, got {config.algo!r}")
    if config.vec_env not in VEC_ENVS:
        raise ValueError(f"vec_env must be one of {VEC_ENVS}, got {config.vec_env!r}")
    if config.n_envs < 1:
        raise ValueError(f"n_envs must be at least 1, got {config.n_envs!r}")
    if config.timesteps < 1:
        raise ValueError(f"timesteps must be at least 1, got {config.timesteps!r}")
    if config.max_seconds is not None and not config.max_seconds > 0:
        raise ValueError(f"max_seconds must be above 0 seconds, got {config.max_seconds!r}")
    mode = config.env_kwargs.get("observation_mode", "planes")
    if mode != "planes":
        raise ValueError(
            f"observation_mode={mode!r}: the networks read the game's planes (one for each "
            f"kind of cell); train on observation_mode='planes', the default"
        )
    if config.algo != "dqn" and config.n_envs * config.n_steps < 2:
        raise ValueError(
            f"a rollout of {config.n_envs * config.n_steps} state (n_envs x n_steps) cannot "
            f"normalise PPO's advantages; give it at least 2"
        )
    check_device(config.device)
    check_potentials(config)
    if config.teacher is not None:
        check_teacher(config)
    elif config.warm_teacher is not None:
        raise ValueError("a warm teacher only warms up a --teacher run; name the teacher")


def check_potentials(config: TrainConfig) -> None:
    """Refuse a potential the game does not have, or a shaping scale that is not a positive
    number, before anything is built."""
    from grid_envs.wrappers import check_shaping, get_potential

    for name in (config.shaping, config.potential_input):
        if name is not None:
            get_potential(config.env_id, name)
    check_shaping(config.gamma, config.shaping_scale, config.shaping_at_loss)


def check_teacher(config: TrainConfig) -> None:
    """Refuse a teacher run that cannot start, before the run folder is written."""
    from agents.train.labels import check_teaching

    if config.algo == "dqn":
        raise ValueError("a teacher trains PPO or MaskablePPO policies, not DQN")
    check_teaching(config.env_id, config.teacher or "", config.teacher_states,
                   config.dagger_rounds, config.warm_teacher, config.warm_states)  # fmt: skip
    if config.teacher_workers < 1:
        raise ValueError(f"teacher_workers must be at least 1, got {config.teacher_workers!r}")
    if not config.teacher_lr > 0 or config.teacher_batch < 1:
        raise ValueError(
            f"teacher_lr must be above 0 and teacher_batch at least 1, got "
            f"{config.teacher_lr!r} and {config.teacher_batch!r}"
        )
