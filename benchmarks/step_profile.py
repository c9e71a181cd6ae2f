"""Where a native batch's step goes: each hook of :class:`grid_envs.core.vector.GridVectorEnv`
timed inside random legal play, beside FrozenLake measured in the same run.

    python benchmarks/step_profile.py Lines98-v0 --envs 4096 --steps 30

Per hook the median milliseconds a step (a hook called more than once a step, such as the
masks of a step and of the envs it restarts, is summed), the step itself, its env-steps/s
and that rate as a multiple of FrozenLake's single-env steps/s. The actions are drawn from
``info["action_mask"]`` outside the timing, as ``grid-games bench`` draws them; the batch
hands them out uncopied as the bench's does, or with ``--copy-masks`` copied each step (the
default of ``gymnasium.make_vec``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

HOOKS = ("_apply", "_update_masks", "_start", "_infos", "_all_infos", "_observations")


def profile(
    env_id: str, num_envs: int, steps: int, warm_up: int = 20, copy_masks: bool = False
) -> dict[str, Any]:  # fmt: skip
    """Median milliseconds a step of each hook and of the whole step, and env-steps/s."""
    import gymnasium as gym

    import grid_envs  # noqa: F401

    envs = gym.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", copy_masks=copy_masks
    )
    native = envs.unwrapped
    spent: dict[str, float] = defaultdict(float)

    def timed(name: str) -> Any:
        hook = getattr(native, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            tick = time.perf_counter()
            out = hook(*args, **kwargs)
            spent[name] += time.perf_counter() - tick
            return out

        return call

    for name in HOOKS:
        setattr(native, name, timed(name))
    _, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    per_hook: dict[str, list[float]] = defaultdict(list)
    totals = []
    for k in range(warm_up + steps):
        mask = np.asarray(info["action_mask"], dtype=bool)
        actions = np.argmax(rng.random(mask.shape, dtype=np.float32) * mask, axis=1)
        spent.clear()
        tick = time.perf_counter()
        _, _, _, _, info = envs.step(actions)
        if k >= warm_up:
            totals.append(time.perf_counter() - tick)
            for name in HOOKS:
                per_hook[name].append(spent.get(name, 0.0))
    step = statistics.median(totals)
    return {
        "env": env_id, "num_envs": num_envs, "step_ms": 1e3 * step,
        "env_steps_per_s": num_envs / step,
        "hooks_ms": {name: 1e3 * statistics.median(per_hook[name]) for name in HOOKS},
    }  # fmt: skip


def main() -> None:
    from grid_envs.bench import frozenlake_steps_per_second

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("env")
    parser.add_argument("--envs", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--copy-masks", action="store_true", help="copy the masks each step")
    args = parser.parse_args()
    env_id = args.env if "/" in args.env else f"GridGames/{args.env}"
    result = profile(env_id, args.envs, args.steps, copy_masks=args.copy_masks)
    frozen = frozenlake_steps_per_second()
    rate = result["env_steps_per_s"]
    print(f"{env_id}, {args.envs:,} envs: a step {result['step_ms']:.1f} ms, {rate:,.0f} "
          f"env-steps/s, {rate / frozen:.2f}x FrozenLake ({frozen:,.0f} steps/s), masks "
          f"{'copied' if args.copy_masks else 'shared'}")  # fmt: skip
    for name, ms in result["hooks_ms"].items():
        print(f"  {name:15} {ms:6.2f} ms")
    print("  (_all_infos includes _infos; _start, the restarted envs, includes their masks)")


if __name__ == "__main__":
    main()
