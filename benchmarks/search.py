"""The searching agent beside the network alone and the game's algorithm, on held-out episodes.

    python benchmarks/search.py ENV [--model pretrained|PATH] [--episodes 200]
        [--simulations 32] [--variant gumbel] [--leaf-value network|algorithm]
        [--c-scale 0.1] [--replies N] [--reference AGENT ...] [--sample]
        [--uniform] [--jobs 2] [--record benchmarks/records/search-ENV.json]

Every agent plays the same episodes, seeded from 1,000,000 on (no training or teaching
episode used them), on the board the model was trained on; Sokoban and the Knight draw
their levels from a pool training never drew from (``pool_seed=1``). Per agent it prints
and records the win rate with its 95% interval, the mean return, and the seconds a move
and an episode. ``--uniform`` plays the same search with a uniform prior and no values
too (``search-uniform``): what the network adds. ``--leaf-value algorithm`` puts the
game's own judgement of a position where the network's value was (Lines98: the
look-ahead's), in the search and in ``search-uniform`` alike. ``--jobs 2`` plays half of
each agent's episodes in each of two processes (one torch thread each); the figures are
the same, only sooner.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import subprocess
import time
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

HELDOUT = 1_000_000
POOL_IDS = ("GridGames/Sokoban", "GridGames/Knight")


def play(job: tuple[Any, ...]) -> dict[str, Any]:
    """One process's share: ``agent`` ("search", "search-uniform", "network", "sampled" or
    an algorithm's name) on the episodes ``seeds``."""
    import torch

    import grid_envs  # noqa: F401
    from agents import evaluate, make_agent
    from agents.evaluation import load_policy, load_search

    env_id, model, agent, seeds, kwargs, search = job
    torch.set_num_threads(1)
    if agent == "search":
        player, _ = load_search(model, env_id, **search)
    elif agent == "search-uniform":
        from agents.search import SearchAgent, UniformEvaluator

        player = SearchAgent(UniformEvaluator(), **search)
    elif agent in ("network", "sampled"):
        player, _ = load_policy(model, env_id, sample=agent == "sampled")
    else:
        player = agent
    rows = []
    for seed in seeds:  # one episode a call: the same seeds whatever the split
        import gymnasium as gym

        env = gym.make(env_id, **kwargs)
        if isinstance(player, str):
            player_now: Any = make_agent(player, env, seed=seed)
        else:
            player_now = player
        start = time.perf_counter()
        result = evaluate(env, player_now, episodes=1, seed=seed)
        seconds = time.perf_counter() - start
        rows.append({"seed": seed, "win": result.wins, "return": result.mean_return,
                     "length": result.mean_length, "seconds": seconds})  # fmt: skip
        env.close()
    return {"rows": rows}


def _parser() -> argparse.ArgumentParser:
    from agents.search import LEAF_VALUES

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("env")
    parser.add_argument("--model", default="pretrained")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--simulations", type=int, default=None, help="default: the game's")
    parser.add_argument("--variant", default=None, help="default: the game's")
    parser.add_argument(
        "--leaf-value",
        default=None,
        choices=LEAF_VALUES,
        help="the value where a simulation stops (default: the network's)",
    )
    parser.add_argument(
        "--c-scale",
        type=float,
        default=None,
        help="Gumbel's weight of the values against the prior (default 0.1)",
    )
    parser.add_argument(
        "--replies",
        type=int,
        default=None,
        help="the ordered search's replies (Lines98; default: the game's)",
    )
    parser.add_argument("--reference", nargs="*", default=[], help="algorithms to play too")
    parser.add_argument("--network", action="store_true", help="the network alone too")
    parser.add_argument("--sample", action="store_true", help="the network alone, sampled, too")
    parser.add_argument("--no-search", action="store_true")
    parser.add_argument("--uniform", action="store_true", help="the search, uniform prior, too")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--record", default=None, help="a JSON file to write")
    return parser


def _players(args: argparse.Namespace) -> list[str]:
    """The agents the command line asks for, in the order they play."""
    flags = [(args.network, "network"), (args.sample, "sampled"),
             (not args.no_search, "search"), (args.uniform, "search-uniform")]  # fmt: skip
    return [*args.reference, *(name for wanted, name in flags if wanted)]


def _summary(rows: list[dict[str, Any]], wall: float) -> dict[str, Any]:
    """One agent's figures over its episodes' ``rows``."""
    from agents.evaluation import wilson_interval

    wins = sum(r["win"] for r in rows)
    returns = np.array([r["return"] for r in rows])
    moves = sum(r["length"] for r in rows)
    seconds = sum(r["seconds"] for r in rows)
    half = 1.96 * returns.std() / np.sqrt(len(rows))
    return {
        "win_rate": wins / len(rows), "win_rate_ci": list(wilson_interval(wins, len(rows))),
        "mean_return": float(returns.mean()),
        "return_ci": [float(returns.mean() - half), float(returns.mean() + half)],
        "mean_length": moves / len(rows), "seconds_per_episode": seconds / len(rows),
        "seconds_per_move": seconds / max(1, moves), "wall_seconds": wall,
        "episodes": [[r["seed"], r["win"], round(r["return"], 3), r["length"]] for r in rows],
    }  # fmt: skip


def main() -> None:
    from agents.evaluation import model_board
    from agents.search import search_defaults
    from agents.train.runs import settings_of

    args = _parser().parse_args()
    env_id = args.env if "/" in args.env else f"GridGames/{args.env}"
    model = args.model
    if model == "pretrained":
        from agents.pretrained import model_path

        model = str(model_path(env_id))
    kwargs = dict(model_board(settings_of(model), env_id))
    if env_id.startswith(POOL_IDS):
        kwargs.setdefault("pool_seed", 1)
    for item in args.set:
        key, _, value = item.partition("=")
        kwargs[key] = json.loads(value)
    given = {"simulations": args.simulations, "variant": args.variant,
             "leaf_value": args.leaf_value, "c_scale": args.c_scale,
             "replies": args.replies}  # fmt: skip
    search = {**search_defaults(env_id), **{k: v for k, v in given.items() if v is not None}}
    seeds = list(range(HELDOUT, HELDOUT + args.episodes))
    record: dict[str, Any] = {
        "env": env_id, "model": args.model, "env_kwargs": kwargs, "episodes": args.episodes,
        "first_seed": HELDOUT, "search": search, "jobs": args.jobs,
        "machine": f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
        "date": date.today().isoformat(), "commit": _commit(), "agents": {},
    }  # fmt: skip
    for agent in _players(args):
        shares = [seeds[j :: args.jobs] for j in range(args.jobs)]
        jobs = [(env_id, model, agent, share, kwargs, search) for share in shares if share]
        start = time.perf_counter()
        if len(jobs) > 1:
            with multiprocessing.get_context("spawn").Pool(len(jobs)) as pool:
                parts = pool.map(play, jobs)
        else:
            parts = [play(jobs[0])]
        rows = sorted((r for part in parts for r in part["rows"]), key=lambda r: r["seed"])
        summary = record["agents"][agent] = _summary(rows, time.perf_counter() - start)
        (lo, hi), (rlo, rhi) = summary["win_rate_ci"], summary["return_ci"]
        print(
            f"{env_id} {agent}: win rate {summary['win_rate']:.1%} [{lo:.1%}-{hi:.1%}], "
            f"return {summary['mean_return']:.2f} [{rlo:.2f}-{rhi:.2f}], "
            f"{summary['mean_length']:.1f} moves, "
            f"{summary['seconds_per_episode']:.2f} s an episode, "
            f"{1000 * summary['seconds_per_move']:.1f} ms a move",
            flush=True,
        )
    if args.record:
        Path(args.record).write_text(json.dumps(record, indent=1) + "\n")


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=False)  # fmt: skip
        return out.stdout.strip()
    except OSError:
        return ""


if __name__ == "__main__":
    main()
