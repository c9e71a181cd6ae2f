"""Training on the native batched envs: stable-baselines3 steps a whole batch in one call.

* :class:`BatchedVecEnv`: an SB3 ``VecEnv`` over ``gymnasium.make_vec(env_id, num_envs,
  vectorization_mode="vector_entry_point")``, which PPO and MaskablePPO take as they take a
  ``DummyVecEnv`` of single envs:

  - the batch's masks come from one array (``env_method("action_masks")``, what
    sb3-contrib asks for);
  - each ended episode's ``info["episode"]`` (return, length, time) and
    ``info["is_success"]`` are what SB3's ``Monitor`` records, written to a
    ``*.monitor.csv`` that ``stable_baselines3.common.monitor.load_results`` reads, so
    logging, ``ep_info_buffer`` and evaluation work unchanged; ``terminal_observation`` and
    ``TimeLimit.truncated`` as ``DummyVecEnv`` gives them;
  - potential-based shaping for the whole batch
    (:class:`~grid_envs.wrappers.VectorPotentialShaping`), and the potential as an input
    plane (:class:`~grid_envs.wrappers.VectorPotentialInput`);
  - seeding as SB3 seeds N single envs: ``seed(s)`` then ``reset()`` seeds env ``i`` with
    ``s + i``, so the same seed gives the episodes of ``DummyVecEnv`` (tested).

* :func:`evaluate_batched`: ``n`` episodes played side by side, one per env of a batch, the
  same ``n`` episodes at every call (env ``i`` seeded ``seed + i``); what a model's
  evaluation during training runs (:class:`BatchedEvalCallback`).
* :func:`policy_actions`: a model's actions for a batch of observations and masks, legal
  ones only (MaskablePPO masks its distribution; PPO and DQN, which learned without masks,
  take their best legal action).
* :func:`fast_rollouts`: the algorithm class with its rollouts collected under
  ``torch.inference_mode`` (no autograd bookkeeping while acting).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor, ResultsWriter
from stable_baselines3.common.vec_env import VecEnv

from grid_envs.wrappers import VectorPotentialInput, VectorPotentialShaping


def has_native_batch(env_id: str) -> bool:
    """Whether ``env_id`` has a native batched env (a ``vector_entry_point``)."""
    return gym.spec(env_id).vector_entry_point is not None


class BatchedVecEnv(VecEnv):
    """``num_envs`` games of ``env_id`` in one native batched env, behind SB3's ``VecEnv``
    (see the module doc). ``monitor_file``: where the episodes are written (a path ending
    in ``monitor.csv``, or a folder for ``batch.monitor.csv``); None writes nothing."""

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        env_kwargs: dict[str, Any] | None = None,
        shaping: str | None = None,
        gamma: float = 0.99,
        monitor_file: str | Path | None = None,
        info_keywords: tuple[str, ...] = ("is_success",),
        shaping_scale: float = 1.0,
        potential_input: str | None = None,
        shaping_at_loss: str = "zero",
    ) -> None:
        if not has_native_batch(env_id):
            raise ValueError(f"{env_id} has no native batched env; use a DummyVecEnv")
        # SB3 stacks the masks into its buffer as it reads them: no copy of its own needed
        batch: Any = gym.make_vec(
            env_id, num_envs, vectorization_mode="vector_entry_point",
            autoreset_mode="Disabled", **{"copy_masks": False, **(env_kwargs or {})},
        )  # fmt: skip
        if shaping:
            batch = VectorPotentialShaping(batch, shaping, gamma, shaping_scale, shaping_at_loss)
        if potential_input:
            batch = VectorPotentialInput(batch, potential_input)
        self.batch = batch
        self.env_id = env_id
        self.info_keywords = info_keywords
        super().__init__(num_envs, batch.single_observation_space, batch.single_action_space)
        self._returns = np.zeros(num_envs)
        self._lengths = np.zeros(num_envs, dtype=np.int64)
        self._actions = np.zeros(num_envs, dtype=np.int64)
        self.t_start = time.time()
        self.writer: ResultsWriter | None = None
        if monitor_file is not None:
            path = Path(monitor_file)
            if not path.name.endswith("monitor.csv"):
                path = path / "batch.monitor.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            self.writer = ResultsWriter(
                str(path),
                header={"t_start": self.t_start, "env_id": env_id},
                extra_keys=info_keywords,
                override_existing=not path.exists(),
            )  # fmt: skip  (a resumed run appends to its log)

    @property
    def native(self) -> Any:
        """The game's batched env itself (no wrappers)."""
        return self.batch.unwrapped

    # ------------------------------------------------------------- VecEnv API
    def reset(self) -> np.ndarray:
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        obs, _ = self.batch.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return np.asarray(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, terminated, truncated, info = self.batch.step(self._actions)
        self._returns += rewards
        self._lengths += 1
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            ended = np.flatnonzero(dones)
            last = np.asarray(obs)[ended]  # the episodes' last observations, before resets
            now = time.time() - self.t_start
            for k, i in enumerate(ended.tolist()):
                # what Monitor records, in its rounding
                episode: dict[str, Any] = {
                    "r": round(float(self._returns[i]), 6),
                    "l": int(self._lengths[i]),
                    "t": round(now, 6),
                }
                for key in self.info_keywords:
                    episode[key] = info[key][i].item() if key in info else None
                if self.writer is not None:
                    self.writer.write_row(episode)
                infos[i] = {
                    "episode": episode,
                    "is_success": bool(info["is_success"][i]),
                    "terminal_observation": last[k],
                    "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                }
            self._returns[ended] = 0.0
            self._lengths[ended] = 0
            obs, _ = self.batch.reset(options={"reset_mask": dones})
        return np.asarray(obs), rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.batch.close()
        if self.writer is not None:
            self.writer.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        count = len(list(self._get_indices(indices)))
        if attr_name == "render_mode":
            return [None] * count
        return [getattr(self.native, attr_name)] * count  # the batch's, shared by its envs

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"the batch's envs share their settings; cannot set {attr_name!r}")

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(f"a batched env answers action_masks only, not {method_name!r}")
        masks = self.native.action_masks()
        return list(masks[list(self._get_indices(indices))])

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: Any = None) -> list[bool]:
        # the episode statistics are Monitor's: SB3's evaluation may read them as such
        return [issubclass(Monitor, wrapper_class)] * len(list(self._get_indices(indices)))

    def has_attr(self, attr_name: str) -> bool:
        return attr_name in ("action_masks", "render_mode") or hasattr(self.native, attr_name)

    def get_images(self) -> list[np.ndarray | None]:
        return [None] * self.num_envs


def policy_actions(
    model: Any, algo: str, obs: np.ndarray, masks: np.ndarray, deterministic: bool = True
) -> np.ndarray:
    """A model's actions for a batch of observations, legal under ``masks``: MaskablePPO
    with its masked distribution; PPO and DQN, which learned without masks, the best legal
    action by their logits or Q-values."""
    if algo == "maskable-ppo":
        actions, _ = model.predict(obs, deterministic=deterministic, action_masks=masks)
        return np.asarray(actions)
    return np.argmax(_legal_scores(model, algo, obs, masks), axis=1)


def sampled_actions(
    model: Any, algo: str, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Actions drawn from a PPO or MaskablePPO policy's distribution over the legal actions
    (its logits, masked, through a softmax), with ``rng``: the same generator state gives
    the same actions. A DQN model has no distribution and is refused."""
    check_sampling(algo)
    scores = _legal_scores(model, algo, obs, masks).astype(np.float64)
    top = scores.max(axis=1, keepdims=True)
    probs = np.exp(scores - np.where(np.isfinite(top), top, 0.0))  # no legal action: all 0
    cumulative = np.cumsum(probs, axis=1)
    draws = rng.random(len(obs))[:, None] * cumulative[:, -1:]
    picks = (cumulative <= draws).sum(axis=1)  # the first action whose cumulative passes
    return np.minimum(picks, probs.shape[1] - 1)


def check_sampling(algo: str) -> None:
    """Refuse to sample a model that has no action distribution (DQN)."""
    if algo == "dqn":
        raise ValueError("a DQN model has no action distribution to sample: play it greedily")


def _legal_scores(model: Any, algo: str, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A batch's logits (Q-values for DQN), minus infinity on the masked actions."""
    import torch

    tensor, _ = model.policy.obs_to_tensor(obs)
    with torch.inference_mode():
        if algo == "dqn":
            scores = model.q_net(tensor).cpu().numpy()
        else:
            scores = model.policy.get_distribution(tensor).distribution.logits.cpu().numpy()
    return np.where(masks, scores, -np.inf)


def evaluate_batched(
    model: Any, algo: str, env: Any, episodes: int | None = None,
    seed: int = 0, deterministic: bool = True, sample: np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The first episode of each of the batch's envs (env ``i`` seeded ``seed + i``), played
    side by side; (returns, lengths, wins) of ``episodes`` (default: all) of them. With a
    ``sample`` generator the model draws each action from its policy with it
    (:func:`sampled_actions`: the same generator state, the same episodes).

    ``env``: a :class:`BatchedVecEnv` (its episodes are read from its ``info["episode"]``,
    shaping included if it shapes) or a native batched env."""
    vec: Any = env if isinstance(env, BatchedVecEnv) else None
    native: Any = env.native if vec is not None else env.unwrapped
    n = native.num_envs
    episodes = n if episodes is None else episodes
    if not 1 <= episodes <= n:
        raise ValueError(f"episodes must be between 1 and the batch's {n} envs, got {episodes}")
    returns, lengths = np.zeros(n), np.zeros(n, dtype=np.int64)
    wins, over = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    if vec is not None:
        vec.seed(seed)
        obs = vec.reset()
    else:
        obs, _ = env.reset(seed=seed)
    while not over[:episodes].all():
        masks = np.require(native.action_masks(), requirements="W")  # torch takes no views
        if sample is not None:
            actions = sampled_actions(model, algo, obs, masks, sample)
        else:
            actions = policy_actions(model, algo, obs, masks, deterministic)
        if vec is not None:
            obs, _, dones, infos = vec.step(actions)
            for i in np.flatnonzero(dones & ~over).tolist():
                returns[i], lengths[i] = infos[i]["episode"]["r"], infos[i]["episode"]["l"]
                wins[i] = infos[i]["is_success"]
        else:
            obs, rewards, terminated, truncated, info = env.step(actions)
            live = ~over
            returns[live] += rewards[live]
            lengths[live] += 1
            dones = terminated | truncated
            wins[dones & live] = info["is_success"][dones & live]
        over |= dones
    return returns[:episodes], lengths[:episodes], wins[:episodes]


class BatchedEvalCallback(BaseCallback):
    """Every ``eval_freq`` calls (one call a batch step), the model plays the same
    ``episodes`` episodes on a batch (:func:`evaluate_batched`, raw game rewards); the
    results go to ``log_path/evaluations.npz`` in ``EvalCallback``'s layout (timesteps,
    results, ep_lengths, successes) and the best model to ``best_path/best_model.zip``.
    A fresh run is evaluated once before its first step too: the curve starts where the
    policy did (a taught run's cloned policy), and that policy can be the best model; and
    once at its end, when the last step was not evaluated (a run shorter than
    ``eval_freq``, one stopped at its time limit)."""

    def __init__(
        self, env_id: str, env_kwargs: dict[str, Any], algo: str, episodes: int,
        eval_freq: int, seed: int, log_path: Path, best_path: Path,
        potential_input: str | None = None,
    ) -> None:  # fmt: skip
        super().__init__(verbose=0)
        self.batch = gym.make_vec(
            env_id, episodes, vectorization_mode="vector_entry_point", **env_kwargs
        )
        if potential_input:  # the network reads the plane it trained with; rewards raw
            self.batch = VectorPotentialInput(self.batch, potential_input)
        self.algo, self.eval_freq, self.seed = algo, max(1, eval_freq), seed
        self.log_path, self.best_path = Path(log_path), Path(best_path)
        self.best = -np.inf
        self.timesteps: list[int] = []
        self.results: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.successes: list[np.ndarray] = []
        self._load()

    def _load(self) -> None:
        """A resumed run keeps the evaluations it made before."""
        path = self.log_path / "evaluations.npz"
        if path.exists():
            data = np.load(path)
            self.timesteps = [int(t) for t in data["timesteps"]]
            self.results, self.lengths = list(data["results"]), list(data["ep_lengths"])
            self.successes = list(data["successes"])
            self.best = max((float(r.mean()) for r in self.results), default=-np.inf)

    def _on_training_start(self) -> None:
        if not self.timesteps:
            self.evaluate()

    def _on_step(self) -> bool:
        if self.n_calls % self.eval_freq == 0:
            self.evaluate()
        return True

    def _on_training_end(self) -> None:
        if not self.timesteps or self.timesteps[-1] < self.num_timesteps:
            self.evaluate()  # the model the run ends with, however short the run

    def evaluate(self) -> None:
        returns, lengths, wins = evaluate_batched(self.model, self.algo, self.batch, seed=self.seed)
        self.timesteps.append(int(self.num_timesteps))
        self.results.append(returns)
        self.lengths.append(lengths)
        self.successes.append(wins)
        self.log_path.mkdir(parents=True, exist_ok=True)
        np.savez(
            self.log_path / "evaluations.npz", timesteps=np.array(self.timesteps),
            results=np.array(self.results), ep_lengths=np.array(self.lengths),
            successes=np.array(self.successes),
        )  # fmt: skip
        mean = float(returns.mean())
        self.logger.record("eval/mean_reward", mean)
        self.logger.record("eval/mean_ep_length", float(lengths.mean()))
        self.logger.record("eval/success_rate", float(wins.mean()))
        if mean > self.best:
            self.best = mean
            self.best_path.mkdir(parents=True, exist_ok=True)
            self.model.save(self.best_path / "best_model.zip")


@functools.cache
def fast_rollouts(algorithm: type) -> type:
    """``algorithm`` (PPO or MaskablePPO) with rollouts collected under
    ``torch.inference_mode``: the same actions and data, no autograd bookkeeping."""
    import torch

    class InferenceRollouts(algorithm):
        def collect_rollouts(self, *args: Any, **kwargs: Any) -> bool:
            with torch.inference_mode():
                return bool(super().collect_rollouts(*args, **kwargs))

    InferenceRollouts.__name__ = algorithm.__name__
    InferenceRollouts.__qualname__ = algorithm.__qualname__
    return InferenceRollouts
