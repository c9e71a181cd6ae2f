"""Soak: a long run of masked random play on every game, single and batched, counting
exceptions and watching memory.

    python benchmarks/soak.py [--steps 1000000] [--envs GridGames/Sokoban-v0 ...]
                              [--batch 64] [--json FILE]

Per env and per path (``single``: one env from ``gymnasium.make``; ``batched``: the native
batch of ``--batch`` envs, ``--steps`` env-steps in all), an agent picks uniformly among the
legal actions (one in 50 is an action the mask forbids, which must be a harmless no-op),
resets when an episode ends, and every 64 episodes, mid-episode, in turn snapshots and
restores the single env, replaces it by a deep copy, or by a pickle round trip; the batch
is replaced by a copy or a pickled copy 20 times over the run. Every registered id is
soaked by default. Reported: steps, episodes, exceptions (any exception counts, and the first is
printed), and the process's resident memory after 10% of the steps and at the end, sampled
from ``/proc/self/statm`` (flat memory: the end within a few MB of the 10% mark).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import pickle
import time
import traceback
from typing import Any

import gymnasium as gym
import numpy as np

import grid_envs


def soak_envs() -> list[str]:
    """Every registered id (the games' specs), the default of ``--envs``."""
    return sorted(grid_envs.ENVS)


PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def soak_single(env_id: str, steps: int, seed: int) -> dict[str, Any]:
    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    base: Any = env.unwrapped  # a GridEnv
    episodes = errors = copies = 0
    first_error = ""
    mark = steps // 10
    rss_early = 0.0
    start = time.perf_counter()
    for t in range(steps):
        try:
            mask = base.action_masks()
            if rng.random() < 0.02 and not mask.all():
                action = int(rng.choice(np.flatnonzero(~mask)))
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
            _, reward, terminated, truncated, _ = env.step(action)
            if not np.isfinite(float(reward)):
                raise ValueError(f"reward {reward}")
            if terminated or truncated:
                episodes += 1
                env.reset()
            elif episodes % 64 == 0 and t % 97 == 0:
                turn = (t // 97) % 3
                if turn == 0:
                    base.restore(base.snapshot())
                else:  # the copy carries on; the original is dropped
                    env = copy.deepcopy(env) if turn == 1 else pickle.loads(pickle.dumps(env))
                    base = env.unwrapped
                    copies += 1
        except Exception:  # counted and shown once: the soak must see every kind
            errors += 1
            first_error = first_error or traceback.format_exc(limit=3)
            env.reset()
        if t == mark:
            rss_early = rss_mb()
    seconds = time.perf_counter() - start
    return {"env": env_id, "path": "single", "steps": steps, "episodes": episodes,
            "copies": copies, "exceptions": errors, "first_exception": first_error,
            "rss_mb_at_10pct": round(rss_early, 1), "rss_mb_end": round(rss_mb(), 1),
            "seconds": round(seconds, 1)}  # fmt: skip


def soak_batched(env_id: str, steps: int, batch: int, seed: int) -> dict[str, Any]:
    envs = gym.make_vec(env_id, num_envs=batch, vectorization_mode="vector_entry_point")
    rng = np.random.default_rng(seed)
    _, info = envs.reset(seed=seed)
    rounds = max(1, steps // batch)
    episodes = errors = copies = 0
    first_error = ""
    rss_early = 0.0
    start = time.perf_counter()
    for t in range(rounds):
        try:
            masks = info["action_mask"]
            scores = rng.random(masks.shape)
            forbid = rng.random(batch) < 0.02
            pick = np.where(forbid[:, None], ~masks, masks)
            pick[~pick.any(axis=1)] = masks[~pick.any(axis=1)]
            actions = np.argmax(np.where(pick, scores, -1.0), axis=1)
            _, rewards, terminated, truncated, info = envs.step(actions)
            if not np.isfinite(rewards).all():
                raise ValueError("a reward is not finite")
            episodes += int((terminated | truncated).sum())
            if t % max(1, rounds // 20) == rounds // 40:  # the copy carries on
                envs = copy.deepcopy(envs) if copies % 2 else pickle.loads(pickle.dumps(envs))
                copies += 1
        except Exception:
            errors += 1
            first_error = first_error or traceback.format_exc(limit=3)
            _, info = envs.reset()
        if t == rounds // 10:
            rss_early = rss_mb()
    seconds = time.perf_counter() - start
    envs.close()
    return {"env": env_id, "path": f"batched x{batch}", "steps": rounds * batch,
            "episodes": episodes, "copies": copies, "exceptions": errors,
            "first_exception": first_error, "rss_mb_at_10pct": round(rss_early, 1),
            "rss_mb_end": round(rss_mb(), 1), "seconds": round(seconds, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--envs", nargs="+", default=soak_envs())
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    print("| env | path | steps | episodes | copies | exceptions | RSS MB at 10% | RSS MB end "
          "| s |\n|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    for env_id in args.envs:
        soaks = [lambda e=env_id: soak_single(e, args.steps, args.seed)]
        if gym.spec(env_id).vector_entry_point:  # SokobanPush-v0 has no batch of its own
            soaks.append(lambda e=env_id: soak_batched(e, args.steps, args.batch, args.seed))
        for soak in soaks:
            row = soak()
            rows.append(row)
            print(f"| {row['env']} | {row['path']} | {row['steps']:,} | {row['episodes']:,} | "
                  f"{row['copies']} | {row['exceptions']} | {row['rss_mb_at_10pct']} | "
                  f"{row['rss_mb_end']} | {row['seconds']} |", flush=True)  # fmt: skip
            if row["first_exception"]:
                print(row["first_exception"])
    if args.json:
        record = {"date": time.strftime("%Y-%m-%d"), "steps": args.steps, "rows": rows}
        with open(args.json, "w") as f:
            json.dump(record, f, indent=2)


if __name__ == "__main__":
    main()
