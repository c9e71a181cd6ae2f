"""Run folders are safe: a finished run is never retrained or overwritten, more steps go on
from it, logs are appended, a refused run writes nothing, Ctrl-C keeps the work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from stable_baselines3.common.monitor import load_results

from agents.train.config import TrainConfig
from agents.train.models import PolicyAgent
from agents.train.plan import checkpoint_every
from agents.train.sb3 import train
from grid_games import cli

TINY = {"rows": 4, "cols": 4, "mines": 2}


def tiny(**extra: object) -> TrainConfig:
    settings: dict = {
        "env_id": "GridGames/Minesweeper-v0", "timesteps": 512, "n_envs": 2, "n_steps": 64,
        "batch_size": 64, "env_kwargs": TINY, "eval_freq": 256, "eval_episodes": 2,
        "features_dim": 32, **extra,
    }  # fmt: skip
    return TrainConfig(**settings)


def test_a_finished_run_is_not_retrained_and_more_steps_go_on_from_it(tmp_path: Path) -> None:
    first = train(tiny(), tmp_path, progress=False)
    model = (tmp_path / "model.zip").read_bytes()
    episodes = len(load_results(str(tmp_path / "monitor")))
    again = train(tiny(), tmp_path, progress=False)
    assert again.already_done and again.timesteps == first.timesteps
    assert (tmp_path / "model.zip").read_bytes() == model  # not overwritten
    more = train(tiny(timesteps=1024), tmp_path, progress=False)
    assert not more.already_done and more.timesteps >= 1024
    assert more.resumed_from is not None
    # the monitor log was appended to, not truncated; one header line
    assert len(load_results(str(tmp_path / "monitor"))) > episodes
    text = (tmp_path / "monitor" / "batch.monitor.csv").read_text()
    assert text.count("#{") == 1


def test_a_new_seed_into_a_finished_run_is_refused(tmp_path: Path) -> None:
    train(tiny(), tmp_path, progress=False)
    with pytest.raises(ValueError, match="seed"):
        train(tiny(seed=7), tmp_path, progress=False)
    assert json.loads((tmp_path / "config.json").read_text())["seed"] == 0


def test_another_network_size_into_a_finished_run_is_refused(tmp_path: Path) -> None:
    train(tiny(), tmp_path, progress=False)
    with pytest.raises(ValueError, match="net_width"):
        train(tiny(net_width=8), tmp_path, progress=False)
    assert json.loads((tmp_path / "config.json").read_text())["net_width"] is None


def test_a_run_whose_env_fails_writes_nothing_and_the_fixed_command_runs(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="do not fit"):
        train(tiny(env_kwargs={**TINY, "mines": 1000}), tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()
    assert train(tiny(), tmp_path / "run", progress=False).timesteps >= 512


def test_the_first_checkpoint_comes_early() -> None:
    assert checkpoint_every(tiny(timesteps=1_000_000)) == 50_000
    assert checkpoint_every(tiny(timesteps=20_000)) == 1_000
    assert checkpoint_every(tiny(timesteps=100_000_000)) == 100_000
    assert checkpoint_every(tiny(checkpoint_freq=300)) == 300


def test_ctrl_c_saves_the_model_and_a_checkpoint_then_the_run_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [
        sys.executable, "-m", "grid_games.cli", "train", "Minesweeper-v0", "--set", "rows=4",
        "--set", "cols=4", "--set", "mines=2", "--timesteps", "5000000", "--n-envs", "4",
        "--out", str(out), "--no-progress", "--threads", "1",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    # Ctrl-C as a terminal sends it: SIGINT at its default, whatever this worker process
    # set (a child inherits an ignored SIGINT, and Python then never raises KeyboardInterrupt)
    child = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    log = out / "monitor" / "batch.monitor.csv"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not log.exists() or log.stat().st_size < 200):
        time.sleep(0.2)  # until episodes are being logged
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 130
    assert err.strip().splitlines() == [err.strip()] and "interrupted after" in err
    settings = json.loads((out / "settings.json").read_text())
    assert settings["interrupted"] and (out / "model.zip").exists()
    saved = list((out / "checkpoints").glob("model_*_steps.zip"))
    assert saved
    # the same command goes on from the checkpoint the interruption saved
    steps = settings["timesteps_done"]
    budget = command.index("--timesteps") + 1
    command[budget] = str(steps + 256)
    assert cli.main(command[3:]) == 0
    settings = json.loads((out / "settings.json").read_text())
    assert not settings["interrupted"] and settings["resumed_from"].endswith(f"_{steps}_steps.zip")
    assert settings["timesteps_done"] >= steps + 256


def test_eval_plays_the_model_board_and_refuses_another_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = str(train(tiny(), tmp_path, progress=False).model_path)
    # another Minesweeper id: the model's 4x4 board is played, and named
    assert cli.main(["eval", "Minesweeper-Expert-v0", "--agent", model, "--episodes", "2",
                     "--json", "--no-progress"]) == 0  # fmt: skip
    result = json.loads(capsys.readouterr().out)
    assert result["env_kwargs"] == TINY and "rows=4" in result["env"]
    # another game: refused, both named, no traceback
    assert cli.main(["eval", "Knight-v0", "--agent", model, "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert "trained on GridGames/Minesweeper-v0" in err and "GridGames/Knight-v0" in err
    # a board the model's network cannot read: refused
    assert cli.main(["eval", "Minesweeper-v0", "--agent", model, "--set", "rows=5"]) == 2
    err = capsys.readouterr().err
    assert "the model's observations differ" in err and "shape (10, 4, 4)" in err
    assert len(err.strip().splitlines()) == 1


def test_a_run_folder_in_use_is_refused(tmp_path: Path) -> None:
    """A second run into a folder another run holds is refused in one line, and the
    folder is free again once the first ends."""
    from agents.search.expert import IterationConfig, iterate
    from agents.train.config import default_config
    from agents.train.runs import run_lock
    from agents.train.sb3 import train

    out = tmp_path / "run"
    config = default_config("GridGames/Minesweeper-v0", timesteps=64, n_envs=2)
    with run_lock(out):
        with pytest.raises(ValueError, match="in use by another run"):
            train(config, out, progress=False)
        with pytest.raises(ValueError, match="in use by another run"):
            iterate(IterationConfig("GridGames/Minesweeper-v0", "start.zip"), out)
    assert not out.exists()  # the refused runs wrote nothing
    with run_lock(out):
        pass


@pytest.mark.parametrize(
    ("name", "damage", "message"),
    [
        ("settings.json", b"nonsense{", "settings.json cannot be read \\(not JSON"),
        ("settings.json", b"[1, 2]", "holds a JSON list, not the dict"),
        ("config.json", b"", "config.json cannot be read"),
        ("model.zip", None, "model.zip is damaged"),
        ("eval/evaluations.npz", b"PK\x03\x04cut short", "evaluations.npz is damaged"),
    ],
)
def test_a_damaged_run_folder_is_named_and_left_alone(
    tmp_path: Path, name: str, damage: bytes | None, message: str
) -> None:
    """A file edited into nonsense or cut short is refused, naming it, and nothing in the
    folder is trained over or rewritten; evaluating a cut model says the same."""
    train(tiny(), tmp_path, progress=False)
    path = tmp_path / name
    path.write_bytes(path.read_bytes()[:2000] if damage is None else damage)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match=message):
        train(tiny(), tmp_path, progress=False)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    if name == "model.zip":
        with pytest.raises(ValueError, match=message):
            PolicyAgent.load(path)


def test_a_run_shorter_than_its_evaluation_interval_is_evaluated_at_its_end(
    tmp_path: Path,
) -> None:
    from agents.train.runs import read_curve

    result = train(tiny(timesteps=128, eval_freq=10_000), tmp_path, progress=False)
    steps = [t for t, _, _ in read_curve(tmp_path)]
    assert steps == [0, result.timesteps]  # the starting policy and the one it ends with


def test_a_folder_of_the_other_backend_is_refused(tmp_path: Path) -> None:
    """An RLlib run's folder is not an SB3 run's, and the reverse: refused in one line,
    naming the backend that wrote it, before anything is written."""
    from agents.train.rllib import RUN_KEYS, RLlibConfig
    from agents.train.runs import check_run_folder, check_same_run

    rllib = tmp_path / "rllib"
    rllib.mkdir()
    check_same_run(RLlibConfig("GridGames/Minesweeper-v0", env_kwargs=TINY), rllib, RUN_KEYS)
    with pytest.raises(ValueError, match="holds a run of the rllib backend"):
        train(tiny(), rllib, progress=False)
    assert sorted(p.name for p in rllib.iterdir()) == ["config.json"]
    train(tiny(), tmp_path / "sb3", progress=False)
    with pytest.raises(ValueError, match="holds a run of the sb3 backend"):
        check_run_folder(tmp_path / "sb3", "rllib")


def test_playing_a_model_uses_one_torch_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from agents.nets.common import THREADS_VARIABLE

    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    model = train(tiny(timesteps=128), tmp_path, progress=False).model_path
    kept = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        PolicyAgent.load(model)
        assert torch.get_num_threads() == 1  # a batch-1 forward pass gains nothing from more
        monkeypatch.setenv(THREADS_VARIABLE, "2")
        PolicyAgent.load(model)
        assert torch.get_num_threads() == min(2, len(os.sched_getaffinity(0)))
    finally:
        torch.set_num_threads(kept)


def test_a_model_of_the_registered_board_is_checked_and_takes_threads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model trained on the board as registered (no settings of its own) is a network
    like any other: eval takes --threads for it and refuses a board it cannot read."""
    config = TrainConfig(
        env_id="GridGames/Minesweeper-v0", timesteps=64, n_envs=2, n_steps=32, batch_size=64,
        eval_freq=10_000, eval_episodes=2, features_dim=32,
    )  # fmt: skip
    model = str(train(config, tmp_path, progress=False).model_path)
    argv = ["eval", "Minesweeper-v0", "--agent", model, "--episodes", "2", "--no-progress"]
    assert cli.main([*argv, "--threads", "1"]) == 0
    assert cli.main([*argv, "--set", "rows=5"]) == 2
    err = capsys.readouterr().err
    assert "the model's observations differ" in err and "(10, 5, 9)" in err
