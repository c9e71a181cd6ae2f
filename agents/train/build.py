"""What a planned stable-baselines3 run builds: the envs it steps and evaluates on, and
its model (:func:`new_model`).

:func:`training_env` gives the native batch where the id has one (``vec_env="batched"``,
:class:`agents.train.batch.BatchedVecEnv`: one env call and one forward pass a step for the
whole batch) and otherwise single envs in a ``DummyVecEnv`` (:func:`make_vec_env`), each
seeded, monitored and shaped alike; :func:`eval_callback` evaluates during training on
the validation seeds, on a batch too where there is one.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import gymnasium as gym

from agents.train.config import EVAL_SEED, TrainConfig
from agents.train.models import DQN_BUFFER, algo_class
from agents.train.plan import RunPlan


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


def training_env(plan: RunPlan, monitor_dir: str | None = None) -> Any:
    """The vec env a run trains on: the native batch
    (:class:`agents.train.batch.BatchedVecEnv`) or a ``DummyVecEnv`` of single envs,
    seeded, monitored and shaped alike."""
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


def eval_callback(plan: RunPlan, out: Path, per_env: int) -> Any:
    """Evaluations during training: the same ``eval_episodes`` episodes each time (seeded
    from :data:`EVAL_SEED`), on a batch where the id has one, raw game rewards; every
    ``eval_every`` timesteps of the plan (``eval_freq``, and for PPO at most once a
    rollout: a large batch would otherwise evaluate at every step)."""
    from agents.train.batch import BatchedEvalCallback, has_native_batch

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


def new_model(plan: RunPlan, venv: Any, tensorboard_log: str | None) -> Any:
    """A new model of the planned run's algorithm and network on ``venv``."""
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
