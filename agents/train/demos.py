"""An agent's episodes as a Minari dataset (Farama's format for offline RL), local files only.

    grid-games demos Minesweeper-v0 --agent solver --episodes 100 --seed 0 --out demos

writes ``demos/gridgames/minesweeper-v0-solver-v0/`` and reads back with either of::

    minari.MinariDataset("demos/gridgames/minesweeper-v0-solver-v0/data")
    MINARI_DATASETS_PATH=demos  ->  minari.load_dataset("gridgames/minesweeper-v0-solver-v0")

Each episode holds the observations (one more than actions: the last is where it ended),
actions, rewards, terminations and truncations; ``infos["action_mask"]`` is the legal
actions in each observation, and ``infos["is_success"]`` whether the episode was won so far.
The env's spec (id and kwargs) is recorded, so ``dataset.recover_environment()`` makes the
same env again. Episode ``k`` is seeded ``seed + k``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import grid_envs
from agents.base import Agent
from agents.nets.common import require
from agents.registry import make_agent
from grid_envs.core import checks


def dataset_id(env_id: str, agent: str) -> str:
    """``gridgames/<env>-<agent>-v0`` in the characters Minari accepts."""
    name = f"{env_id.split('/')[-1]}-{Path(agent).stem if agent.endswith('.zip') else agent}"
    return f"gridgames/{re.sub(r'[^a-z0-9-]+', '-', name.lower()).strip('-')}-v0"


@contextmanager
def _datasets_root(root: Path) -> Any:
    """Minari finds its datasets through ``MINARI_DATASETS_PATH``: point it at ``root``
    for the duration, then put it back."""
    before = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(root)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = before


def record_demos(
    env_id: str, agent: str | Agent, episodes: int, seed: int = 0, out: str | Path = "demos",
    env_kwargs: dict[str, Any] | None = None, description: str | None = None,
) -> Any:  # fmt: skip
    """Play ``episodes`` episodes of ``agent`` (a baseline's name, a model path, or an
    :class:`Agent`) on ``env_id`` and write them under ``out`` as a Minari dataset; returns
    the :class:`minari.MinariDataset`."""
    minari = require("minari", "demos", "writing Minari datasets")
    episodes = checks.integer("episodes", episodes, 1)
    seed = checks.integer("seed", seed, 0)
    root = Path(out).resolve()  # Minari joins a relative root to its own paths twice
    if root.exists() and not root.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    name = agent if isinstance(agent, str) else getattr(agent, "name", type(agent).__name__)
    ident = dataset_id(env_id, name)
    if (root / ident).exists():
        raise ValueError(f"{Path(out) / ident} exists already; choose another --out or delete it")
    env = gym.make(env_id, **(env_kwargs or {}))
    player = _agent(agent, env, seed)
    buffers = [_episode(env, player, k, seed + k) for k in range(episodes)]
    root.mkdir(parents=True, exist_ok=True)
    # written beside its place and moved there whole: a failed or interrupted write leaves
    # no dataset behind that a rerun would refuse as existing
    with tempfile.TemporaryDirectory(dir=root, prefix=".writing-") as partial:
        with _datasets_root(Path(partial)), warnings.catch_warnings():
            # Minari recommends an e-mail and a code link for published datasets; these are local
            warnings.filterwarnings(
                "ignore", message="`(author_email|code_permalink)` is set to None"
            )
            minari.create_dataset_from_buffers(
                dataset_id=ident, buffer=buffers, env=env, eval_env=env.spec,
                algorithm_name=name, author="GridGames",
                requirements=[f"grid-games=={grid_envs.__version__}"],
                description=description or f"{episodes} episodes of {name} on {env_id}, "
                f"episode k seeded {seed} + k",
                jpeg_encoding=False,  # the planes are exact, not pictures
            )  # fmt: skip
        namespace = ident.split("/")[0]
        (root / namespace).mkdir(exist_ok=True)
        for meta in Path(partial, namespace).glob("*.json"):  # the namespace's own metadata
            if not (root / namespace / meta.name).exists():
                shutil.copyfile(meta, root / namespace / meta.name)
        os.replace(Path(partial) / ident, root / ident)
    env.close()
    return minari.MinariDataset(root / ident / "data")


def _episode(env: gym.Env[Any, Any], player: Agent, k: int, seed: int) -> Any:
    """One episode as Minari's episode buffer: observations one longer than actions, the
    legal actions in each observation and whether the game was won by then."""
    from minari.data_collector.episode_buffer import EpisodeBuffer

    game: Any = env.unwrapped
    obs, _ = env.reset(seed=seed)
    player.reset()
    observations, masks, wins = [obs], [game.action_masks().astype(bool)], [False]
    actions: list[int] = []
    rewards: list[float] = []
    terminations: list[bool] = []
    truncations: list[bool] = []
    done = False
    while not done:
        action = int(np.asarray(player.predict(obs)[0]))
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        observations.append(obs)
        masks.append(game.action_masks().astype(bool))
        wins.append(bool(info.get("is_success", False)))
        actions.append(action)
        rewards.append(float(reward))
        terminations.append(bool(terminated))
        truncations.append(bool(truncated))
    return EpisodeBuffer(
        id=k, seed=seed, observations=np.stack(observations),
        actions=np.asarray(actions, dtype=np.int64), rewards=rewards,
        terminations=terminations, truncations=truncations,
        infos={"action_mask": np.stack(masks), "is_success": np.asarray(wins)},
    )  # fmt: skip


def _agent(agent: str | Agent, env: gym.Env[Any, Any], seed: int) -> Agent:
    if isinstance(agent, Agent):
        return agent.bind(env)
    if agent.endswith(".zip"):
        from agents.train.models import PolicyAgent

        return PolicyAgent.load(agent, env=env, seed=seed)
    return make_agent(agent, env, seed=seed)


def load_demos(path: str | Path) -> Any:
    """A dataset written by :func:`record_demos`: its folder (``.../<id>`` or its ``data``)."""
    minari = require("minari", "demos", "reading Minari datasets")
    path = Path(path)
    data = path / "data" if (path / "data").is_dir() else path
    if not (data / "metadata.json").exists():
        raise ValueError(f"{path} holds no Minari dataset (no data/metadata.json)")
    return minari.MinariDataset(data)


def labels_from_dataset(dataset: Any, gamma: float = 0.99) -> Any:
    """The dataset's states with the recorded agent's actions, as cloning takes them."""
    from agents.train.cloning import Labels
    from agents.train.labels import discounted_returns

    obs, masks, actions, returns = [], [], [], []
    for episode in dataset.iterate_episodes():
        n = len(episode.actions)
        obs.append(np.asarray(episode.observations)[:n])
        masks.append(np.asarray(episode.infos["action_mask"])[:n])
        actions.append(np.asarray(episode.actions, dtype=np.int64))
        returns.append(np.asarray(discounted_returns(list(map(float, episode.rewards)), gamma)))
    return Labels(
        np.concatenate(obs), np.concatenate(masks).astype(bool), np.concatenate(actions),
        np.concatenate(returns).astype(np.float32),
    )  # fmt: skip
