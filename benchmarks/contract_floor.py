"""The contract's own cost per step, next to FrozenLake: what is left to each game's rules.

python benchmarks/contract_floor.py [--steps 5000] [--repeats 7]

A ``GridEnv`` whose game does nothing (no rules: its mask and planes are kept and the base
env copies them each step, as it does for every game) is stepped through
``gymnasium.make`` with each game's shapes: the mask's size, the planes, the info. What it
costs is the floor of any game on this contract; half of FrozenLake's step rate (the
target of ``grid-games bench``'s single envs) leaves a game ``2 * FrozenLake - floor``
microseconds a step. FrozenLake is timed next to each, with its random action inside the
timing as ``grid-games bench`` does. Medians of ``repeats`` windows.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np

from grid_envs.core.base_env import GridEnv

# name: (actions, planes, rows, cols), the registered default boards
SHAPES = {
    "Sokoban": (4, 7, 10, 10),
    "Minesweeper": (81, 10, 9, 9),
    "Knight": (4, 6, 21, 21),
    "Lines98": (6561, 14, 9, 9),
    "Pikachu": (10296, 36, 9, 16),
}


class NullGame(GridEnv):
    """Every action legal, nothing ever changes: only the base env's work is left."""

    def __init__(
        self, actions: int, planes: int, rows: int, cols: int, render_mode: str | None = None
    ) -> None:
        super().__init__(
            n_actions=actions, obs_shape=(rows, cols), n_planes=planes, render_mode=render_mode
        )
        self._legal = np.ones(actions, dtype=bool)
        self._board = np.zeros((planes, rows, cols), dtype=np.uint8)

    def _new_episode(self, options: dict[str, Any]) -> None:
        pass

    def _legal_mask(self) -> np.ndarray:
        return self._legal

    def _apply(self, action: int) -> tuple[float, bool, bool]:
        return 0.0, False, False

    def _planes(self) -> np.ndarray:
        return self._board.copy()

    def _game_info(self) -> dict[str, Any]:
        return {"score": 0, "moves": 0, "left": 0}  # a game's few counters


def window(step: Any, steps: int) -> float:
    """Microseconds a call of ``step``, over one window of ``steps`` calls."""
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps * 1e6


def frozenlake_step() -> Any:
    env = gym.make("FrozenLake-v1")
    env.reset(seed=0)

    def step() -> None:
        if env.step(env.action_space.sample())[2:4] != (False, False):
            env.reset()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print("| shapes of | floor us a step | FrozenLake us a step | left to the game at 0.5x |")
    print("|---|---|---|---|")
    for name, shape in SHAPES.items():
        env_id = f"NullGame{name}-v0"
        creator: Any = NullGame  # a Gymnasium env class, which register takes
        gym.register(env_id, entry_point=creator, kwargs=dict(zip(
            ("actions", "planes", "rows", "cols"), shape, strict=True
        )), max_episode_steps=10**9)  # fmt: skip
        env = gym.make(env_id)
        env.reset(seed=0)
        reference = frozenlake_step()
        floor, lake = [], []
        for _ in range(args.repeats):  # alternated, so that drift hits both
            floor.append(window(lambda env=env: env.step(0), args.steps))
            lake.append(window(reference, args.steps))
        f, fl = statistics.median(floor), statistics.median(lake)
        print(f"| {name} | {f:.2f} | {fl:.2f} | {2 * fl - f:.1f} |")


if __name__ == "__main__":
    main()
