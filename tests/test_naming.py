"""One name for each idea: every env's settings come from one scheme, old names are refused
with the new one, and each game's rewards are a frozen dataclass the rules read."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import pytest
from gymnasium.envs.registration import load_env_creator

import grid_envs
from grid_envs.core import checks

# every env's settings: these shared ones, each meaning the same thing in every game ...
SHARED = {"render_mode", "observation_mode", "tile_size", "time_limit", "illegal_reward",
          "step_reward", "win_reward", "loss_reward", "rows", "cols"}  # fmt: skip
# ... and a game's own, the rewards among them named <what>_reward, signed, added as given
REWARDS = {"step_reward", "win_reward", "loss_reward", "illegal_reward", "box_on_reward",
           "box_off_reward", "item_reward", "progress_reward", "pair_reward",
           "shuffle_reward"}  # fmt: skip


def _settings(env_id: str) -> set[str]:
    creator = load_env_creator(gym.spec(env_id).entry_point)
    return checks.init_names(creator)


@pytest.mark.parametrize("env_id", sorted(grid_envs.ENVS))
def test_every_env_names_its_settings_from_the_shared_scheme(env_id: str) -> None:
    names = _settings(env_id)
    assert names >= SHARED, SHARED - names
    assert not [n for n in names if "penalty" in n]
    assert not names & {"level", "board"}  # a game's level source is levels=, if it has one
    assert {n for n in names if n.endswith("_reward")} <= REWARDS
    env = gym.make(env_id).unwrapped
    fields = {f.name for f in dataclasses.fields(env.rewards)}
    assert fields <= REWARDS and fields <= names  # each a setting of its own name
    with pytest.raises(dataclasses.FrozenInstanceError):
        env.rewards.loss_reward = 5.0


def test_a_wall_clock_limit_is_max_seconds_and_time_limit_its_old_name() -> None:
    """``time_limit`` counts steps (every env's); an agent's or a training run's limit of
    seconds is ``max_seconds``, and its old name is refused naming the new one."""
    from agents import make_agent
    from agents.train.config import default_config

    env = gym.make("GridGames/Sokoban-Small-v0", time_limit=7)
    assert env.unwrapped.time_limit == 7
    for build in (lambda: make_agent("solver", env, time_limit=5.0),
                  lambda: make_agent("planner", gym.make("GridGames/Pikachu-v0"), time_limit=1.0),
                  lambda: default_config("GridGames/Sokoban-v0", time_limit=60)):  # fmt: skip
        with pytest.raises(TypeError, match=r"time_limit= is now called max_seconds="):
            build()
    assert make_agent("solver", env, max_seconds=5.0).max_seconds == 5.0
    assert default_config("GridGames/Sokoban-v0", max_seconds=60).max_seconds == 60


def test_the_names_renamed_two_versions_ago_are_unknown_settings_now() -> None:
    """The names 0.3.0 renamed were refused by name through 0.4; now they are settings no
    env takes, refused with the list of those it does."""
    with pytest.raises(ValueError, match=r"takes no setting 'illegal_action_penalty'; its"):
        checks.env_kwargs("GridGames/Sokoban-v0", {"illegal_action_penalty": -1.0})
    with pytest.raises(TypeError, match="illegal_action_penalty"):
        gym.make("GridGames/Sokoban-v0", illegal_action_penalty=-1.0)


def test_the_rewards_pay_what_they_are_named() -> None:
    env = gym.make("GridGames/Sokoban-v0", step_reward=-0.5, loss_reward=-3.0).unwrapped
    assert env.rewards.step_reward == -0.5 and env.rewards.loss_reward == -3.0
    default = gym.make("GridGames/Sokoban-v0").unwrapped.rewards
    assert default.loss_reward == pytest.approx(-0.1 * 120)  # step_reward x time_limit
    assert gym.make("GridGames/Pikachu-v0", win_reward=2.0).unwrapped.rewards.win_reward == 2.0
    assert len(gym.make("GridGames/Knight-v0", levels="samples").unwrapped.levels) == 10


@pytest.mark.parametrize("env_id", [s.ids[0].id for s in grid_envs.game_specs()])
def test_step_reward_is_added_to_every_legal_move_single_and_batched(env_id: str) -> None:
    """The README's promise: every game takes ``step_reward`` (as ``win_reward`` and
    ``loss_reward``), added to each legal move's reward, by the single env and the batch
    alike."""
    import numpy as np

    light = {"level_pool": 20} if "Sokoban" in env_id else {}
    rewards = []
    for step in (0.0, -0.25):
        env = gym.make(env_id, step_reward=step, **light)
        batch = gym.make_vec(env_id, 2, vectorization_mode="vector_entry_point",
                             step_reward=step, **light)  # fmt: skip
        _, info = env.reset(seed=3)
        batch.reset(seed=3)
        rng, got = np.random.default_rng(0), []
        for _ in range(12):
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, r, terminated, truncated, info = env.step(action)
            masks = batch.unwrapped.action_masks()
            _, rs, *_ = batch.step(np.array([action, int(np.flatnonzero(masks[1])[0])]))
            got.append((r, rs[0]))
            if terminated or truncated:
                break
        rewards.append(np.array(got))
    assert rewards[0].shape == rewards[1].shape
    np.testing.assert_allclose(rewards[1], rewards[0] - 0.25)
