"""Training on Ray RLlib: every GridGames env as an RLlib environment, masks included.

* :class:`MaskedObservation`: RLlib reads masks from the observation, so the env's planes
  and its exact mask travel together as ``{"observations": planes, "action_mask": mask}``.
* :class:`MaskedBatchObservation`: the same for a whole native batched env.
* :func:`register`: the env under RLlib's registry (``gridgames/<id>``), made by its
  Gymnasium id inside every env runner process: each runner steps its
  ``envs_per_runner`` envs as one native batched env where the id has one
  (``gym_env_vectorize_mode="vector_entry_point"``), else as Gymnasium's loop over single
  envs.
* :class:`MaskedGridModule` (built lazily: importing ``agents`` needs no ray or torch): the
  small-board CNN of :mod:`agents.train.sb3` with a policy and a value head; the mask sends the
  logits of illegal actions to the float minimum, so PPO never samples them.
* :func:`train_rllib`: PPO with ``num_env_runners`` sampling processes on a local Ray
  runtime, or on an existing cluster given its ``address``; checkpoints that a rerun
  resumes from, a learning curve, and the policy exported on its own (``DIR/policy``).
* :class:`RLlibPolicyAgent`: that exported policy behind the same ``predict`` as every
  baseline, so ``agents.evaluate`` and ``grid-games eval`` run it against them.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np

from agents.base import Agent, Thought
from agents.nets.common import grid_cnn_parts, require
from agents.train.runs import (
    Interrupted,
    check_run_folder,
    check_same_run,
    read_json,
    run_lock,
    saved_steps,
)
from grid_envs.core.base_env import GridEnv

POLICY_DIR = "policy"  # the exported RLModule, inside a run folder


class MaskedObservation(gym.ObservationWrapper[dict[str, np.ndarray], Any, np.ndarray]):
    """The observation as ``{"observations": the env's planes, "action_mask": its mask}``.

    The mask is the env's exact mask after the step (uint8 0/1), which is what the RLlib
    module needs to mask the next action.
    """

    def __init__(self, env: gym.Env[np.ndarray, Any]) -> None:
        super().__init__(env)
        space = env.action_space
        assert isinstance(space, gym.spaces.Discrete), "the grid games' actions are Discrete"
        n = int(space.n)
        space = gym.spaces.Dict(
            {
                "observations": env.observation_space,
                "action_mask": gym.spaces.Box(0, 1, (n,), dtype=np.uint8),
            }
        )
        self.observation_space = cast(gym.Space[dict[str, np.ndarray]], space)

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        mask = self.env.unwrapped.action_masks()  # type: ignore[attr-defined]
        return {"observations": observation, "action_mask": mask.astype(np.uint8)}


class MaskedBatchObservation(gym.vector.VectorWrapper):
    """:class:`MaskedObservation` for a native batched env: ``{"observations": the batch's
    planes, "action_mask": its masks}``."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        n = int(env.single_action_space.n)
        self.single_observation_space = gym.spaces.Dict(
            {
                "observations": env.single_observation_space,
                "action_mask": gym.spaces.Box(0, 1, (n,), dtype=np.uint8),
            }
        )
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )

    def _masked(self, observations: np.ndarray) -> dict[str, np.ndarray]:
        batch: Any = self.env.unwrapped  # a GridVectorEnv: the masks of the whole batch
        masks = batch.action_masks().astype(np.uint8)
        return {"observations": observations, "action_mask": masks}

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self._masked(obs), info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(actions)
        return self._masked(obs), reward, terminated, truncated, info


def has_native_batch(env_id: str) -> bool:
    import grid_envs  # noqa: F401  (registers the ids)

    return gym.spec(env_id).vector_entry_point is not None


def make_env(config: dict[str, Any]) -> Any:
    """RLlib's env creator: ``config`` holds ``env_id``, ``env_kwargs`` and ``shaping``, and
    ``num_envs`` when RLlib asks for a vector env (the native batch)."""
    import grid_envs  # noqa: F401  (registers the ids inside the env runner process)
    from grid_envs.wrappers import PotentialShaping, VectorPotentialShaping

    env_id, kwargs = config["env_id"], config.get("env_kwargs", {})
    gamma, scale = config.get("gamma", 0.99), config.get("shaping_scale", 1.0)
    if "num_envs" in config:
        batch: Any = gym.make_vec(
            env_id, int(config["num_envs"]), vectorization_mode="vector_entry_point", **kwargs
        )
        if config.get("shaping"):
            batch = VectorPotentialShaping(batch, config["shaping"], gamma, scale)
        return MaskedBatchObservation(batch)
    env: gym.Env[Any, Any] = gym.make(env_id, **kwargs)
    if config.get("shaping"):
        env = PotentialShaping(env, config["shaping"], gamma, scale)
    return MaskedObservation(env)


def rllib_name(env_id: str) -> str:
    return f"gridgames/{env_id}"


def register(env_id: str) -> str:
    """Register ``env_id`` with RLlib (by its Gymnasium id); returns the name RLlib knows."""
    from ray.tune.registry import register_env

    name = rllib_name(env_id)
    register_env(name, make_env)
    return name


def masked_grid_module() -> type:
    """The RLModule class: a small-board CNN, a policy head with masked logits, a value head."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    class MaskedGridModule(TorchRLModule, ValueFunctionAPI):
        """Two 3x3 'same' convolutions keep every cell of a small board; then a dense layer.

        ``model_config``: ``width`` (32) filters, ``features_dim`` (128). Each plane is
        scaled to [0, 1] by its bound in the observation space.
        """

        def setup(self) -> None:
            config = self.model_config if isinstance(self.model_config, dict) else {}
            width = int(config.get("width", 32))
            features = int(config.get("features_dim", 128))
            observations, actions = self.observation_space, self.action_space
            assert isinstance(observations, gym.spaces.Dict)
            assert isinstance(actions, gym.spaces.Discrete)
            planes = observations["observations"]
            assert isinstance(planes, gym.spaces.Box)
            scale, cnn, linear = grid_cnn_parts(planes, features, width)
            self.register_buffer("scale", scale)
            self.encoder = torch.nn.Sequential(cnn, linear)
            self.pi = torch.nn.Linear(features, int(actions.n))
            self.vf = torch.nn.Linear(features, 1)

        def _embed(self, batch: dict[str, Any]) -> Any:
            planes = batch[Columns.OBS]["observations"]
            return self.encoder(planes.float() * self.scale)

        def _logits(self, batch: dict[str, Any], embeddings: Any) -> Any:
            mask = batch[Columns.OBS]["action_mask"]
            return self.pi(embeddings).masked_fill(mask == 0, FLOAT_MIN)

        def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            return {Columns.ACTION_DIST_INPUTS: self._logits(batch, self._embed(batch))}

        def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            embeddings = self._embed(batch)
            return {
                Columns.ACTION_DIST_INPUTS: self._logits(batch, embeddings),
                Columns.EMBEDDINGS: embeddings,
            }

        def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
            if embeddings is None:
                embeddings = self._embed(batch)
            return self.vf(embeddings).squeeze(-1)

    return MaskedGridModule


@dataclass
class RLlibConfig:
    """Everything that defines an RLlib run (saved as ``settings.json`` in the run folder)."""

    env_id: str
    timesteps: int = 50_000
    num_env_runners: int = 2  # sampling processes; the learner runs in the driver
    envs_per_runner: int = 8  # a gymnasium vector env inside each runner: batched forwards
    seed: int = 0
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    shaping: str | None = None
    shaping_scale: float = 1.0
    gamma: float = 0.99
    lr: float = 3e-4
    gae_lambda: float = 0.95  # SB3's (RLlib's default is 1.0)
    train_batch: int = 1_000  # env steps per training iteration
    minibatch: int = 128
    epochs: int = 10
    entropy_coeff: float = 0.01
    vf_loss_coeff: float = 0.5
    features_dim: int = 128
    checkpoint_every: int = 5  # iterations
    learner_threads: int = 1  # torch threads of the learner (the driver); runners use 1 each


def algorithm_config(config: RLlibConfig) -> Any:
    """The PPOConfig of a run: our env, our module, the env runners asked for."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    name = register(config.env_id)
    env_config = {
        "env_id": config.env_id,
        "env_kwargs": config.env_kwargs,
        "shaping": config.shaping,
        "shaping_scale": config.shaping_scale,
        "gamma": config.gamma,
    }
    return (
        PPOConfig()
        .environment(name, env_config=env_config)
        .env_runners(
            num_env_runners=config.num_env_runners,
            num_envs_per_env_runner=config.envs_per_runner,
            num_cpus_per_env_runner=1,
            # each runner's envs as one native batch where the id has one
            gym_env_vectorize_mode=(
                "vector_entry_point" if has_native_batch(config.env_id) else "sync"
            ),
        )
        .learners(num_learners=0)
        .training(
            gamma=config.gamma,
            lr=config.lr,
            lambda_=config.gae_lambda,
            clip_param=0.2,
            use_kl_loss=False,
            vf_loss_coeff=config.vf_loss_coeff,
            train_batch_size_per_learner=config.train_batch,
            minibatch_size=config.minibatch,
            num_epochs=config.epochs,
            entropy_coeff=config.entropy_coeff,
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=masked_grid_module(),
                model_config={"features_dim": config.features_dim},
            )
        )
        .debugging(seed=config.seed)
    )


@dataclass
class RLlibResult:
    out: Path
    policy_path: Path
    timesteps: int
    seconds: float
    resumed: bool
    curve: list[tuple[int, float, float]]  # (env steps, mean episode return, env steps/s)
    already_done: bool = False  # the folder held a finished run of these steps: not retrained


def _steps_of(result: dict[str, Any]) -> int:
    runners = result.get("env_runners", {})
    return int(runners.get("num_env_steps_sampled_lifetime", 0))


def train_rllib(
    config: RLlibConfig, out: str | Path, address: str | None = None, log: Any = print
) -> RLlibResult:
    """Train PPO on RLlib until ``config.timesteps`` env steps; resume a run in ``out``.

    ``address``: an existing Ray cluster (``ray://host:10001`` or ``host:6379``); by default
    a local runtime is started (and stopped at the end).
    """
    ray = require("ray", "distributed", "the rllib backend")
    import torch

    if address is not None:
        check_reachable(address)  # before anything is written: ray.init would wait for ever
    out = Path(out).resolve()
    check_run_folder(out, "rllib")
    if out.exists():
        check_same_run(config, out, RUN_KEYS, kind="an RLlib run", write=False)
    done = saved_steps(out, POLICY_DIR)
    if done >= config.timesteps:  # finished: nothing is retrained or overwritten
        settings = read_json(out / "settings.json")
        return RLlibResult(out, out / POLICY_DIR, done, float(settings.get("seconds", 0.0)),
                           True, _curve(out), already_done=True)  # fmt: skip
    with run_lock(out):
        # more torch threads than free cores slow the learner down many times over
        # (docs/rllib.md)
        torch.set_num_threads(config.learner_threads)
        out.mkdir(parents=True, exist_ok=True)
        check_same_run(config, out, RUN_KEYS, kind="an RLlib run")
        started = not ray.is_initialized()
        if started:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        try:
            return _train(config, out, log)
        finally:
            if started:
                ray.shutdown()


#: seconds a Ray cluster's address is given to answer
CONNECT_SECONDS = 10.0


def check_reachable(address: str, seconds: float = CONNECT_SECONDS) -> None:
    """Refuse, in one line, a Ray cluster ``address`` (``host:port`` or
    ``ray://host:port``; ``auto`` and ``local`` pass) whose host does not answer on its
    port within ``seconds``: ``ray.init`` would wait for it with no end."""
    import socket

    if address in ("auto", "local"):
        return
    where = address.removeprefix("ray://")
    host, _, port = where.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--address {address!r}: give host:port or ray://host:port")
    try:
        with socket.create_connection((host, int(port)), timeout=seconds):
            pass
    except OSError as error:
        raise ValueError(
            f"--address {address}: no Ray cluster answered there within {seconds:g} s "
            f"({error}); nothing was written"
        ) from None


def _curve(out: Path) -> list[tuple[int, float, float]]:
    path = out / "curve.json"
    if not path.exists():
        return []
    return [(int(t), float(m), float(r)) for t, m, r in read_json(path, list)]


def _train(config: RLlibConfig, out: Path, log: Any) -> RLlibResult:
    """The training loop of :func:`train_rllib`, on a started Ray runtime: Ctrl-C saves a
    checkpoint and the policy so far, and the run goes on from it when asked again."""
    checkpoint = out / "checkpoint"
    resumed = (checkpoint / "rllib_checkpoint.json").exists()
    algo = algorithm_config(config).build_algo()
    if resumed:
        algo.restore_from_path(str(checkpoint))
    curve = _curve(out) if resumed else []
    steps = int(curve[-1][0]) if curve else 0
    start = time.perf_counter()
    iteration = 0
    interrupted = False
    try:
        while steps < config.timesteps:
            tick = time.perf_counter()
            result = algo.train()
            iteration += 1
            new_steps = _steps_of(result)
            rate = (new_steps - steps) / max(time.perf_counter() - tick, 1e-9)
            steps = new_steps
            mean = float(result.get("env_runners", {}).get("episode_return_mean", np.nan))
            curve.append((steps, mean, rate))
            log(f"iteration {iteration}: {steps} env steps, return {mean:.3f}, {rate:,.0f} steps/s")
            if iteration % config.checkpoint_every == 0 or steps >= config.timesteps:
                algo.save_to_path(str(checkpoint))
                (out / "curve.json").write_text(json.dumps(curve))
    except KeyboardInterrupt:
        interrupted = True
        algo.save_to_path(str(checkpoint))
        (out / "curve.json").write_text(json.dumps(curve))
    seconds = time.perf_counter() - start
    policy_path = out / POLICY_DIR
    algo.get_module().save_to_path(str(policy_path))
    algo.stop()
    settings = {**asdict(config), "backend": "rllib", "timesteps_done": steps,
                "seconds": round(seconds, 1), "interrupted": interrupted}  # fmt: skip
    (out / "settings.json").write_text(json.dumps(settings, indent=2))
    if interrupted:
        raise Interrupted(steps, policy_path)
    return RLlibResult(out, policy_path, steps, seconds, resumed, curve)


RUN_KEYS = ("env_id", "env_kwargs", "shaping", "shaping_scale", "features_dim")


def _policy_dir(path: str | Path) -> Path:
    """The exported policy folder, given it or the run folder that holds it."""
    p = Path(path)
    return p if p.name == POLICY_DIR else p / POLICY_DIR


@contextmanager
def _without_ray_shim_warning() -> Iterator[None]:
    """Drop the deprecation warning Ray logs whenever any RLModule is built (RLModule's
    own ``__init__`` makes the deprecated ``RLModuleConfig`` for old subclasses; the
    module here takes the new arguments), and nothing else."""

    def keep(record: logging.LogRecord) -> bool:
        return "RLModule(config=" not in record.getMessage()

    log = logging.getLogger("ray._common.deprecation")
    log.addFilter(keep)
    try:
        yield
    finally:
        log.removeFilter(keep)


def is_rllib_policy(path: str | Path) -> bool:
    """A run folder or an exported policy folder of :func:`train_rllib`."""
    return _policy_dir(path).is_dir()


class RLlibPolicyAgent(Agent):
    """An exported RLlib policy (``DIR/policy``): the most likely legal action."""

    name = "rllib-ppo"

    def __init__(self, module: Any, env: Any = None, seed: int | None = None) -> None:
        self.module = module
        super().__init__(env, seed)

    @classmethod
    def load(cls, path: str | Path, env: Any = None, seed: int | None = None) -> RLlibPolicyAgent:
        from ray.rllib.core.rl_module.rl_module import RLModule

        from agents.train.models import read_moved_modules

        read_moved_modules("agents.rllib")
        p = _policy_dir(path)
        with _without_ray_shim_warning():
            module = RLModule.from_checkpoint(str(p.resolve()))
        agent = cls(module, env, seed)
        agent.name = f"rllib-ppo:{p.parent.name}"
        return agent

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        return int(np.argmax(self._legal_logits(env, observation)))

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """The policy's likeliest legal moves with their probabilities."""
        logits = self._legal_logits(env, observation)
        legal = np.flatnonzero(np.isfinite(logits))
        probs = np.exp(logits[legal] - logits[legal].max())
        return Thought(moves=Thought.best(legal, probs / probs.sum()), weight="probability")

    def _legal_logits(self, env: GridEnv, observation: np.ndarray) -> np.ndarray:
        """The policy's logits, minus infinity on the actions the mask forbids."""
        import torch
        from ray.rllib.core.columns import Columns

        mask = env.action_masks()
        obs = {
            "observations": torch.as_tensor(observation)[None],
            "action_mask": torch.as_tensor(mask.astype(np.uint8))[None],
        }
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: obs})
        logits = out[Columns.ACTION_DIST_INPUTS][0].numpy().astype(np.float64)
        return np.where(mask, logits, -np.inf)


def settings_of(path: str | Path) -> dict[str, Any]:
    run = _policy_dir(path).parent
    settings: dict[str, Any] = read_json(run / "settings.json")
    return settings
