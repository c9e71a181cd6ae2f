"""``grid-games train``: a training run with stable-baselines3 (or Ray RLlib)."""

from __future__ import annotations

import argparse
from dataclasses import Field, fields
from typing import Any

from grid_games.cli.base import (
    above_zero,
    capped,
    command,
    count,
    env_argument,
    env_id,
    number,
    parse_settings,
    progress_argument,
    refuse,
    renamed_flag,
    set_argument,
)

#: flags of 0.4 that are now named for the field they set (refused with the new name)
RENAMED_FLAGS = {"--teacher-steps": "--teacher-states", "--warm-steps": "--warm-states",
                 "--time-limit": "--max-seconds"}  # fmt: skip
#: the groups of TrainConfig's flags in the help, in order
GROUPS = ("the run", "the envs", "the network", "PPO", "evaluations", "teaching")


def config_flags() -> list[Field[Any]]:
    """The fields of :class:`~agents.train.config.TrainConfig` that ``train`` takes as flags,
    each as ``--the-field-name`` (the flag is the field)."""
    from agents.train.config import TrainConfig

    return [f for f in fields(TrainConfig) if "help" in f.metadata]


def flag_name(f: Field[Any]) -> str:
    return "--" + f.name.replace("_", "-")


def _field_type(f: Field[Any]) -> Any:
    """The argparse type of a field: a whole number or a number in the field's range, or
    text."""
    kind = str(f.type)
    least, most = f.metadata["least"], f.metadata["at_most"]
    if kind.startswith("int"):
        return count(1 if least is None else int(least))
    if kind.startswith("float"):
        return above_zero("number") if least is None else number(least, most)
    return None


def _add_config_flag(p: Any, f: Field[Any]) -> None:
    meta = f.metadata
    choices = meta["choices"]() if callable(meta["choices"]) else meta["choices"]
    shown = meta["shown"] if meta["shown"] is not None else _shown(f.default)
    extra = f": {meta['extra']()}" if meta["extra"] else ""
    help = f"{meta['help']} (default: {shown}){extra}"
    p.add_argument(flag_name(f), dest=f.name, type=_field_type(f), choices=choices,
                   default=None, metavar=meta["metavar"], help=help)  # fmt: skip


def _shown(default: Any) -> str:
    return f"{default:,}" if isinstance(default, int) and not isinstance(default, bool) else (
        str(default))  # fmt: skip


def _train_arguments(p: argparse.ArgumentParser) -> None:
    env_argument(p)
    p.add_argument("--out", default=None, help="run folder; rerunning it resumes")
    progress_argument(p)
    set_argument(p)
    groups = {name: p.add_argument_group(name) for name in GROUPS}
    for f in config_flags():
        _add_config_flag(groups[f.metadata["group"]], f)
    for old, new in RENAMED_FLAGS.items():
        renamed_flag(p, old, new)
    _rllib_arguments(p.add_argument_group("Ray RLlib"))


def _rllib_arguments(p: Any) -> None:
    p.add_argument(
        "--backend", choices=("sb3", "rllib"), default="sb3",
        help="rllib: PPO with masks on Ray RLlib (needs the distributed extra)",
    )  # fmt: skip
    p.add_argument("--num-env-runners", type=count(0), default=2, help="rllib: sampling processes")
    p.add_argument("--address", default=None, help="rllib: join this Ray cluster")


def given_flags(args: argparse.Namespace, group: str | None = None) -> dict[str, Any]:
    """The TrainConfig flags given (not None), by field name; of ``group`` where named."""
    return {f.name: getattr(args, f.name) for f in config_flags()
            if getattr(args, f.name) is not None
            and (group is None or f.metadata["group"] == group)}  # fmt: skip


def train_config(env: str, args: argparse.Namespace) -> Any:
    """The :class:`agents.train.config.TrainConfig` that ``grid-games train`` runs for
    ``args``: the game's defaults, the flags given, the ``--set`` settings over the game's
    board."""
    from agents.train.config import default_config

    config = default_config(env, **given_flags(args))
    config.env_kwargs = {**config.env_kwargs, **parse_settings(args.set, env)}
    return config


@command("train", _train_arguments, help="train MaskablePPO, PPO or DQN with stable-baselines3")
def cmd_train(args: argparse.Namespace) -> int:
    env = env_id(args.env)
    if args.backend == "rllib":
        return _train_rllib(env, args)
    from agents.train.sb3 import train

    teaching = {flag_name(f): args.__dict__[f.name] for f in config_flags()
                if f.metadata["group"] == "teaching" and f.name != "teacher"}  # fmt: skip
    if args.teacher is None:
        refuse({k: v for k, v in teaching.items() if k != "--warm-states"},
               "options of a --teacher run; name the teacher")  # fmt: skip
    if args.warm_teacher is None:
        refuse({"--warm-states": args.warm_states},
               "an option of --warm-teacher; name the warm teacher")  # fmt: skip
    if args.teacher_workers:
        args.teacher_workers = capped(args.teacher_workers, "--teacher-workers")
    config = train_config(env, args)
    out = args.out or f"runs/{env.split('/')[1]}-{config.algo}-s{config.seed}"
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
            print(f"stopped at --max-seconds ({config.max_seconds:g} s, teaching included)")
    print(f"model: {result.model_path}  settings: {result.settings_path}")
    for steps, mean, wins in result.curve:
        print(f"  eval at {steps:>7}: return {mean:7.2f}  win rate {wins:.0%}")
    return 0


def _train_rllib(env: str, args: argparse.Namespace) -> int:
    from agents.train.config import training_defaults
    from agents.train.rllib import RLlibConfig, train_rllib

    if args.algo not in (None, "maskable-ppo"):
        raise ValueError("the rllib backend trains PPO with masks; leave --algo out")
    if args.policy not in (None, "cnn"):
        raise ValueError("the rllib backend trains its CNN policy; leave --policy out")
    takes = {"timesteps", "seed", "shaping", "shaping_scale", "algo", "policy"}
    refuse({flag_name(f): args.__dict__[f.name] for f in config_flags() if f.name not in takes},
           "the sb3 backend's options; leave them out")  # fmt: skip
    defaults = training_defaults(env)
    runners = args.num_env_runners
    if runners:  # the learner runs in this process: one core for it
        runners = capped(runners, "--num-env-runners", spare=1)
    config = RLlibConfig(
        env_id=env,
        timesteps=args.timesteps or 50_000,
        num_env_runners=runners,
        seed=args.seed or 0,
        env_kwargs={**defaults.get("env_kwargs", {}), **parse_settings(args.set, env)},
        shaping=args.shaping or defaults.get("shaping"),
        shaping_scale=1.0 if args.shaping_scale is None else args.shaping_scale,
    )
    out = args.out or f"runs/{env.split('/')[1]}-rllib-s{args.seed or 0}"
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
