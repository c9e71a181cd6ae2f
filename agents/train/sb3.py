"""Training runs with stable-baselines3, over a configuration of :mod:`agents.train.config`.

:func:`train` runs MaskablePPO (default), PPO or DQN, with a progress bar, TensorBoard
logs, periodic checkpoints that a rerun resumes from, an evaluation callback, and the final
model saved next to ``settings.json`` (everything that made it). A run goes in stages:
the configuration is checked (:mod:`agents.train.checks`), the run folder read
(:mod:`agents.train.runs`: a finished run is left alone, a stopped one goes on), the
configuration resolved once (:func:`agents.train.plan.resolve_run`), the envs and the model
built (:mod:`agents.train.build`; every id with a native batched env trains on it,
:mod:`agents.train.batch`), a ``teacher``'s moves cloned first
(:func:`agents.train.teaching.teach_run`), then PPO, and the settings written. A saved
model plays as :class:`agents.train.models.PolicyAgent`.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple

from agents.nets.common import set_threads
from agents.train.build import eval_callback, new_model, training_env
from agents.train.checks import check_config
from agents.train.config import TrainConfig
from agents.train.models import algo_class
from agents.train.plan import RunPlan, resolve_run
from agents.train.runs import (
    Interrupted,
    TrainResult,
    check_run_folder,
    check_same_run,
    checkpoint_steps,
    finished_result,
    latest_checkpoint,
    read_curve,
    read_json,
    run_lock,
    saved_steps,
)


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
    check_config(config)
    if out.exists():
        check_same_run(config, out, write=False)
    done = saved_steps(out)
    if done >= config.timesteps:  # finished: nothing is retrained or overwritten
        return finished_result(out, done)
    plan = resolve_run(config)  # the network and the memory: only for a run that trains
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
    its result; raise :class:`Interrupted` where Ctrl-C stopped it. The result holds the
    seconds as the file rounds them, so what ``train`` prints agrees with the file."""
    config, model_path = plan.config, out / "model.zip"
    seconds, taught = round(session.seconds, 1), round(session.teacher_seconds, 1)
    settings = {
        **asdict(config),
        "resumed_from": str(resume) if resume else None,
        "timesteps_done": int(model.num_timesteps),
        "seconds": seconds,
        "batched": plan.batched,
        "bf16": plan.bf16,
        "torch_threads": session.threads,
        "device": str(model.device),
        "teacher_seconds": taught,
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
        model_path, settings_path, int(model.num_timesteps), seconds,
        str(resume) if resume else None, read_curve(out),
        teacher_seconds=taught, threads=session.threads, bf16=plan.bf16,
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

    from agents.train.teaching import teach_run

    config = plan.config
    per_env = max(1, config.n_envs)
    callbacks = [
        CheckpointCallback(
            max(1, plan.checkpoint_every // per_env), str(out / "checkpoints"), "model"
        ),
        eval_callback(plan, out, per_env),
    ]
    teacher_seconds = 0.0
    if config.teacher:
        teacher_seconds, cloning = teach_run(plan, model, out, resume is None, progress)
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
