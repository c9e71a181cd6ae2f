"""Fill the level pools of registered ids and write them where the package ships them:
``python -m grid_envs.ship_pools GridGames/Sokoban-v0 ...`` (a maintainer's tool; see
:mod:`grid_envs.core.pool`). It sits above the games, whose ids it makes."""

from __future__ import annotations

import argparse
from importlib import resources


def main(argv: list[str] | None = None) -> None:
    """Fill the pools of registered ids and write them where the package ships them."""
    import gymnasium as gym

    import grid_envs  # noqa: F401  (registers the ids)

    parser = argparse.ArgumentParser(
        prog="python -m grid_envs.ship_pools", description=main.__doc__
    )
    parser.add_argument("env_ids", nargs="+", help="registered ids whose default pool to ship")
    parser.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    args = parser.parse_args(argv)
    for env_id in args.env_ids:
        env = gym.make(env_id)
        pool = getattr(env.unwrapped, "pool", None)
        if pool is None or pool.package is None:
            parser.error(f"{env_id} draws from no pool that its game ships")
        fresh = type(pool)(pool.generator, pool.size, pool.seed)  # not the shipped one
        fresh.fill(processes=args.processes)
        path = fresh.shipped_file()
        data = fresh.save()
        with resources.as_file(path) as target:
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(data)
        print(f"{env_id}: {fresh.size:,} levels, {len(data) / 1e6:.2f} MB -> {path}")


if __name__ == "__main__":
    main()
