"""The first seconds of a batch from a fresh process: env-steps/s of ``make_vec`` with no
extra arguments, random legal play, averaged over the first ``--seconds`` (making and
resetting the batch included), next to FrozenLake's single-env rate measured in the same
run; medians of ``--repeats`` fresh processes. Sokoban's and the Knight's default level
pools ship with the package and load when the batch is made (docs/speed.md); other
settings start with an empty pool, which fills as episodes draw their levels.

    python benchmarks/cold_start.py [--envs GridGames/Sokoban-v0 GridGames/Knight-v0]
                                    [--num-envs 4096] [--seconds 10] [--repeats 3]
                                    [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
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
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    for env_id in args.envs:
        rates, references = [], []
        for _ in range(args.repeats):
            references.append(frozenlake_steps_per_second(1.0, 3))
            out = subprocess.run(
                [sys.executable, "-c", _RUN, env_id, str(args.num_envs), str(args.seconds)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            rates.append(float(out.stdout.split()[-1]))
        rate, reference = statistics.median(rates), statistics.median(references)
        ratios = [r / f for r, f in zip(rates, references, strict=True)]
        rows.append({"env": env_id, "num_envs": args.num_envs, "seconds": args.seconds,
                     "steps_per_s": rate, "frozenlake_steps_per_s": reference,
                     "ratio": rate / reference, "runs": rates,
                     "frozenlake_runs": references, "run_ratios": ratios})  # fmt: skip
        print(f"{env_id}: {rate:,.0f} env-steps/s over the first {args.seconds:g} s "
              f"({rate / reference:.2f}x FrozenLake's {reference:,.0f}; runs "
              + ", ".join(f"{x:.2f}x" for x in ratios) + ")", flush=True)  # fmt: skip
    if args.json:
        report = {"machine": f"{platform.machine()}, Python {platform.python_version()}",
                  "date": time.strftime("%Y-%m-%d"), "rows": rows}  # fmt: skip
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
