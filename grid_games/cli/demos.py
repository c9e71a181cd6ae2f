"""``grid-games demos``: an agent's episodes as a Minari dataset."""

from __future__ import annotations

import argparse

from grid_games.cli.base import (
    agent_names_help,
    command,
    count,
    env_argument,
    env_id,
    parse_settings,
    seed_argument,
    set_argument,
)


def _demos_arguments(p: argparse.ArgumentParser) -> None:
    env_argument(p)
    p.add_argument("--agent", default="random",
                   help=f"a registered agent ({agent_names_help()}) or a model.zip")  # fmt: skip
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
