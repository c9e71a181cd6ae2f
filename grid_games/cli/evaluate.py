"""``grid-games eval``: an agent played over held-out episodes, recorded where asked."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from grid_games.cli.base import (
    above_zero,
    agent_names_help,
    command,
    count,
    env_argument,
    env_id,
    json_argument,
    model_file,
    parse_settings,
    progress_argument,
    refuse,
    seed_argument,
    set_argument,
    threads_argument,
)


def _eval_arguments(p: argparse.ArgumentParser) -> None:
    from agents.search import LEAF_VALUES, VARIANTS

    env_argument(p)
    p.add_argument(
        "--agent", default="random",
        help=f"a registered agent ({agent_names_help()}), a model.zip, an RLlib run folder, "
        "pretrained (the shipped network), or search (a search guided by --model)",
    )  # fmt: skip
    p.add_argument("--episodes", type=count(1), default=100, help="episodes to play")
    seed_argument(p, "episode k is seeded seed + k")
    json_argument(p, "print one JSON object")
    progress_argument(p)
    set_argument(p)
    p.add_argument(
        "--sample", action="store_true",
        help="a trained model draws each action from its policy (seeded by --seed) instead "
        "of playing the most likely one",
    )  # fmt: skip
    threads_argument(p, "torch threads of a trained model or a search (default: 1; one "
                     "position at a time gains nothing from more)")  # fmt: skip
    p.add_argument("--model", default=None, metavar="PATH",
                   help="--agent search: the PPO or MaskablePPO model.zip that guides it, "
                   "or pretrained")  # fmt: skip
    p.add_argument("--simulations", type=count(0), default=None,
                   help="--agent search: network evaluations a move (exact: the "
                   "solver's nodes; ordered: the candidates; default: the game's own; 0: "
                   "the network's most likely action)")  # fmt: skip
    p.add_argument("--variant", choices=VARIANTS, default=None,
                   help="--agent search: gumbel (Gumbel root with sequential halving), puct, "
                   "and for deterministic games levin (best-first for a winning line), lds "
                   "(limited discrepancy) or exact (the game's exact solver, the network "
                   "ordering its choices: Pikachu); ordered (the game's own search, the "
                   "network proposing its candidates: Lines98); default: the game's "
                   "own")  # fmt: skip
    p.add_argument("--leaf-value", choices=LEAF_VALUES, default=None,
                   help="--agent search: where a simulation stops, the network's value "
                   "(default) or the game's algorithm's judgement (Lines98: the "
                   "look-ahead's)")  # fmt: skip
    p.add_argument("--replies", type=count(0), default=None,
                   help="--agent search, ordered: the replies the game's search weighs "
                   "after each candidate (Lines98: 8 by default; 0: each candidate's board "
                   "alone, the judge's first step)")  # fmt: skip
    p.add_argument("--record", default=None, metavar="PATH",
                   help="write the first episodes played to PATH: .gif, .mp4 or .html (a "
                   "replay with what the agent weighed); needs the video extra")  # fmt: skip
    p.add_argument("--record-episodes", type=count(1), default=None, metavar="N",
                   help="--record: the episodes it holds (default 1)")  # fmt: skip
    p.add_argument("--record-fps", type=above_zero("number of moves a second"), default=None,
                   metavar="MOVES",
                   help="--record: moves a second of a GIF or MP4 (default 4)")  # fmt: skip
    p.add_argument("--force", action="store_true",
                   help="--record: replace the file if it exists")  # fmt: skip


@command("eval", _eval_arguments, help="evaluate an agent: win rate, return, length, speed")
def cmd_eval(args: argparse.Namespace) -> int:
    from agents import evaluate
    from agents.evaluation import check_model_fits

    name = env_id(args.env)
    kwargs = parse_settings(args.set, name)
    recorder = _recorder(args)
    agent, board = _eval_agent(args, name)
    kwargs = {**board, **kwargs}
    if not isinstance(agent, str):  # a network: a model, an RLlib policy or a search
        check_model_fits(agent, name, kwargs)
        from agents.nets.common import set_threads

        set_threads(args.threads, default=1)
    elif args.threads is not None:
        raise ValueError(f"--threads: the agent {agent!r} runs no network")
    result = evaluate(
        name,
        agent,
        episodes=args.episodes,
        seed=args.seed,
        env_kwargs=kwargs,
        progress=not args.no_progress,
        record=recorder,
    )
    if recorder is not None:
        from agents.watch import write_recording

        assert recorder.recording is not None
        path = write_recording(recorder.recording, args.record, force=args.force)
        kept = len(recorder.recording.episodes)
        print(f"recorded {kept} episode{'s' * (kept != 1)}: {path}", file=sys.stderr)
    if kwargs:  # the board played, where it is not the registered one
        result.env = f"{name} ({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
    if args.json:
        print(json.dumps({**result.to_dict(), "env_kwargs": kwargs}))
    else:
        lo, hi = result.win_rate_ci
        print(
            f"{result.env}  agent={result.agent}  episodes={result.episodes}  "
            f"win rate {result.win_rate:.3f} [95% CI {lo:.3f}-{hi:.3f}]  "
            f"return {result.mean_return:.2f} +- {result.std_return:.2f}  "
            f"length {result.mean_length:.1f}  {result.steps_per_second:,.0f} steps/s"
        )
    return 0


def _recorder(args: argparse.Namespace) -> Any:
    """The recorder ``--record`` asks for (None without it), its file checked before any
    episode is played: a known suffix, a folder that exists, not a file already there
    (unless ``--force``), the libraries of its format installed."""
    if args.record is None:
        refuse({"--record-episodes": args.record_episodes, "--record-fps": args.record_fps,
                "--force": args.force}, "options of --record; name the file")  # fmt: skip
        return None
    from agents.watch import Recorder, check_target

    check_target(args.record, args.force)
    if args.record_episodes is not None and args.record_episodes > args.episodes:
        raise ValueError(
            f"--record-episodes {args.record_episodes}: only {args.episodes} episodes are "
            f"played (--episodes)"
        )
    return Recorder(args.record_episodes or 1, args.record_fps or 4.0)


def _eval_agent(args: argparse.Namespace, name: str) -> tuple[Any, dict[str, Any]]:
    """The agent ``eval`` plays (a registered name, or a loaded model or search) and the
    board settings a model was trained on ({} for a name)."""
    from agents.evaluation import load_policy, load_search

    agent: Any = args.agent
    if agent != "search":
        refuse({"--model": args.model, "--simulations": args.simulations,
                "--variant": args.variant, "--leaf-value": args.leaf_value,
                "--replies": args.replies},
               f"options of --agent search, not of --agent {agent}")  # fmt: skip
    agent = model_file(agent, name)
    if agent == "search":
        if args.model is None:
            raise ValueError(
                "--agent search needs --model: a PPO or MaskablePPO model.zip, or pretrained"
            )
        if args.sample:
            raise ValueError("--sample is for a trained model played alone, not a search")
        return load_search(model_file(args.model, name), name, simulations=args.simulations,
                           variant=args.variant, leaf_value=args.leaf_value,
                           replies=args.replies)  # fmt: skip
    if agent.endswith(".zip") or Path(agent).exists():  # a trained model, not a name
        return load_policy(agent, name, sample=args.sample)
    if args.sample:
        raise ValueError(f"--sample is for a trained model, not the agent {agent!r}")
    return agent, {}
