"""Fuzzing the contract on every registered id, single and batched: random actions (legal,
masked and outside the space), snapshots and restores mid-episode, resets with options.

Invariants checked at every step: the observation is in its space; while an episode runs
the mask is never empty; rewards are finite; an action outside the space raises
``ValueError`` and changes nothing; restoring a snapshot and replaying the same actions
gives the same trajectory. The inputs that once broke the envs (``tests/test_bad_input.py``)
are the fixed part of the corpus; hypothesis draws the rest.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import grid_envs

IDS = sorted(grid_envs.ENVS)
# small boards where the registered one is slow to set up; the rules are the same
LIGHT: dict[str, dict[str, Any]] = {
    "GridGames/Sokoban-v0": {"level_pool": 50},
    "GridGames/SokobanPush-v0": {"level_pool": 50},
    "GridGames/Knight-Large-v0": {"level_pool": 20},
}
FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# an action: an index into the legal ones, any index in the space, or one outside it
moves = st.lists(
    st.one_of(
        st.tuples(st.just("legal"), st.integers(0, 10**6)),
        st.tuples(st.just("any"), st.integers(0, 10**6)),
        st.tuples(st.just("outside"), st.sampled_from([-1, 10**9, 2.5, "up", None])),
    ),
    max_size=40,
)


def pick(kind: str, value: Any, mask: np.ndarray) -> Any:
    if kind == "legal":
        legal = np.flatnonzero(mask)
        return int(legal[value % len(legal)])
    if kind == "any":
        return value % len(mask)
    return value


def check_step(env: gym.Env, obs: Any, reward: float, info: dict, running: bool) -> None:
    assert env.observation_space.contains(obs)
    assert math.isfinite(reward)
    if running:
        assert info["action_mask"].any()
        np.testing.assert_array_equal(info["action_mask"], env.unwrapped.action_masks())


def play(env: gym.Env, script: list[tuple[str, Any]]) -> list[tuple[Any, ...]]:
    """Play ``script`` from the env's state now; the trajectory (rewards, ends, obs hash)."""
    trajectory = []
    for kind, value in script:
        if env.unwrapped.episode_over:
            break
        action = pick(kind, value, env.unwrapped.action_masks())
        if kind == "outside":
            before = env.unwrapped.observe().copy()
            with pytest.raises(ValueError, match="outside the action space"):
                env.step(action)
            np.testing.assert_array_equal(env.unwrapped.observe(), before)
            continue
        obs, reward, terminated, truncated, info = env.step(action)
        check_step(env, obs, reward, info, not (terminated or truncated))
        trajectory.append((reward, terminated, truncated, hash(obs.tobytes())))
    return trajectory


@pytest.mark.parametrize("env_id", IDS)
@FUZZ
@given(seed=st.integers(0, 2**31 - 1), script=moves, cut=st.integers(0, 40))
def test_single_env_keeps_the_contract(env_id: str, seed: int, script: list, cut: int) -> None:
    env = gym.make(env_id, **LIGHT.get(env_id, {}))
    obs, info = env.reset(seed=seed)
    check_step(env, obs, 0.0, info, True)
    play(env, script[:cut])
    if env.unwrapped.episode_over:
        return
    snap = env.unwrapped.snapshot()
    first = play(env, script[cut:])
    env.unwrapped.restore(snap)
    assert play(env, script[cut:]) == first  # restore then replay: the same trajectory


@pytest.mark.parametrize("env_id", ["GridGames/Sokoban-Small-v0", "GridGames/Knight-v0"])
@FUZZ
@given(seed=st.integers(0, 2**31 - 1), level=st.one_of(st.none(), st.integers(-3, 12)))
def test_reset_options_are_applied_or_refused(env_id: str, seed: int, level: Any) -> None:
    from tests.conftest import CORNER, ONE_PUSH

    if env_id == "GridGames/Knight-v0":
        env, count = gym.make(env_id, levels="samples"), 10
    else:
        env, count = gym.make(env_id, levels=ONE_PUSH + CORNER), 2
    if level is not None and not 0 <= level < count:
        with pytest.raises(ValueError, match="options\\['level'\\] must be an index"):
            env.reset(seed=seed, options={"level": level})
        return
    obs, info = env.reset(seed=seed, options={"level": level})
    check_step(env, obs, 0.0, info, True)
    if level is not None and env_id == "GridGames/Sokoban-Small-v0":
        assert env.unwrapped.level_index == level


@pytest.mark.parametrize("env_id", IDS)
@FUZZ
@given(
    seed=st.integers(0, 2**31 - 1),
    steps=st.lists(st.lists(st.integers(0, 10**6), min_size=3, max_size=3), max_size=25),
    legal=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_batched_env_keeps_the_contract(
    env_id: str, seed: int, steps: list[list[int]], legal: list[bool]
) -> None:
    spec = gym.spec(env_id)
    mode = "vector_entry_point" if spec.vector_entry_point else "sync"
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode=mode, **LIGHT.get(env_id, {}))
    obs, info = envs.reset(seed=seed)
    assert envs.observation_space.contains(obs)
    n = envs.single_action_space.n
    ended = np.zeros(3, dtype=bool)
    for row in steps:
        masks = info["action_mask"]
        assert masks[~ended].any(axis=1).all()  # never empty while an episode runs
        actions = np.array(
            [
                np.flatnonzero(masks[i])[v % int(masks[i].sum())]
                if legal[i] and masks[i].any()
                else v % n
                for i, v in enumerate(row)
            ],
            dtype=np.int64,
        )
        obs, rewards, terminated, truncated, info = envs.step(actions)
        ended = terminated | truncated
        assert envs.observation_space.contains(obs)
        assert np.isfinite(rewards).all()
    envs.reset(seed=seed)  # no env waiting for its autoreset, which would ignore the action
    with pytest.raises(ValueError, match=r"outside the action space|actions must be"):
        envs.step(np.array([n, 0, 0], dtype=np.int64))
    envs.close()


# what happens between two steps: nothing, a copy or a pickle round trip taking the env's
# place, a detour (snapshot, a few other moves, restore), or a move into a fresh env of
# the same settings by restore
events = st.lists(
    st.tuples(
        st.sampled_from(["step", "step", "step", "copy", "pickle", "detour", "move"]),
        st.integers(0, 10**6),
    ),
    max_size=40,
)


@pytest.mark.parametrize("env_id", IDS)
@FUZZ
@given(seed=st.integers(0, 2**31 - 1), script=events)
def test_copies_and_restores_match_an_untouched_twin(env_id: str, seed: int, script: list) -> None:
    """An env copied, pickled, sent on detours and restored into other envs at random
    points returns, step for step, what a twin that was left alone returns: observations,
    rewards, ends, infos and masks, across resets."""
    import copy
    import pickle

    from tests.test_copies import same

    def make() -> Any:
        return gym.make(env_id, **LIGHT.get(env_id, {}))

    env, twin = make(), make()
    assert same(env.reset(seed=seed), twin.reset(seed=seed))
    rng = np.random.default_rng(seed)
    for t, (event, value) in enumerate(script):
        if event == "copy":
            env = copy.deepcopy(env)
        elif event == "pickle":
            env = pickle.loads(pickle.dumps(env))
        elif event == "detour":
            snap = env.unwrapped.snapshot()
            for _ in range(value % 4):
                if env.unwrapped.episode_over:
                    break
                env.step(pick("legal", int(rng.integers(10**6)), env.unwrapped.action_masks()))
            env.unwrapped.restore(snap)
        elif event == "move":
            fresh = make()
            fresh.reset(seed=value)  # another game first: the restore must replace all of it
            fresh.unwrapped.restore(env.unwrapped.snapshot())
            env = fresh
        assert same(env.unwrapped.action_masks(), twin.unwrapped.action_masks()), (t, event)
        if twin.unwrapped.episode_over:
            assert same(env.reset(seed=value), twin.reset(seed=value)), (t, event)
            continue
        action = pick("legal", value, twin.unwrapped.action_masks())
        assert same(env.step(action), twin.step(action)), (t, event)
