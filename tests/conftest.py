"""Shared fixtures: hand-built Sokoban levels (written for these tests) and env helpers."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import grid_envs

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame windows work headless
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
if os.environ.get("PYTEST_XDIST_WORKER"):  # workers side by side: one torch thread each
    os.environ.setdefault("GRIDGAMES_TORCH_THREADS", "1")

ENV_IDS = sorted(grid_envs.ENVS)

# One push left solves it.
ONE_PUSH = """
#######
#     #
# .$@ #
#     #
#######
"""

# Two boxes in a room; the bottom box runs along the wall to its goal, or into a corner.
CORNER = """
######
#    #
# $  #
#.  @#
#    #
#. $ #
######
"""


def make_level_env(xsb: str, **kwargs: object) -> gym.Env:
    return gym.make("GridGames/Sokoban-v0", levels=xsb, **kwargs)


@pytest.fixture
def one_push_env() -> gym.Env:
    env = make_level_env(ONE_PUSH)
    env.reset(seed=0)
    return env


def play_with_restores(
    env: Any, episodes: int, check: Callable[[np.ndarray, dict[str, Any]], None]
) -> None:
    """Random legal play over episodes seeded 0, 1, ..., now and then taking a snapshot and
    now and then going back to the last one; ``check(obs, info)`` sees every observation
    (after a restore, ``info`` holds only the mask)."""
    rng = np.random.default_rng(0)
    snap = None
    for episode in range(episodes):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            check(obs, info)
            obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            if not done and rng.random() < 0.15:
                snap = env.snapshot()
            elif not done and snap is not None and rng.random() < 0.08:
                env.restore(snap)
                obs, info = env.observe(), {"action_mask": env.action_masks()}
        check(obs, info)
