"""``grid-games compare``: random vs algorithmic baselines vs a short MaskablePPO training.

For every game (one small configuration each, from :data:`agents.sb3.DEFAULTS`) it
evaluates the random agent and every registered baseline, trains MaskablePPO for a small
budget, evaluates the learned policy on the same seeds, and writes ``table.md``,
``results.json``, ``learning_curves.png`` and ``win_rates.png`` to the output folder.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.evaluation import EvalResult, evaluate
from agents.policy import PolicyAgent
from agents.registry import list_agents
from agents.runs import TrainResult
from agents.sb3 import DEFAULTS, HELDOUT_SEED, default_config, train

COMPARE_ENVS = tuple(DEFAULTS)


@dataclass
class Comparison:
    rows: list[tuple[str, str, EvalResult]]  # (env, agent label, result)
    curves: dict[str, list[tuple[int, float, float]]]  # env -> learning curve
    train_seconds: dict[str, float]
    out: Path


def run_compare(
    envs: tuple[str, ...] = COMPARE_ENVS,
    timesteps: int = 100_000,
    episodes: int = 100,
    seed: int = 0,
    out: str | Path = "compare",
    train_models: bool = True,
    progress: bool = True,
    log: Any = print,
) -> Comparison:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, EvalResult]] = []
    curves: dict[str, list[tuple[int, float, float]]] = {}
    seconds: dict[str, float] = {}
    for env_id in envs:
        config = default_config(
            env_id, timesteps=timesteps, seed=seed, eval_freq=max(1_000, timesteps // 8)
        )
        kwargs = config.env_kwargs
        for name in list_agents(env_id):
            log(f"{env_id} {kwargs}: evaluating {name}")
            rows.append(
                (env_id, name, evaluate(env_id, name, episodes, seed + HELDOUT_SEED, kwargs))
            )
        if train_models:
            log(f"{env_id}: training MaskablePPO for {timesteps} steps")
            start = time.perf_counter()
            result: TrainResult = train(config, out / "runs" / env_id.split("/")[1], progress)
            seconds[env_id] = time.perf_counter() - start
            curves[env_id] = result.curve
            agent = PolicyAgent.load(result.model_path)
            label = f"maskable-ppo ({result.timesteps // 1000}k steps)"
            rows.append(
                (env_id, label, evaluate(env_id, agent, episodes, seed + HELDOUT_SEED, kwargs))
            )
    comparison = Comparison(rows, curves, seconds, out)
    write_outputs(comparison, episodes)
    return comparison


def table(comparison: Comparison) -> str:
    lines = [
        "| env | agent | win rate [95% CI] | mean return | mean length | steps/s |",
        "|---|---|---|---|---|---|",
    ]
    for env_id, label, r in comparison.rows:
        lo, hi = r.win_rate_ci
        kwargs = DEFAULTS.get(env_id, {}).get("env_kwargs", {})
        setting = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "as registered"
        name = env_id.split("/")[1]
        rate = f"{r.win_rate:.0%} [{lo:.0%}-{hi:.0%}]"
        lines.append(
            f"| {name} ({setting}) | {label} | {rate} | {r.mean_return:.2f} "
            f"| {r.mean_length:.1f} | {r.steps_per_second:,.0f} |"
        )
    return "\n".join(lines)


def write_outputs(comparison: Comparison, episodes: int) -> None:
    out = comparison.out
    text = table(comparison)
    if comparison.train_seconds:
        text += "\n\nTraining wall time: " + ", ".join(
            f"{e.split('/')[1]} {s:.0f} s" for e, s in comparison.train_seconds.items()
        )
    (out / "table.md").write_text(text + "\n")
    results = [{"env": e, "agent": label, **r.to_dict()} for e, label, r in comparison.rows]
    (out / "results.json").write_text(
        json.dumps(
            {
                "episodes": episodes,
                "results": results,
                "curves": comparison.curves,
                "train_seconds": comparison.train_seconds,
            },
            indent=2,
        )
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # plots need the notebooks or train extra; the table is enough
        return
    if comparison.curves:
        fig, axes = plt.subplots(1, len(comparison.curves), figsize=(4 * len(comparison.curves), 3))
        for ax, (env_id, curve) in zip(
            list(getattr(axes, "flat", [axes])), comparison.curves.items(), strict=False
        ):
            if curve:
                steps, _, wins = zip(*curve, strict=True)
                ax.plot(steps, wins, marker="o")
            ax.set_title(env_id.split("/")[1])
            ax.set_xlabel("timesteps")
            ax.set_ylabel("eval win rate")
            ax.set_ylim(-0.05, 1.05)
        fig.tight_layout()
        fig.savefig(out / "learning_curves.png", dpi=100)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(max(6, len(comparison.rows) * 0.8), 3.5))
    labels = [
        f"{e.split('/')[1].removesuffix('-v0')}\n{a.split(' ')[0]}" for e, a, _ in comparison.rows
    ]
    rates = [r.win_rate for _, _, r in comparison.rows]
    err = [  # clipped: at 0% or 100% the bound and the rate can differ by a rounding error
        [max(0.0, r.win_rate - r.win_rate_ci[0]) for _, _, r in comparison.rows],
        [max(0.0, r.win_rate_ci[1] - r.win_rate) for _, _, r in comparison.rows],
    ]
    ax.bar(range(len(rates)), rates, yerr=err, capsize=3)
    ax.set_xticks(range(len(rates)), labels, fontsize=7, rotation=45, ha="right")
    ax.set_ylabel("win rate (95% CI)")
    fig.tight_layout()
    fig.savefig(out / "win_rates.png", dpi=100)
    plt.close(fig)
