"""One evaluation routine for every agent: random, algorithmic or learned.

Episode ``i`` is reset with seed ``seed + i`` and the agent is seeded with ``seed``, so the
same call gives the same numbers. Win rate comes with a 95% Wilson score interval.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import grid_envs
from agents.base import Agent
from agents.registry import env_id_of, make_agent
from grid_envs.core import checks


@dataclass
class EvalResult:
    env: str
    agent: str
    episodes: int
    seed: int
    wins: int
    win_rate: float
    win_rate_ci: tuple[float, float]
    mean_return: float
    std_return: float
    mean_length: float
    steps_per_second: float
    returns: list[float] = field(repr=False, default_factory=list)
    lengths: list[int] = field(repr=False, default_factory=list)

    @property
    def return_ci(self) -> tuple[float, float]:
        """A 95% interval of the mean return (normal approximation: 1.96 standard errors)."""
        half = 1.96 * self.std_return / math.sqrt(max(1, self.episodes))
        return (self.mean_return - half, self.mean_return + half)

    def to_dict(self, with_episodes: bool = False) -> dict[str, Any]:
        d = asdict(self)
        d["win_rate_ci"] = list(self.win_rate_ci)
        d["return_ci"] = list(self.return_ci)
        if not with_episodes:
            d.pop("returns")
            d.pop("lengths")
        return d


def wilson_interval(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a success rate (good near 0 and 1, unlike Wald's)."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


class _Progress:
    """A one-line progress bar on stderr (no dependency)."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        self.total, self.label = total, label
        self.enabled = enabled and sys.stderr.isatty()  # never litter logs and pipes
        self.start = self.last = time.perf_counter()

    def update(self, done: int, wins: int) -> None:
        now = time.perf_counter()
        if not self.enabled or (done < self.total and now - self.last < 0.1):
            return
        self.last = now
        width = 30
        filled = int(width * done / max(1, self.total))
        rate = done / max(1e-9, now - self.start)
        sys.stderr.write(
            f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} "
            f"wins {wins} ({rate:.1f} ep/s)"
        )
        if done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def evaluate(
    env: str | gym.Env,
    agent: str | Agent | Any,
    episodes: int = 100,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = False,
    deterministic: bool = True,
    record: Any = None,
) -> EvalResult:
    """Play ``episodes`` episodes of ``agent`` on ``env`` and summarise them.

    ``env`` is an id (made with ``env_kwargs``) or an env made by ``gymnasium.make``;
    ``agent`` is a registered name or anything with SB3's ``predict`` signature. A
    :class:`agents.watch.Recorder` as ``record`` keeps the first episodes it asks for
    (what is played does not change).
    """
    episodes = checks.integer("episodes", episodes, 1)
    seed = checks.integer("seed", seed, 0)
    own_env = isinstance(env, str)
    e = gym.make(env, **(env_kwargs or {})) if isinstance(env, str) else env
    env_id = env_id_of(e)
    if isinstance(agent, str):
        player: Any = make_agent(agent, e, seed=seed)
        agent_name = agent
    else:
        player = agent
        agent_name = getattr(agent, "name", type(agent).__name__)
        if isinstance(agent, Agent):
            agent.bind(e)
            agent.seed(seed)
    bar = _Progress(episodes, f"{env_id} {agent_name}", progress)
    returns: list[float] = []
    lengths: list[int] = []
    wins = 0
    start = time.perf_counter()
    if record is not None:
        record.describe(agent_name, env_kwargs or {})
    try:
        for i in range(episodes):
            total, length, won = _play(e, player, seed + i, deterministic, record)
            wins += won
            returns.append(total)
            lengths.append(length)
            bar.update(i + 1, wins)
    finally:
        if own_env:
            e.close()
    elapsed = time.perf_counter() - start
    return EvalResult(
        env=env_id, agent=agent_name, episodes=episodes, seed=seed, wins=wins,
        win_rate=wins / episodes, win_rate_ci=wilson_interval(wins, episodes),
        mean_return=float(np.mean(returns)), std_return=float(np.std(returns)),
        mean_length=float(np.mean(lengths)), steps_per_second=sum(lengths) / max(elapsed, 1e-9),
        returns=returns, lengths=lengths,
    )  # fmt: skip


def _play(
    env: gym.Env, player: Any, seed: int, deterministic: bool, record: Any = None
) -> tuple[float, int, bool]:
    """One episode from ``env.reset(seed=seed)``: its return, its length and whether it
    was won; ``record`` (a recorder, or None) watches it."""
    obs, info = env.reset(seed=seed)
    if isinstance(player, Agent):
        player.reset()
    watch = record is not None and record.begin(env, seed)
    total, length, done, truncated = 0.0, 0, False, False
    while not done:
        action, _ = player.predict(obs, deterministic=deterministic)
        action = int(np.asarray(action))
        if watch:
            record.before(env, player, obs, action)
        obs, reward, terminated, truncated, info = env.step(action)
        if watch:
            record.after(env, float(reward))
        total += float(reward)
        length += 1
        done = terminated or truncated
    won = bool(info.get("is_success", False))
    if watch:
        record.end(won, bool(truncated and not terminated))
    return total, length, won


def load_policy(path: str, env_id: str, sample: bool = False) -> tuple[Agent, dict[str, Any]]:
    """A trained model, an SB3 ``.zip`` or an RLlib run or policy folder, and the env
    arguments it was trained with (:func:`model_board`: it must be of ``env_id``'s game).
    ``sample``: the agent draws its actions from the policy's distribution
    (:class:`~agents.train.models.PolicyAgent`; SB3 PPO and MaskablePPO models only).
    Raises ``ValueError`` naming what is wrong with the file or folder."""
    if Path(path).is_dir():
        if sample:
            raise ValueError(
                f"sampling needs a stable-baselines3 PPO or MaskablePPO model file, not the "
                f"folder {path!r}"
            )
        from agents.train.rllib import RLlibPolicyAgent, is_rllib_policy
        from agents.train.rllib import settings_of as rllib_settings

        if not is_rllib_policy(path):
            raise ValueError(f"{path!r} is a folder but not an RLlib run or policy folder")
        return RLlibPolicyAgent.load(path), model_board(rllib_settings(path), env_id)
    from agents.train.models import PolicyAgent
    from agents.train.runs import settings_of

    if not Path(path).is_file():
        raise ValueError(f"no model file {path!r}")
    board = model_board(settings_of(path), env_id)
    return PolicyAgent.load(path, sample=sample), board


def load_search(path: str, env_id: str, **settings: Any) -> tuple[Agent, dict[str, Any]]:
    """A search guided by a trained PPO or MaskablePPO model
    (:class:`agents.search.SearchAgent`; ``settings`` are
    :class:`~agents.search.SearchConfig`'s), and the env arguments the model was trained with."""
    from agents.search.agent import SearchAgent
    from agents.train.runs import settings_of

    if not Path(path).is_file():
        raise ValueError(f"no model file {path!r} (a search needs a PPO or MaskablePPO model.zip)")
    board = model_board(settings_of(path), env_id)
    return SearchAgent.load(path, **settings), board


def model_board(settings: dict[str, Any], name: str) -> dict[str, Any]:
    """The env arguments a model was trained with, which it is evaluated with; a model of
    another game is refused, naming both."""
    trained = settings.get("env_id") or settings.get("env", "")
    game_of = {i: entry.split(":")[-1] for i, (entry, *_) in grid_envs.ENVS.items()}
    if game_of.get(trained) != game_of[name]:
        raise ValueError(
            f"the model was trained on {trained} ({game_of.get(trained, 'unknown game')}), "
            f"not on {name} ({game_of[name]}): evaluate it on its own game"
        )
    board: dict[str, Any] = settings.get("env_kwargs") or {}
    return board


def check_model_fits(agent: Any, name: str, kwargs: dict[str, Any]) -> None:
    """The env made from ``name`` and ``kwargs`` must give the observations and actions the
    model was trained on; a refusal names the one thing that differs."""
    spaces = getattr(agent, "spaces", None)
    if spaces is None:
        return
    env = gym.make(name, **kwargs)
    mine = (env.observation_space, env.action_space)
    env.close()
    board = f"{name} with {kwargs}" if kwargs else name
    for what, theirs, ours in zip(("observations", "actions"), spaces, mine, strict=True):
        differs = space_difference(theirs, ours)
        if differs:
            raise ValueError(f"the model's {what} differ from what {board} gives: {differs}")


def space_difference(model: gym.Space[Any], env: gym.Space[Any]) -> str | None:
    """What tells two spaces apart, in a few words (the model's first), or None when they
    are the same space: the kind, then a Box's shape, dtype and bounds, a Discrete's size
    and start. Spaces are compared by what they are, never by their text, which differs
    between gymnasium versions for the same space (a model saved under one version and
    loaded under another keeps its bounds but may lose the cached text of them)."""
    if type(model) is not type(env):
        return f"a {type(model).__name__} space where the env has a {type(env).__name__}"
    if isinstance(model, gym.spaces.Discrete) and isinstance(env, gym.spaces.Discrete):
        if (int(model.n), int(model.start)) != (int(env.n), int(env.start)):
            return f"Discrete({int(model.n)}) actions where the env has Discrete({int(env.n)})"
        return None
    if isinstance(model, gym.spaces.Box) and isinstance(env, gym.spaces.Box):
        if model.shape != env.shape:
            return f"shape {model.shape} where the env's is {env.shape}"
        if model.dtype != env.dtype:
            return f"dtype {model.dtype} where the env's is {env.dtype}"
        for bound in ("low", "high"):
            theirs, ours = getattr(model, bound), getattr(env, bound)
            if not np.array_equal(theirs, ours):
                at = tuple(int(i) for i in np.argwhere(theirs != ours)[0])
                return (
                    f"{bound} bound {theirs[at]} at {at} where the env's is {ours[at]} "
                    f"({int(np.count_nonzero(theirs != ours))} of {theirs.size} bounds differ)"
                )
        return None
    return None if model == env else f"{model} where the env has {env}"
