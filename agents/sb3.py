"""Learning with stable-baselines3: per-env defaults, the networks' wiring, training.

* The networks are in :mod:`agents.networks` (the default CNN) and
  :mod:`agents.board_policies` (logits read off the board).
* Our observations are uint8 *planes* (0/1, Knight's energy up to 255), not images:
  ``normalize_images=False`` keeps SB3 from dividing them by 255.
* ``policy="cells"`` (Minesweeper's default) and ``"lift-drop"`` (Lines98's): action
  logits read off a 'same' CNN's output cell by cell (:mod:`agents.board_policies`)
  instead of a dense layer over every action.
* :data:`DEFAULTS`: hyper-parameters and a learnable configuration per game;
  :data:`COMPARE`: what ``grid-games compare`` teaches and trains for each game.
* :func:`train`: MaskablePPO (default), PPO or DQN, with a progress bar, TensorBoard logs,
  periodic checkpoints that a rerun resumes from, an evaluation callback, and the final
  model saved next to ``settings.json`` (everything that made it). Every id with a native
  batched env trains on it (``vec_env="batched"``, :mod:`agents.batched`: one env call and
  one forward pass a step for the whole batch, rollouts under ``torch.inference_mode``,
  evaluation on a batch too); ``vec_env="dummy"`` steps single envs in a ``DummyVecEnv``.
* What a run leaves on disk, and the rules for going on with one, are in
  :mod:`agents.runs`; a saved model plays as :class:`agents.policy.PolicyAgent`.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents import GAME_MODULES
from agents.networks import (
    PRECISIONS,
    bf16_native,
    load_torch,
    set_threads,
    small_grid_cnn,
)
from agents.policies import policy_spec
from agents.policy import ALGOS, algo_class
from agents.runs import (
    Interrupted,
    TrainResult,
    check_run_folder,
    check_same_run,
    checkpoint_steps,
    finished_result,
    latest_checkpoint,
    read_arrays,
    read_curve,
    read_json,
    run_lock,
    saved_steps,
)

VEC_ENVS = ("batched", "dummy")
# rollout and update sizes per kind of vec env, where a run does not set them: a batch
# collects cheaply, so its PPO takes a larger rollout in fewer epochs (Atari's PPO uses 4);
# the DummyVecEnv's are the settings that path always had
PATH_DEFAULTS: dict[str, dict[str, int]] = {
    "batched": {"n_envs": 64, "n_steps": 32, "batch_size": 512, "n_epochs": 4,
                "eval_episodes": 50},
    "dummy": {"n_envs": 4, "n_steps": 256, "batch_size": 256, "n_epochs": 10,
              "eval_episodes": 20},
}  # fmt: skip


@dataclass
class TrainConfig:
    """Everything that defines a training run (saved as settings.json next to the model).

    The run:
        env_id: the registered id. algo: ``maskable-ppo``, ``ppo`` or ``dqn``.
        timesteps: PPO's (or DQN's) env steps. seed: the network's, the envs' and the
        teaching's. time_limit: seconds of wall time for the run, teaching included; PPO
        stops there and the model so far is saved as the run's (a rerun goes on from it).

    The envs:
        vec_env: ``batched``, the native batched env where the id has one, else ``dummy``
        (single envs in SB3's DummyVecEnv). n_envs: envs stepped together. env_kwargs:
        settings beyond the registered ones. shaping: a potential's name (None: none);
        shaping_scale: its coefficient (the reward gains ``scale * (gamma * phi(s') -
        phi(s))``); shaping_at_loss: ``zero`` or ``kept``, the potential of a lost end
        (:mod:`grid_envs.wrappers`). potential_input: a potential given to the network as one more
        observation plane (:class:`grid_envs.wrappers.PotentialInput`), rewards untouched.

    The network:
        policy: a registered policy (``agents.policies``; the board policies train with PPO
        only). features_dim: the ``cnn`` policy's features. net_width, net_depth: a board
        policy's channels and convolutions (None: the policy's own). precision: ``bf16``
        runs the layers in bfloat16 with float32 weights; ``auto`` does where the device
        computes it in hardware, else ``fp32``. threads: torch threads (None: every core
        this process may use). device: ``auto`` is CUDA where present, else the CPU.

    PPO:
        gamma, learning_rate, ent_coef as SB3 takes them; n_steps: the rollout per env;
        batch_size: the minibatch; n_epochs: the passes over each rollout.

    Evaluations and checkpoints:
        eval_freq: timesteps between evaluations (at least one of PPO's rollouts);
        eval_episodes: episodes an evaluation plays on the validation seeds.
        checkpoint_freq: timesteps between checkpoints (None: a 20th of the budget,
        between 1,000 and 100,000, so that the first comes early).

    Teaching by an algorithm (``agents.imitation``: cloning and DAgger before PPO):
        teacher: a baseline's name (``agents.registry.list_agents(env_id)``; None: no
        teaching). teacher_states: labelled states in all, over the rounds. dagger_rounds:
        round 0 the teacher plays, then the learner moves and the teacher labels.
        teacher_epochs: passes over the labelled states after each round. teacher_lr,
        teacher_batch: cloning's step size and minibatch (PPO keeps its own).
        teacher_workers: processes that label each round, one torch thread each.
        warm_teacher: a faster baseline cloned first from its own play, after which every
        round is a DAgger round the teacher labels; warm_states: the states it labels.
        cloning_coef: the weight of the cloning loss kept during PPO, decaying to 0 over
        cloning_decay steps (None: half of timesteps).
    """

    env_id: str
    algo: str = "maskable-ppo"
    timesteps: int = 50_000
    seed: int = 0
    vec_env: str = "batched"
    n_envs: int = 64
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    shaping: str | None = None
    shaping_scale: float = 1.0
    shaping_at_loss: str = "zero"
    potential_input: str | None = None
    policy: str = "cnn"
    gamma: float = 0.99
    learning_rate: float = 3e-4
    n_steps: int = 32
    batch_size: int = 512
    n_epochs: int = 4
    ent_coef: float = 0.01
    features_dim: int = 128
    net_width: int | None = None
    net_depth: int | None = None
    precision: str = "auto"
    eval_freq: int = 5_000
    eval_episodes: int = 50
    checkpoint_freq: int | None = None
    threads: int | None = None
    device: str = "auto"
    teacher: str | None = None
    teacher_states: int = 20_000
    dagger_rounds: int = 3
    teacher_epochs: int = 4
    teacher_lr: float = 3e-3
    teacher_batch: int = 64
    teacher_workers: int = 1
    warm_teacher: str | None = None
    warm_states: int = 40_000
    cloning_coef: float = 1.0
    cloning_decay: int | None = None
    time_limit: float | None = None


# Each game's training configuration, declared beside its baselines (agents/<game>.py), in
# the order of grid_envs.GAMES, which `grid-games compare` keeps.
DEFAULTS: dict[str, dict[str, Any]] = {
    env_id: settings for game in GAME_MODULES.values() for env_id, settings in game.TRAINING.items()
}
# What `grid-games compare` runs for each game, over DEFAULTS: the id, the teacher, the
# labelled states and PPO steps of its learned policy, and the agents too slow to evaluate
# within its budget ("skip_agents"), declared beside the game's baselines.
COMPARE: dict[str, dict[str, Any]] = {
    env_id: row for game in GAME_MODULES.values() for env_id, row in game.COMPARE.items()
}


# The board symmetries each game's rules keep, for cloning (agents.imitation.ActionMap),
# declared beside its baselines; a game that declares none is cloned as its states come
SYMMETRIES: dict[str, Any] = {
    env_id: actions
    for game in GAME_MODULES.values()
    for env_id, actions in getattr(game, "SYMMETRIES", {}).items()
}


def default_config(env_id: str, **overrides: Any) -> TrainConfig:
    """The game's :data:`DEFAULTS` and its vec env's :data:`PATH_DEFAULTS`, then
    ``overrides`` (None values left out; ``shaping="none"`` turns a default off). The
    game's network size goes with its own policy: another policy, given alone, comes at
    its own size."""
    given = {k: v for k, v in overrides.items() if v is not None}
    game = dict(DEFAULTS.get(env_id, {}))
    if given.get("policy", game.get("policy")) != game.get("policy"):
        game.pop("net_width", None)
        game.pop("net_depth", None)
    settings = {**game, **given}
    if settings.get("shaping") == "none":  # no shaping, the game's default included
        settings["shaping"] = None
    vec_env = settings.get("vec_env", "batched")
    if vec_env not in VEC_ENVS:
        raise ValueError(f"vec_env must be one of {VEC_ENVS}, got {vec_env!r}")
    return TrainConfig(env_id=env_id, **{**PATH_DEFAULTS[vec_env], **settings})


def uses_bf16(config: TrainConfig) -> bool:
    """Whether a run's network computes in bfloat16 (asked for, or "auto" on a device
    that does it in hardware)."""
    if config.precision != "auto":
        return config.precision == "bf16"
    device = config.device
    if device == "auto":
        device = "cuda" if load_torch().cuda.is_available() else "cpu"
    return bf16_native(device)


def uses_batch(config: TrainConfig) -> bool:
    """Whether a run steps the native batched env (asked for, and the id has one)."""
    from agents.batched import has_native_batch

    return config.vec_env == "batched" and has_native_batch(config.env_id)


def make_env_fn(config: TrainConfig, rank: int, monitor_dir: str | None = None) -> Any:
    """A factory for one env (CleanRL's make_env): seeded, monitored, shaped if asked."""
    from stable_baselines3.common.monitor import Monitor

    from grid_envs.wrappers import PotentialInput, PotentialShaping

    def thunk() -> gym.Env[Any, Any]:
        env = gym.make(config.env_id, **config.env_kwargs)
        if config.shaping:
            env = PotentialShaping(
                env, config.shaping, config.gamma, config.shaping_scale, config.shaping_at_loss
            )
        if config.potential_input:
            env = PotentialInput(env, config.potential_input)
        path = f"{monitor_dir}/{rank}" if monitor_dir else None
        fresh = path is None or not Path(f"{path}.{Monitor.EXT}").exists()
        # a resumed run appends to its log
        env = Monitor(env, path, info_keywords=("is_success",), override_existing=fresh)
        env.reset(seed=config.seed + rank)
        env.action_space.seed(config.seed + rank)
        return env

    return thunk


def make_vec_env(
    config: TrainConfig, n_envs: int, seed_offset: int = 0, monitor_dir: str | None = None
) -> Any:
    from stable_baselines3.common.vec_env import DummyVecEnv

    shifted = TrainConfig(**{**asdict(config), "seed": config.seed + seed_offset})
    return DummyVecEnv([make_env_fn(shifted, i, monitor_dir) for i in range(n_envs)])


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


def policy_of(config: TrainConfig, actions: int) -> tuple[Any, dict[str, Any]]:
    """The policy class (or SB3's name for it) and its kwargs, for ``actions`` actions."""
    policy = policy_spec(config.policy)  # refuses a name no game registered
    if config.precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {config.precision!r}")
    bf16 = uses_bf16(config)
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
    from agents import board_policies as bp
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


DQN_BUFFER = 50_000  # DQN's replay buffer, in states


def check_training_memory(config: TrainConfig) -> None:
    """Refuse, before the envs and the model are built, a run the machine cannot hold: the
    envs (a mask and an observation each, twice), PPO's rollout (each of ``n_envs *
    n_steps`` states kept as float32 observations, a mask and a few numbers; DQN's replay
    buffer alike) and the network, whose convolutions of ``width`` channels hold about ``9 *
    width**2`` weights a layer, each with its gradient and two moments of Adam, and whose
    minibatch's activations hold ``width`` numbers a cell a layer, forward and back."""
    from grid_envs.core import machine

    probe = gym.make(config.env_id, **config.env_kwargs)  # its spaces
    shape = probe.observation_space.shape or (1,)
    actions = int(probe.action_space.n)  # type: ignore[attr-defined]
    probe.close()
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


def new_model(config: TrainConfig, venv: Any, tensorboard_log: str | None) -> Any:
    cls = algo_class(config.algo)
    policy, policy_kwargs = policy_of(config, int(venv.action_space.n))
    common = {
        "gamma": config.gamma,
        "learning_rate": config.learning_rate,
        "seed": config.seed,
        "verbose": 0,
        "tensorboard_log": tensorboard_log,
        "policy_kwargs": policy_kwargs,
        "device": config.device,
    }
    if config.algo == "dqn":
        return cls(
            policy,
            venv,
            buffer_size=DQN_BUFFER,
            learning_starts=1_000,
            batch_size=config.batch_size,
            exploration_fraction=0.3,
            **common,
        )
    return cls(
        policy,
        venv,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        ent_coef=config.ent_coef,
        **common,
    )


def training_env(config: TrainConfig, monitor_dir: str | None = None) -> Any:
    """The vec env a run trains on: the native batch (:class:`agents.batched.BatchedVecEnv`)
    or a ``DummyVecEnv`` of single envs, seeded, monitored and shaped alike."""
    if uses_batch(config):
        from agents.batched import BatchedVecEnv

        batch = BatchedVecEnv(
            config.env_id, config.n_envs, config.env_kwargs, config.shaping, config.gamma,
            monitor_file=monitor_dir, shaping_scale=config.shaping_scale,
            shaping_at_loss=config.shaping_at_loss,
            potential_input=config.potential_input,
        )  # fmt: skip
        batch.seed(config.seed)  # env i's episodes from seed + i, as make_env_fn seeds them
        return batch
    return make_vec_env(config, config.n_envs, monitor_dir=monitor_dir)


# Where each kind of episode takes its seeds, past the run's own seed: training envs
# ``seed + i``; evaluation during training from EVAL_SEED; teachers' rounds from
# agents.imitation.TEACHER_SEED (round r from 20,000 + r * 100,000); final, reported
# evaluations (``compare``, the benchmarks) from HELDOUT_SEED, which nothing trains on.
EVAL_SEED = 10_000
HELDOUT_SEED = 1_000_000


def checkpoint_every(config: TrainConfig) -> int:
    """Timesteps between checkpoints: ``checkpoint_freq``, or a 20th of the budget (at
    least 1,000 steps, at most 100,000), so that the first one comes early."""
    if config.checkpoint_freq:
        return config.checkpoint_freq
    return min(100_000, max(1_000, config.timesteps // 20))


def train(config: TrainConfig, out: str | Path, progress: bool = True) -> TrainResult:
    """Train, resume or extend a model in the run folder ``out`` (see :func:`_train`),
    which no other run may use meanwhile (:func:`agents.runs.run_lock`)."""
    check_run_folder(Path(out))
    with run_lock(Path(out)):
        return _train(config, Path(out), progress)


def _train(config: TrainConfig, out: Path, progress: bool) -> TrainResult:
    """Train, resume or extend a model; see the module doc for what lands in ``out``.

    A folder that holds a finished run of at least ``config.timesteps`` steps is left as it
    is (its result is returned); asking for more steps goes on from the finished model. A
    run stopped early goes on from its latest checkpoint. Ctrl-C saves the model so far and
    a checkpoint, then raises :class:`Interrupted`.
    """
    began = time.perf_counter()
    _check_config(config)
    if out.exists():
        check_same_run(config, out, write=False)
    done = saved_steps(out)
    if done >= config.timesteps:  # finished: nothing is retrained or overwritten
        return finished_result(out, done)
    threads = set_threads(config.threads)
    resume = _resume_point(out, done)
    model = _load_or_build(config, out, resume)  # before the folder is written
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    check_same_run(config, out)  # written now that the env and the model could be built
    (out / "monitor").mkdir(exist_ok=True)
    venv = training_env(config, monitor_dir=str(out / "monitor"))
    model.set_env(venv)
    callbacks, teacher_seconds = _callbacks(config, out, model, resume, began, progress)
    start = time.perf_counter()
    interrupted = _learn(config, out, model, callbacks, progress, resume)
    # PPO's seconds over the run's sessions: a run that goes on adds its own to those before
    seconds = time.perf_counter() - start + (_ppo_seconds_before(out) if resume else 0.0)
    venv.close()
    model_path = out / "model.zip"
    model.save(model_path)
    settings = {
        **asdict(config),
        "resumed_from": str(resume) if resume else None,
        "timesteps_done": int(model.num_timesteps),
        "seconds": round(seconds, 1),
        "batched": uses_batch(config),
        "bf16": uses_bf16(config),
        "torch_threads": threads,
        "device": str(model.device),
        "teacher_seconds": round(teacher_seconds, 1),
        "session_seconds": round(time.perf_counter() - began, 1),
        "stopped_at_time_limit": bool(
            config.time_limit is not None and model.num_timesteps < config.timesteps
        ),
    }
    settings_path = out / "settings.json"
    settings_path.write_text(json.dumps({**settings, "interrupted": interrupted}, indent=2))
    if interrupted:
        raise Interrupted(int(model.num_timesteps), model_path)
    return TrainResult(
        model_path,
        settings_path,
        int(model.num_timesteps),
        seconds,
        str(resume) if resume else None,
        read_curve(out),
        teacher_seconds=teacher_seconds,
    )


def _ppo_seconds_before(out: Path) -> float:
    """The PPO seconds the run's earlier sessions wrote in ``settings.json`` (0 where there
    is none: a run killed before it wrote one)."""
    path = out / "settings.json"
    if not path.exists():
        return 0.0
    return float(read_json(path).get("seconds", 0.0))


def _check_config(config: TrainConfig) -> None:
    """Refuse settings a run cannot start with, before anything is built or written."""
    if config.algo not in ALGOS:
        raise ValueError(f"algo must be one of {ALGOS}, got {config.algo!r}")
    if config.vec_env not in VEC_ENVS:
        raise ValueError(f"vec_env must be one of {VEC_ENVS}, got {config.vec_env!r}")
    if config.n_envs < 1:
        raise ValueError(f"n_envs must be at least 1, got {config.n_envs!r}")
    if config.timesteps < 1:
        raise ValueError(f"timesteps must be at least 1, got {config.timesteps!r}")
    if config.time_limit is not None and not config.time_limit > 0:
        raise ValueError(f"time_limit must be above 0 seconds, got {config.time_limit!r}")
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
    _check_potentials(config)
    if config.teacher is not None:
        _check_teacher(config)
    elif config.warm_teacher is not None:
        raise ValueError("a warm teacher only warms up a --teacher run; name the teacher")


def _check_potentials(config: TrainConfig) -> None:
    """Refuse a potential the game does not have, or a shaping scale that is not a positive
    number, before anything is built."""
    from grid_envs.wrappers import check_shaping, get_potential

    for name in (config.shaping, config.potential_input):
        if name is not None:
            get_potential(config.env_id, name)
    check_shaping(config.gamma, config.shaping_scale, config.shaping_at_loss)


def _resume_point(out: Path, done: int) -> Path | None:
    """The model a run goes on from: its latest checkpoint, or its saved model where that
    holds more steps; None for a new run."""
    resume = latest_checkpoint(out / "checkpoints")
    if done and (resume is None or checkpoint_steps(resume) < done):
        resume = out / "model.zip"
    return resume


def _load_or_build(config: TrainConfig, out: Path, resume: Path | None) -> Any:
    """The model to train: loaded from ``resume`` or new, built on a throwaway env so
    that a setting that cannot work fails before the run folder is written."""
    check_training_memory(config)
    venv = training_env(config)
    try:
        if resume is None:
            return new_model(config, venv, tensorboard_log=str(out / "tb"))
        return algo_class(config.algo).load(
            resume, env=venv, device=config.device, tensorboard_log=str(out / "tb")
        )
    except ValueError as error:  # SB3 prints both spaces in full: say it in one line
        if resume is None or "spaces do not match" not in str(error):
            raise
        raise ValueError(
            f"{resume} was saved for another observation or action space than "
            f"{config.env_id} now has (an older version of the env?); "
            f"choose another --out or delete the folder"
        ) from None
    finally:
        venv.close()


def _callbacks(
    config: TrainConfig,
    out: Path,
    model: Any,
    resume: Path | None,
    began: float,
    progress: bool = False,
) -> tuple[list[Any], float]:
    """Checkpoints, evaluation, the teacher's cloning (taught here first, on a fresh run)
    and the time limit; with the seconds the teaching took, every session's."""
    from stable_baselines3.common.callbacks import CheckpointCallback

    per_env = max(1, config.n_envs)
    callbacks = [
        CheckpointCallback(
            max(1, checkpoint_every(config) // per_env), str(out / "checkpoints"), "model"
        ),
        _eval_callback(config, out, per_env),
    ]
    teacher_seconds = 0.0
    if config.teacher:
        teacher_seconds, cloning = _taught(config, model, out, resume is None, progress)
        callbacks.append(cloning)
    if config.time_limit is not None:
        callbacks.append(_time_limit(began + config.time_limit))
    return callbacks, teacher_seconds


def _learn(
    config: TrainConfig, out: Path, model: Any, callbacks: list[Any], progress: bool,
    resume: Path | None,
) -> bool:  # fmt: skip
    """Run SB3's learning to the configured steps; whether Ctrl-C stopped it (the model
    so far is then saved as a checkpoint)."""
    from stable_baselines3.common.callbacks import CallbackList

    remaining = config.timesteps - model.num_timesteps
    if remaining <= 0:
        return False
    try:
        # SB3's bar draws on stdout: sent to stderr with the teaching's, stdout keeps results
        with contextlib.redirect_stdout(sys.stderr):
            model.learn(
                remaining,
                callback=CallbackList(callbacks),
                progress_bar=progress and _has_bar(),
                reset_num_timesteps=resume is None,
                tb_log_name=config.algo,
            )
    except ValueError as error:  # torch refuses a distribution whose logits are NaN
        if "nan" not in str(error).lower():
            raise
        raise ValueError(
            f"PPO diverged after {model.num_timesteps:,} steps: the network's outputs are no "
            f"longer numbers; try a smaller learning rate or larger --n-envs x --n-steps "
            f"(the run folder keeps its last checkpoint)"
        ) from None
    except KeyboardInterrupt:
        model.save(out / "checkpoints" / f"model_{model.num_timesteps}_steps.zip")
        return True
    return False


def _check_teacher(config: TrainConfig) -> None:
    """Refuse a teacher run that cannot start, before the run folder is written."""
    from agents.imitation import check_teaching

    if config.algo == "dqn":
        raise ValueError("a teacher trains PPO or MaskablePPO policies, not DQN")
    check_teaching(config.env_id, config.teacher or "", config.teacher_states,
                   config.dagger_rounds)  # fmt: skip
    if config.warm_teacher is not None:
        check_teaching(config.env_id, config.warm_teacher, config.warm_states, 1)
    if config.teacher_workers < 1:
        raise ValueError(f"teacher_workers must be at least 1, got {config.teacher_workers!r}")
    if not config.teacher_lr > 0 or config.teacher_batch < 1:
        raise ValueError(
            f"teacher_lr must be above 0 and teacher_batch at least 1, got "
            f"{config.teacher_lr!r} and {config.teacher_batch!r}"
        )


def _taught(
    config: TrainConfig, model: Any, out: Path, fresh: bool, progress: bool = False
) -> tuple[float, Any]:
    """Clone the teacher into a fresh model (DAgger rounds; the labels kept in
    ``teacher/labels.npz``, the rounds in ``teacher/rounds.json``, the cloned policy in
    ``teacher/cloned.zip``, each round's as it ends, so that a stopped teaching goes on from
    its last finished round); on a resume of PPO, read the labels back. The seconds it took
    and the callback that keeps cloning while PPO fine-tunes. The seconds are the
    rounds' own, as ``rounds.json`` keeps them: those of an earlier session count too."""
    from agents.imitation import CloningCallback, board_symmetries, teach

    folder = out / "teacher"
    actions = SYMMETRIES.get(config.env_id)
    shape = model.observation_space.shape
    symmetries = board_symmetries(shape, actions) if actions is not None else None
    kept = _kept_teaching(folder)
    if not fresh and kept is not None and kept.labels is not None:
        labels = kept.labels  # PPO goes on from its checkpoint: the labels alone
        rounds = kept.rounds
    else:
        if kept is not None:  # the model as the last finished round left it
            model.set_parameters(str(folder / "cloned.zip"), exact_match=True, device=model.device)
        folder.mkdir(exist_ok=True)
        try:
            result = teach(
                model, config.env_id, config.teacher or "", config.teacher_states,
                config.dagger_rounds, config.seed, config.env_kwargs, config.teacher_epochs,
                config.teacher_batch, config.gamma, log=_round_logger(config.dagger_rounds),
                lr=config.teacher_lr, symmetries=symmetries, workers=config.teacher_workers,
                warm=config.warm_teacher, warm_states=config.warm_states, so_far=kept,
                on_round=lambda so_far: _keep_teaching(folder, model, so_far),
                progress=progress,
            )  # fmt: skip
        except KeyboardInterrupt:
            finished = len(read_json(folder / "rounds.json", list)) if (
                folder / "rounds.json").exists() else 0  # fmt: skip
            raise KeyboardInterrupt(
                f"interrupted while teaching, after {finished} finished round"
                f"{'s' * (finished != 1)} (kept in {folder}); run the same command again to "
                f"go on from them"
            ) from None
        assert result.labels is not None
        labels, rounds = result.labels, result.rounds
    decay = config.cloning_decay if config.cloning_decay is not None else config.timesteps // 2
    cloning = CloningCallback(
        labels, config.cloning_coef, decay, seed=config.seed, symmetries=symmetries
    )
    return float(sum(line["seconds"] for line in rounds)), cloning


def _keep_teaching(folder: Path, model: Any, so_far: Any) -> None:
    """The teaching so far into ``folder``: labels and the cloned model first, each written
    whole before it replaces the last, then ``rounds.json``, which says what is there."""
    if so_far.labels is not None:
        np.savez_compressed(folder / "labels.tmp.npz", *so_far.labels.arrays())
        (folder / "labels.tmp.npz").replace(folder / "labels.npz")
    model.save(folder / "cloned.tmp.zip")
    (folder / "cloned.tmp.zip").replace(folder / "cloned.zip")
    (folder / "rounds.tmp.json").write_text(json.dumps(so_far.rounds, indent=2))
    (folder / "rounds.tmp.json").replace(folder / "rounds.json")


def _kept_teaching(folder: Path) -> Any:
    """The teaching ``folder`` holds (a ``TeachResult`` of its finished rounds), or None
    where it holds none, or files that do not agree (then teaching starts over)."""
    from agents.imitation import Labels, TeachResult

    paths = [folder / name for name in ("rounds.json", "cloned.zip")]
    if not all(p.exists() for p in paths):
        return None
    rounds = read_json(folder / "rounds.json", list)
    taught = [line for line in rounds if line["round"] != "warm"]
    labels = None
    if (folder / "labels.npz").exists():
        names = tuple(f"arr_{i}" for i in range(len(Labels.__dataclass_fields__)))
        saved = read_arrays(folder / "labels.npz", names[:4], names[4:])
        labels = Labels(*saved.values())
    if taught and (labels is None or len(labels) != taught[-1]["total_states"]):
        return None
    return TeachResult(labels, rounds)


def _round_logger(rounds: int) -> Any:
    """What a teaching round reports as it ends: a line on stderr, so that a long teaching
    shows where it is."""

    def log(line: dict[str, Any]) -> None:
        name = line["round"] if line["round"] == "warm" else f"{line['round'] + 1}/{rounds}"
        agreed = f"agreed on {line['agreement']:.1%}, " if line["moved_by"] == "learner" else ""
        print(
            f"teaching round {name}, the {line['moved_by']} moving: {line['states']:,} states "
            f"({line['total_states']:,} in all), {line['win_rate']:.1%} of its episodes won, "
            f"{agreed}the clone fits {line['accuracy']:.1%} of the labels, "
            f"{line['seconds']:.0f} s",
            file=sys.stderr, flush=True,
        )  # fmt: skip

    return log


def _has_bar() -> bool:
    try:
        import rich  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def _time_limit(deadline: float) -> Any:
    """A callback that stops ``learn`` at the first step past ``deadline`` (a
    ``time.perf_counter()``)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class TimeLimit(BaseCallback):
        def _on_step(self) -> bool:
            return time.perf_counter() < deadline

    return TimeLimit()


def _eval_callback(config: TrainConfig, out: Path, per_env: int) -> Any:
    """Evaluations during training: the same ``eval_episodes`` episodes each time (seeded
    from :data:`EVAL_SEED`), on a batch where the id has one, raw game rewards; every
    ``eval_freq`` timesteps, and for PPO at most once a rollout (a large batch would
    otherwise evaluate at every step)."""
    from agents.batched import BatchedEvalCallback, has_native_batch

    every = config.eval_freq
    if config.algo != "dqn":
        every = max(every, config.n_envs * config.n_steps)
    if has_native_batch(config.env_id):
        return BatchedEvalCallback(
            config.env_id, config.env_kwargs, config.algo, config.eval_episodes,
            eval_freq=every // per_env, seed=config.seed + EVAL_SEED,
            log_path=out / "eval", best_path=out / "best",
            potential_input=config.potential_input,
        )  # fmt: skip
    eval_env = make_vec_env(config, 1, seed_offset=EVAL_SEED)
    kwargs: dict[str, Any] = {
        "n_eval_episodes": config.eval_episodes,
        "eval_freq": max(1, every // per_env),
        "log_path": str(out / "eval"),
        "best_model_save_path": str(out / "best"),
        "deterministic": True,
        "verbose": 0,
    }
    from stable_baselines3.common.callbacks import EvalCallback

    Callback: type[EvalCallback] = EvalCallback
    if config.algo == "maskable-ppo":
        from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback

        Callback = MaskableEvalCallback

    class EvalAtEnd(Callback):  # type: ignore[misc, valid-type]
        """SB3's evaluation, and one more at the end when the last step was not evaluated
        (a run shorter than ``eval_freq``, one stopped at its time limit)."""

        eval_freq: int

        def _on_training_end(self) -> None:
            super()._on_training_end()
            if self.n_calls % self.eval_freq:
                kept, self.eval_freq = self.eval_freq, 1
                self._on_step()
                self.eval_freq = kept

    return EvalAtEnd(eval_env, **kwargs)
