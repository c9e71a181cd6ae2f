"""Training runs with stable-baselines3, over a configuration of :mod:`agents.train.config`.

:func:`train` runs MaskablePPO (default), PPO or DQN, with a progress bar, TensorBoard
logs, periodic checkpoints that a rerun resumes from, an evaluation callback, and the final
model saved next to ``settings.json`` (everything that made it). Every id with a native
batched env trains on it (``vec_env="batched"``, :mod:`agents.train.batch`: one env call
and one forward pass a step for the whole batch, rollouts under ``torch.inference_mode``,
evaluation on a batch too); ``vec_env="dummy"`` steps single envs in a ``DummyVecEnv``.
A ``teacher`` first clones an algorithm's moves (:mod:`agents.train.teaching`). What a
run leaves on disk, and the rules for going on with one, are in :mod:`agents.train.runs`;
a saved model plays as :class:`agents.train.models.PolicyAgent`.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from agents.nets.common import (
    set_threads,
)
from agents.train.config import EVAL_SEED, TrainConfig
from agents.train.models import algo_class
from agents.train.plan import DQN_BUFFER, RunPlan, as_plan, plan_run
from agents.train.runs import (
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


def new_model(run: TrainConfig | RunPlan, venv: Any, tensorboard_log: str | None) -> Any:
    """A new model of the run's algorithm and network (``run``: a configuration, planned
    here, or its :class:`~agents.train.plan.RunPlan`) on ``venv``."""
    plan = as_plan(run)
    config = plan.config
    cls = algo_class(config.algo)
    common = {
        "gamma": config.gamma,
        "learning_rate": config.learning_rate,
        "seed": config.seed,
        "verbose": 0,
        "tensorboard_log": tensorboard_log,
        "policy_kwargs": plan.policy_kwargs,
        "device": config.device,
    }
    if config.algo == "dqn":
        return cls(
            plan.policy,
            venv,
            buffer_size=DQN_BUFFER,
            learning_starts=1_000,
            batch_size=config.batch_size,
            exploration_fraction=0.3,
            **common,
        )
    return cls(
        plan.policy,
        venv,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        ent_coef=config.ent_coef,
        **common,
    )


def training_env(run: TrainConfig | RunPlan, monitor_dir: str | None = None) -> Any:
    """The vec env a run trains on (``run``: a configuration, planned here, or its plan):
    the native batch (:class:`agents.train.batch.BatchedVecEnv`) or a ``DummyVecEnv`` of
    single envs, seeded, monitored and shaped alike."""
    plan = as_plan(run)
    config = plan.config
    if plan.batched:
        from agents.train.batch import BatchedVecEnv

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
# agents.train.labels.TEACHER_SEED (round r from 20,000 + r * 100,000); final, reported
# evaluations (``compare``, the benchmarks) from HELDOUT_SEED, which nothing trains on.
def train(config: TrainConfig, out: str | Path, progress: bool = True) -> TrainResult:
    """Train, resume or extend a model in the run folder ``out`` (see :func:`_train`),
    which no other run may use meanwhile (:func:`agents.train.runs.run_lock`)."""
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
    plan = plan_run(config)
    if out.exists():
        check_same_run(config, out, write=False)
    done = saved_steps(out)
    if done >= config.timesteps:  # finished: nothing is retrained or overwritten
        return finished_result(out, done)
    threads = set_threads(config.threads)
    resume = _resume_point(out, done)
    model = _load_or_build(plan, out, resume)  # before the folder is written
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    check_same_run(config, out)  # written now that the env and the model could be built
    (out / "monitor").mkdir(exist_ok=True)
    venv = training_env(plan, monitor_dir=str(out / "monitor"))
    model.set_env(venv)
    callbacks, teacher_seconds = _callbacks(plan, out, model, resume, began, progress)
    start = time.perf_counter()
    interrupted = _learn(config, out, model, callbacks, progress, resume)
    # PPO's seconds over the run's sessions: a run that goes on adds its own to those before
    seconds = time.perf_counter() - start + (_ppo_seconds_before(out) if resume else 0.0)
    venv.close()
    model.save(out / "model.zip")
    session = _Session(seconds, teacher_seconds, threads, began, interrupted)
    return _record(plan, out, model, resume, session)


class _Session(NamedTuple):
    """What one session of a run did: PPO's seconds (every session's), the teaching's,
    the torch threads, when it began (``time.perf_counter``) and whether Ctrl-C stopped it."""

    seconds: float
    teacher_seconds: float
    threads: int
    began: float
    interrupted: bool


def _record(
    plan: RunPlan, out: Path, model: Any, resume: Path | None, session: _Session
) -> TrainResult:
    """Write the run's ``settings.json`` (the configuration, what the plan resolved and what
    the session did: its steps, PPO's and the teaching's seconds, threads, device) and give
    its result; raise :class:`Interrupted` where Ctrl-C stopped it."""
    config, model_path = plan.config, out / "model.zip"
    settings = {
        **asdict(config),
        "resumed_from": str(resume) if resume else None,
        "timesteps_done": int(model.num_timesteps),
        "seconds": round(session.seconds, 1),
        "batched": plan.batched,
        "bf16": plan.bf16,
        "torch_threads": session.threads,
        "device": str(model.device),
        "teacher_seconds": round(session.teacher_seconds, 1),
        "session_seconds": round(time.perf_counter() - session.began, 1),
        "stopped_at_time_limit": bool(
            config.max_seconds is not None and model.num_timesteps < config.timesteps
        ),
        "interrupted": session.interrupted,
    }
    settings_path = out / "settings.json"
    settings_path.write_text(json.dumps(settings, indent=2))
    if session.interrupted:
        raise Interrupted(int(model.num_timesteps), model_path)
    return TrainResult(
        model_path, settings_path, int(model.num_timesteps), session.seconds,
        str(resume) if resume else None, read_curve(out),
        teacher_seconds=session.teacher_seconds, threads=session.threads, bf16=plan.bf16,
    )  # fmt: skip


def _ppo_seconds_before(out: Path) -> float:
    """The PPO seconds the run's earlier sessions wrote in ``settings.json`` (0 where there
    is none: a run killed before it wrote one)."""
    path = out / "settings.json"
    if not path.exists():
        return 0.0
    return float(read_json(path).get("seconds", 0.0))


def _resume_point(out: Path, done: int) -> Path | None:
    """The model a run goes on from: its latest checkpoint, or its saved model where that
    holds more steps; None for a new run."""
    resume = latest_checkpoint(out / "checkpoints")
    if done and (resume is None or checkpoint_steps(resume) < done):
        resume = out / "model.zip"
    return resume


def _load_or_build(plan: RunPlan, out: Path, resume: Path | None) -> Any:
    """The model to train: loaded from ``resume`` or new, built on a throwaway env so
    that a setting that cannot work fails before the run folder is written."""
    config = plan.config
    venv = training_env(plan)
    try:
        if resume is None:
            return new_model(plan, venv, tensorboard_log=str(out / "tb"))
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
    plan: RunPlan,
    out: Path,
    model: Any,
    resume: Path | None,
    began: float,
    progress: bool = False,
) -> tuple[list[Any], float]:
    """Checkpoints, evaluation, the teacher's cloning (taught here first, on a fresh run)
    and the time limit; with the seconds the teaching took, every session's."""
    from stable_baselines3.common.callbacks import CheckpointCallback

    config = plan.config
    per_env = max(1, config.n_envs)
    callbacks = [
        CheckpointCallback(
            max(1, plan.checkpoint_every // per_env), str(out / "checkpoints"), "model"
        ),
        _eval_callback(plan, out, per_env),
    ]
    teacher_seconds = 0.0
    if config.teacher:
        teacher_seconds, cloning = _taught(plan, model, out, resume is None, progress)
        callbacks.append(cloning)
    if config.max_seconds is not None:
        callbacks.append(_deadline(began + config.max_seconds))
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


def _taught(
    plan: RunPlan, model: Any, out: Path, fresh: bool, progress: bool = False
) -> tuple[float, Any]:
    """Clone the teacher into a fresh model (DAgger rounds; the labels kept in
    ``teacher/labels.npz``, the rounds in ``teacher/rounds.json``, the cloned policy in
    ``teacher/cloned.zip``, each round's as it ends, so that a stopped teaching goes on from
    its last finished round); on a resume of PPO, read the labels back. The seconds it took
    and the callback that keeps cloning while PPO fine-tunes. The seconds are the
    rounds' own, as ``rounds.json`` keeps them: those of an earlier session count too."""
    from agents.train.cloning import CloningCallback
    from agents.train.teaching import teach

    config, symmetries = plan.config, plan.symmetries
    folder = out / "teacher"
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
    from agents.train.cloning import Labels
    from agents.train.teaching import TeachResult

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


def _deadline(deadline: float) -> Any:
    """A callback that stops ``learn`` at the first step past ``deadline`` (a
    ``time.perf_counter()``)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class TimeLimit(BaseCallback):
        def _on_step(self) -> bool:
            return time.perf_counter() < deadline

    return TimeLimit()


def _eval_callback(run: TrainConfig | RunPlan, out: Path, per_env: int) -> Any:
    """Evaluations during training: the same ``eval_episodes`` episodes each time (seeded
    from :data:`EVAL_SEED`), on a batch where the id has one, raw game rewards; every
    ``eval_every`` timesteps of the plan (``eval_freq``, and for PPO at most once a
    rollout: a large batch would otherwise evaluate at every step)."""
    from agents.train.batch import BatchedEvalCallback, has_native_batch

    plan = as_plan(run)
    config, every = plan.config, plan.eval_every
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
