"""A copied or pickled env, single or batched, plays exactly as the original, and a copy
shares the level pool instead of carrying it."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import grid_envs
from tests.conftest import ENV_IDS

BATCHED = [i for i in ENV_IDS if grid_envs.ENVS[i] and gym.spec(i).vector_entry_point]


def twin(env: Any, how: str) -> Any:
    return copy.deepcopy(env) if how == "copy" else pickle.loads(pickle.dumps(env))


def same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype == object or b.dtype == object:
            pairs = zip(a.flat, b.flat, strict=True)
            return a.shape == b.shape and all(same(x, y) for x, y in pairs)
        return bool(np.array_equal(a, b))
    return bool(a == b)


@pytest.mark.parametrize("how", ["copy", "pickle"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_copied_single_env_plays_as_the_original(env_id: str, how: str) -> None:
    """Copied at random points of random play over several episodes, the copy and the
    original meet the same actions and return the same steps, resets included."""
    env = gym.make(env_id)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    other: Any = None
    for t in range(160):
        if t % 40 == 10:
            other = twin(env, how)
        mask = env.unwrapped.action_masks()
        action = int(rng.choice(np.flatnonzero(mask)))
        mine = env.step(action)
        if other is not None:
            theirs = other.step(action)
            assert same(mine[:4], theirs[:4]) and same(mine[4], theirs[4]), (env_id, t)
        if mine[2] or mine[3]:
            seed = int(rng.integers(1000))
            first = env.reset(seed=seed)
            if other is not None:
                assert same(first, other.reset(seed=seed))


@pytest.mark.parametrize("how", ["copy", "pickle"])
@pytest.mark.parametrize("env_id", BATCHED)
def test_a_copied_batch_plays_as_the_original(env_id: str, how: str) -> None:
    """A batch copied mid-play steps as the original through autoresets."""
    envs = gym.make_vec(env_id, num_envs=6, vectorization_mode="vector_entry_point")
    envs.reset(seed=0)
    rng = np.random.default_rng(1)
    other: Any = None
    for t in range(200):
        if t == 7:
            other = twin(envs, how)
        masks = envs.unwrapped.action_masks()
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        mine = envs.step(actions)
        if other is not None:
            assert same(masks, other.unwrapped.action_masks())
            theirs = other.step(actions)
            assert same(mine[:4], theirs[:4]), (env_id, t)


@pytest.mark.parametrize("env_id", ["GridGames/Sokoban-v0", "GridGames/Knight-v0"])
def test_a_pickled_env_leaves_its_level_pool_behind(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    assert len(pickle.dumps(env)) < 200_000
    assert copy.deepcopy(env).unwrapped.pool is env.unwrapped.pool
