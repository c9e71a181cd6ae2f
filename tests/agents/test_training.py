"""Training with stable-baselines3: every algorithm trains, saves, loads and plays legally."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from agents import EvalResult, evaluate, list_agents, make_agent, wilson_interval
from agents.compare import (
    MIN_TEACHER_STATES,
    Comparison,
    compare_config,
    compare_envs,
    kind_of,
    run_compare,
    verdicts,
)
from agents.train.config import TrainConfig, compare_rows, default_config, training_defaults
from agents.train.models import PolicyAgent
from agents.train.sb3 import train

TINY = {"rows": 4, "cols": 4, "mines": 2}


def tiny(algo: str, **extra) -> TrainConfig:
    return TrainConfig(
        env_id="GridGames/Minesweeper-v0", algo=algo, timesteps=512, n_envs=2, n_steps=64,
        batch_size=64, env_kwargs=TINY, eval_freq=256, eval_episodes=2, checkpoint_freq=256,
        features_dim=32, **extra,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("algo", "policy"),
    [("maskable-ppo", "cnn"), ("ppo", "cnn"), ("dqn", "cnn"), ("maskable-ppo", "cells")],
)
def test_every_algorithm_trains_saves_loads_and_plays_legally(
    algo: str, policy: str, tmp_path: Path
) -> None:
    result = train(tiny(algo, policy=policy), tmp_path / algo, progress=False)
    assert result.model_path.exists() and result.timesteps >= 512
    settings = json.loads(result.settings_path.read_text())
    assert settings["algo"] == algo and settings["env_kwargs"] == TINY
    assert settings["policy"] == policy
    assert (tmp_path / algo / "tb").exists() and list(
        (tmp_path / algo / "checkpoints").glob("*.zip")
    )
    env = gym.make("GridGames/Minesweeper-v0", **TINY)
    agent = PolicyAgent.load(result.model_path, env)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        action = int(agent.predict(obs)[0])
        assert env.unwrapped.action_masks()[action]
        obs, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated


def test_a_rerun_resumes_from_the_last_checkpoint(tmp_path: Path) -> None:
    first = train(tiny("maskable-ppo"), tmp_path, progress=False)
    assert first.resumed_from is None
    longer = tiny("maskable-ppo")
    longer.timesteps = 1024
    second = train(longer, tmp_path, progress=False)
    assert second.resumed_from is not None and "model_" in second.resumed_from
    assert second.timesteps >= 1024


def test_a_time_limit_stops_training_and_keeps_the_model(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_seconds must be above 0"):
        train(tiny("maskable-ppo", max_seconds=0), tmp_path / "none", progress=False)
    assert not (tmp_path / "none").exists()
    config = tiny("maskable-ppo", max_seconds=2)
    config.timesteps = 10_000_000
    result = train(config, tmp_path / "run", progress=False)
    assert 0 < result.timesteps < config.timesteps and result.model_path.exists()
    settings = json.loads(result.settings_path.read_text())
    assert settings["stopped_at_time_limit"] and not settings["interrupted"]
    assert settings["timesteps_done"] == result.timesteps


def test_shaping_by_name_trains(tmp_path: Path) -> None:
    config = TrainConfig(
        env_id="GridGames/Knight-v0", timesteps=256, n_envs=1, n_steps=64, batch_size=64,
        env_kwargs={"rows": 4, "cols": 4}, shaping="distance", eval_freq=128, eval_episodes=1,
        checkpoint_freq=256, features_dim=16,
    )  # fmt: skip
    assert train(config, tmp_path, progress=False).model_path.exists()


def test_the_potential_as_an_input_plane_trains_evaluates_and_is_saved(tmp_path: Path) -> None:
    """A run with ``potential_input`` (native batch and single envs alike) trains a network
    on one more plane, evaluates on it, and says so in its settings; a scaled shaping run
    saves its scale; an unknown potential or a bad scale is refused before any folder."""
    for vec_env in ("batched", "dummy"):
        config = TrainConfig(
            env_id="GridGames/Knight-v0", timesteps=256, n_envs=2, n_steps=64, batch_size=64,
            env_kwargs={"rows": 5, "cols": 5, "energy_slack": 2.0}, potential_input="distance",
            shaping="distance", shaping_scale=0.5, eval_freq=128, eval_episodes=2,
            checkpoint_freq=256, features_dim=16, vec_env=vec_env,
        )  # fmt: skip
        result = train(config, tmp_path / vec_env, progress=False)
        settings = json.loads(result.settings_path.read_text())
        assert settings["potential_input"] == "distance" and settings["shaping_scale"] == 0.5
        model = PolicyAgent.load(result.model_path).model
        assert model.observation_space.shape == (10, 5, 5)
        assert len(np.load(tmp_path / vec_env / "eval" / "evaluations.npz")["timesteps"]) >= 1
    # the saved model plays a bare env, building the plane itself, as it trained
    from agents.train.batch import policy_actions
    from grid_envs.wrappers import PotentialInput

    board = {"rows": 5, "cols": 5, "energy_slack": 2.0, "pool_seed": 1}
    agent = PolicyAgent.load(result.model_path)
    played = evaluate("GridGames/Knight-v0", agent, 3, 1_000_000, board)
    env = PotentialInput(gym.make("GridGames/Knight-v0", **board), "distance")
    returns = []
    for k in range(3):
        obs, _ = env.reset(seed=1_000_000 + k)
        total, done = 0.0, False
        while not done:
            mask = env.unwrapped.action_masks()[None]
            action = policy_actions(agent.model, "maskable-ppo", obs[None], mask)[0]
            obs, reward, terminated, truncated, _ = env.step(int(action))
            total, done = total + float(reward), terminated or truncated
        returns.append(total)
    assert played.mean_return == pytest.approx(np.mean(returns))
    for bad, match in (({"potential_input": "nope"}, "no potential 'nope'"),
                       ({"shaping_scale": -1.0}, "shaping scale must be a positive")):  # fmt: skip
        config = TrainConfig(env_id="GridGames/Knight-v0", timesteps=64, **bad)
        with pytest.raises(ValueError, match=match):
            train(config, tmp_path / "refused", progress=False)
        assert not (tmp_path / "refused").exists()


def test_each_game_declares_its_training_defaults() -> None:
    assert training_defaults("GridGames/Lines98-Small-v0") and training_defaults(
        "GridGames/Pikachu-Small-v0"
    )
    knight = default_config("GridGames/Knight-v0")
    assert knight.shaping == "distance" and knight.policy == "maze-vi" and not knight.env_kwargs
    assert default_config("GridGames/Lines98-v0").policy == "colour-lines"
    assert default_config("GridGames/Minesweeper-v0").policy == "cells"
    small = default_config("GridGames/Sokoban-Small-v0")
    assert small.env_kwargs == {} and small.policy == "player"  # as registered


def test_every_registered_agent_works_with_sb3_evaluate_policy() -> None:
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    import grid_envs

    for env_id in grid_envs.ENVS:
        for name in list_agents(env_id):
            kwargs = {"rows": 4, "cols": 4, "kinds": 4} if "Pikachu" in env_id else {}
            if "Lines98" in env_id:
                kwargs = {"rows": 4, "cols": 4, "colours": 5, "line_length": 4}  # short games
            vec = make_vec_env(env_id, n_envs=2, seed=0, env_kwargs=kwargs)
            agent = make_agent(name, vec, seed=0)
            mean, _ = evaluate_policy(agent, vec, n_eval_episodes=2, warn=False)
            assert np.isfinite(mean), (env_id, name)


def test_compare_teaches_then_tunes_and_writes_its_table_and_plots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(compare_rows()["GridGames/Minesweeper-v0"], "sample", True)
    search = {"simulations": 2, "episodes": 2, "network": "trained", "beats": "solver"}
    monkeypatch.setitem(compare_rows()["GridGames/Minesweeper-v0"], "search", search)
    result = run_compare(
        ("GridGames/Minesweeper-v0",),
        budget=0.01,
        timesteps=512,
        episodes=3,
        out=tmp_path,
        scratch=True,
        progress=False,
        log=lambda _: None,
    )  # fmt: skip (512 steps: one rollout of 64 envs x 32 steps, 2k)
    labels = [label for _, label, _ in result.rows]
    assert labels[:2] == ["random", "solver"]
    assert labels[2].startswith("solver-taught maskable-ppo (2k steps, best at ")
    assert labels[2].endswith(", sampled)")  # the row's play setting, not a training key
    assert labels[3].startswith("maskable-ppo (")
    # the evaluations start before the first PPO step: the clone is a candidate for best
    taught_curve = result.curves["GridGames/Minesweeper-v0"]["taught"]
    assert taught_curve[0][0] == 0 and len(taught_curve) >= 2
    # from scratch: as much wall time as the taught run took, teaching included
    scratch = json.loads(
        (tmp_path / "runs" / "Minesweeper-v0-scratch" / "settings.json").read_text()
    )
    taught = result.train_seconds["GridGames/Minesweeper-v0 taught"]
    assert scratch["max_seconds"] == pytest.approx(max(1.0, taught))
    assert scratch["timesteps"] == 512 * 50
    assert labels[4] == "search (2 simulations, trained network)"
    assert result.rows[4][2].episodes == 2
    assert [kind_of(label) for label in labels] == [
        "random", "algorithm", "learned", "learned", "search"
    ]  # fmt: skip
    assert set(result.curves["GridGames/Minesweeper-v0"]) == {"taught", "scratch"}
    config = result.configs["GridGames/Minesweeper-v0"]
    planned = compare_rows()["GridGames/Minesweeper-v0"]["teacher_states"]
    assert config.teacher == "solver"
    assert config.teacher_states == max(MIN_TEACHER_STATES, round(planned / 100))
    assert (tmp_path / "runs" / "Minesweeper-v0-taught" / "teacher" / "rounds.json").exists()
    for name in ("table.md", "results.json", "learning_curves.png", "results.png"):
        assert (tmp_path / name).exists(), name
    text = (tmp_path / "table.md").read_text()
    assert "| Minesweeper-v0 (rows=6, cols=6, mines=4) | solver |" in text
    assert "Learned and searching agents against their baselines (95% intervals):" in text
    assert "search (2 simulations, trained network): " in text and "solver" in text
    kinds = [row["kind"] for row in json.loads((tmp_path / "results.json").read_text())["results"]]
    assert kinds == ["random", "algorithm", "learned", "learned", "search"]


def test_compare_runs_every_game_on_its_configuration_with_a_teacher() -> None:
    assert {e.split("/")[1] for e in compare_envs()} == {
        "Sokoban-Small-v0", "Minesweeper-v0", "Knight-v0", "Pikachu-v0", "Lines98-v0"
    }  # fmt: skip
    for env_id in compare_envs():
        config = compare_config(env_id)
        assert config.teacher in list_agents(env_id), env_id
        longer = compare_config(env_id, budget=4)
        assert longer.timesteps == 4 * config.timesteps
        assert longer.teacher_states == 4 * config.teacher_states
    assert compare_config("GridGames/Knight-v0").policy == "maze-vi"
    assert compare_config("GridGames/Lines98-v0").policy == "colour-lines"
    assert compare_rows()["GridGames/Sokoban-Small-v0"][
        "sample"
    ]  # a play setting, not a training one
    assert not hasattr(compare_config("GridGames/Sokoban-Small-v0"), "sample")
    with pytest.raises(ValueError, match="budget must be above 0"):
        compare_config("GridGames/Knight-v0", budget=0)


def test_the_learned_verdict_reads_the_intervals() -> None:
    def result(wins: int, returns: list[float]) -> EvalResult:
        n = len(returns)
        return EvalResult("e", "a", n, 0, wins, wins / n, wilson_interval(wins, n),
                          float(np.mean(returns)), float(np.std(returns)), 1.0, 1.0)  # fmt: skip

    env = "GridGames/Lines98-v0"
    learned = "greedy-taught maskable-ppo (1k steps)"
    rows = [(env, "random", result(0, [0.0, 1.0] * 50))]
    rows.append((env, learned, result(0, [40.0, 60.0] * 50)))
    comparison = Comparison(rows, {}, {}, {}, Path("."))
    assert verdicts(comparison) == [
        f"- Lines98-v0, {learned}: above random, intervals apart (mean return)"
    ]
    rows[1] = (env, "maskable-ppo (1k steps)", result(3, [0.0, 1.0] * 50))
    assert "NOT above random's interval (win rate)" in verdicts(comparison)[0]
    # a search is held to the baseline its game's row names: Pikachu-v0's, greedy
    env = "GridGames/Pikachu-v0"
    assert compare_rows()[env]["search"]["beats"] == "greedy"
    lines = compare_rows()["GridGames/Lines98-v0"]["search"]  # the judge's first step, no replies
    assert lines["beats"] == "greedy" and lines["replies"] == 0
    rows = [(env, "random", result(20, [0.0] * 100)), (env, "greedy", result(25, [0.0] * 100))]
    rows.append((env, "search (8 simulations, pretrained network)", result(60, [0.0] * 100)))
    comparison = Comparison(rows, {}, {}, {}, Path("."))
    assert verdicts(comparison) == [
        "- Pikachu-v0, search (8 simulations, pretrained network): above greedy, intervals "
        "apart (win rate)"
    ]


def test_cli_train_then_eval_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from grid_games import cli

    out = tmp_path / "run"
    args = ["train", "Minesweeper-v0", "--timesteps", "256", "--out", str(out), "--no-progress",
            "--n-envs", "1"] + [f"--set={k}={v}" for k, v in TINY.items()]  # fmt: skip
    assert cli.main(args) == 0
    assert "trained" in capsys.readouterr().out
    assert cli.main(["eval", "Minesweeper-v0", "--agent", str(out / "model.zip"),
                     "--episodes", "3", "--json"]) == 0  # fmt: skip
    row = json.loads(capsys.readouterr().out)
    assert row["episodes"] == 3 and row["agent"].startswith("maskable-ppo")
    sampled = ["eval", "Minesweeper-v0", "--agent", str(out / "model.zip"), "--episodes", "20",
               "--json", "--sample", "--seed", "5"]  # fmt: skip
    rows = []
    for _ in range(2):  # the same seed draws the same actions
        assert cli.main(sampled) == 0
        rows.append(json.loads(capsys.readouterr().out))
        rows[-1].pop("steps_per_second")
    assert rows[0] == rows[1] and rows[0]["agent"].endswith(" sampled")
    assert cli.main(["eval", "Minesweeper-v0", "--agent", "random", "--sample"]) == 2
    assert "--sample is for a trained model, not the agent 'random'" in capsys.readouterr().err


@pytest.mark.slow
def test_maskable_ppo_learns_minesweeper(tmp_path: Path) -> None:
    """The README's learning figure on the batched path, about 2.5 minutes on 2 cores
    (300k steps with the cells policy: 86.5% won against random's 4.5%)."""
    config = default_config("GridGames/Minesweeper-v0", timesteps=300_000)
    result = train(config, tmp_path, progress=False)
    agent = PolicyAgent.load(result.model_path)
    learned = evaluate("GridGames/Minesweeper-v0", agent, 200, 7, config.env_kwargs)
    random = evaluate("GridGames/Minesweeper-v0", "random", 200, 7, config.env_kwargs)
    assert config.policy == "cells"
    assert learned.win_rate > random.win_rate + 0.4


@pytest.mark.slow
def test_maskable_ppo_learns_lines98_with_the_lift_drop_policy(tmp_path: Path) -> None:
    """The README's Lines98 learning figure on the batched path, about 3.5 minutes on 2
    cores (300k steps: 16.0% won against random's 2.5%, mean points 55 against 30)."""
    config = default_config("GridGames/Lines98-Small-v0", timesteps=300_000)
    result = train(config, tmp_path, progress=False)
    agent = PolicyAgent.load(result.model_path)
    learned = evaluate("GridGames/Lines98-Small-v0", agent, 200, 7)
    random = evaluate("GridGames/Lines98-Small-v0", "random", 200, 7)
    assert learned.win_rate > random.win_rate + 0.08
    assert learned.mean_return > 1.5 * random.mean_return


def test_no_observation_is_mistaken_for_an_image() -> None:
    """SB3 transposes what it takes for a channels-last image, scrambling our planes."""
    from stable_baselines3.common.preprocessing import is_image_space

    import grid_envs

    for env_id in grid_envs.ENVS:
        assert not is_image_space(gym.make(env_id).observation_space), env_id


def test_maskable_ppo_learns_to_escape_a_fixed_maze(tmp_path: Path) -> None:
    """A real, short training run: memorising one maze's route takes a few thousand steps."""
    from grid_envs.knight.levels import sample_paths

    kwargs = {"levels": str(sample_paths()[0]), "energy_slack": 1.5}
    config = TrainConfig(env_id="GridGames/Knight-v0", timesteps=6_000, env_kwargs=kwargs,
                         eval_freq=100_000, checkpoint_freq=100_000)  # fmt: skip
    agent = PolicyAgent.load(train(config, tmp_path, progress=False).model_path)
    learned = evaluate("GridGames/Knight-v0", agent, 20, 0, kwargs)
    random = evaluate("GridGames/Knight-v0", "random", 20, 0, kwargs)
    assert learned.win_rate >= 0.9 and random.win_rate <= 0.1


def test_a_run_folder_from_before_the_policy_setting_still_resumes(tmp_path: Path) -> None:
    train(tiny("maskable-ppo"), tmp_path, progress=False)
    saved = json.loads((tmp_path / "config.json").read_text())
    del saved["policy"]  # as folders written before the setting existed
    (tmp_path / "config.json").write_text(json.dumps(saved))
    longer = tiny("maskable-ppo")
    longer.timesteps = 1024
    assert train(longer, tmp_path, progress=False).resumed_from is not None
    cells = tiny("maskable-ppo", policy="cells")
    with pytest.raises(ValueError, match="policy"):
        train(cells, tmp_path, progress=False)


def test_a_folder_with_another_run_is_refused(tmp_path: Path) -> None:
    train(tiny("maskable-ppo"), tmp_path, progress=False)
    other = tiny("maskable-ppo")
    other.env_kwargs = {"rows": 5, "cols": 5, "mines": 3}
    with pytest.raises(ValueError, match="holds a run with other settings"):
        train(other, tmp_path, progress=False)
    warmed = tiny("maskable-ppo", teacher="solver", warm_teacher="solver")
    with pytest.raises(ValueError, match="warm_teacher"):  # the folder's run had none
        train(warmed, tmp_path, progress=False)
    with pytest.raises(ValueError, match="a warm teacher only warms up a --teacher run"):
        train(tiny("maskable-ppo", warm_teacher="solver"), tmp_path / "new", progress=False)
    assert not (tmp_path / "new").exists()


def test_a_checkpoint_for_another_space_is_a_one_line_error(tmp_path: Path) -> None:
    small = TrainConfig(
        env_id="GridGames/Knight-v0", timesteps=256, n_envs=4, n_steps=64, batch_size=32,
        env_kwargs={"rows": 4, "cols": 4}, eval_freq=10_000, checkpoint_freq=128,
        features_dim=16,
    )  # fmt: skip
    train(small, tmp_path, progress=False)
    config = json.loads((tmp_path / "config.json").read_text())
    config["env_kwargs"] = {"rows": 5, "cols": 5}  # as if the env had changed under the run
    (tmp_path / "config.json").write_text(json.dumps(config))
    bigger = TrainConfig(**{**config, "timesteps": 512})
    with pytest.raises(ValueError, match="another observation or action space") as info:
        train(bigger, tmp_path, progress=False)
    assert "\n" not in str(info.value)


def test_settings_are_found_for_the_best_model_and_checkpoints(tmp_path: Path) -> None:
    from agents.train.runs import settings_of

    (tmp_path / "settings.json").write_text(json.dumps({"algo": "maskable-ppo"}))
    for model in ("model.zip", "best/best_model.zip", "checkpoints/model_2048_steps.zip"):
        assert settings_of(tmp_path / model)["algo"] == "maskable-ppo"
    with pytest.raises(ValueError, match=r"no settings\.json"):
        settings_of(tmp_path / "a" / "b" / "model.zip")


def test_a_game_row_can_play_fewer_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A COMPARE row's "episodes" caps the episodes of that game's rows (Lines98-v0's long
    games play 50), never raising what was asked; it is not a training setting."""
    from agents.compare import run_compare

    assert compare_rows()["GridGames/Lines98-v0"]["episodes"] == 50
    assert not hasattr(compare_config("GridGames/Lines98-v0"), "episodes")
    monkeypatch.setitem(compare_rows()["GridGames/Knight-v0"], "episodes", 2)
    result = run_compare(("GridGames/Knight-v0",), episodes=3, out=tmp_path, train_models=False,
                         progress=False, log=lambda _: None)  # fmt: skip
    assert {row[2].episodes for row in result.rows} == {2}
    monkeypatch.setitem(compare_rows()["GridGames/Knight-v0"], "episodes", 50)
    result = run_compare(("GridGames/Knight-v0",), episodes=3, out=tmp_path, train_models=False,
                         progress=False, log=lambda _: None)  # fmt: skip
    assert {row[2].episodes for row in result.rows} == {3}
