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
* ``batched, fp32``: the training defaults (:data:`agents.train.config.PATH_DEFAULTS`) in float32;
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

Scaling (``--scaling``): for each game's reference network (its registered id and
:func:`agents.train.config.training_defaults`), each device (``--devices``) and each number of envs
(``--n-envs``, 64 to 16,384 by default on a GPU, to 1,024 on the CPU), env-steps/s of

* ``env``: the batch alone, random legal play (what the envs can give);
* ``collection``: ``collect_rollouts``, the batch stepping while the network acts;
* ``iteration``: whole PPO iterations (collection and the update, ``--n-steps`` a rollout
  per env, minibatches of a quarter of the rollout between 512 and 16,384, the game's
  epochs or ``--n-epochs``);

and the FLOP/s each achieves: the network's forward FLOPs a sample (collection), forward
and backward (the update), counted once with ``torch.utils.flop_counter``, times the
samples, over the time. A plain square matrix product on the same device, timed in the
same run (float32 on the CPU; float32 and bfloat16 on a GPU), is the ceiling they are read
against.

Budget (``--budget MINUTES``): each path trains for that many minutes of wall time (the
``dummy`` path with its evaluation callback of 20 episodes one env at a time, as training
ran before the batch; the batched ones with their batched evaluation), then the final
model plays ``--episodes`` episodes seeded from 1,000,000 on (no training or evaluation
episode used those seeds); win rate with its 95% interval.
"""

from __future__ import annotations

import argparse
import json
import os
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
from agents.nets.common import set_threads
from agents.train.build import eval_callback, make_vec_env, new_model, training_env
from agents.train.config import PATH_DEFAULTS, TrainConfig, default_config
from agents.train.models import PolicyAgent
from agents.train.plan import plan_run, uses_bf16
from grid_envs.bench import fill_pool
from grid_games.cli.base import parse_settings

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
        from agents.train.plan import policy_of

        policy, kwargs = policy_of(config, int(venv.action_space.n))
        return MaskablePPO(
            policy, venv, n_steps=config.n_steps, batch_size=config.batch_size,
            n_epochs=config.n_epochs, ent_coef=config.ent_coef, gamma=config.gamma,
            learning_rate=config.learning_rate, seed=config.seed, policy_kwargs=kwargs,
            device="cpu", verbose=0,
        )  # fmt: skip
    return new_model(plan := plan_run(config), training_env(plan), tensorboard_log=None)


def speed(model: Any, config: TrainConfig, iterations: int) -> dict[str, float]:
    """Env-steps/s of collection, the update and whole iterations, medians over
    ``iterations`` (the first, warming up, dropped)."""
    model._setup_learn(iterations * config.n_steps * config.n_envs, CallbackList([]))
    callback = CallbackList([])
    callback.init_callback(model)
    collect, update = [], []
    for _ in range(iterations):
        tick = time.perf_counter()
        model.collect_rollouts(model.env, callback, model.rollout_buffer, config.n_steps)
        tock = time.perf_counter()
        model.train()
        sync(str(model.device))
        collect.append(tock - tick)
        update.append(time.perf_counter() - tock)
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
        evaluation = eval_callback(plan_run(config), Path(folder), config.n_envs)
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


SCALING_ENVS = tuple(game.bench_id for game in grid_envs.game_specs())
QUICK_ENV = "GridGames/Minesweeper-v0"  # --quick: a game with no level pool to generate
SCALING_N_ENVS = {"cpu": (64, 256, 1024), "cuda": (64, 256, 1024, 4096, 16384)}


def minibatch(rollout: int) -> int:
    """The scaling mode's minibatch: a quarter of the rollout, between 512 and 16,384."""
    return max(min(512, rollout), min(16_384, rollout // 4))


def network_flops(model: Any, venv: Any) -> tuple[float, float]:
    """FLOPs a sample of the policy's forward pass while acting, and of a training step's
    forward and backward passes (``evaluate_actions``, then the gradient of a loss over
    the log-probabilities, values and entropy), counted by torch over a batch of 64."""
    from torch.utils.flop_counter import FlopCounterMode

    policy = model.policy
    obs = venv.reset()
    n = min(64, len(obs))
    tensor, _ = policy.obs_to_tensor(obs[:n])
    masks = np.asarray(venv.env_method("action_masks"))[:n]
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        policy.forward(tensor, action_masks=masks)
    forward = counter.get_total_flops() / n
    actions = torch.as_tensor(np.argmax(masks, axis=1), device=policy.device)
    with FlopCounterMode(display=False) as counter:
        values, log_prob, entropy = policy.evaluate_actions(tensor, actions, action_masks=masks)
        (values.float().sum() + log_prob.float().sum() + entropy.float().sum()).backward()
    policy.optimizer.zero_grad()
    return forward, counter.get_total_flops() / n


def matmul_flops(device: str, dtype: Any, size: int, repeats: int = 10) -> float:
    """FLOP/s of a ``size`` x ``size`` matrix product on ``device``, median of ``repeats``."""
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    times = []
    for _ in range(repeats + 2):  # two warm-ups
        sync(device)
        tick = time.perf_counter()
        a @ b
        sync(device)
        times.append(time.perf_counter() - tick)
    return 2 * size**3 / statistics.median(times[2:])


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def scaling_row(
    env_id: str, device: str, n_envs: int, args: argparse.Namespace, threads: int
) -> dict[str, Any]:
    """One row of the scaling mode (see the module doc)."""
    from grid_envs.bench import batched_steps_per_second

    rollout = n_envs * args.n_steps
    config = replace(
        default_config(env_id, n_epochs=args.n_epochs), n_envs=n_envs, n_steps=args.n_steps,
        batch_size=minibatch(rollout), device=device, threads=threads,
    )  # fmt: skip
    env_rate = batched_steps_per_second(env_id, n_envs, window=1.0, repeats=3, memory=False)[0]
    model = build(config, plain=False)
    forward, train_step = network_flops(model, model.env)  # no step taken: grads zeroed
    figures = speed(model, config, args.iterations)  # its set-up resets the envs
    model.env.close()
    return {
        "env": env_id, "device": device, "n_envs": n_envs, "n_steps": args.n_steps,
        "batch_size": config.batch_size, "n_epochs": config.n_epochs, "policy": config.policy,
        "bf16": uses_bf16(config), "env_alone": env_rate, **figures,
        "forward_flops": forward, "train_flops": train_step,
        "collection_flop_s": forward * figures["collection"],
        "update_flop_s": train_step * config.n_epochs * figures["update"],
    }  # fmt: skip


def scaling(args: argparse.Namespace, threads: int) -> dict[str, Any]:
    """Every row of the scaling mode; the report so far is written to ``--json`` after
    each row, so that a run stopped early keeps what it measured."""
    envs = args.envs or ([QUICK_ENV] if args.quick else SCALING_ENVS)
    devices = args.devices or (["cuda"] if torch.cuda.is_available() else []) + ["cpu"]
    rows: list[dict[str, Any]] = []
    ceilings: dict[str, dict[str, float]] = {}
    report = {**machine(threads), "mode": "scaling", "matmul_flop_s": ceilings, "rows": rows}
    for device in devices:
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise SystemExit(f"--devices {device}: torch sees no CUDA device here")
        kind = device.split(":")[0]
        if kind == "cpu":
            ceilings[device] = {"fp32": matmul_flops(device, torch.float32, 1024)}
        else:
            ceilings[device] = {
                "fp32": matmul_flops(device, torch.float32, 8192),
                "bf16": matmul_flops(device, torch.bfloat16, 8192),
            }  # fmt: skip
        print(f"{device}: matrix products {ceilings[device]}", flush=True)
        sizes = args.n_envs or ((64, 256) if args.quick else SCALING_N_ENVS[kind])
        for env_id in envs:
            filled, levels = fill_pool(env_id, {})
            if levels:
                print(f"{env_id}: a pool of {levels:,} levels in {filled:.1f} s", flush=True)
            for n in sizes:
                row = scaling_row(env_id, device, n, args, threads)
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump(report, f, indent=2)
    return report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=None,
                        help="default: Sokoban-v0 and Minesweeper-v0; with --scaling, every "
                        "game's registered id")  # fmt: skip
    parser.add_argument("--paths", nargs="+", default=list(PATHS), choices=list(PATHS),
                        metavar="PATH", help=f"of {list(PATHS)}")  # fmt: skip
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--budget", type=float, default=None, help="minutes of training a path")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="env settings beyond the registered ones")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the figures here too")
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="env-steps/s and FLOP/s against the number of envs and the device",
    )
    parser.add_argument(
        "--devices",
        nargs="+",
        default=None,
        help="with --scaling: default cuda (where present) and cpu",
    )
    parser.add_argument(
        "--n-envs",
        nargs="+",
        type=int,
        default=None,
        help="with --scaling: default 64 to 16,384 on a GPU, to 1,024 on a CPU",
    )
    parser.add_argument("--n-steps", type=int, default=16, help="with --scaling: rollout per env")
    parser.add_argument("--n-epochs", type=int, default=None,
                        help="with --scaling: PPO's epochs (default: the game's)")  # fmt: skip
    parser.add_argument(
        "--quick",
        action="store_true",
        help="with --scaling: Minesweeper-v0 alone, 64 and 256 envs (a smoke run)",
    )
    return parser


def _row(
    env_id: str, name: str, game: TrainConfig, args: argparse.Namespace, threads: int
) -> dict[str, Any]:
    """The figures of one training path on ``env_id``: its steps/s, or with ``--budget``
    what it learns in that many minutes."""
    config = replace(
        game, **PATHS[name], env_kwargs=parse_settings(args.set), seed=args.seed, threads=threads
    )
    plain = name == "dummy"
    if args.budget is None:
        model = build(config, plain)
        figures = speed(model, config, args.iterations)
        model.env.close()
    else:
        figures = budget(config, plain, args.budget, args.episodes)
    return {"env": env_id, "path": name, "n_envs": config.n_envs, "n_steps": config.n_steps,
            "batch_size": config.batch_size, "n_epochs": config.n_epochs,
            "policy": config.policy, "bf16": uses_bf16(config), **figures}  # fmt: skip


def main() -> None:
    parser = _parser()
    args = parser.parse_args()
    threads = set_threads(None)
    if args.scaling:
        if args.iterations < 2:
            parser.error("--iterations must be at least 2 (the first warms up)")
        print(scaling_table(scaling(args, threads)))
        return
    rows: list[dict[str, Any]] = []
    for env_id in args.envs or ["GridGames/Sokoban-v0", "GridGames/Minesweeper-v0"]:
        game = default_config(env_id)  # the game's network
        filled, levels = fill_pool(env_id, parse_settings(args.set))
        if levels:
            print(f"{env_id}: a pool of {levels:,} levels generated in {filled:.1f} s", flush=True)
        for name in args.paths:
            rows.append(_row(env_id, name, game, args, threads))
            print(json.dumps(rows[-1]), flush=True)
    report = {**machine(threads), "env_kwargs": parse_settings(args.set), "rows": rows}
    print(table(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


def machine(threads: int) -> dict[str, Any]:
    gpu = f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""
    return {
        "machine": f"{platform.machine()}, {platform.system()}, {os.cpu_count()} cores{gpu}, "
        f"Python {platform.python_version()}, torch {torch.__version__}, {threads} threads",
        "date": time.strftime("%Y-%m-%d"),
        "grid_games": grid_envs.__version__,
    }


def scaling_table(report: dict[str, Any]) -> str:
    lines = [
        "| env | device | envs | env alone | collection | whole iteration "
        "| GFLOP/s collecting | GFLOP/s updating |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        lines.append(
            f"| {r['env'].split('/')[1]} | {r['device']} | {r['n_envs']:,} "
            f"| {r['env_alone']:,.0f} | {r['collection']:,.0f} | {r['iteration']:,.0f} "
            f"| {r['collection_flop_s'] / 1e9:,.1f} | {r['update_flop_s'] / 1e9:,.1f} |"
        )
    ceilings = "; ".join(
        f"{device}: " + ", ".join(f"{k} {v / 1e9:,.0f} GFLOP/s" for k, v in c.items())
        for device, c in report["matmul_flop_s"].items()
    )
    return (
        "\n".join(lines) + f"\n\nmatrix products: {ceilings}\n{report['machine']}, {report['date']}"
    )


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
