"""Every registered id keeps the contract of grid_envs.core.base_env (MiniGrid-style tests)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from tests.conftest import ENV_IDS


def masked_rollout(env: gym.Env, seed: int, steps: int) -> list[tuple]:
    """Random legal actions (and some illegal ones) from a seeded generator."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs.copy(), 0.0, False, False, info["action_mask"].copy())]
    for _ in range(steps):
        mask = env.unwrapped.action_masks()
        if rng.random() < 0.1:
            action = int(rng.integers(env.action_space.n))
        else:
            action = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs.copy(), reward, terminated, truncated, info["action_mask"].copy()))
        if terminated or truncated:
            obs, info = env.reset()
            trace.append((obs.copy(), 0.0, False, False, info["action_mask"].copy()))
    return trace


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_check_env(env_id: str) -> None:
    env = gym.make(env_id)
    gym_check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_sb3_check_env(env_id: str) -> None:
    from stable_baselines3.common.env_checker import check_env

    check_env(gym.make(env_id), warn=True)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_episode(env_id: str) -> None:
    a = masked_rollout(gym.make(env_id), seed=7, steps=300)
    b = masked_rollout(gym.make(env_id), seed=7, steps=300)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x[0], y[0])
        assert x[1:4] == y[1:4]
        np.testing.assert_array_equal(x[4], y[4])


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_different_seeds_differ(env_id: str) -> None:
    env = gym.make(env_id)
    seen = []
    for s in range(5):
        env.reset(seed=s)
        first_legal = int(np.flatnonzero(env.unwrapped.action_masks())[0])
        seen.append(env.step(first_legal)[0])  # Minesweeper starts all hidden
    assert any(not np.array_equal(seen[0], o) for o in seen[1:])


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("mode", ["ansi", "rgb_array", "human"])
def test_render_modes(env_id: str, mode: str) -> None:
    env = gym.make(env_id, render_mode=mode)
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    out = env.render()
    base = env.unwrapped
    if mode == "ansi":
        assert isinstance(out, str) and len(out.splitlines()) >= 3
    elif mode == "rgb_array":
        t = base.tile_size
        assert out.shape == (base.frame_shape[0] * t, base.frame_shape[1] * t, 3)
        assert out.dtype == np.uint8 and len(np.unique(out.reshape(-1, 3), axis=0)) > 3
    else:
        assert out is None
    assert gym.make(env_id).metadata["render_fps"] > 0
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("mode", ["compact", "rgb"])
def test_observation_modes(env_id: str, mode: str) -> None:
    env = gym.make(env_id, observation_mode=mode)
    obs, _ = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    obs, *_ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_long_random_rollout_invariants(env_id: str) -> None:
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    episodes = 0
    for _ in range(3000):
        mask = env.unwrapped.action_masks()
        assert mask.dtype == bool and mask.shape == (env.action_space.n,)
        assert mask.any(), "a running episode always has a legal action"
        np.testing.assert_array_equal(mask, info["action_mask"])
        action = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(obs)
        assert isinstance(info["is_success"], bool) and info["illegal_action"] is False
        assert np.isfinite(reward)
        if terminated or truncated:
            episodes += 1
            obs, info = env.reset()
    assert episodes > 5


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_masked_action_is_a_noop_with_penalty(env_id: str) -> None:
    env = gym.make(env_id)
    obs, _ = env.reset(seed=2)
    illegal = np.flatnonzero(~env.unwrapped.action_masks())
    if len(illegal) == 0:  # every action is legal at the start (Minesweeper): play one
        obs, *_ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        illegal = np.flatnonzero(~env.unwrapped.action_masks())
    assert len(illegal) > 0
    snap = env.unwrapped.snapshot()
    obs2, reward, terminated, _truncated, info = env.step(int(illegal[0]))
    np.testing.assert_array_equal(obs, obs2)
    assert info["illegal_action"] is True and not terminated
    assert reward == env.unwrapped.illegal_reward
    np.testing.assert_array_equal(snap.mask, env.unwrapped.action_masks())


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("bad", [-1, 10**6, 1.5, "0", None, True, np.array([1, 2])])
def test_action_outside_space_raises(env_id: str, bad: object) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the action space Discrete"):
        env.unwrapped.step(bad)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_snapshot_restores_exactly(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    rng = np.random.default_rng(5)
    env.reset(seed=5)
    for _ in range(5):
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if env.episode_over:
            env.reset()
    snap = env.snapshot()
    actions = []
    first = []
    for _ in range(20):
        if env.episode_over:
            break
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        actions.append(a)
        first.append(env.step(a))
    env.restore(snap)
    for a, (obs, r, term, trunc, _info) in zip(actions, first, strict=True):
        obs2, r2, term2, trunc2, _info2 = env.step(a)
        np.testing.assert_array_equal(obs, obs2)
        assert (r, term, trunc) == (r2, term2, trunc2)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_step_after_end_raises_clearly(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(100_000):
        _, _, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated:
            break
    assert env.episode_over
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_make_without_import() -> None:
    import subprocess
    import sys

    code = (
        "import gymnasium as gym; e = gym.make('grid_envs:GridGames/Sokoban-v0'); "
        "print(e.reset(seed=0)[0].shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(7, 10, 10)"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_new_episode_sets_up_what_reset_does_with_the_same_generator(env_id: str) -> None:
    """The public hook the batched envs set up episodes with: the game's own code."""
    from gymnasium.utils import seeding

    light = {"level_pool": 20} if "Sokoban" in env_id or "Large" in env_id else {}
    played, fresh = gym.make(env_id, **light).unwrapped, gym.make(env_id, **light).unwrapped
    obs, _ = played.reset(seed=3)
    fresh.reset(seed=99)
    fresh.step(int(np.flatnonzero(fresh.action_masks())[0]))
    steps = fresh.steps
    state = fresh.new_episode(seeding.np_random(3)[0])
    assert type(state) is type(fresh.game_state())
    np.testing.assert_array_equal(fresh.observe(), obs)
    assert fresh.steps == steps  # the episode's bookkeeping is the caller's
