"""``grid-games train``: a training run with stable-baselines3 (or Ray RLlib)."""

from __future__ import annotations

import argparse
from typing import Any

from grid_games.cli.base import (
    above_zero,
    capped,
    command,
    count,
    env_argument,
    env_id,
    parse_settings,
    progress_argument,
    refuse,
    seed_argument,
    set_argument,
    threads_argument,
)


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
