"""Reward shaping by the algorithms, measured: MaskablePPO from scratch with and without a
game's potential, the same wall-clock budget a run, several seeds an arm.

Up to six arms a setting (``--arms``; by default ``plain`` and ``shaped``, with
``--quick`` all six): ``plain`` (the env's rewards), ``shaped`` (the potential
added to the rewards, ``scale * (gamma * phi(s') - phi(s))``), ``input`` (the potential
given to the network as one more observation plane, rewards untouched:
:class:`grid_envs.wrappers.PotentialInput`), ``both``, ``kept`` (shaped, with a lost end
keeping its potential: ``--shaping-at-loss kept``) and ``both-kept``. ``--scales`` adds
shaped arms at other coefficients (``shaped-x0.1``, or with ``--scaled shaped both-kept``
``both-kept-x0.1`` as well, ...), the shaping scale's sweep.

Each setting names an env, its settings, a potential (``--shaping``) and a policy. Every
run trains on the native batch until its budget runs out (evaluations during training on
the validation seeds, raw game rewards), and its final model plays ``--episodes`` held-out
episodes (seeds from 1,000,000 on; Sokoban and the Knight from the level pool training
never drew from), raw rewards always. Sokoban's policies play sampled, as they train.

The record (JSON) holds every run's curve, steps/s and final figures, and per setting each
arm pooled over its seeds with 95% Wilson intervals and whether it is above the plain arm
with the intervals apart; a plot beside it draws the evaluations against
env-steps and against wall time, one panel a setting. Runs are kept in ``--out``: a rerun
goes on from the runs already finished.

    python benchmarks/shaping.py --quick                       # one setting, a few minutes
    python benchmarks/shaping.py                               # every setting, about 3 hours
    python benchmarks/shaping.py --settings knight-slack-cnn --arms plain shaped kept
    python benchmarks/shaping.py --settings knight-slack-cnn --arms --scales 0.1 10 --seeds 1
    python benchmarks/shaping.py --kept-only --scales 0.1 10     # the record from kept runs
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grid_envs.bench import cpu_model  # noqa: E402

HELDOUT = 1_000_000
POOLED = ("GridGames/Sokoban", "GridGames/Knight")  # held out by their level pool


@dataclass(frozen=True)
class Setting:
    """One comparison: ``env_id`` with ``env_kwargs``, the ``potential`` of the shaped arm,
    the network, and whether the policy plays sampled."""

    env_id: str
    potential: str
    policy: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    sample: bool = False


SOKOBAN_SMALL = "GridGames/Sokoban-Small-v0"
SETTINGS: dict[str, Setting] = {
    # the Knight with twice the energy its cheapest route needs: a step off it is not the end
    "knight-slack-cnn": Setting("GridGames/Knight-v0", "distance", "cnn", {"energy_slack": 2.0}),
    "knight-slack-maze-vi": Setting(
        "GridGames/Knight-v0", "distance", "maze-vi", {"energy_slack": 2.0}
    ),
    # the moves read at the knight's cell: the potential's field, as an input, is a map
    "knight-slack-cell": Setting(
        "GridGames/Knight-v0", "distance", "knight-cell", {"energy_slack": 2.0}
    ),
    "sokoban-small-matching": Setting(SOKOBAN_SMALL, "matching", "player", sample=True),
    "sokoban-small-solver": Setting(SOKOBAN_SMALL, "solver", "player", sample=True),
    "lines98-small-lines": Setting("GridGames/Lines98-Small-v0", "lines", "lift-drop"),
    "pikachu-small-mobility": Setting("GridGames/Pikachu-Small-v0", "mobility", "pairs"),
    "knight-large-slack-cnn": Setting(
        "GridGames/Knight-Large-v0", "distance", "cnn", {"energy_slack": 2.0}
    ),
}  # fmt: skip
QUICK = ("knight-slack-cnn",)
ARMS = ("plain", "shaped", "input", "both", "kept", "both-kept")


SHAPED_ARMS = ("shaped", "both", "kept", "both-kept")  # the arms that shape, at a scale


def arm_name(scale: float, base: str = "shaped") -> str:
    """The shaped arm ``base`` at coefficient ``scale`` (1: ``base`` itself)."""
    return base if scale == 1.0 else f"{base}-x{scale:g}"


def arm_config(setting: Setting, arm: str) -> dict[str, Any]:
    """The training settings of ``arm``: ``plain``, ``shaped``, ``input``, ``both``
    (shaped, and the potential as an input), ``kept`` (shaped, a lost end keeping its
    potential) or ``both-kept``; a shaping arm named ``<arm>-x<scale>`` shapes at that
    coefficient."""
    base, _, scale = arm.partition("-x")
    if scale and base in SHAPED_ARMS:
        try:
            return {**arm_config(setting, base), "shaping_scale": float(scale)}
        except ValueError:
            pass
    if arm == "plain":
        return {"shaping": "none"}
    if arm == "input":
        return {"shaping": "none", "potential_input": setting.potential}
    if arm == "both":
        return {"shaping": setting.potential, "potential_input": setting.potential}
    if arm in ("kept", "both-kept"):
        given = {"potential_input": setting.potential} if arm == "both-kept" else {}
        return {"shaping": setting.potential, "shaping_at_loss": "kept", **given}
    if arm == "shaped":
        return {"shaping": setting.potential}
    raise ValueError(f"no arm {arm!r}: one of {ARMS}, or one of {SHAPED_ARMS}-x<scale>")


def run_one(
    name: str, arm: str, seed: int, budget: float, episodes: int, out: Path
) -> dict[str, Any]:
    """One run of ``name``'s setting (``arm``: see :func:`arm_config`): trained for
    ``budget`` seconds, its final model played on the held-out episodes. A run folder that
    holds a finished run's result gives it back unchanged."""
    from agents.train.config import default_config
    from agents.train.models import algo_class
    from agents.train.sb3 import train

    folder = out / "runs" / f"{name}-{arm}-s{seed}"
    done = folder / "result.json"
    if done.exists():
        result: dict[str, Any] = json.loads(done.read_text())
        return result
    setting = SETTINGS[name]
    config = default_config(
        setting.env_id, policy=setting.policy, seed=seed, timesteps=100_000_000,
        max_seconds=budget, threads=1, **arm_config(setting, arm),
    )  # fmt: skip
    config.env_kwargs = {**config.env_kwargs, **setting.env_kwargs}
    trained = train(config, folder, progress=False)
    settings = json.loads(trained.settings_path.read_text())
    model = algo_class(config.algo).load(trained.model_path, device="cpu")
    final = held_out(model, config.algo, setting, episodes, seed, config.potential_input)
    result = {
        "setting": name, "arm": arm, "seed": seed, "shaping": config.shaping,
        "shaping_scale": config.shaping_scale, "shaping_at_loss": config.shaping_at_loss,
        "potential_input": config.potential_input,
        "cpu": cpu_model(), "date": date.today().isoformat(),
        "timesteps": trained.timesteps, "seconds": round(trained.seconds, 1),
        "steps_per_second": round(trained.timesteps / max(trained.seconds, 1e-9), 1),
        "curve": [list(point) for point in trained.curve], "final": final,
        "stopped_at_time_limit": settings.get("stopped_at_time_limit", False),
    }  # fmt: skip
    done.write_text(json.dumps(result, indent=1))
    return result


def held_out(
    model: Any, algo: str, setting: Setting, episodes: int, seed: int,
    potential_input: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The final model on ``episodes`` held-out episodes, side by side, raw rewards (with
    the input plane it trained with, if any)."""
    import gymnasium as gym

    from agents.train.batch import evaluate_batched
    from grid_envs.wrappers import VectorPotentialInput

    kwargs = dict(setting.env_kwargs)
    if setting.env_id.startswith(POOLED):
        kwargs["pool_seed"] = 1
    batch: Any = gym.make_vec(
        setting.env_id, episodes, vectorization_mode="vector_entry_point", **kwargs
    )
    if potential_input:
        batch = VectorPotentialInput(batch, potential_input)
    rng = np.random.default_rng(seed) if setting.sample else None
    returns, lengths, wins = evaluate_batched(model, algo, batch, seed=HELDOUT, sample=rng)
    batch.close()
    return {
        "episodes": episodes, "wins": int(wins.sum()), "mean_return": float(returns.mean()),
        "std_return": float(returns.std()), "mean_length": float(lengths.mean()),
    }  # fmt: skip


def pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """An arm's runs pooled over their seeds: wins with a 95% Wilson interval, returns with
    a 95% interval of the mean, steps/s (median)."""
    from agents.evaluation import wilson_interval

    wins = sum(r["final"]["wins"] for r in runs)
    episodes = sum(r["final"]["episodes"] for r in runs)
    means = np.array([r["final"]["mean_return"] for r in runs])
    stds = np.array([r["final"]["std_return"] for r in runs])
    mean = float(means.mean())
    half = 1.96 * float(np.sqrt(np.mean(stds**2 + (means - mean) ** 2)) / np.sqrt(episodes))
    return {
        "runs": len(runs), "episodes": episodes, "wins": wins, "win_rate": wins / episodes,
        "win_rate_ci": list(wilson_interval(wins, episodes)), "mean_return": mean,
        "return_ci": [mean - half, mean + half],
        "steps_per_second": float(np.median([r["steps_per_second"] for r in runs])),
        "timesteps": [r["timesteps"] for r in runs],
    }  # fmt: skip


def verdict(shaped: dict[str, Any], plain: dict[str, Any]) -> str:
    """Whether the shaped arm is above or below the plain one with the 95% intervals apart,
    on win rates where either arm won an episode, and on mean returns."""
    said = []
    keys = [("mean_return", "return_ci")]
    if shaped["wins"] + plain["wins"]:
        keys.insert(0, ("win_rate", "win_rate_ci"))
    for key, ci in keys:
        if shaped[ci][0] > plain[ci][1]:
            said.append(f"{key}: shaped above plain, intervals apart")
        elif shaped[ci][1] < plain[ci][0]:
            said.append(f"{key}: shaped below plain, intervals apart")
        else:
            said.append(f"{key}: no difference the intervals can show")
    return "; ".join(said)


def plot(record: dict[str, Any], path: Path) -> None:
    """The evaluations during training against env-steps and against wall time (a run's
    steps at its mean rate), one row a setting; each seed a thin line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(record["settings"])
    fig, axes = plt.subplots(len(names), 2, figsize=(10, 3 * len(names)), squeeze=False)
    colours = {"shaped": "tab:orange", "plain": "tab:blue", "input": "tab:green",
               "both": "tab:red", "kept": "tab:purple", "both-kept": "tab:brown"}  # fmt: skip
    extra = iter(("tab:pink", "tab:olive", "tab:cyan", "tab:gray"))
    for arm in record.get("arms", []):
        colours.setdefault(arm, next(extra, "tab:gray"))
    for row, name in zip(axes, names, strict=True):
        wins = any(
            point[2] > 0 for r in record["runs"] if r["setting"] == name for point in r["curve"]
        )
        for run in (r for r in record["runs"] if r["setting"] == name):
            curve = np.array(run["curve"], dtype=float).reshape(-1, 3)
            y = curve[:, 2] if wins else curve[:, 1]
            seconds = curve[:, 0] / max(run["steps_per_second"], 1e-9)
            label = run["arm"] if run["seed"] == min(r["seed"] for r in record["runs"]) else None
            for ax, x in zip(row, (curve[:, 0], seconds), strict=True):
                ax.plot(x, y, color=colours[run["arm"]], alpha=0.7, lw=1, label=label)
        row[0].set_title(f"{name}: against env-steps")
        row[1].set_title(f"{name}: against wall time (s)")
        row[0].set_ylabel("validation win rate" if wins else "validation return")
        row[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def _commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True)  # fmt: skip
        return done.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=None,
                        help="default: every setting (with --quick: knight-slack-cnn)")  # fmt: skip
    parser.add_argument("--arms", nargs="*", choices=ARMS, default=None,
                        help="the arms a setting runs (default: plain and shaped; with "
                        "--quick or --kept-only every one)")  # fmt: skip
    parser.add_argument("--scales", nargs="*", type=float, default=[],
                        help="more shaped arms, at these coefficients (the sweep)")  # fmt: skip
    parser.add_argument("--scaled", nargs="+", default=["shaped"], choices=SHAPED_ARMS,
                        help="the arms --scales sweeps (default: shaped)")  # fmt: skip
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds of training a run (default 200; --quick: 20)",
    )
    parser.add_argument(
        "--seeds", type=int, default=None, help="runs an arm (default 3; --quick: 1)"
    )
    parser.add_argument("--episodes", type=int, default=None,
                        help="held-out episodes a run (default 500; --quick: 50)")  # fmt: skip
    parser.add_argument("--out", default="shaping-runs", help="the runs' folder (resumable)")
    parser.add_argument("--record", default=None, help="the JSON record (a plot goes beside)")
    parser.add_argument("--quick", action="store_true",
                        help="a check that it works: one setting, smaller defaults")  # fmt: skip
    parser.add_argument("--kept-only", action="store_true",
                        help="train nothing: the record from the runs kept in --out")  # fmt: skip
    parser.add_argument("--runs-from", default=None, metavar="RECORD",
                        help="keep the runs of an earlier record in --out first")  # fmt: skip
    return parser


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    args = _parser().parse_args(argv)
    defaults = (20.0, 1, 50) if args.quick else (200.0, 3, 500)
    for key, value in zip(("budget", "seeds", "episodes"), defaults, strict=True):
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.arms is None:
        args.arms = list(ARMS) if args.quick or args.kept_only else ["plain", "shaped"]
    if args.quick:
        args.settings = args.settings or list(QUICK)
    if args.budget <= 0 or args.seeds < 1 or args.episodes < 1:
        raise SystemExit("--budget, --seeds and --episodes must be positive")
    if any(not (np.isfinite(x) and x > 0) for x in args.scales):
        raise SystemExit("--scales must be positive numbers")
    return args


def keep_runs(record: Path, out: Path) -> int:
    """Each run of ``record`` written to its folder in ``out`` (where none is there yet),
    so that a rerun takes it as finished; how many were written."""
    written = 0
    for run in json.loads(record.read_text())["runs"]:
        done = out / "runs" / f"{run['setting']}-{run['arm']}-s{run['seed']}" / "result.json"
        if not done.exists():
            done.parent.mkdir(parents=True, exist_ok=True)
            done.write_text(json.dumps(run, indent=1))
            written += 1
    return written


def summary(name: str, arms: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """A setting's row of the record: each arm pooled over its seeds, and each arm against
    the plain one (a verdict, and its steps/s as a multiple of plain's)."""
    setting = SETTINGS[name]
    row: dict[str, Any] = {
        "env": setting.env_id, "env_kwargs": setting.env_kwargs, "potential": setting.potential,
        "policy": setting.policy, "sample": setting.sample,
    }  # fmt: skip
    for arm, runs in arms.items():
        row[arm] = pooled(runs)
    plain = row.get("plain")
    for arm in arms:
        if arm == "plain" or plain is None:
            continue
        prefix = "" if arm == "shaped" else f"{arm}_"
        verdict_of = verdict(row[arm], plain).replace("shaped", arm)
        row[f"{prefix}verdict"] = verdict_of
        speed = row[arm]["steps_per_second"] / max(plain["steps_per_second"], 1e-9)
        row["shaping_speed" if arm == "shaped" else f"{arm}_speed"] = speed
    return row


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = _arguments(argv)
    names = args.settings or list(SETTINGS)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.runs_from:
        print(f"kept {keep_runs(Path(args.runs_from), out)} runs of {args.runs_from}")
    swept = [arm_name(x, base) for base in args.scaled for x in args.scales]
    arm_names = list(args.arms) + [arm for arm in swept if arm not in args.arms]
    seeds = list(range(args.seeds))
    began = time.perf_counter()
    record: dict[str, Any] = {
        "machine": f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
        "cpu": cpu_model(), "date": date.today().isoformat(), "commit": _commit(),
        "budget_seconds": args.budget, "seeds": seeds, "episodes": args.episodes,
        "first_heldout_seed": HELDOUT, "arms": arm_names, "runs": [], "settings": {},
    }  # fmt: skip
    for name in names:
        arms: dict[str, list[dict[str, Any]]] = {}
        for seed in seeds:
            for arm in arm_names:  # side by side, so the machine's drift hits every arm
                folder = out / "runs" / f"{name}-{arm}-s{seed}"
                if args.kept_only and not (folder / "result.json").exists():
                    continue
                run = run_one(name, arm, seed, args.budget, args.episodes, out)
                arms.setdefault(arm, []).append(run)
                record["runs"].append(run)
                _say(run)
        if arms:
            record["settings"][name] = row = summary(name, arms)
            for arm in arms:
                print(f"{name} {arm}: {row[arm]['win_rate']:.1%} {_ci(row[arm])}")
    record["wall_seconds"] = round(time.perf_counter() - began, 1)
    record["train_seconds"] = round(sum(run["seconds"] for run in record["runs"]), 1)
    path = Path(args.record) if args.record else out / "shaping.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    plot(record, path.with_suffix(".png"))
    print(f"written: {path} and {path.with_suffix('.png')}")
    return record


def _say(run: dict[str, Any]) -> None:
    final = run["final"]
    print(f"{run['setting']} {run['arm']} seed {run['seed']}: {final['wins']}/"
          f"{final['episodes']} won, return {final['mean_return']:.3f}, "
          f"{run['timesteps']:,} steps, {run['steps_per_second']:,.0f} steps/s",
          flush=True)  # fmt: skip


def _ci(arm: dict[str, Any]) -> str:
    lo, hi = arm["win_rate_ci"]
    return f"[{lo:.1%}-{hi:.1%}], return {arm['mean_return']:.3f}"


if __name__ == "__main__":
    main()
