"""RLlib env-steps per second with 1, 2, ... env runners (PPO with masks, local Ray runtime).

    python benchmarks/rllib_scaling.py [--env GridGames/Minesweeper-v0] [--runners 1 2]
                                       [--iterations 6] [--envs-per-runner 8]

Per runner count: a fresh local runtime, ``--iterations`` PPO iterations of 1,000 env steps
(the first is dropped: it warms up), and the medians of two rates: *sampling* (env steps
over the time the runners spent sampling) and *training* (env steps over the whole
iteration, the learner's update included). Needs the ``distributed`` extra.
"""

from __future__ import annotations

import argparse
import statistics
import time

import ray
import torch

from agents.train.rllib import RLlibConfig, algorithm_config


def measure(env_id: str, runners: int, iterations: int, per_runner: int) -> tuple[float, float]:
    torch.set_num_threads(1)
    ray.init(include_dashboard=False, log_to_driver=False)
    try:
        config = RLlibConfig(env_id, num_env_runners=runners, envs_per_runner=per_runner)
        algo = algorithm_config(config).build_algo()
        sampling, training, before = [], [], 0
        for _ in range(iterations):
            tick = time.perf_counter()
            result = algo.train()
            seconds = time.perf_counter() - tick
            steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
            sampled = steps - before
            before = steps
            sampling.append(sampled / result["timers"]["env_runner_sampling_timer"])
            training.append(sampled / seconds)
        algo.stop()
    finally:
        ray.shutdown()
    return statistics.median(sampling[1:]), statistics.median(training[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="GridGames/Minesweeper-v0")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--envs-per-runner", type=int, default=8)
    args = parser.parse_args()
    print(f"{args.env}, PPO with masks, {args.envs_per_runner} envs per runner")
    print("| env runners | sampling env-steps/s | training env-steps/s (learner included) |")
    print("|---|---|---|")
    base = None
    for n in args.runners:
        sampling, training = measure(args.env, n, args.iterations, args.envs_per_runner)
        base = base or sampling
        print(f"| {n} | {sampling:,.0f} ({sampling / base:.2f}x) | {training:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
