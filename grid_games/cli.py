"""The ``grid-games`` command line: list, play and evaluate the GridGames envs."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import gymnasium as gym

import grid_envs
from grid_envs.core import checks, files
from grid_envs.core.base_env import GridEnv
from grid_games.terminal import play_terminal

Arguments = Callable[[argparse.ArgumentParser], None]
#: each command's handler, and the function that adds its arguments with its parser's options
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}
ARGUMENTS: dict[str, tuple[Arguments, dict[str, Any]]] = {}


def command(
    name: str, arguments: Arguments, **options: Any
) -> Callable[[Callable[[argparse.Namespace], int]], Any]:
    """Register a command: its handler (the decorated function), the function that adds its
    arguments (written just above it) and ``add_parser``'s options (its help)."""

    def deco(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = fn
        ARGUMENTS[name] = (arguments, options)
        return fn

    return deco


def env_id(name: str) -> str:
    """Accept ``Sokoban-v0`` as well as ``GridGames/Sokoban-v0``; reject unknown ids."""
    full = name if "/" in name else f"GridGames/{name}"
    if full not in gym.registry:
        known = ", ".join(sorted(grid_envs.ENVS))
        raise ValueError(f"unknown env {name!r}; known: {known}")
    return full


def parse_settings(items: Sequence[str], env: str | None = None) -> dict[str, Any]:
    """``--set key=value`` pairs; values are read as JSON when they parse, else as text.
    With ``env``, every key must be an argument that env takes."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set expects key=value, got {item!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    if "render_mode" in out:
        raise ValueError(
            "--set render_mode: the command chooses how the game is drawn (play: --window for "
            "a window; eval: --record for a video or a replay)"
        )
    return checks.env_kwargs(env, out) if env else out


#: the largest whole number an option takes (a seed, a count): numpy's and torch's int64
MOST = 2**63 - 1


def count(least: int, most: int = MOST) -> Callable[[str], int]:
    """An argparse type: a whole number from ``least`` to ``most``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
        if value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most:,}, got {value:,}")
        return value

    parse.__name__ = f"a whole number >= {least}"
    return parse


def above_zero(noun: str) -> Callable[[str], float]:
    """An argparse type: a finite ``noun`` (e.g. "number of seconds") above 0."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {noun}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"must be a finite {noun} above 0, got {text}")
        return value

    parse.__name__ = f"a {noun} above 0"
    return parse


seconds = above_zero("number of seconds")
scale = above_zero("factor")


def capped(asked: int, flag: str, spare: int = 0) -> int:
    """``asked`` processes, at most the cores this process may use (less ``spare``), with a
    one-line note on stderr where that is fewer."""
    from grid_envs.core.machine import capped_workers

    workers, note = capped_workers(asked, flag, spare)
    if note:
        print(f"grid-games: {note}", file=sys.stderr)
    return workers


def refuse(options: dict[str, Any], why: str) -> None:
    """Refuse, in one line that names them, the options given (a value other than None or
    False) that ``why`` says do not apply here."""
    given = [flag for flag, value in options.items() if value is not None and value is not False]
    if given:
        raise ValueError(f"{', '.join(given)}: {why}")


class _KeysHelp(argparse.HelpFormatter):
    """``play --help`` ends with each game's keys (read from the envs only when asked)."""

    def format_help(self) -> str:
        from grid_games.terminal import keys_by_game

        return super().format_help() + "\n" + keys_by_game() + "\n"


# ------------------------------------------------------- options that commands share
def _agent_names() -> str:
    from agents.registry import agent_names

    return ", ".join(agent_names()) + "; each plays the games it is written for"


def env_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("env", help="env id, e.g. Sokoban-v0 or GridGames/Sokoban-v0")


def set_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="an env argument, e.g. --set rows=8 or --set levels=my.xsb "
                   "(repeatable; a value is read as JSON where it parses)")  # fmt: skip


def seed_argument(p: argparse.ArgumentParser, help: str, default: int | None = 0) -> None:
    p.add_argument("--seed", type=count(0), default=default, help=help)


def json_argument(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--json", action="store_true", help=help)


def threads_argument(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--threads", type=count(1), default=None, help=help)


def progress_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


# ----------------------------------------------------------------- the commands
def _list_arguments(p: argparse.ArgumentParser) -> None:
    """It takes none."""


@command("list", _list_arguments, help="list the registered env ids")
def cmd_list(args: argparse.Namespace) -> int:
    width = max(len(i) for i in grid_envs.ENVS)
    for env, (_, steps, _, summary) in grid_envs.ENVS.items():
        limit = f"{steps} steps" if steps else "no limit"
        print(f"{env:<{width}}  {summary} ({limit})")
    return 0


def play_window(env: gym.Env[Any, Any], base: GridEnv, seed: int | None) -> int:
    env.reset(seed=seed)
    names = {"escape": "q", "backspace": "u"}
    while True:
        for key in base.window_keys():
            key = names.get(key, key)
            if key in ("quit", "q"):
                return 0
            if key == "r":
                env.reset(seed=seed)
                continue
            action = base.action_for_key(key)
            if action is not None:
                _, _, terminated, truncated, _ = env.step(action)
                if terminated or truncated:
                    env.reset()
        env.render()


def _play_arguments(p: argparse.ArgumentParser) -> None:
    env_argument(p)
    seed_argument(p, "the seed of the first game (default: a random one)", default=None)
    p.add_argument("--window", action="store_true", help="a pygame window (needs [human])")
    set_argument(p)


@command(
    "play",
    _play_arguments,
    help="play an env yourself, in the terminal or a window",
    formatter_class=_KeysHelp,
)
def cmd_play(args: argparse.Namespace) -> int:
    name = env_id(args.env)
    kwargs = parse_settings(args.set, name)
    if args.window:
        from grid_envs.core.render import no_display

        missing = no_display()
        if missing:
            raise ValueError(f"--window: {missing}; leave --window out to play in the terminal")
    mode = "human" if args.window else "ansi"
    env = gym.make(name, render_mode=mode, **kwargs)
    base = env.unwrapped
    assert isinstance(base, GridEnv)
    try:
        if args.window:
            return play_window(env, base, args.seed)
        return play_terminal(env, base, args.seed, sys.stdin)
    finally:
        env.close()


def _declared(hook: str) -> dict[str, str]:
    """Each game whose spec declares ``hook`` (``writer``, ``solver``): name -> target."""
    return {spec.name: getattr(spec, hook) for spec in grid_envs.game_specs()
            if getattr(spec, hook)}  # fmt: skip


def _generate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", choices=tuple(_declared("writer")),
                   help="the game whose generated levels to write")  # fmt: skip
    p.add_argument("--out", required=True, help="the file to write")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    seed_argument(p, "the generator's seed")
    p.add_argument("--count", type=count(1), default=None,
                   help="levels in the file (default: the game's own, 10 for a Sokoban "
                   "collection; a Knight map holds one)")  # fmt: skip
    p.add_argument("--rows", type=count(1), default=None,
                   help="the board's rows (default: the generator's own)")  # fmt: skip
    p.add_argument("--cols", type=count(1), default=None,
                   help="the board's columns (default: the generator's own)")  # fmt: skip
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a generator setting, e.g. --set num_boxes=3 --set min_pushes=8 "
                   "(sokoban) or --set loops=0.2 --set monster_density=0.2 (knight)")  # fmt: skip


@command("generate", _generate_arguments, help="write generated levels to a file")
def cmd_generate(args: argparse.Namespace) -> int:
    import numpy as np

    from grid_envs.core.spec import load

    files.check_target(args.out, "--out", args.force)
    settings = parse_settings(args.set)
    for name in ("rows", "cols"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    write = load(_declared("writer")[args.game])
    print(write(args.out, np.random.default_rng(args.seed), args.count, settings))
    return 0


def _train_arguments(p: argparse.ArgumentParser) -> None:
    env_argument(p)
    p.add_argument("--algo", choices=("maskable-ppo", "ppo", "dqn"), default="maskable-ppo",
                   help="maskable-ppo (the default) never picks an illegal action")  # fmt: skip
    p.add_argument("--timesteps", type=count(1), default=None, help="default: 50,000")
    p.add_argument("--out", default=None, help="run folder; rerunning it resumes")
    p.add_argument("--shaping", default=None,
                   help="a potential name, e.g. distance; none: no shaping (the default "
                   "but for Knight-v0, whose default is distance)")  # fmt: skip
    p.add_argument("--shaping-scale", type=above_zero("number"), default=None, metavar="COEF",
                   help="the shaping's coefficient: the reward gains COEF * (gamma * "
                   "phi(s') - phi(s)) (default 1)")  # fmt: skip
    p.add_argument("--shaping-at-loss", choices=("zero", "kept"), default=None,
                   help="the potential of a lost end: zero (the default; leaves the best "
                   "policy unchanged) or kept, as at a time limit (no reward for losing "
                   "far from the goal)")  # fmt: skip
    p.add_argument("--potential-input", default=None, metavar="POTENTIAL",
                   help="give the network a potential as one more observation plane, "
                   "rewards untouched (sb3 backend; default: none)")  # fmt: skip
    seed_argument(p, "the run's seed: network, envs and teaching")
    p.add_argument(
        "--time-limit", type=count(1), default=None, metavar="SECONDS",
        help="stop PPO after this much wall time, teaching included, and keep the model "
        "so far as the run's (default: none)",
    )  # fmt: skip
    progress_argument(p)
    set_argument(p)
    _network_arguments(p.add_argument_group("the network"))
    _rollout_arguments(p.add_argument_group("PPO's rollouts and evaluations"))
    _teacher_arguments(p.add_argument_group("teaching by a baseline"))
    _rllib_arguments(p.add_argument_group("Ray RLlib"))


def _network_arguments(p: Any) -> None:
    from agents.nets.registry import policies_help, policy_names  # no torch

    p.add_argument("--policy", choices=policy_names(), default=None,
                   help="the network (default: the game's own): " + policies_help())  # fmt: skip
    p.add_argument("--net-width", type=count(1), default=None, metavar="CHANNELS",
                   help="the network's channels (default: the policy's own)")  # fmt: skip
    p.add_argument("--net-depth", type=count(1), default=None, metavar="LAYERS",
                   help="the board policy's convolutions (default: the game's own)")  # fmt: skip
    threads_argument(p, "torch threads (default: every core this process may use)")
    p.add_argument(
        "--device", default=None, help="auto (CUDA where present, the default), cpu, cuda"
    )
    p.add_argument(
        "--precision", choices=("auto", "bf16", "fp32"), default=None,
        help="the network's arithmetic: auto (bfloat16 where the device computes it in "
        "hardware, the default), bf16, fp32; weights stay float32 either way",
    )  # fmt: skip


def _rollout_arguments(p: Any) -> None:
    p.add_argument(
        "--n-envs", type=count(1), default=None,
        help="envs stepped together (default: 64 in a native batch, 4 in a DummyVecEnv)",
    )  # fmt: skip
    p.add_argument("--n-steps", type=count(1), default=None,
                   help="PPO's rollout per env (default: 32 in a native batch, 256 in a "
                   "DummyVecEnv)")  # fmt: skip
    p.add_argument("--batch-size", type=count(2), default=None,
                   help="PPO's minibatch (default: 512 in a native batch, 256 in a "
                   "DummyVecEnv); on a GPU, thousands keep it busy")  # fmt: skip
    p.add_argument("--n-epochs", type=count(1), default=None,
                   help="PPO's passes over each rollout (default: 4 in a native batch, 10 "
                   "in a DummyVecEnv)")  # fmt: skip
    p.add_argument("--eval-freq", type=count(1), default=None, metavar="STEPS",
                   help="timesteps between evaluations (default: 5,000; PPO's at least one "
                   "rollout)")  # fmt: skip
    p.add_argument(
        "--vec-env", choices=("batched", "dummy"), default=None,
        help="batched: the native batched env, one call a step (the default where the id "
        "has one); dummy: single envs in SB3's DummyVecEnv",
    )  # fmt: skip


def _teacher_arguments(p: Any) -> None:
    p.add_argument(
        "--teacher", default=None, metavar="AGENT",
        help="clone this baseline first (behaviour cloning, then DAgger rounds), then "
        "fine-tune with PPO while a decaying cloning loss keeps what was cloned",
    )  # fmt: skip
    p.add_argument("--teacher-steps", type=count(1), default=None,
                   help="states the teacher labels, over all rounds (default: 20,000)")  # fmt: skip
    p.add_argument("--dagger-rounds", type=count(1), default=None,
                   help="round 0 the teacher plays, then the learner (default: 3)")  # fmt: skip
    p.add_argument("--teacher-epochs", type=count(1), default=None,
                   help="cloning passes over the labels after each round (default: 4)")  # fmt: skip
    p.add_argument("--teacher-lr", type=above_zero("step size"), default=None,
                   help="cloning's step size (default: 0.003; PPO keeps its own)")  # fmt: skip
    p.add_argument("--teacher-workers", type=count(1), default=None,
                   help="processes that label each round, one per core (default: 1)")  # fmt: skip
    p.add_argument(
        "--warm-teacher", default=None, metavar="AGENT",
        help="a faster baseline cloned first from its own play; then every round is a "
        "DAgger round, the learner moving and --teacher labelling (default: none)",
    )  # fmt: skip
    p.add_argument("--warm-steps", type=count(1), default=None,
                   help="states the warm teacher labels (default: 40,000)")  # fmt: skip


def _rllib_arguments(p: Any) -> None:
    p.add_argument(
        "--backend", choices=("sb3", "rllib"), default="sb3",
        help="rllib: PPO with masks on Ray RLlib (needs the distributed extra)",
    )  # fmt: skip
    p.add_argument("--num-env-runners", type=count(0), default=2, help="rllib: sampling processes")
    p.add_argument("--address", default=None, help="rllib: join this Ray cluster")


def train_config(env: str, args: argparse.Namespace) -> Any:
    """The :class:`agents.train.config.TrainConfig` that ``grid-games train`` runs for ``args``: the
    game's defaults, the options given, the ``--set`` settings over the game's board."""
    from agents.train.config import default_config

    config = default_config(
        env, algo=args.algo, timesteps=args.timesteps, seed=args.seed, n_envs=args.n_envs,
        n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
        eval_freq=args.eval_freq, shaping=args.shaping, policy=args.policy,
        shaping_scale=args.shaping_scale, potential_input=args.potential_input,
        shaping_at_loss=args.shaping_at_loss,
        vec_env=args.vec_env, threads=args.threads,
        device=args.device, precision=args.precision, teacher=args.teacher,
        teacher_states=args.teacher_steps, dagger_rounds=args.dagger_rounds,
        teacher_epochs=args.teacher_epochs, teacher_lr=args.teacher_lr,
        teacher_workers=args.teacher_workers, time_limit=args.time_limit,
        net_width=args.net_width, net_depth=args.net_depth, warm_teacher=args.warm_teacher,
        warm_states=args.warm_steps,
    )  # fmt: skip
    config.env_kwargs = {**config.env_kwargs, **parse_settings(args.set, env)}
    return config


@command("train", _train_arguments, help="train MaskablePPO, PPO or DQN with stable-baselines3")
def cmd_train(args: argparse.Namespace) -> int:
    env = env_id(args.env)
    if args.backend == "rllib":
        return _train_rllib(env, args)
    from agents.train.sb3 import train

    if args.teacher is None:
        refuse({"--teacher-steps": args.teacher_steps, "--dagger-rounds": args.dagger_rounds,
                "--teacher-epochs": args.teacher_epochs, "--teacher-lr": args.teacher_lr,
                "--teacher-workers": args.teacher_workers, "--warm-teacher": args.warm_teacher},
               "options of a --teacher run; name the teacher")  # fmt: skip
    if args.warm_teacher is None:
        refuse(
            {"--warm-steps": args.warm_steps}, "an option of --warm-teacher; name the warm teacher"
        )
    if args.teacher_workers:
        args.teacher_workers = capped(args.teacher_workers, "--teacher-workers")
    config = train_config(env, args)
    out = args.out or f"runs/{env.split('/')[1]}-{args.algo}-s{args.seed}"
    result = train(config, out, progress=not args.no_progress)
    resumed = f" (resumed from {result.resumed_from})" if result.resumed_from else ""
    if result.already_done:
        print(
            f"{out} already holds a finished run of {result.timesteps:,} steps "
            f"({result.seconds_before:.0f} s): nothing retrained; ask for more with "
            f"--timesteps to go on from it"
        )
    else:
        taught = result.teacher_seconds
        split = f": teaching {taught:.0f} s, PPO {result.seconds:.0f} s" if config.teacher else ""
        print(f"trained {result.timesteps} steps in {result.seconds + taught:.0f} s{split}"
              f"{resumed}")  # fmt: skip
        if config.algo != "dqn" and result.timesteps > config.timesteps:
            rollout = config.n_envs * config.n_steps
            print(
                f"PPO trains whole rollouts of {config.n_envs} envs x {config.n_steps} steps "
                f"({rollout:,} steps): {config.timesteps:,} requested, {result.timesteps:,} "
                f"trained; a smaller --n-envs trains fewer"
            )
        if result.timesteps < config.timesteps:
            print(f"stopped at the time limit ({args.time_limit} s, teaching included)")
    print(f"model: {result.model_path}  settings: {result.settings_path}")
    for steps, mean, wins in result.curve:
        print(f"  eval at {steps:>7}: return {mean:7.2f}  win rate {wins:.0%}")
    return 0


def _train_rllib(env: str, args: argparse.Namespace) -> int:
    from agents.train.config import DEFAULTS
    from agents.train.rllib import RLlibConfig, train_rllib

    if args.algo != "maskable-ppo":
        raise ValueError("the rllib backend trains PPO with masks; leave --algo out")
    if args.policy not in (None, "cnn"):
        raise ValueError("the rllib backend trains its CNN policy; leave --policy out")
    refuse({"--teacher": args.teacher, "--teacher-workers": args.teacher_workers,
            "--warm-teacher": args.warm_teacher, "--time-limit": args.time_limit,
            "--net-width": args.net_width, "--net-depth": args.net_depth,
            "--n-steps": args.n_steps, "--batch-size": args.batch_size,
            "--n-epochs": args.n_epochs, "--eval-freq": args.eval_freq,
            "--potential-input": args.potential_input,
            "--shaping-at-loss": args.shaping_at_loss},
           "the sb3 backend's options; leave them out")  # fmt: skip
    defaults = DEFAULTS.get(env, {})
    runners = args.num_env_runners
    if runners:  # the learner runs in this process: one core for it
        runners = capped(runners, "--num-env-runners", spare=1)
    config = RLlibConfig(
        env_id=env,
        timesteps=args.timesteps or 50_000,
        num_env_runners=runners,
        seed=args.seed,
        env_kwargs={**defaults.get("env_kwargs", {}), **parse_settings(args.set, env)},
        shaping=args.shaping or defaults.get("shaping"),
        shaping_scale=1.0 if args.shaping_scale is None else args.shaping_scale,
    )
    out = args.out or f"runs/{env.split('/')[1]}-rllib-s{args.seed}"
    result = train_rllib(config, out, address=args.address)
    resumed = " (resumed)" if result.resumed else ""
    if result.already_done:
        print(f"{out} already holds a finished run of {result.timesteps:,} env steps "
              f"({result.seconds:.0f} s): nothing retrained; ask for more with --timesteps "
              f"to go on from it")  # fmt: skip
    else:
        print(f"trained {result.timesteps} env steps in {result.seconds:.0f} s{resumed}")
    print(f"policy: {result.policy_path}  checkpoint: {result.out / 'checkpoint'}")
    return 0


def _compare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--envs", nargs="*", default=None, help="default: one config per game")
    p.add_argument(
        "--budget", type=scale, default=1.0,
        help="scales every game's labelled states and PPO steps (default 1: about 16 min "
        "on 2 cores; 4: four times the training)",
    )  # fmt: skip
    p.add_argument(
        "--timesteps", type=count(1), default=None,
        help="PPO steps per game (default: each game's own, times --budget)",
    )  # fmt: skip
    p.add_argument(
        "--scratch", action="store_true",
        help="also train MaskablePPO from scratch for the taught run's wall time, teaching "
        "included",
    )  # fmt: skip
    p.add_argument("--episodes", type=count(1), default=100, help="evaluation episodes per agent")
    seed_argument(p, "the runs' seed; the held-out episodes are seeded from it")
    p.add_argument("--out", default=None, help="default: compare-DATE-TIME")
    p.add_argument("--no-train", action="store_true", help="baselines only")
    p.add_argument("--force", action="store_true",
                   help="replace the outputs of another compare in --out (the same command "
                   "again goes on from what it finished, without --force)")  # fmt: skip
    threads_argument(p, "torch threads of the training (default: every core this process "
                     "may use); with --precision, what fixes its figures on a machine")  # fmt: skip
    p.add_argument("--precision", choices=("auto", "bf16", "fp32"), default=None,
                   help="the networks' arithmetic (as train's; default auto)")  # fmt: skip
    progress_argument(p)


@command(
    "compare",
    _compare_arguments,
    help="random, the algorithms and a taught-then-tuned policy, every game",
)
def cmd_compare(args: argparse.Namespace) -> int:
    from agents.compare import COMPARE_ENVS, report, run_compare

    envs = tuple(env_id(e) for e in args.envs) if args.envs else COMPARE_ENVS
    out = args.out or time.strftime("compare-%Y%m%d-%H%M%S")
    if args.no_train:
        refuse({"--budget": args.budget != 1.0, "--timesteps": args.timesteps,
                "--scratch": args.scratch, "--threads": args.threads,
                "--precision": args.precision},
               "options of the training --no-train leaves out")  # fmt: skip
    result = run_compare(
        envs, budget=args.budget, timesteps=args.timesteps, episodes=args.episodes,
        seed=args.seed, out=out, train_models=not args.no_train, scratch=args.scratch,
        progress=not args.no_progress, log=lambda msg: print(msg, file=sys.stderr, flush=True),
        threads=args.threads, precision=args.precision or "auto", force=args.force,
    )  # fmt: skip
    print(report(result))
    print(f"\nwritten to {result.out}/: table.md, results.json, results.png, learning_curves.png")
    return 0


def _bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--envs", nargs="*", default=None, help="default: the five classic ids")
    p.add_argument("--batches", nargs="+", type=count(1), default=[1, 64, 1024, 4096],
                   help="batch sizes to time (default: 1 64 1024 4096)")  # fmt: skip
    p.add_argument("--seconds", type=seconds, default=1.0, help="length of one timed window")
    p.add_argument("--repeats", type=count(1), default=3, help="windows per figure (median)")
    json_argument(p, "print the figures as JSON")


@command("bench", _bench_arguments, help="steps/s single and batched, resets/s, next to FrozenLake")
def cmd_bench(args: argparse.Namespace) -> int:
    from grid_envs.bench import bench, bench_envs, table

    envs = tuple(env_id(e) for e in args.envs) if args.envs else bench_envs()
    report = bench(
        envs, tuple(args.batches), args.seconds, args.repeats,
        log=None if args.json else lambda msg: print(msg, file=sys.stderr, flush=True),
    )  # fmt: skip
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


def _demos_arguments(p: argparse.ArgumentParser) -> None:
    env_argument(p)
    p.add_argument("--agent", default="random",
                   help=f"a registered agent ({_agent_names()}) or a model.zip")  # fmt: skip
    p.add_argument("--episodes", type=count(1), default=100, help="episodes to play")
    seed_argument(p, "episode k is seeded seed + k")
    p.add_argument("--out", default="demos", help="the datasets' root folder")
    set_argument(p)


@command("demos", _demos_arguments, help="an agent's episodes written as a Minari dataset")
def cmd_demos(args: argparse.Namespace) -> int:
    from agents.train.demos import record_demos

    env = env_id(args.env)
    dataset = record_demos(
        env, args.agent, args.episodes, args.seed, args.out, parse_settings(args.set, env)
    )
    folder = f"{args.out}/{dataset.spec.dataset_id}"
    print(
        f"{dataset.total_episodes} episodes, {dataset.total_steps} steps of {args.agent} on "
        f"{env}: {folder}\nread it with minari.MinariDataset({folder + '/data'!r}), or "
        f"MINARI_DATASETS_PATH={args.out} and minari.load_dataset({dataset.spec.dataset_id!r})"
    )
    return 0


def _eval_arguments(p: argparse.ArgumentParser) -> None:
    from agents.search import LEAF_VALUES, VARIANTS

    env_argument(p)
    p.add_argument(
        "--agent", default="random",
        help=f"a registered agent ({_agent_names()}), a model.zip, an RLlib run folder, "
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
    if agent == "pretrained":
        from agents.pretrained import model_path

        agent = str(model_path(name))
    if agent == "search":
        if args.model is None:
            raise ValueError(
                "--agent search needs --model: a PPO or MaskablePPO model.zip, or pretrained"
            )
        if args.sample:
            raise ValueError("--sample is for a trained model played alone, not a search")
        model = args.model
        if model == "pretrained":
            from agents.pretrained import model_path

            model = str(model_path(name))
        return load_search(model, name, simulations=args.simulations, variant=args.variant,
                           leaf_value=args.leaf_value, replies=args.replies)  # fmt: skip
    if agent.endswith(".zip") or Path(agent).exists():  # a trained model, not a name
        return load_policy(agent, name, sample=args.sample)
    if args.sample:
        raise ValueError(f"--sample is for a trained model, not the agent {agent!r}")
    return agent, {}


def _iterate_arguments(p: argparse.ArgumentParser) -> None:
    from agents.search import VARIANTS

    env_argument(p)
    p.add_argument("--model", required=True, metavar="PATH",
                   help="the model.zip to start from (a taught run's), or pretrained")  # fmt: skip
    p.add_argument("--simulations", type=count(1), default=32, help="search simulations a move")
    p.add_argument("--variant", choices=VARIANTS, default="gumbel",
                   help="the search that plays (levin, lds, exact: deterministic games; "
                   "see eval --variant)")  # fmt: skip
    p.add_argument("--rounds", type=count(1), default=4, help="play-then-learn rounds")
    p.add_argument("--episodes", type=count(1), default=64, help="searched episodes a round")
    p.add_argument("--epochs", type=count(1), default=2,
                   help="learning passes over the kept positions a round")  # fmt: skip
    p.add_argument("--window", type=count(1), default=2,
                   help="rounds of positions kept for learning")  # fmt: skip
    p.add_argument("--lr", type=above_zero("step size"), default=1e-3, help="learning's step")
    p.add_argument("--eval-episodes", type=count(0), default=50,
                   help="validation episodes of the network alone after each round")  # fmt: skip
    p.add_argument("--workers", type=count(1), default=1,
                   help="processes that play each round, one per core")  # fmt: skip
    threads_argument(p, "torch threads of the learning step (default: every core)")
    p.add_argument("--time-limit", type=count(1), default=None, metavar="SECONDS",
                   help="stop after the round in play once this much time has passed")  # fmt: skip
    seed_argument(p, "the rounds' episodes follow it")
    p.add_argument("--out", default=None, help="run folder; rerunning it goes on from it")


@command(
    "iterate",
    _iterate_arguments,
    help="expert iteration: a search guided by the network plays, the network learns "
    "from its choices and outcomes, round after round",
)
def cmd_iterate(args: argparse.Namespace) -> int:
    from agents.search.expert import IterationConfig, iterate

    name = env_id(args.env)
    start = args.model
    if start == "pretrained":
        from agents.pretrained import model_path

        start = str(model_path(name))
    if not Path(start).is_file():
        raise ValueError(f"--model {start!r}: no such model file")
    config = IterationConfig(
        env_id=name, start=start, simulations=args.simulations, variant=args.variant,
        rounds=args.rounds, episodes=args.episodes, epochs=args.epochs, window=args.window,
        lr=args.lr, eval_episodes=args.eval_episodes, seed=args.seed,
        workers=capped(args.workers, "--workers"),
        threads=args.threads, time_limit=args.time_limit,
    )  # fmt: skip
    out = args.out or f"runs/{name.split('/')[1]}-iterate-s{args.seed}"

    def log(line: dict[str, Any]) -> None:
        alone = "-"
        if line.get("policy_win_rate") is not None:
            alone = f"{line['policy_win_rate']:.0%} (return {line['policy_return']:.2f})"
        print(
            f"round {line['round']}: {line['positions']} positions, search won "
            f"{line['search_win_rate']:.0%} (return {line['search_return']:.2f}), network "
            f"alone {alone}, {line['seconds']:.0f} s",
            file=sys.stderr, flush=True,
        )  # fmt: skip

    result = iterate(config, out, log=log)
    if result.already_done:
        print(f"{out} already holds {len(result.rounds)} finished rounds: nothing redone; ask "
              f"for more with --rounds to go on from them")  # fmt: skip
    else:
        print(f"{len(result.rounds)} rounds in {result.seconds:.0f} s")
    print(f"model: {result.model_path}  rounds: {Path(out) / 'rounds.json'}")
    return 0


def _solve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("levels", help="a level file: an XSB file (one level or a collection) for "
                   "sokoban, a map file or samples for knight")  # fmt: skip
    p.add_argument("--game", choices=tuple(_declared("solver")), default="sokoban",
                   help="the game whose levels the file holds (default: sokoban)")  # fmt: skip
    p.add_argument("--level", type=count(1), default=None, help="1-based level number")
    p.add_argument("--time-limit", type=seconds, default=10.0, help="seconds per level")
    p.add_argument("--mode", choices=("fast", "optimal"), default="fast",
                   help="sokoban: fast, any solution; optimal, the fewest pushes")  # fmt: skip
    json_argument(p, "one JSON object per level")


@command("solve", _solve_arguments, help="solve level files with the game's own algorithm")
def cmd_solve(args: argparse.Namespace) -> int:
    from grid_envs.core.spec import load

    solve = load(_declared("solver")[args.game])
    rows = solve(args.levels, args.level, args.time_limit, args.mode)
    if args.json:
        for row in rows:
            print(json.dumps(row), flush=True)
        return 0
    if args.level is not None:
        (row,) = list(rows)
        _print_solved(row)
        return 0
    return _print_table(list(_rows_as_they_come(rows)), args)


def _figures(row: dict[str, Any]) -> dict[str, Any]:
    """A row's game-specific numbers (pushes, moves, nodes; cost, moves)."""
    shared = {"level", "title", "solved", "status", "solution", "seconds", "mode", "reason"}
    return {k: v for k, v in row.items() if k not in shared and isinstance(v, int)}


def _print_solved(row: dict[str, Any]) -> None:
    print(f"level {row['level']} {row['title']!r}: {row['status']}")
    figures = "  ".join(f"{k} {v}" for k, v in _figures(row).items())
    print(f"{figures}  {row['seconds']:.3f} s")
    print(row["solution"] if row["solved"] else row.get("reason", ""))


def _rows_as_they_come(rows: Any) -> Any:
    """Print each level's line as it is solved, then hand the row on."""
    header = None
    for row in rows:
        if header is None:
            header = ["level", "status", *_figures(row), "seconds"]
            print("{:>5}  {:<10}".format(*header[:2]) + "".join(f" {h:>9}" for h in header[2:])
                  + "  title")  # fmt: skip
        numbers = "".join(f" {v:>9}" for v in _figures(row).values())
        print(f"{row['level']:>5}  {row['status']:<10}{numbers} {row['seconds']:>9.3f}  "
              f"{str(row['title'])[:30]}", flush=True)  # fmt: skip
        yield row


def _print_table(rows: list[dict[str, Any]], args: argparse.Namespace) -> int:
    solved = [row for row in rows if row["solved"]]
    times = sorted(row["seconds"] for row in solved)
    print(f"solved {len(solved)}/{len(rows)} ({args.mode}, {args.time_limit:g} s a level)")
    if times:
        print(f"median {times[len(times) // 2]:.3f} s, slowest {times[-1]:.3f} s")
    failed = [str(row["level"]) for row in rows if not row["solved"]]
    print("not solved:", ", ".join(failed) or "none")
    return 0


class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (and the usual exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="grid-games", description="Classic grid games as Gymnasium environments.")
    parser.add_argument(
        "--version", action="version", version=f"grid-games {grid_envs.__version__}"
    )
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error instead of its one line")  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (arguments, options) in ARGUMENTS.items():
        arguments(sub.add_parser(name, **options))
    return parser


#: what Ctrl-C leaves behind in each command that writes, when it says nothing itself
KEPT_AT_CTRL_C = {
    "eval": "nothing was written", "compare": "the runs finished so far are in its folder "
    "(rerunning the command goes on from them)", "demos": "no dataset was written",
    "generate": "no file was written", "solve": "the levels before it were printed",
    "bench": "nothing was written", "play": "the game was left", "list": "nothing was written",
}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Every failure is one line on stderr naming the command: an
    expected one (bad arguments, files, folders, models, settings) exits 2, anything else
    1 (a bug: ``--debug`` shows its traceback); Ctrl-C says what was kept and exits 130."""
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt as exc:  # training saves what it has and says where
        said = str(exc) or f"interrupted; {KEPT_AT_CTRL_C.get(args.command, 'nothing saved')}"
        print(f"grid-games {args.command}: {said}", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        if isinstance(exc, (ValueError, OSError, ImportError, checks.NoLevelFound)):
            print(f"grid-games: {exc}", file=sys.stderr)
            return 2
        what = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:400]
        print(f"grid-games {args.command}: {what} (an error of grid-games itself; rerun with "
              f"--debug for where, and report it)", file=sys.stderr)  # fmt: skip
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
