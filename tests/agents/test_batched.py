"""Training on the native batched envs: the SB3 adapter against SB3's own single-env path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.monitor import Monitor, load_results
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecNormalize

from agents.train.batch import BatchedVecEnv, evaluate_batched, policy_actions, sampled_actions
from agents.train.build import make_vec_env, new_model, training_env
from agents.train.config import TrainConfig, default_config
from agents.train.models import PolicyAgent
from agents.train.plan import plan_run, uses_bf16
from agents.train.runs import read_curve
from agents.train.sb3 import train
from grid_envs.wrappers import PotentialShaping

SMALL_SOKOBAN = {"rows": 6, "cols": 6, "num_boxes": 1, "level_pool": 40}
CASES = [
    ("GridGames/Sokoban-v0", {**SMALL_SOKOBAN, "max_episode_steps": 30}, None),
    ("GridGames/Knight-v0", {"rows": 5, "cols": 5, "energy_slack": 1.5}, "distance"),
    ("GridGames/Minesweeper-v0", {"rows": 5, "cols": 5, "mines": 4}, None),
    ("GridGames/Pikachu-Small-v0", {"rows": 4, "cols": 4, "kinds": 4}, "mobility"),
]


def singles(env_id: str, kwargs: dict[str, Any], shaping: str | None, n: int) -> DummyVecEnv:
    """What SB3 steps without the batch: N single envs, shaped, then monitored."""

    def make() -> gym.Env:
        env: gym.Env = gym.make(env_id, **kwargs)
        if shaping:
            env = PotentialShaping(env, shaping, 0.99)
        return Monitor(env, info_keywords=("is_success",))

    return DummyVecEnv([make] * n)


@pytest.mark.parametrize("env_id, kwargs, shaping", CASES, ids=lambda x: str(x)[:20])
def test_the_batch_gives_what_sb3_gives_on_single_envs(
    env_id: str, kwargs: dict[str, Any], shaping: str | None, tmp_path: Path
) -> None:
    """Same seed, same actions: the same observations, rewards, ends, masks, terminal
    observations and the episode statistics Monitor records (and writes)."""
    n = 4
    ours = BatchedVecEnv(env_id, n, kwargs, shaping, 0.99, monitor_file=tmp_path)
    theirs = singles(env_id, kwargs, shaping, n)
    ours.seed(5)
    theirs.seed(5)
    obs, expected = ours.reset(), theirs.reset()
    assert np.array_equal(obs, expected)
    rng = np.random.default_rng(0)
    episodes: list[tuple[int, float, int, bool]] = []
    for _ in range(80):
        masks = get_action_masks(ours)
        assert np.array_equal(masks, np.stack(theirs.env_method("action_masks")))
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        obs, rewards, dones, infos = ours.step(actions)
        expected, want, done_too, their_infos = theirs.step(actions)
        assert np.array_equal(obs, expected)
        assert np.array_equal(rewards, want) and np.array_equal(dones, done_too)
        for i in np.flatnonzero(dones):
            mine, other = infos[i], their_infos[i]
            assert np.array_equal(mine["terminal_observation"], other["terminal_observation"])
            assert mine["TimeLimit.truncated"] == other["TimeLimit.truncated"]
            assert mine["is_success"] == other["is_success"]
            for key in ("r", "l", "is_success"):
                assert mine["episode"][key] == other["episode"][key], key
            episodes.append((int(i), mine["episode"]["r"], mine["episode"]["l"],
                             mine["is_success"]))  # fmt: skip
    ours.close()
    assert len(episodes) >= n
    written = load_results(str(tmp_path))
    assert len(written) == len(episodes)
    assert np.allclose(written["r"], [r for _, r, _, _ in episodes])
    assert list(written["l"]) == [length for _, _, length, _ in episodes]


def test_sb3_checks_and_wrappers_accept_the_batch() -> None:
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.utils import check_for_correct_spaces

    venv = BatchedVecEnv("GridGames/Minesweeper-v0", 8, {"rows": 5, "cols": 5, "mines": 3})
    check_for_correct_spaces(venv, venv.observation_space, venv.action_space)
    assert venv.has_attr("action_masks") and venv.env_is_wrapped(Monitor) == [True] * 8
    checked = VecNormalize(VecCheckNan(venv, raise_exception=True), norm_obs=False)
    checked.reset()
    for _ in range(30):
        masks = np.stack(checked.env_method("action_masks"))
        checked.step(np.argmax(masks, axis=1))
    model = new_model(
        plan_run(TrainConfig("GridGames/Minesweeper-v0", n_envs=8, n_steps=16, batch_size=64,
                             env_kwargs={"rows": 5, "cols": 5, "mines": 3})),
        venv, None,
    )  # fmt: skip
    mean, _ = evaluate_policy(model, venv, n_eval_episodes=10, warn=False)
    assert -1.0 <= mean <= 2.0
    with pytest.raises(AttributeError, match="action_masks only"):
        venv.env_method("render")
    with pytest.raises(ValueError, match="no native batched env"):
        BatchedVecEnv("GridGames/SokobanPush-v0", 2)


def test_same_seed_same_training_data_on_either_path() -> None:
    """The batch and the DummyVecEnv collect the very same rollouts from the same seed, and
    the batch repeats itself."""
    config = TrainConfig("GridGames/Sokoban-v0", n_envs=4, n_steps=32, batch_size=64, seed=3,
                         env_kwargs=SMALL_SOKOBAN)  # fmt: skip
    buffers = []
    for vec_env in ("batched", "batched", "dummy"):
        cfg = TrainConfig(**{**config.__dict__, "vec_env": vec_env})
        model = new_model(plan := plan_run(cfg), training_env(plan), None)
        model.learn(cfg.n_envs * cfg.n_steps)
        buf = model.rollout_buffer
        buffers.append((buf.observations.copy(), buf.actions.copy(), buf.rewards.copy()))
    for other in buffers[1:]:
        for a, b in zip(buffers[0], other, strict=True):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("precision", ["fp32", "auto"])
def test_a_run_repeats_itself_with_the_same_seed_precision_and_threads(
    tmp_path: Path, precision: str
) -> None:
    """``train`` twice, teaching and PPO on the batch: the same model, bit for bit, and the
    same evaluations (the batch it trains on is seeded from the run's seed)."""
    from stable_baselines3.common.save_util import load_from_zip_file

    config = default_config(
        "GridGames/Minesweeper-v0", timesteps=1024, n_envs=16, n_steps=16, batch_size=128,
        env_kwargs={"rows": 5, "cols": 5, "mines": 3}, eval_freq=512, eval_episodes=16,
        threads=1, precision=precision, teacher="solver", teacher_states=400, dagger_rounds=2,
    )  # fmt: skip
    runs = [train(config, tmp_path / name, progress=False) for name in ("a", "b")]
    params = [load_from_zip_file(str(run.model_path))[1]["policy"] for run in runs]
    assert params[0].keys() == params[1].keys()
    assert all(np.array_equal(params[0][k].numpy(), params[1][k].numpy()) for k in params[0])
    assert runs[0].curve == runs[1].curve


def test_batched_evaluation_plays_each_envs_first_episode() -> None:
    kwargs = {"rows": 5, "cols": 5, "mines": 4}
    config = TrainConfig("GridGames/Minesweeper-v0", n_envs=4, n_steps=16, env_kwargs=kwargs)
    model = new_model(plan := plan_run(config), training_env(plan), None)
    batch = gym.make_vec("GridGames/Minesweeper-v0", 6, vectorization_mode="vector_entry_point",
                         **kwargs)  # fmt: skip
    returns, lengths, wins = evaluate_batched(model, "maskable-ppo", batch, seed=100)
    again = evaluate_batched(model, "maskable-ppo", batch, seed=100)
    assert np.array_equal(returns, again[0]) and np.array_equal(lengths, again[1])
    for i in range(6):  # episode i is a single env's episode with seed 100 + i
        env = gym.make("GridGames/Minesweeper-v0", **kwargs)
        obs, info = env.reset(seed=100 + i)
        total, steps, done = 0.0, 0, False
        while not done:
            action = policy_actions(model, "maskable-ppo", obs[None], info["action_mask"][None])
            obs, r, terminated, truncated, info = env.step(int(action[0]))
            total, steps, done = total + r, steps + 1, terminated or truncated
        assert (returns[i], lengths[i], wins[i]) == (pytest.approx(total), steps,
                                                     info["is_success"])  # fmt: skip
    with pytest.raises(ValueError, match="episodes must be between"):
        evaluate_batched(model, "maskable-ppo", batch, episodes=7)


def test_sampled_actions_follow_the_masked_policy_and_repeat_with_the_seed() -> None:
    kwargs = {"rows": 5, "cols": 5, "mines": 4}
    config = TrainConfig("GridGames/Minesweeper-v0", n_envs=4, n_steps=16, env_kwargs=kwargs)
    model = new_model(plan := plan_run(config), training_env(plan), None)
    env = gym.make("GridGames/Minesweeper-v0", **kwargs)
    obs, info = env.reset(seed=3)
    mask = info["action_mask"].copy()
    mask[np.flatnonzero(mask)[::2]] = False  # half the legal cells masked off
    import torch

    with torch.no_grad():  # the distribution the draws should follow
        tensor, _ = model.policy.obs_to_tensor(obs[None])
        logits = model.policy.get_distribution(tensor).distribution.logits[0].double().numpy()
    logits = np.where(mask, logits, -np.inf)
    expected = np.exp(logits - logits.max())
    expected /= expected.sum()
    draws = 20_000
    batch, masks = np.repeat(obs[None], draws, axis=0), np.repeat(mask[None], draws, axis=0)
    actions = sampled_actions(model, "maskable-ppo", batch, masks, np.random.default_rng(0))
    assert mask[actions].all()
    shares = np.bincount(actions, minlength=len(mask)) / draws
    assert np.abs(shares - expected).max() < 0.015
    again = sampled_actions(model, "maskable-ppo", batch, masks, np.random.default_rng(0))
    assert np.array_equal(actions, again)
    assert not np.array_equal(actions, policy_actions(model, "maskable-ppo", batch, masks))
    with pytest.raises(ValueError, match="DQN model has no action distribution"):
        sampled_actions(model, "dqn", batch, masks, np.random.default_rng(0))


@pytest.mark.parametrize("algo", ["maskable-ppo", "ppo"])
def test_a_short_run_on_the_batch_trains_saves_evaluates_and_resumes(
    algo: str, tmp_path: Path
) -> None:
    kwargs = {"rows": 5, "cols": 5, "mines": 3}
    config = default_config(
        "GridGames/Minesweeper-v0", algo=algo, timesteps=1024, n_envs=16, n_steps=16,
        batch_size=128, env_kwargs=kwargs, eval_freq=512, eval_episodes=8,
        checkpoint_freq=512, threads=1,
    )  # fmt: skip
    result = train(config, tmp_path, progress=False)
    settings = json.loads(result.settings_path.read_text())
    assert settings["batched"] and settings["torch_threads"] == 1
    assert settings["bf16"] == uses_bf16(config) and settings["precision"] == "auto"
    assert settings["device"] == "cpu" and settings["n_epochs"] == 4
    curve = read_curve(tmp_path)
    assert [steps for steps, _, _ in curve] == [0, 512, 1024]  # 0: before the first step
    assert (tmp_path / "best" / "best_model.zip").exists()
    assert len(load_results(str(tmp_path / "monitor"))) > 0
    env = gym.make("GridGames/Minesweeper-v0", **kwargs)
    agent = PolicyAgent.load(result.model_path, env)
    obs, _ = env.reset(seed=0)
    action = int(agent.predict(obs)[0])
    assert env.unwrapped.action_masks()[action]
    config.timesteps = 2048
    again = train(config, tmp_path, progress=False)
    assert again.resumed_from is not None and again.timesteps >= 2048
    assert [steps for steps, _, _ in read_curve(tmp_path)][:3] == [0, 512, 1024]


def test_the_training_path_is_chosen_by_the_id_and_the_setting() -> None:
    from agents.train.batch import BatchedVecEnv as Batch

    batched = default_config("GridGames/Knight-v0", n_envs=3)
    assert isinstance(training_env(plan_run(batched)), Batch)
    dummy = default_config("GridGames/Knight-v0", vec_env="dummy")
    assert dummy.n_envs == 4 and dummy.n_epochs == 10
    assert isinstance(training_env(plan_run(dummy)), DummyVecEnv)
    push = default_config("GridGames/SokobanPush-v0", n_envs=2)  # no native batch
    assert isinstance(training_env(plan_run(push)), DummyVecEnv)
    with pytest.raises(ValueError, match="vec_env must be one of"):
        default_config("GridGames/Knight-v0", vec_env="subproc")
    assert isinstance(make_vec_env(dummy, 2), DummyVecEnv)


@pytest.mark.parametrize("policy", ["cnn", "cells"])
def test_bf16_precision_keeps_float32_weights_and_outputs_close_to_float32(policy: str) -> None:
    import torch

    from agents.train.plan import policy_of

    kwargs = {"rows": 5, "cols": 5, "mines": 3}
    config = TrainConfig("GridGames/Minesweeper-v0", policy=policy, env_kwargs=kwargs)
    venv = training_env(plan_run(replace_config(config, n_envs=2)))
    outputs, state = [], None
    for precision in ("fp32", "bf16"):
        cfg = replace_config(config, precision=precision, n_envs=2)
        _, policy_kwargs = policy_of(cfg, 25)
        assert policy_kwargs["features_extractor_kwargs"]["bf16"] is (precision == "bf16")
        model = new_model(plan_run(cfg), venv, None)
        if state is None:
            state = model.policy.state_dict()
        else:  # the same weights
            model.policy.load_state_dict(state)
        assert all(p.dtype == torch.float32 for p in model.policy.parameters())
        obs = torch.as_tensor(venv.reset()).float()
        with torch.no_grad():
            features = model.policy.extract_features(obs)
        assert features.dtype == torch.float32
        outputs.append(features)
    scale = outputs[0].abs().max().item()
    assert (outputs[0] - outputs[1]).abs().max().item() < 0.05 * scale + 1e-3
    with pytest.raises(ValueError, match="precision must be one of"):
        plan_run(replace_config(config, precision="fp8", n_envs=2))


def replace_config(config: TrainConfig, **changes: Any) -> TrainConfig:
    return TrainConfig(**{**config.__dict__, **changes})
