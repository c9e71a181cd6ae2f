"""Expert iteration: the search is the expert and the network its apprentice.

Anthony, Tian and Barber (2017): a search guided by the network plays; the network learns
to predict what the search chose and how the games ended; the better network guides a
better search, round after round. Here the search is :class:`agents.search.tree.Search` over the
env's exact rules, and the network is an ordinary stable-baselines3 actor-critic, so the
result plays both as a policy (``--agent model.zip``) and as a search's guide
(``--agent search --model model.zip``).

A run starts from a trained model (typically one the algorithm taught: ``grid-games train
ENV --teacher NAME``) and repeats ``rounds`` times:

1. **Play** ``episodes`` episodes with the search (``simulations`` a move), on the
   training pool's seeds (round ``r``'s episode ``k`` seeded ``seed + SEARCH_SEED + r *
   ROUND_SEEDS + k``, far from the held-out evaluations'), in ``workers`` processes. Each
   position keeps the observation, the legal actions, the search's improved policy (its
   ``top`` most likely actions, renormalised) and the discounted return that followed.
2. **Learn** ``epochs`` passes over the positions of the last ``window`` rounds: cross-
   entropy to the search's policy over the legal actions, and the critic's squared error
   to the returns, each minibatch through a random one of the board's symmetries where the
   game declares them (:func:`agents.train.config.symmetries_of`).
3. **Measure** the network alone on ``eval_episodes`` validation episodes.

A run folder holds ``config.json`` (a rerun must match it), ``rounds.json`` (a line a
round), ``rounds/round_<r>.zip`` (the model after each round), ``data/round_<r>.npz`` (each
round's positions), and ``model.zip`` with ``settings.json`` (the env and settings the
start model was trained with, so every loader reads it as a trained model). A rerun goes
on from the last finished round; a finished run is left as it is; Ctrl-C saves the model
so far.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.train.runs import check_run_folder, check_same_run, read_json, settings_of

SEARCH_SEED = 10_000_000  # round r's episode k: seed + SEARCH_SEED + r * ROUND_SEEDS + k
ROUND_SEEDS = 100_000
ITERATION_KEYS = ("env_id", "start", "simulations", "variant", "seed", "top")


@dataclass
class IterationConfig:
    """Everything that defines an expert-iteration run (``config.json`` of its folder)."""

    env_id: str
    start: str  # the model.zip the network starts from (PPO or MaskablePPO)
    simulations: int = 32  # the search's simulations a move while it plays
    variant: str = "gumbel"  # or "puct" (agents.search.tree)
    rounds: int = 4
    episodes: int = 64  # searched episodes a round
    epochs: int = 2  # learning passes over the kept positions after each round
    window: int = 2  # rounds of positions kept for learning
    batch_size: int = 256
    lr: float = 1e-3
    value_coef: float = 0.5
    top: int = 32  # actions of the search's policy kept per position
    eval_episodes: int = 50
    seed: int = 0
    workers: int = 1  # processes that play each round (one torch thread each)
    threads: int | None = None  # torch threads of the learning step (None: every core)
    max_seconds: float | None = None  # seconds for the run; it stops after the round in play
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # from the start model

    def check(self) -> None:
        from agents.search.config import SearchConfig

        SearchConfig(simulations=self.simulations, variant=self.variant)  # its own checks
        for name in ("rounds", "episodes", "epochs", "window", "batch_size", "top", "workers"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        if not isinstance(self.eval_episodes, int) or self.eval_episodes < 0:
            raise ValueError(f"eval_episodes must be at least 0, got {self.eval_episodes!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be above 0, got {self.lr!r}")
        if self.max_seconds is not None and not self.max_seconds > 0:
            raise ValueError(f"max_seconds must be above 0 seconds, got {self.max_seconds!r}")


@dataclass
class Positions:
    """What the search saw and chose in the positions it played: observations (n, ...),
    legal actions packed 8 to a byte (n, ceil(A / 8)), the search's policy as its ``top``
    actions (n, top) and their probabilities (n, top; rows sum to 1), and the discounted
    return that followed (n,)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    probs: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.returns)

    NAMES = ("observations", "masks", "actions", "probs", "returns")

    def join(self, other: Positions) -> Positions:
        pairs = zip(self.parts(), other.parts(), strict=True)
        return Positions(*(np.concatenate([a, b]) for a, b in pairs))

    def parts(self) -> tuple[np.ndarray, ...]:
        return tuple(getattr(self, name) for name in self.NAMES)

    def save(self, path: Path) -> None:
        arrays: dict[str, Any] = dict(zip(self.NAMES, self.parts(), strict=True))
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: Path) -> Positions:
        from agents.train.runs import read_arrays

        saved = read_arrays(path, cls.NAMES)
        return cls(*(saved[name] for name in cls.NAMES))


@dataclass
class IterationResult:
    model_path: Path
    rounds: list[dict[str, Any]]
    seconds: float
    already_done: bool = False


def top_policy(actions: np.ndarray, policy: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``top`` most likely of a search's actions and their renormalised probabilities,
    padded with action 0 at probability 0."""
    keep = np.argsort(-policy, kind="stable")[:top]
    out_a, out_p = np.zeros(top, dtype=np.int32), np.zeros(top, dtype=np.float32)
    out_a[: len(keep)] = actions[keep]
    out_p[: len(keep)] = policy[keep] / max(float(policy[keep].sum()), 1e-12)
    return out_a, out_p


def play_with_search(
    model: Any, env_id: str, env_kwargs: dict[str, Any], episodes: int, seed: int,
    simulations: int, variant: str, gamma: float, top: int, stride: int = 1,
) -> tuple[Positions, dict[str, Any]]:  # fmt: skip
    """``episodes`` episodes played by the search over ``model`` (episode ``k`` seeded
    ``seed + k * stride``, the search seeded alike); their positions and what they reached."""
    from agents.search.agent import SearchAgent
    from agents.search.config import ModelEvaluator
    from agents.train.labels import discounted_returns

    env = gym.make(env_id, **env_kwargs)
    game: Any = env.unwrapped
    agent = SearchAgent(ModelEvaluator(model), env, simulations=simulations, variant=variant)
    parts: dict[str, list[Any]] = {k: [] for k in ("obs", "masks", "actions", "probs", "returns")}
    wins, returns, lengths = 0, [], []
    for k in range(episodes):
        episode_seed = seed + k * stride
        obs, info = env.reset(seed=episode_seed)
        agent.seed(episode_seed)
        agent.reset()
        rewards: list[float] = []
        done = False
        while not done:
            mask = game.action_masks()
            result = agent.search(game, obs)
            chosen, probs = top_policy(result.actions, result.policy, top)
            parts["obs"].append(obs)
            parts["masks"].append(np.packbits(mask))
            parts["actions"].append(chosen)
            parts["probs"].append(probs)
            obs, reward, terminated, truncated, info = env.step(result.action)
            rewards.append(float(reward))
            done = terminated or truncated
        wins += bool(info["is_success"])
        returns.append(sum(rewards))
        lengths.append(len(rewards))
        parts["returns"] += discounted_returns(rewards, gamma)
    env.close()
    positions = Positions(
        np.stack(parts["obs"]), np.stack(parts["masks"]), np.stack(parts["actions"]),
        np.stack(parts["probs"]), np.asarray(parts["returns"], dtype=np.float32),
    )  # fmt: skip
    stats = {"episodes": episodes, "wins": wins, "returns": returns, "lengths": lengths}
    return positions, stats


def _play_part(job: tuple[Any, ...]) -> tuple[Positions, dict[str, Any]]:
    """One worker's share of a round (a top-level function, so that a spawned process can
    run it): one torch thread, the model read from its saved zip."""
    import torch

    from agents.train.models import algo_class

    path, algo, *rest = job
    torch.set_num_threads(1)
    return play_with_search(algo_class(algo).load(path, device="cpu"), *rest)


def play_round(
    model: Any, algo: str, config: IterationConfig, round_index: int, folder: Path
) -> tuple[Positions, dict[str, Any]]:
    """Round ``round_index``'s searched episodes, over ``config.workers`` processes (worker
    ``w`` the episodes ``w, w + workers, ...``): the same positions for the same settings."""
    base = config.seed + SEARCH_SEED + round_index * ROUND_SEEDS
    common = (config.env_id, config.env_kwargs)
    tail = (config.simulations, config.variant, float(model.gamma), config.top)
    if config.workers == 1:  # one position at a time: one torch thread plays best
        import torch

        kept = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return play_with_search(
                model, config.env_id, config.env_kwargs, config.episodes, base, *tail
            )
        finally:
            torch.set_num_threads(kept)
    import multiprocessing

    path = folder / "playing.zip"
    model.save(path)
    shares = [len(range(w, config.episodes, config.workers)) for w in range(config.workers)]
    jobs = [
        (str(path), algo, *common, share, base + w, *tail, config.workers)
        for w, share in enumerate(shares)
        if share
    ]
    with multiprocessing.get_context("spawn").Pool(len(jobs)) as pool:
        parts = pool.map(_play_part, jobs)
    path.unlink()
    positions, stats = parts[0]
    for more, more_stats in parts[1:]:
        positions = positions.join(more)
        for key in ("episodes", "wins"):
            stats[key] += more_stats[key]
        for key in ("returns", "lengths"):
            stats[key] = stats[key] + more_stats[key]
    return positions, stats


def learning_loss(policy: Any, data: Positions, index: np.ndarray, value_coef: float,
                  return_scale: float, symmetry: Any = None) -> Any:  # fmt: skip
    """Cross-entropy to the search's policy over the legal actions, plus ``value_coef``
    times the critic's squared error to the returns (in units of ``return_scale``), on the
    positions ``index`` seen through ``symmetry`` (see :func:`agents.train.cloning.mirrored`)."""
    import torch

    from agents.nets.common import logits_and_values
    from agents.train.cloning import masked_log_probs
    from grid_envs.core.grid import mirror_board

    n_actions = int(policy.action_space.n)
    obs = data.observations[index]
    masks = np.unpackbits(data.masks[index], axis=1, count=n_actions).astype(bool)
    actions = data.actions[index].astype(np.int64)
    if symmetry is not None:
        flip_rows, flip_cols, transpose, to = symmetry
        obs = np.ascontiguousarray(mirror_board(obs, flip_rows, flip_cols, transpose))
        masks = masks[:, np.argsort(to)]
        actions = to[actions]
    device = policy.device
    tensor, _ = policy.obs_to_tensor(obs)
    logits, values = logits_and_values(policy, tensor)
    log_probs = masked_log_probs(logits, torch.as_tensor(masks, device=device))
    taken = log_probs.gather(1, torch.as_tensor(actions, device=device))
    weights = torch.as_tensor(data.probs[index], device=device)
    loss = -(weights * taken.clamp(min=-1e4)).sum(dim=1).mean()
    returns = torch.as_tensor(data.returns[index], device=device)
    return loss + value_coef * torch.nn.functional.mse_loss(values, returns) / return_scale


def learn(model: Any, data: Positions, config: IterationConfig, rng: np.random.Generator,
          symmetries: list[Any] | None) -> float:  # fmt: skip
    """``config.epochs`` passes of minibatches over ``data`` at step size ``config.lr``
    (the model's own restored after); the mean loss of the last pass."""
    import torch

    policy = model.policy
    groups = policy.optimizer.param_groups
    kept = [group["lr"] for group in groups]
    for group in groups:
        group["lr"] = config.lr
    scale = max(1.0, float(np.mean(data.returns**2)))
    policy.set_training_mode(True)
    losses: list[float] = []
    try:
        for _ in range(config.epochs):
            losses = []
            order = rng.permutation(len(data))
            for start in range(0, len(data), config.batch_size):
                index = order[start : start + config.batch_size]
                symmetry = symmetries[rng.integers(len(symmetries))] if symmetries else None
                loss = learning_loss(policy, data, index, config.value_coef, scale, symmetry)
                policy.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
                policy.optimizer.step()
                losses.append(float(loss.detach()))
    finally:
        for group, value in zip(groups, kept, strict=True):
            group["lr"] = value
        policy.set_training_mode(False)
    return float(np.mean(losses)) if losses else 0.0


def network_alone(model: Any, algo: str, config: IterationConfig) -> dict[str, float]:
    """The network's own play (its most likely legal action) on the validation episodes."""
    from agents.evaluation import evaluate
    from agents.train.config import EVAL_SEED
    from agents.train.models import PolicyAgent

    if not config.eval_episodes:
        return {}
    result = evaluate(config.env_id, PolicyAgent(model, algo), config.eval_episodes,
                      config.seed + EVAL_SEED, config.env_kwargs)  # fmt: skip
    return {"policy_win_rate": result.win_rate, "policy_return": result.mean_return}


def iterate(config: IterationConfig, out: str | Path, log: Any = None) -> IterationResult:
    """Run, resume or leave as it is an expert-iteration run (see the module doc), in a
    folder no other run may use meanwhile (:func:`agents.train.runs.run_lock`)."""
    from agents.train.runs import run_lock

    check_run_folder(Path(out))
    with run_lock(Path(out)):
        return _iterate(config, Path(out), log)


def _start_settings(config: IterationConfig) -> dict[str, Any]:
    """The starting model's run settings, once it is known to be a PPO or MaskablePPO
    model of ``config.env_id``; ``config.env_kwargs`` become the settings it was trained on."""
    settings = settings_of(config.start)
    algo = settings.get("algo", "")
    if algo not in ("maskable-ppo", "ppo"):
        raise ValueError(f"{config.start}: expert iteration improves PPO or MaskablePPO models, "
                         f"not {algo or 'an unknown algorithm'}")  # fmt: skip
    if settings.get("env_id") != config.env_id:
        raise ValueError(f"{config.start} was trained on {settings.get('env_id')}, "
                         f"not {config.env_id}")  # fmt: skip
    config.env_kwargs = dict(settings.get("env_kwargs") or {})
    return settings


def _one_round(
    model: Any, algo: str, config: IterationConfig, r: int, out: Path,
    rng: np.random.Generator, symmetries: Any,
) -> dict[str, Any]:  # fmt: skip
    """Round ``r``: the search plays, the network learns from this round's positions and
    the ``window`` rounds' before it; the round's line in ``rounds.json``."""
    tick = time.perf_counter()
    positions, stats = play_round(model, algo, config, r, out)
    positions.save(out / "data" / f"round_{r}.npz")
    played = time.perf_counter() - tick
    data = positions
    for back in range(max(0, r - config.window + 1), r):
        data = Positions.load(out / "data" / f"round_{back}.npz").join(data)
    loss = learn(model, data, config, rng, symmetries)
    model.save(out / "rounds" / f"round_{r}.zip")
    return {
        "round": r, "positions": len(positions), "learned_on": len(data),
        "search_win_rate": round(stats["wins"] / stats["episodes"], 4),
        "search_return": round(float(np.mean(stats["returns"])), 3),
        "search_length": round(float(np.mean(stats["lengths"])), 1),
        "loss": round(loss, 4), "play_seconds": round(played, 1),
        **{k: round(v, 4) for k, v in network_alone(model, algo, config).items()},
        "seconds": round(time.perf_counter() - tick, 1),
    }  # fmt: skip


def _iterate(config: IterationConfig, out: Path, log: Any) -> IterationResult:
    from agents.nets.common import set_threads
    from agents.train.config import symmetries_of
    from agents.train.models import algo_class

    began = time.perf_counter()
    config.check()
    out = Path(out)
    check_run_folder(out)
    start_settings = _start_settings(config)
    algo = start_settings["algo"]
    if out.exists():
        check_same_run(config, out, ITERATION_KEYS, kind="an expert-iteration run", write=False)
    history: list[dict[str, Any]] = []
    if (out / "rounds.json").exists():
        history = read_json(out / "rounds.json", list)
    done = len(history)
    if done >= config.rounds and (out / "model.zip").exists():
        return IterationResult(out / "model.zip", history, 0.0, already_done=True)
    set_threads(config.threads)
    path = out / "rounds" / f"round_{done - 1}.zip" if done else Path(config.start)
    model = algo_class(algo).load(path, device="cpu")
    (out / "rounds").mkdir(parents=True, exist_ok=True)
    (out / "data").mkdir(exist_ok=True)
    check_same_run(config, out, ITERATION_KEYS, kind="an expert-iteration run")
    actions = symmetries_of(config.env_id)
    symmetries = None
    if actions is not None:
        from agents.train.cloning import board_symmetries

        symmetries = board_symmetries(model.observation_space.shape, actions)
    rng = np.random.default_rng(config.seed + done)
    interrupted = False
    try:
        for r in range(done, config.rounds):
            if config.max_seconds is not None and time.perf_counter() - began > config.max_seconds:
                break
            history.append(_one_round(model, algo, config, r, out, rng, symmetries))
            (out / "rounds.json").write_text(json.dumps(history, indent=2))
            if log is not None:
                log(history[-1])
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - began
    model.save(out / "model.zip")
    settings = {
        **start_settings, "expert_iteration": asdict(config), "rounds_done": len(history),
        "iteration_seconds": round(seconds, 1), "interrupted": interrupted,
    }  # fmt: skip
    (out / "settings.json").write_text(json.dumps(settings, indent=2))
    if interrupted:
        from agents.train.runs import Interrupted

        raise Interrupted(len(history), out / "model.zip", "finished round", checkpoint=False)
    return IterationResult(out / "model.zip", history, seconds)
