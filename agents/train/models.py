"""A saved stable-baselines3 model as an agent, and the algorithms a model may be."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import Agent, Thought
from agents.train.runs import check_model_file, settings_of
from grid_envs.core.base_env import GridEnv

ALGOS = ("maskable-ppo", "ppo", "dqn")
DQN_BUFFER = 50_000  # DQN's replay buffer, in states

#: Where the classes a model saved by 0.4 names now live: a saved model names its network's
#: classes by module (``agents.board_policies.PlayerLogitsExtractor``), and the agents' side
#: has since been laid out in wings. Loading a model reads the old names through these.
MOVED_MODULES = {
    "agents.board_policies": ("agents.nets.board", "agents.nets.pairs"),
    "agents.networks": ("agents.nets.common",),
    "agents.policies": ("agents.nets.registry",),
    "agents.rllib": ("agents.train.rllib",),
}


def read_moved_modules(*old: str) -> None:
    """Make the ``old`` modules of :data:`MOVED_MODULES` (all by default) importable, each
    holding the names of the modules that replaced it, so that a model saved before the
    move loads. A module of that name that exists already is left alone."""
    for name in old or tuple(MOVED_MODULES):
        if name in sys.modules:
            continue
        module = types.ModuleType(name, f"the names of {', '.join(MOVED_MODULES[name])}")
        for new in MOVED_MODULES[name]:
            found = vars(importlib.import_module(new))
            module.__dict__.update({k: v for k, v in found.items() if not k.startswith("__")})
        sys.modules[name] = module


def algo_class(algo: str) -> Any:
    """The stable-baselines3 class of ``algo`` (one of :data:`ALGOS`), ready to load a model
    saved by this or an earlier version."""
    from agents.train.batch import fast_rollouts

    read_moved_modules("agents.board_policies", "agents.networks", "agents.policies")

    if algo == "maskable-ppo":
        from sb3_contrib import MaskablePPO

        return fast_rollouts(MaskablePPO)
    if algo == "ppo":
        from stable_baselines3 import PPO

        return fast_rollouts(PPO)
    if algo == "dqn":
        from stable_baselines3 import DQN

        return DQN
    raise ValueError(f"algo must be one of {ALGOS}, got {algo!r}")


def algo_of(model: Any) -> str:
    """The :data:`ALGOS` name of an SB3 model."""
    names = {"MaskablePPO": "maskable-ppo", "PPO": "ppo", "DQN": "dqn"}
    for cls in type(model).__mro__:
        if cls.__name__ in names:
            return names[cls.__name__]
    raise ValueError(f"not a model of {ALGOS}: {type(model).__name__}")


class PolicyAgent(Agent):
    """A trained SB3 model as an agent; MaskablePPO models get the env's masks.

    It plays the policy's most likely legal action, or with ``sample=True`` an action
    drawn from its distribution over the legal actions (PPO and MaskablePPO), from the
    agent's own seeded generator: the same seed gives the same episodes."""

    name = "policy"

    def __init__(
        self, model: Any, algo: str, env: Any = None, seed: int | None = None,
        sample: bool = False,
    ) -> None:  # fmt: skip
        if sample:
            from agents.train.batch import check_sampling

            check_sampling(algo)  # at load, not at the first move
        self.model = model
        self.algo = algo
        self.sample = sample
        # the potential's plane, for a model trained with it (set by ``load``)
        self.inputs: Any = None
        super().__init__(env, seed)

    @classmethod
    def load(
        cls,
        path: str | Path,
        env: Any = None,
        seed: int | None = None,
        sample: bool = False,
        threads: int | None = None,
    ) -> PolicyAgent:
        """The model at ``path`` as an agent. Playing it is one position a forward pass,
        which gains nothing from more torch threads and loses much when another process
        holds the other cores: the process is set to ``threads`` (by default
        ``GRIDGAMES_TORCH_THREADS``, else 1; :func:`agents.nets.common.set_threads`)."""
        import zipfile

        from agents.nets.common import set_threads

        path = Path(path)
        settings = settings_of(path)
        check_model_file(path)
        try:
            model = algo_class(settings["algo"]).load(path, device="cpu")
        except (zipfile.BadZipFile, KeyError, OSError) as error:
            raise ValueError(f"{path} is not a stable-baselines3 model ({error})") from None
        set_threads(threads, default=1)
        agent = cls(model, settings["algo"], env, seed, sample)
        if settings.get("potential_input"):  # trained with the potential as a plane
            from grid_envs.wrappers import InputPlanes

            agent.inputs = InputPlanes(settings["env_id"], settings["potential_input"])
        agent.name = f"{settings['algo']}:{path.parent.name}" + (" sampled" if sample else "")
        return agent

    @property
    def spaces(self) -> tuple[gym.Space[Any], gym.Space[Any]]:
        """The observation and action spaces of the env the model plays (the spaces it was
        trained on, less the potential's plane where it trained with one)."""
        space = self.model.observation_space
        if self.inputs is not None:  # the env's uint8 planes, without the potential's
            space = gym.spaces.Box(space.low[:-1], space.high[:-1], dtype=np.uint8)
        return space, self.model.action_space

    def reset(self) -> None:
        if self.inputs is not None:
            self.inputs.new_episode()

    def predict(
        self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:  # fmt: skip
        """:meth:`Agent.predict`; with the potential's plane, an episode that starts in one
        row of a batch restarts that row's scaling only."""
        single_ndim = len(self.model.observation_space.shape or ())
        batch = np.ndim(observation) > single_ndim
        if self.inputs is not None and batch and episode_start is not None:
            for env, start in zip(self.envs, np.asarray(episode_start), strict=True):
                if start:
                    self.inputs.new_episode(id(env))
            episode_start = None
        return super().predict(observation, state, episode_start, deterministic)

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        from agents.train.batch import policy_actions, sampled_actions

        if self.inputs is not None:
            observation = self.inputs.observe(id(env), observation, env.game_state())
        mask = env.action_masks()[None]
        if self.sample:
            return int(sampled_actions(self.model, self.algo, observation[None], mask, self.rng)[0])
        return int(policy_actions(self.model, self.algo, observation[None], mask)[0])

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """The network's likeliest legal moves with their probabilities (masked softmax of
        its logits) and its value of the position; a DQN model's best Q-values."""
        import torch

        from agents.nets.common import logits_and_values

        if self.inputs is not None:  # the episode's start is known: observing again is pure
            observation = self.inputs.observe(id(env), observation, env.game_state())
        legal = np.flatnonzero(env.action_masks())
        policy = self.model.policy
        tensor, _ = policy.obs_to_tensor(observation[None])
        with torch.inference_mode():
            if self.algo == "dqn":
                q = self.model.q_net(tensor)[0].float().cpu().numpy()
                return Thought(moves=Thought.best(legal, q[legal]), weight="Q-value")
            logits, values = logits_and_values(policy, tensor)
        scores = logits[0].float().cpu().numpy()[legal].astype(np.float64)
        probs = np.exp(scores - scores.max())
        probs /= probs.sum()
        return Thought(
            moves=Thought.best(legal, probs), weight="probability", value=float(values[0])
        )
