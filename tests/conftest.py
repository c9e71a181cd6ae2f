"""Shared fixtures: hand-built Sokoban levels (written for these tests) and env helpers."""

from __future__ import annotations

import os

import gymnasium as gym
import pytest

import grid_envs

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame windows work headless
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

ENV_IDS = sorted(grid_envs.ENVS)

# One push left solves it.
ONE_PUSH = """
#######
#     #
# .$@ #
#     #
#######
"""

# Two boxes in a corridor room; the left box is against the top wall.
CORNER = """
######
#    #
# $  #
#.  @#
#   .#
#  $ #
######
"""


def make_level_env(xsb: str, **kwargs: object) -> gym.Env:
    return gym.make("GridGames/Sokoban-v0", levels=xsb, **kwargs)


@pytest.fixture
def one_push_env() -> gym.Env:
    env = make_level_env(ONE_PUSH)
    env.reset(seed=0)
    return env
