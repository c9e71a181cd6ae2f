"""Ray RLlib: the masked observation, the masked module, and a real short training run on a
local runtime with two env runners that learns, checkpoints, resumes and exports a policy
that our evaluation plays."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents import evaluate
from agents.train.rllib import (
    MaskedObservation,
    RLlibConfig,
    RLlibPolicyAgent,
    make_env,
    masked_grid_module,
    train_rllib,
)
from grid_envs.knight.levels import sample_paths
from grid_games import cli

pytestmark = pytest.mark.rllib  # run in the environment with the distributed extra


def test_the_observation_carries_the_exact_mask() -> None:
    env = make_env({"env_id": "GridGames/Lines98-Small-v0"})
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert np.array_equal(obs["action_mask"].astype(bool), info["action_mask"])
    legal = int(np.flatnonzero(info["action_mask"])[0])
    obs, *_, info = env.step(legal)
    assert np.array_equal(obs["action_mask"].astype(bool), info["action_mask"])


def test_a_runner_steps_its_envs_as_one_native_batch() -> None:
    from agents.train.rllib import algorithm_config

    kwargs = {"rows": 5, "cols": 5, "energy_slack": 1.5}
    env = make_env({"env_id": "GridGames/Knight-v0", "env_kwargs": kwargs, "num_envs": 3,
                    "shaping": "distance"})  # fmt: skip
    assert type(env.unwrapped).__name__ == "KnightVectorEnv"
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert np.array_equal(obs["action_mask"].astype(bool), info["action_mask"])
    obs, _, _, _, info = env.step(np.argmax(info["action_mask"], axis=1))
    assert np.array_equal(obs["action_mask"].astype(bool), info["action_mask"])
    assert "shaping" in info
    native = algorithm_config(RLlibConfig("GridGames/Knight-v0"))
    assert native.gym_env_vectorize_mode == "vector_entry_point"
    assert algorithm_config(RLlibConfig("GridGames/SokobanPush-v0")).gym_env_vectorize_mode == (
        "sync"
    )


def test_the_module_never_gives_an_illegal_action_any_weight() -> None:
    from ray.rllib.core.columns import Columns

    env = MaskedObservation(gym.make("GridGames/Pikachu-Small-v0"))
    module = masked_grid_module()(
        observation_space=env.observation_space,
        action_space=env.action_space,
        model_config={"features_dim": 16},
    )
    obs, _ = env.reset(seed=0)
    batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in obs.items()}}
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS][0]
    probs = torch.softmax(logits, dim=-1).detach().numpy()
    mask = obs["action_mask"].astype(bool)
    assert probs[~mask].max() == 0.0 and probs[mask].sum() == pytest.approx(1.0)
    values = module.compute_values(batch)
    assert values.shape == (1,)


def test_rllib_learns_a_fixed_maze_checkpoints_resumes_and_exports(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Two env runners on a local Ray runtime; about a minute on 2 cores."""
    kwargs = {"levels": str(sample_paths()[0]), "energy_slack": 1.5}
    config = RLlibConfig("GridGames/Knight-v0", timesteps=8_000, env_kwargs=kwargs)
    out = tmp_path / "run"
    result = train_rllib(config, out, log=lambda _: None)
    assert result.timesteps >= 8_000 and not result.resumed
    returns = [mean for _, mean, _ in result.curve]
    assert returns[-1] > returns[0] + 0.5, returns  # it escapes instead of starving
    assert (out / "checkpoint").is_dir() and result.policy_path.is_dir()

    learned = evaluate("GridGames/Knight-v0", RLlibPolicyAgent.load(out), 20, 0, kwargs)
    random = evaluate("GridGames/Knight-v0", "random", 20, 0, kwargs)
    assert learned.win_rate >= 0.9 and random.win_rate <= 0.1

    # the same command again, with a larger budget, resumes from the checkpoint
    more = train_rllib(RLlibConfig(**{**config.__dict__, "timesteps": 9_000}), out, log=print)
    assert more.resumed and more.curve[: len(result.curve)] == result.curve
    assert more.timesteps >= 9_000 and len(more.curve) == len(result.curve) + 1
    settings = json.loads((out / "settings.json").read_text())
    assert settings["backend"] == "rllib" and settings["timesteps_done"] == more.timesteps

    # the same command once more: a finished run, kept as it is
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    again = train_rllib(RLlibConfig(**{**config.__dict__, "timesteps": 9_000}), out)
    assert again.already_done and again.timesteps == more.timesteps
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before

    # the CLI evaluates the exported policy on the board it was trained on, without Ray's
    # deprecation warning
    capfd.readouterr()
    assert cli.main(["eval", "Knight-v0", "--agent", str(out), "--episodes", "5"]) == 0
    assert "Deprecat" not in capfd.readouterr().err


def test_a_folder_with_another_rllib_run_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(
        json.dumps(
            {"env_id": "GridGames/Knight-v0", "env_kwargs": {"rows": 5}, "learner_threads": 1}
        )
    )
    with pytest.raises(ValueError, match="holds an RLlib run with other settings"):
        train_rllib(RLlibConfig("GridGames/Knight-v0", timesteps=1), tmp_path)


def test_ctrl_c_saves_the_rllib_run_and_the_run_goes_on(tmp_path: Path) -> None:
    """Ctrl-C (here raised after the first iteration) keeps a checkpoint and the policy
    so far and says so; the same command then goes on from the checkpoint."""
    from agents.train.runs import Interrupted

    kwargs = {"levels": str(sample_paths()[0]), "energy_slack": 1.5}
    config = RLlibConfig("GridGames/Knight-v0", timesteps=3_000, env_kwargs=kwargs,
                         num_env_runners=1)  # fmt: skip

    def stop(_: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(Interrupted, match=r"interrupted after [0-9,]+ steps"):
        train_rllib(config, tmp_path, log=stop)
    settings = json.loads((tmp_path / "settings.json").read_text())
    assert settings["interrupted"] and (tmp_path / "policy").is_dir()
    first = settings["timesteps_done"]
    result = train_rllib(config, tmp_path, log=lambda _: None)
    assert result.resumed and result.timesteps >= 3_000 and result.curve[0][0] == first
