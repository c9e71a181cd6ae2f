"""The first seconds of a batch from a fresh process: env-steps/s of ``make_vec`` with no
extra arguments, random legal play, averaged over the first ``--seconds`` (making and
resetting the batch included), next to FrozenLake's single-env rate measured in the same
run. Sokoban and the Knight start with an empty level pool, which fills as episodes draw
their levels (docs/speed.md).

    python benchmarks/cold_start.py [--envs GridGames/Sokoban-v0 GridGames/Knight-v0]
                                    [--num-envs 4096] [--seconds 10] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time

from grid_envs.bench import frozenlake_steps_per_second

_RUN = """
import sys, time
start = time.perf_counter()
import gymnasium as gym, numpy as np, grid_envs
env_id, n, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
envs = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
_, info = envs.reset(seed=0)
rng = np.random.default_rng(0)
steps = 0
while time.perf_counter() - start < seconds:
    mask = np.asarray(info["action_mask"], dtype=bool)
    actions = np.argmax(rng.random(mask.shape, dtype=np.float32) * mask, axis=1)
    _, _, _, _, info = envs.step(actions)
    steps += n
print(steps / (time.perf_counter() - start))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--envs", nargs="+", default=["GridGames/Sokoban-v0", "GridGames/Knight-v0"]
    )
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    for env_id in args.envs:
        reference = frozenlake_steps_per_second(1.0, 3)
        out = subprocess.run(
            [sys.executable, "-c", _RUN, env_id, str(args.num_envs), str(args.seconds)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        rate = float(out.stdout.split()[-1])
        rows.append({"env": env_id, "num_envs": args.num_envs, "seconds": args.seconds,
                     "steps_per_s": rate, "frozenlake_steps_per_s": reference,
                     "ratio": rate / reference})  # fmt: skip
        print(f"{env_id}: {rate:,.0f} env-steps/s over the first {args.seconds:g} s "
              f"({rate / reference:.2f}x FrozenLake's {reference:,.0f})", flush=True)  # fmt: skip
    if args.json:
        report = {"machine": f"{platform.machine()}, Python {platform.python_version()}",
                  "date": time.strftime("%Y-%m-%d"), "rows": rows}  # fmt: skip
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
