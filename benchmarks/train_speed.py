"""PPO training speed: single envs in a DummyVecEnv against the native batched env.

    python benchmarks/train_speed.py [--envs GridGames/Sokoban-v0 GridGames/Minesweeper-v0]
                                     [--iterations 5] [--json FILE]
    python benchmarks/train_speed.py --budget 5 --envs GridGames/Minesweeper-v0 \\
        --set rows=6 cols=6 mines=4 [--episodes 200] [--json FILE]

Speed (the default): per env and per path, MaskablePPO with the game's default network,
``--iterations`` whole PPO iterations (the first dropped: it warms up) timed apart into
*collection* (``collect_rollouts``: acting, stepping the envs, filling the buffer) and the
*update* (``train()``); the figures are env-steps per second, medians over iterations:

* ``dummy``: the path training took before the native batch: 4 single envs in SB3's
  ``DummyVecEnv``, rollouts of 256 steps per env, minibatches of 256, 10 epochs, rollouts
  under ``torch.no_grad`` (plain MaskablePPO);
* ``batched, same PPO``: the native batch with the same rollout size, minibatches and
  epochs (16 envs x 64 steps), rollouts under ``torch.inference_mode``: what the batch
  alone buys;
* ``batched, fp32``: the training defaults (:data:`agents.sb3.PATH_DEFAULTS`) in float32;
* ``batched``: the training defaults, the network in bfloat16 where the machine computes
  it in hardware (``precision="auto"``);
* ``batched, 256 envs``: the same rollout size from 256 envs of 8 steps (larger forward
  passes).

The first three compute in float32, as training always did before.

All paths run in one process, one after the other, with the same torch threads. A game's
default level pool (Sokoban's, the Knight's) is generated first, split over the cores, as
``grid-games bench`` does: every path then draws from the same full pool (a fresh pool makes
each reset generate its level, which the batched paths, resetting several times as often
a second, would pay far more of).

Budget (``--budget MINUTES``): each path trains for that many minutes of wall time (the
``dummy`` path with its evaluation callback of 20 episodes one env at a time, as training
ran before the batch; the batched ones with their batched evaluation), then the final
model plays ``--episodes`` episodes seeded from 1,000,000 on (no training or evaluation
episode used those seeds); win rate with its 95% interval.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from dataclasses import replace
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList

import grid_envs
from agents import evaluate
from agents.policy import PolicyAgent
from agents.sb3 import (
    PATH_DEFAULTS,
    TrainConfig,
    _eval_callback,
    default_config,
    make_vec_env,
    new_model,
    set_threads,
    training_env,
    uses_bf16,
)
from grid_envs.bench import fill_pool
from grid_games.cli import parse_settings

HELD_OUT_SEED = 1_000_000
PATHS: dict[str, dict[str, Any]] = {
    "dummy": {"vec_env": "dummy", **PATH_DEFAULTS["dummy"], "precision": "fp32"},
    "batched, same PPO": {"vec_env": "batched", "n_envs": 16, "n_steps": 64,
                          "batch_size": 256, "n_epochs": 10, "precision": "fp32"},
    "batched, fp32": {"vec_env": "batched", **PATH_DEFAULTS["batched"], "precision": "fp32"},
    "batched": {"vec_env": "batched", **PATH_DEFAULTS["batched"]},
    "batched, 256 envs": {"vec_env": "batched", **PATH_DEFAULTS["batched"], "n_envs": 256,
                          "n_steps": 8},
}  # fmt: skip


def build(config: TrainConfig, plain: bool) -> Any:
    """The model of a path: plain MaskablePPO on a DummyVecEnv, or the training code's."""
    if plain:
        venv = make_vec_env(config, config.n_envs)
        from agents.sb3 import policy_of

        policy, kwargs = policy_of(config, int(venv.action_space.n))
        return MaskablePPO(
            policy, venv, n_steps=config.n_steps, batch_size=config.batch_size,
            n_epochs=config.n_epochs, ent_coef=config.ent_coef, gamma=config.gamma,
            learning_rate=config.learning_rate, seed=config.seed, policy_kwargs=kwargs,
            device="cpu", verbose=0,
        )  # fmt: skip
    return new_model(config, training_env(config), tensorboard_log=None)


def speed(config: TrainConfig, plain: bool, iterations: int) -> dict[str, float]:
    model = build(config, plain)
    model._setup_learn(iterations * config.n_steps * config.n_envs, CallbackList([]))
    callback = CallbackList([])
    callback.init_callback(model)
    collect, update = [], []
    for _ in range(iterations):
        tick = time.perf_counter()
        model.collect_rollouts(model.env, callback, model.rollout_buffer, config.n_steps)
        tock = time.perf_counter()
        model.train()
        collect.append(tock - tick)
        update.append(time.perf_counter() - tock)
    model.env.close()
    steps = config.n_steps * config.n_envs
    c, u = statistics.median(collect[1:]), statistics.median(update[1:])
    return {"collection": steps / c, "update": steps / u, "iteration": steps / (c + u)}


class StopAfter(BaseCallback):
    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.deadline = time.perf_counter() + seconds

    def _on_step(self) -> bool:
        return time.perf_counter() < self.deadline


def budget(config: TrainConfig, plain: bool, minutes: float, episodes: int) -> dict[str, Any]:
    import tempfile
    from pathlib import Path

    model = build(config, plain)
    with tempfile.TemporaryDirectory() as folder:
        evaluation = _eval_callback(config, Path(folder), config.n_envs)
        if plain:  # training before the batch: SB3's evaluation, one env at a time
            from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback

            evaluation = MaskableEvalCallback(
                make_vec_env(config, 1, seed_offset=10_000), n_eval_episodes=20,
                eval_freq=max(1, config.eval_freq // config.n_envs), verbose=0,
            )  # fmt: skip
        start = time.perf_counter()
        model.learn(10**9, callback=CallbackList([StopAfter(60 * minutes), evaluation]))
        seconds = time.perf_counter() - start
        path = Path(folder) / "model.zip"
        model.save(path)
        (Path(folder) / "settings.json").write_text(json.dumps({"algo": config.algo}))
        agent = PolicyAgent.load(path)
        result = evaluate(config.env_id, agent, episodes, HELD_OUT_SEED, config.env_kwargs,
                          progress=False)  # fmt: skip
    lo, hi = result.win_rate_ci
    return {"timesteps": int(model.num_timesteps), "seconds": round(seconds, 1),
            "win_rate": result.win_rate, "ci": [lo, hi],
            "mean_return": result.mean_return}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+",
                        default=["GridGames/Sokoban-v0", "GridGames/Minesweeper-v0"])  # fmt: skip
    parser.add_argument("--paths", nargs="+", default=list(PATHS), choices=list(PATHS),
                        metavar="PATH", help=f"of {list(PATHS)}")  # fmt: skip
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--budget", type=float, default=None, help="minutes of training a path")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="env settings beyond the registered ones")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the figures here too")
    args = parser.parse_args()
    threads = set_threads(None)
    rows: list[dict[str, Any]] = []
    for env_id in args.envs:
        game = default_config(env_id)  # the game's network
        filled, levels = fill_pool(env_id, parse_settings(args.set))
        if levels:
            print(f"{env_id}: a pool of {levels:,} levels generated in {filled:.1f} s", flush=True)
        for name in args.paths:
            config = replace(
                game, **PATHS[name], env_kwargs=parse_settings(args.set), seed=args.seed,
                threads=threads,
            )  # fmt: skip
            plain = name == "dummy"
            if args.budget is None:
                figures = speed(config, plain, args.iterations)
            else:
                figures = budget(config, plain, args.budget, args.episodes)
            row = {"env": env_id, "path": name, "n_envs": config.n_envs,
                   "n_steps": config.n_steps, "batch_size": config.batch_size,
                   "n_epochs": config.n_epochs, "policy": config.policy,
                   "bf16": uses_bf16(config), **figures}  # fmt: skip
            rows.append(row)
            print(json.dumps(row), flush=True)
    report = {
        "machine": f"{platform.machine()}, {platform.system()}, Python "
        f"{platform.python_version()}, torch {torch.__version__}, {threads} threads",
        "date": time.strftime("%Y-%m-%d"),
        "grid_games": grid_envs.__version__,
        "env_kwargs": parse_settings(args.set),
        "rows": rows,
    }
    print(table(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


def table(report: dict[str, Any]) -> str:
    rows = report["rows"]
    if "collection" in rows[0]:
        lines = ["| env | path | envs x steps, minibatch, epochs, precision | collection "
                 "| update | whole iteration |", "|---|---|---|---|---|---|"]  # fmt: skip
        for r in rows:
            base = next(x for x in rows if x["env"] == r["env"] and x["path"] == "dummy")
            lines.append(
                f"| {r['env'].split('/')[1]} | {r['path']} | {r['n_envs']} x {r['n_steps']}, "
                f"{r['batch_size']}, {r['n_epochs']}, {'bf16' if r['bf16'] else 'fp32'} "
                f"| {r['collection']:,.0f} "
                f"({r['collection'] / base['collection']:.1f}x) | {r['update']:,.0f} "
                f"| {r['iteration']:,.0f} ({r['iteration'] / base['iteration']:.1f}x) |"
            )
    else:
        lines = ["| env | path | steps trained | win rate [95% CI] | mean return |",
                 "|---|---|---|---|---|"]  # fmt: skip
        for r in rows:
            lines.append(
                f"| {r['env'].split('/')[1]} | {r['path']} | {r['timesteps']:,} "
                f"| {r['win_rate']:.1%} [{r['ci'][0]:.1%}-{r['ci'][1]:.1%}] "
                f"| {r['mean_return']:.2f} |"
            )
    return "\n".join(lines) + f"\n\n{report['machine']}, {report['date']}"


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
