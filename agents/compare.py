"""``grid-games compare``: random, the algorithms and a taught-then-tuned policy, every game.

For every game (one configuration each, :func:`agents.train.config.compare_rows`) it trains
the learned policy as ``grid-games train ENV --teacher NAME`` does (the algorithm's moves
cloned into the network, DAgger rounds, MaskablePPO fine-tuning), then plays every row
alike on the same held-out seeds, which no training or teaching episode used: the random
agent, the game's algorithms, the learned policy (the model its evaluations during
training, on validation seeds, the cloned policy's before the first PPO step included,
rated best, which its label names) and the search its row names. Where a game's row says
``"sample": True`` (Sokoban) the learned policy plays by drawing its actions from its
distribution, and the label says "sampled": a policy that always takes its most likely
action repeats itself wherever it meets a position twice. ``budget`` scales the labelled
states and the PPO steps of every game; ``scratch=True`` also trains MaskablePPO from
scratch for as much wall time as the taught run took, teaching included, so that the
table and the learning curves show what the teacher bought.

It writes ``table.md`` (with, per game, whether the learned policy beats random with the
95% intervals apart), ``results.json``, ``results.png`` (bars grouped by game, coloured by
kind of agent) and ``learning_curves.png`` (taught and scratch runs on one axis a game).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from agents.evaluation import EvalResult, evaluate
from agents.registry import list_agents
from agents.train.config import HELDOUT_SEED, TrainConfig, compare_rows, default_config
from agents.train.models import PolicyAgent
from agents.train.runs import read_json, run_lock
from agents.train.sb3 import train
from grid_envs.core import checks


def compare_envs() -> tuple[str, ...]:
    """The ids ``grid-games compare`` runs by default: one a game, in the games' order."""
    return tuple(compare_rows())


MIN_TEACHER_STATES = 20  # the fewest labelled states a budget scales a row down to (a
# budget that small is a quick look, as the CI notebook's)
# a compare row's keys for the evaluations ("episodes": at most that many for the game's rows)
PLAY_KEYS = ("skip_agents", "sample", "search", "episodes")
SCRATCH_STEPS = 50  # a scratch run's step cap, times the taught run's: the time limit binds
KINDS = {"random": "tab:gray", "algorithm": "tab:blue", "learned": "tab:orange",
         "search": "tab:green"}  # fmt: skip
Curve = list[tuple[int, float, float]]  # (timesteps, mean return, win rate)


@dataclass
class Comparison:
    rows: list[tuple[str, str, EvalResult]]  # (env, agent label, result)
    curves: dict[str, dict[str, Curve]]  # env -> {"taught": curve, "scratch": curve}
    train_seconds: dict[str, float]  # "<env> taught" / "<env> scratch" -> wall seconds
    configs: dict[str, TrainConfig]  # env -> the taught run's configuration
    out: Path
    networks: dict[str, Path] = field(default_factory=dict)  # env -> the taught network
    # "<env> taught" / "<env> scratch" -> the arithmetic it ran in ("2 torch threads, bf16")
    arithmetic: dict[str, str] = field(default_factory=dict)


def kind_of(label: str) -> str:
    """random, algorithm, learned or search, from a row's agent label."""
    if label == "random":
        return "random"
    if label.startswith("search"):
        return "search"
    return "learned" if "maskable-ppo" in label else "algorithm"


def compare_config(
    env_id: str, budget: float = 1.0, timesteps: int | None = None, seed: int = 0,
    threads: int | None = None, precision: str = "auto",
) -> TrainConfig:  # fmt: skip
    """The taught run ``compare`` trains for ``env_id``: its row
    (:func:`~agents.train.config.compare_rows`) over the game's defaults, with the labelled
    states and PPO steps scaled by ``budget`` (or the steps given), on ``threads`` torch
    threads (None: every core) in ``precision``."""
    if budget <= 0:
        raise ValueError(f"budget must be above 0, got {budget}")
    row = {k: v for k, v in compare_rows().get(env_id, {}).items() if k not in PLAY_KEYS}
    planned = row.pop("timesteps", 100_000)
    steps = timesteps or max(1_000, round(planned * budget))
    if "teacher" in row:
        planned_states = row.get("teacher_states", 20_000)
        row["teacher_states"] = max(MIN_TEACHER_STATES, round(planned_states * budget))
    return default_config(
        env_id, **row, timesteps=steps, seed=seed, eval_freq=max(1_000, steps // 8),
        threads=threads, precision=precision,
    )  # fmt: skip


def run_compare(
    envs: tuple[str, ...] | None = None,
    budget: float = 1.0,
    timesteps: int | None = None,
    episodes: int = 100,
    seed: int = 0,
    out: str | Path = "compare",
    train_models: bool = True,
    scratch: bool = False,
    progress: bool = True,
    log: Any = print,
    threads: int | None = None,
    precision: str = "auto",
    force: bool = False,
) -> Comparison:
    """Every game's baselines (``envs``, by default :func:`compare_envs`), a taught-then-tuned
    policy (and a scratch one with ``scratch``) and its search row, evaluated on held-out
    seeds, written to ``out``. The same seed, ``threads`` and ``precision`` give the same
    figures on a machine. A folder of another compare is refused
    (:func:`check_compare_folder`; ``force`` replaces it), and no two compares write into
    one folder at once."""
    envs = compare_envs() if envs is None else envs
    budget = checks.real("budget", budget)
    episodes = checks.integer("episodes", episodes, 1)
    seed = checks.integer("seed", seed, 0)
    if timesteps is not None:
        timesteps = checks.integer("timesteps", timesteps, 1)
    out = Path(out)
    settings = {"envs": list(envs), "budget": budget, "timesteps": timesteps,
                "episodes": episodes, "seed": seed, "train_models": train_models,
                "scratch": scratch, "threads": threads, "precision": precision}  # fmt: skip
    check_compare_folder(out, settings, force)
    with run_lock(out):
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.json").write_text(json.dumps(settings, indent=2))
        return _compare(envs, budget, timesteps, episodes, seed, out, train_models, scratch,
                        progress, log, threads, precision)  # fmt: skip


#: what a compare writes in its folder (and ``--force`` replaces)
OUTPUTS = ("compare.json", "table.md", "results.json", "results.png", "learning_curves.png")


def check_compare_folder(out: Path, settings: dict[str, Any], force: bool) -> None:
    """Refuse a folder ``compare`` would overwrite: one of a compare with other settings,
    one of an earlier version's compare, or one holding other files. The same command
    again goes on from the runs it finished (its training runs resume); ``force`` clears
    what a compare wrote there (its outputs and ``runs/``) and starts afresh."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; compare writes a folder")
    if not out.exists() or not any(out.iterdir()):
        return
    path = out / "compare.json"
    theirs = read_json(path) if path.exists() else None
    if theirs == json.loads(json.dumps(settings)):
        return
    if force:
        import shutil

        for name in OUTPUTS:
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / "runs", ignore_errors=True)
        return
    if theirs is None:
        what = "the results of a compare" if (out / "results.json").exists() else "other files"
        raise ValueError(
            f"--out {out} holds {what}; choose another --out, or --force to replace a "
            f"compare's outputs there"
        )
    differ = {k: (theirs.get(k), v) for k, v in settings.items() if theirs.get(k) != v}
    raise ValueError(
        f"--out {out} holds a compare with other settings {differ} (theirs, yours); choose "
        f"another --out, or --force to replace it"
    )


class Player(NamedTuple):
    """One row of the table before it is played: its label, the agent (a registered name
    or an agent), its episodes and the line the log says as it starts (None: nothing)."""

    label: str
    agent: Any
    episodes: int
    says: str | None = None


def _compare(
    envs: tuple[str, ...], budget: float, timesteps: int | None, episodes: int, seed: int,
    out: Path, train_models: bool, scratch: bool, progress: bool, log: Any,
    threads: int | None, precision: str,
) -> Comparison:  # fmt: skip
    """:func:`run_compare`'s work, in a folder it holds: for every game, the networks its
    rows need are trained first, then every row is played alike on the held-out seeds."""
    result = Comparison([], {}, {}, {}, out)
    for env_id in envs:
        config = compare_config(env_id, budget, timesteps, seed, threads, precision)
        result.configs[env_id] = config
        play = compare_rows().get(env_id, {})
        count = min(episodes, int(play.get("episodes", episodes)))  # long games: fewer
        players = [
            Player(name, name, count, f"{env_id} {config.env_kwargs}: evaluating {name}")
            for name in list_agents(env_id) if name not in play.get("skip_agents", ())
        ]  # fmt: skip
        if train_models:
            players += _learned(result, env_id, config, play, scratch, count, progress, log)
        for label, agent, n, says in players:
            if says is not None:
                log(says)
            evaluation = evaluate(env_id, agent, n, seed + HELDOUT_SEED, config.env_kwargs)
            result.rows.append((env_id, label, evaluation))
    write_outputs(result, episodes)
    return result


def _learned(
    result: Comparison, env_id: str, config: TrainConfig, play: dict[str, Any], scratch: bool,
    episodes: int, progress: bool, log: Any,
) -> list[Player]:  # fmt: skip
    """Train the game's taught run (and its scratch run with ``scratch``, or alone where
    the row names no teacher; a scratch run gets the taught run's wall time) and give back
    their best models, and the search its row names, as players."""
    runs = [("taught", config)] if config.teacher else []
    if scratch or not config.teacher:
        runs.append(("scratch", replace(config, teacher=None)))
    players = []
    sample = bool(play.get("sample", False))
    for how, run in runs:
        taught_seconds = result.train_seconds.get(f"{env_id} taught")
        if how == "scratch" and taught_seconds:  # the taught run's wall time, in steps
            run = replace(run, timesteps=run.timesteps * SCRATCH_STEPS,
                          max_seconds=max(1.0, taught_seconds))  # fmt: skip
        taught = f"{run.teacher}-taught " if run.teacher else ""
        limit = f" or {run.max_seconds:.0f} s" if run.max_seconds else ""
        log(f"{env_id}: training {taught}MaskablePPO for {run.timesteps} steps{limit}")
        trained = train(run, result.out / "runs" / f"{env_id.split('/')[1]}-{how}", progress)
        # every session's, teaching included: a run that went on from an earlier one counts both
        result.train_seconds[f"{env_id} {how}"] = trained.wall_seconds
        result.arithmetic[f"{env_id} {how}"] = trained.arithmetic
        result.curves.setdefault(env_id, {})[how] = trained.curve
        path, at = trained.best()
        best = f", best at {at / 1000:.0f}k" if at is not None else ""
        drawn = ", sampled" if sample else ""
        label = f"{taught}maskable-ppo ({trained.timesteps // 1000}k steps{best}{drawn})"
        players.append(Player(label, PolicyAgent.load(path, sample=sample), episodes))
        if how == "taught":
            result.networks[env_id] = path
    if play.get("search"):
        found = search_player(env_id, play["search"], result.networks.get(env_id),
                              config.env_kwargs, episodes)  # fmt: skip
        players += [] if found is None else [found]
    return players


def search_player(
    env_id: str, settings: dict[str, Any], trained: Path | None, kwargs: dict[str, Any],
    episodes: int,
) -> Player | None:  # fmt: skip
    """The search guided by a network (:mod:`agents.search.tree`) as a row: the network
    ``compare`` trained (``"network": "trained"``) or the shipped one (``"pretrained"``,
    which must have been trained on the board the row plays), with ``"simulations"`` a
    move (the game's own search where none is named; ``"replies"`` where the game's
    ordered search is given its depth), over ``"episodes"`` episodes (``episodes`` where
    fewer: the other rows'). None where the network is missing (no training, or no
    shipped model)."""
    from agents.pretrained import available, card, model_path
    from agents.search.agent import SearchAgent

    network = settings.get("network", "trained")
    if network == "pretrained":
        if env_id not in available():
            return None
        path = model_path(env_id)
        if (card(env_id).get("env_kwargs") or {}) != kwargs:
            raise ValueError(f"the pretrained {env_id} network was trained on another board")
    elif trained is None:
        return None
    else:
        path = trained
    agent = SearchAgent.load(path, simulations=settings.get("simulations"),
                             replies=settings.get("replies"))  # fmt: skip
    config = agent.config
    unit = {"exact": "nodes", "ordered": "candidates"}.get(config.variant, "simulations")
    budget = f"{config.simulations:,} {unit}" + (", no replies" if config.replies == 0 else "")
    label = f"search ({budget}, {network} network)"
    count = min(int(settings["episodes"]), episodes)
    return Player(label, agent, count, f"{env_id}: evaluating the {label}")


def _uses_wins(rows: list[EvalResult]) -> bool:
    """Whether a game's rows are compared by win rate (some agent won) or by return."""
    return any(r.wins for r in rows)


def verdicts(comparison: Comparison) -> list[str]:
    """Per game, whether each learned policy beats random, and each search the agent its
    compare row names (``"search": {"beats": NAME}``, random by default), with the 95%
    intervals apart (win rates where some agent won an episode, else mean returns)."""
    lines = []
    for env_id in dict.fromkeys(e for e, _, _ in comparison.rows):
        mine = [(label, r) for e, label, r in comparison.rows if e == env_id]
        by_wins = _uses_wins([r for _, r in mine])
        rival = compare_rows().get(env_id, {}).get("search", {}).get("beats", "random")
        for label, r in mine:
            kind = kind_of(label)
            if kind not in ("learned", "search"):
                continue
            against = "random" if kind == "learned" else rival
            base = [b for name, b in mine if name == against]
            if not base:
                continue
            low = (r.win_rate_ci if by_wins else r.return_ci)[0]
            apart = low > (base[0].win_rate_ci if by_wins else base[0].return_ci)[1]
            what = "win rate" if by_wins else "mean return"
            mark = f"above {against}, intervals apart" if apart else (
                f"NOT above {against}'s interval")  # fmt: skip
            lines.append(f"- {env_id.split('/')[1]}, {label}: {mark} ({what})")
    return lines


def _setting(config: TrainConfig | None) -> str:
    kwargs = config.env_kwargs if config else {}
    return ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "as registered"


def table(comparison: Comparison) -> str:
    lines = [
        "| env | agent | win rate [95% CI] | mean return [95% CI] | mean length | steps/s |",
        "|---|---|---|---|---|---|",
    ]
    for env_id, label, r in comparison.rows:
        lo, hi = r.win_rate_ci
        rlo, rhi = r.return_ci
        name = env_id.split("/")[1]
        rate = f"{r.win_rate:.0%} [{lo:.0%}-{hi:.0%}]"
        ret = f"{r.mean_return:.2f} [{rlo:.2f}-{rhi:.2f}]"
        lines.append(
            f"| {name} ({_setting(comparison.configs.get(env_id))}) | {label} | {rate} "
            f"| {ret} | {r.mean_length:.1f} | {r.steps_per_second:,.0f} |"
        )
    return "\n".join(lines)


def report(comparison: Comparison) -> str:
    """The table, the learned-against-random verdicts, and the training wall times."""
    text = table(comparison)
    found = verdicts(comparison)
    if found:
        text += "\n\nLearned and searching agents against their baselines (95% intervals):\n"
        text += "\n".join(found)
    if comparison.train_seconds:
        text += "\n\nTraining wall time, teaching included: " + ", ".join(
            f"{e.split('/')[1]} {s:.0f} s"
            + (f" ({comparison.arithmetic[e]})" if e in comparison.arithmetic else "")
            for e, s in comparison.train_seconds.items()
        )
    return text


def write_outputs(comparison: Comparison, episodes: int) -> None:
    out = comparison.out
    (out / "table.md").write_text(report(comparison) + "\n")
    results = [
        {"env": e, "agent": label, "kind": kind_of(label), **r.to_dict()}
        for e, label, r in comparison.rows
    ]
    (out / "results.json").write_text(
        json.dumps(
            {
                "episodes": episodes,
                "results": results,
                "curves": comparison.curves,
                "train_seconds": comparison.train_seconds,
                "arithmetic": comparison.arithmetic,
                "configs": {e: asdict(c) for e, c in comparison.configs.items()},
            },
            indent=2,
            default=str,
        )
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # plots need the notebooks or train extra; the table is enough
        return
    plot_results(comparison, plt)
    if comparison.curves:
        plot_curves(comparison, plt)


def plot_results(comparison: Comparison, plt: Any) -> None:
    """One panel a game, a bar an agent coloured by its kind, with its 95% interval: the
    win rate, or the mean return where no agent won an episode (Lines98-v0 has no win)."""
    envs = list(dict.fromkeys(e for e, _, _ in comparison.rows))
    fig, axes = plt.subplots(1, len(envs), figsize=(3.2 * len(envs), 3.6), squeeze=False)
    for ax, env_id in zip(axes[0], envs, strict=True):
        mine = [(label, r) for e, label, r in comparison.rows if e == env_id]
        by_wins = _uses_wins([r for _, r in mine])
        values = [r.win_rate if by_wins else r.mean_return for _, r in mine]
        bounds = [r.win_rate_ci if by_wins else r.return_ci for _, r in mine]
        # clipped: at a rate of 0 or 1 the bound and the rate can differ by a rounding error
        err = [
            [max(0.0, v - lo) for v, (lo, _) in zip(values, bounds, strict=True)],
            [max(0.0, hi - v) for v, (_, hi) in zip(values, bounds, strict=True)],
        ]
        colours = [KINDS[kind_of(label)] for label, _ in mine]
        ax.bar(range(len(mine)), values, yerr=err, capsize=3, color=colours)
        names = [label.replace(" (", "\n(") for label, _ in mine]
        ax.set_xticks(range(len(mine)), names, fontsize=6, rotation=45, ha="right")
        ax.set_title(env_id.split("/")[1], fontsize=9)
        ax.set_ylabel("win rate (95% CI)" if by_wins else "mean return (95% CI)", fontsize=8)
        if by_wins:
            ax.set_ylim(0, 1.05)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in KINDS.values()]
    fig.legend(handles, list(KINDS), loc="upper right", fontsize=8, ncol=3)
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    fig.savefig(comparison.out / "results.png", dpi=100)
    plt.close(fig)


def plot_curves(comparison: Comparison, plt: Any) -> None:
    """The evaluation during PPO, taught and scratch runs on one axis a game: the win rate,
    or the mean return where no agent won an episode."""
    envs = list(comparison.curves)
    fig, axes = plt.subplots(1, len(envs), figsize=(3.6 * len(envs), 3), squeeze=False)
    for ax, env_id in zip(axes[0], envs, strict=True):
        by_wins = _uses_wins([r for e, _, r in comparison.rows if e == env_id])
        for how, curve in comparison.curves[env_id].items():
            if curve:
                steps, returns, wins = zip(*curve, strict=True)
                ax.plot(steps, wins if by_wins else returns, marker="o", markersize=3, label=how)
        ax.set_title(env_id.split("/")[1], fontsize=9)
        ax.set_xlabel("PPO timesteps")
        ax.set_ylabel("eval win rate" if by_wins else "eval mean return")
        if by_wins:
            ax.set_ylim(-0.05, 1.05)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(comparison.out / "learning_curves.png", dpi=100)
    plt.close(fig)
