"""The grid-games command line."""

from __future__ import annotations

import argparse
import io
import json
import sys

import numpy as np
import pytest

from grid_games import cli


def test_list_prints_every_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith("GridGames/Sokoban-v0 ") for line in out)
    assert len(out) == len(__import__("grid_envs").ENVS)


def test_eval_json_has_the_promised_keys(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "Sokoban-Small-v0", "--agent", "random", "--episodes", "5", "--seed", "1"]
    assert cli.main([*args, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert cli.main([*args, "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    for key in ("env", "agent", "episodes", "win_rate", "win_rate_ci", "mean_return",
                "mean_length", "steps_per_second"):  # fmt: skip
        assert key in first
    first.pop("steps_per_second"), second.pop("steps_per_second")
    assert first == second


def test_eval_unknown_env_and_agent() -> None:
    assert cli.main(["eval", "Nope-v0"]) == 2
    assert cli.main(["eval", "Sokoban-v0", "--agent", "nope", "--episodes", "1"]) == 2


def test_rllib_refuses_the_sb3_options_by_name(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["train", "Knight-v0", "--backend", "rllib", "--out", str(out)]
    assert cli.main([*args, "--net-depth", "6", "--teacher-workers", "2"]) == 2
    assert "--net-depth, --teacher-workers: the sb3 backend's options" in capsys.readouterr().err
    assert not out.exists()


def test_play_in_the_terminal(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "one.xsb"
    path.write_text("#######\n#     #\n# .$@ #\n#     #\n#######\n")
    # up, undo it, an unknown key, then left: the move becomes the winning push
    monkeypatch.setattr("sys.stdin", io.StringIO("w\nu\nz\na\nq\n"))
    assert cli.main(["play", "Sokoban-v0", "--set", f"levels={path}"]) == 0
    out = capsys.readouterr().out
    assert "# .$@ #" in out  # the start was drawn
    assert "'z' is not a key of this game" in out
    assert "episode won: return 10.90 in 1 steps" in out


ROOM = "#######\n#     #\n# .$@ #\n#     #\n#######\n"


def played(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           args: list[str], lines: str) -> str:  # fmt: skip
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    assert cli.main(["play", *args]) == 0
    return capsys.readouterr().out


def test_play_reads_arrows_words_and_whole_moves(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "one.xsb"
    path.write_text(ROOM)
    sokoban = ["Sokoban-v0", "--set", f"levels={path}"]
    # the Up arrow's escape sequence (and the application-mode one) is one move up, not
    # three keys of which 'A' would move left; 'up' is a move, not undo then 'p'
    for up in ("\x1b[A", "\x1bOA", "up", "UP", "k"):
        out = played(monkeypatch, capsys, sokoban, f"{up}\nq\n")
        assert "#   @ #" in out and "steps 1" in out, up
    out = played(monkeypatch, capsys, sokoban, "up down left\nq\n")  # three moves: won
    assert "episode won" in out and "in 3 steps" in out
    # a line with a part the game does not know plays nothing of it
    out = played(monkeypatch, capsys, sokoban, "w z\nq\n")
    assert "'w z' is not a key of this game" in out and "steps 1" not in out
    # Minesweeper: '4 4' is one cell, 'f 1,1' a flag where flags are on
    mines = ["Minesweeper-v0", "--seed", "0", "--set", "allow_flags=true"]
    out = played(monkeypatch, capsys, mines, "4 4\nf 1,1\nq\n")
    assert "steps 1" in out and "steps 2" in out and "steps 3" not in out
    assert "1 # F # # #" in out  # the flag, on row 1 column 1


def test_play_shows_the_keys_and_numbers_the_board(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = played(monkeypatch, capsys, ["Minesweeper-v0", "--seed", "0"], "?\nq\n")
    assert out.count("keys: R C reveals the cell") == 2  # at the start and for '?'
    lines = out.splitlines()
    assert lines[0] == "  0 1 2 3 4 5 6 7 8" and lines[9].startswith("8 # ")
    out = played(monkeypatch, capsys, ["Pikachu-v0", "--seed", "0"], "q\n")
    assert out.splitlines()[0].split() == [str(c) for c in range(16)]  # two-digit tiles
    out = played(monkeypatch, capsys, ["Knight-Large-v0", "--seed", "0"], "q\n")
    assert out.startswith("###")  # walls between cells: drawn as they are
    with pytest.raises(SystemExit):
        cli.main(["play", "--help"])
    text = capsys.readouterr().out
    for game in ("Sokoban-v0", "SokobanPush-v0", "Minesweeper-v0", "Knight-v0", "Pikachu-v0",
                 "Lines98-v0"):  # fmt: skip
        assert game in text.split("keys of each game")[1]


def test_play_lines98_by_cells(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # seed 0 has a ball on (3, 0); move it one cell right, then an off-board move
    monkeypatch.setattr("sys.stdin", io.StringIO("3,0,3,1\n9,9,9,9\nq\n"))
    assert cli.main(["play", "Lines98-Small-v0", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "score 0  moves 1" in out and "'9,9,9,9' is not a key" in out


def test_set_parses_json_values() -> None:
    assert cli.base.parse_settings(["rows=8", "levels=a.xsb", "flag=true"]) == {
        "rows": 8, "levels": "a.xsb", "flag": True,
    }  # fmt: skip
    with pytest.raises(ValueError, match="key=value"):
        cli.base.parse_settings(["rows"])


def test_readme_commands_use_only_real_subcommands() -> None:
    from pathlib import Path

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert "<!-- test-command -->" in readme and "<!-- main-command -->" in readme
    assert "grid-games compare" in readme
    for line in readme.splitlines():
        if line.startswith("grid-games "):
            name = line.split()[1]
            assert name in cli.COMMANDS, f"README uses unknown subcommand {name!r}"


def test_solve_a_collection(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two.xsb"
    path.write_text(
        "; a\n#######\n#     #\n# .$@ #\n#     #\n#######\n\n"
        "; b\n########\n#      #\n# . $ @#\n#      #\n########\n"
    )
    assert cli.main(["solve", str(path), "--mode", "optimal", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["level"] for r in rows] == [1, 2]
    assert [r["pushes"] for r in rows] == [1, 2]
    for r in rows:
        assert {"level", "solved", "solution", "pushes", "moves", "seconds"} <= set(r)
    assert cli.main(["solve", str(path)]) == 0
    out = capsys.readouterr().out
    assert "solved 2/2" in out and "not solved: none" in out
    assert cli.main(["solve", str(path), "--level", "2"]) == 0
    assert "pushes 2" in capsys.readouterr().out
    assert cli.main(["solve", str(path), "--level", "3"]) == 2


# eight boxes and a goal room: optimal mode searches it for minutes (made for these tests)
HARD_LEVEL = (
    "; hard\n###########\n#    #....#\n# $  #....#\n#  $      #\n# $ $#    #\n"
    "#  $ ######\n# $ $ $  #\n#@       #\n##########\n\n"
    "; easy\n#######\n#     #\n# .$@ #\n#     #\n#######\n"
)


def test_solve_prints_progress_and_ctrl_c_stops_it_with_what_it_knows(
    tmp_path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from grid_envs.sokoban import solver

    path = tmp_path / "hard.xsb"
    path.write_text(HARD_LEVEL)
    monkeypatch.setattr(solver, "PROGRESS_EVERY", 0.0)
    lines: list[str] = []
    real = solver.SolveProgress.line

    def line(self: solver.SolveProgress) -> str:
        lines.append(real(self))
        if len(lines) == 4:
            raise KeyboardInterrupt  # Ctrl-C, between two turns of the search
        return lines[-1]

    monkeypatch.setattr(solver.SolveProgress, "line", line)
    assert cli.main(["solve", str(path), "--mode", "optimal", "--max-seconds", "60"]) == 130
    captured = capsys.readouterr()
    progress = [x for x in captured.err.splitlines() if x.startswith("level 1: ")]
    assert len(progress) == 3 and all("states" in x and "best bound" in x for x in progress)
    assert "interrupted in level 1 after" in captured.err
    assert "the levels before it were printed" in captured.err
    rows = [x.split() for x in captured.out.splitlines() if x.strip()[:1].isdigit()]
    assert [row[:2] for row in rows] == [["1", "gave_up"]]  # level 2 was never started
    # --quiet: no progress lines; --memory: a search past it gives up and says so
    monkeypatch.setattr(solver.SolveProgress, "line", real)
    argv = ["solve", str(path), "--level", "1", "--mode", "optimal", "--memory", "200K"]
    assert cli.main([*argv, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "memory limit" in captured.out and "level 1:" not in captured.err
    assert cli.main(["solve", "samples", "--game", "knight", "--memory", "1G"]) == 2
    assert "the knight solver takes no memory bound" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        cli.main([*argv[:-1], "lots"])
    assert refused.value.code == 2 and "'lots' is not a size" in capsys.readouterr().err
    # --threads: a level's searches on two threads, the answer replayed as on one
    assert cli.main(["solve", str(path), "--level", "1", "--threads", "2", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["solved"] and row["level"] == 1
    assert cli.main(["solve", "samples", "--game", "knight", "--threads", "2"]) == 2
    assert "the knight solver runs on one thread" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        cli.main(["solve", str(path), "--threads", "0"])
    assert refused.value.code == 2


def test_play_in_a_pygame_window(tmp_path) -> None:
    """A real pygame window (SDL's dummy video driver): keys come in as events."""
    import gymnasium as gym
    import pygame

    path = tmp_path / "one.xsb"
    path.write_text("#######\n#     #\n# .$@ #\n#     #\n#######\n")
    env = gym.make("GridGames/Sokoban-v0", render_mode="human", levels=str(path))
    base = env.unwrapped
    env.reset(seed=0)  # opens the window
    for key in (pygame.K_a, pygame.K_ESCAPE):
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key))
    pushed = []
    original_step = env.step

    def spy(action):  # record what the window's keys turned into
        pushed.append(action)
        return original_step(action)

    env.step = spy  # type: ignore[method-assign]
    assert cli.play.play_window(env, base, seed=0) == 0
    assert pushed == [4 + 2]  # 'a' became the push left that solves the level
    env.close()


def test_play_in_a_window_without_a_display_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No display and no SDL driver named: one line and exit 2, not a silent wait; an env
    made with render_mode="human" refuses to open its window alike."""
    import gymnasium as gym

    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert cli.main(["play", "Knight-v0", "--window"]) == 2
    err = capsys.readouterr().err
    assert "--window: no display" in err and "leave --window out" in err
    assert len(err.strip().splitlines()) == 1
    env = gym.make("GridGames/Knight-v0", render_mode="human")
    with pytest.raises(OSError, match="no display"):
        env.reset(seed=0)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import grid_envs

    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"grid-games {grid_envs.__version__}"


def test_train_policy_choices_are_the_trainers_policies() -> None:
    # the CLI lists them itself (importing the trainer would slow every command's start)
    from agents.nets.registry import policy_names

    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    train = commands.choices["train"]
    policy = next(a for a in train._actions if "--policy" in a.option_strings)
    assert tuple(policy.choices) == policy_names()
    assert all(name in policy.help for name in policy_names())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "Sokoban-v0", "--set", "bogus=1"], "takes no setting 'bogus'"),
        (["train", "Sokoban-v0", "--set", "rows=10.5", "--out", "{tmp}/run"], "must be an int"),
        (["train", "Sokoban-v0", "--set", "novalue"], "--set expects key=value"),
        (["train", "Sokoban-v0", "--n-envs", "0"], "--n-envs: must be at least 1"),
        (["train", "Sokoban-v0", "--timesteps", "0"], "--timesteps: must be at least 1"),
        (["train", "Minesweeper-v0", "--set", "mines=1000", "--out", "{tmp}/run"], "do not fit"),
        (["train", "Sokoban-v0", "--out", "{tmp}/file.txt"], "is a file; a run folder"),
        (["train", "Knight-v0", "--device", "tpu9", "--out", "{tmp}/run"], "device must be"),
        (["train", "Knight-v0", "--teacher-lr", "0.1", "--dagger-rounds", "2"],
         "--dagger-rounds, --teacher-lr: options of a --teacher run"),
        (["train", "Knight-v0", "--teacher", "dijkstra", "--warm-states", "9"],
         "--warm-states: an option of --warm-teacher"),
        (["train", "Knight-v0", "--teacher-steps", "9"],
         "--teacher-steps is now called --teacher-states"),
        (["train", "Knight-v0", "--warm-steps", "9"], "--warm-steps is now called --warm-states"),
        (["train", "Knight-v0", "--time-limit", "9"], "--time-limit is now called --max-seconds"),
        (["iterate", "Knight-v0", "--time-limit", "9"], "--time-limit is now called --max-seconds"),
        (["solve", "x.xsb", "--time-limit", "9"], "--time-limit is now called --max-seconds"),
        (["train", "Knight-v0", "--gamma", "1.5"], "--gamma: must be at least 0 and at most 1"),
        (["generate", "sokoban", "--out", "{tmp}"], "is a folder; give a file name"),
        (["generate", "sokoban", "--out", "{tmp}/no/x.xsb"], "does not exist"),
        (["generate", "knight", "--rows", "0", "--out", "{tmp}/k.txt"], "--rows: must be at"),
        (["generate", "knight", "--rows", "100000", "--cols", "100000", "--out", "{tmp}/k.txt"],
         "a generated maze has at most 4,000,000 cells"),
        (["generate", "sokoban", "--count", "0", "--out", "{tmp}/s.xsb"], "--count: must be"),
        (["generate", "knight", "--set", "bogus=1", "--out", "{tmp}/k.txt"],
         "the Knight generator takes no setting 'bogus'; its settings: cols, item_density"),
        (["generate", "sokoban", "--set", "min_pushes=500", "--out", "{tmp}/s.xsb"],
         "no level with 4 boxes and at least 500 pushes"),
        (["solve", "{tmp}/file.txt", "--max-seconds", "nan"], "--max-seconds: must be a finite"),
        (["solve", "{tmp}/file.txt", "--max-seconds", "0"], "--max-seconds: must be a finite"),
        (["solve", "{tmp}", "--max-seconds", "1"], "is a folder, not a file"),
        (["eval", "Sokoban-v0", "--agent", "{tmp}/file.txt"], "no settings.json"),
        (["eval", "Sokoban-v0", "--agent", "{tmp}/model.zip"], "no model file"),
        (["eval", "Knight-v0", "--agent", "{tmp}", "--sample"], "sampling needs a"),
        (["eval", "Knight-v0", "--agent", "dijkstra", "--sample"], "--sample is for a trained"),
        (["eval", "Nope-v0"], "unknown env 'Nope-v0'"),
        (["bench", "--seconds", "0"], "--seconds: must be a finite"),
        (["demos", "Sokoban-v0", "--episodes", "0"], "--episodes: must be at least 1"),
        (["nope"], "invalid choice"),
        (["compare", "--no-train", "--out", "{tmp}/file.txt"], "is a file; compare writes"),
        (["compare", "--no-train", "--scratch", "--budget", "2"],
         "--budget, --scratch: options of the training --no-train leaves out"),
        (["play", "Knight-v0", "--set", "render_mode=ansi"],
         "--set render_mode: the command chooses how the game is drawn"),
        (["demos", "Knight-v0", "--seed", str(2**64)], "--seed: must be at most"),
        (["eval", "Lines98-v0", "--set", "target_score=100000000000000000000"],
         "target_score must be within an int64"),
        (["bench", "--seconds", "1e-300", "--envs", "Knight-v0"],
         "a timed window must last at least 0.01 s"),
        (["train", "Knight-v0", "--n-envs", "1", "--n-steps", "1", "--out", "{tmp}/run"],
         "a rollout of 1 state (n_envs x n_steps) cannot normalise PPO's advantages"),
        (["train", "Knight-v0", "--set", "observation_mode=compact", "--out", "{tmp}/run"],
         "observation_mode='compact': the networks read the game's planes"),
    ],
)  # fmt: skip
def test_expected_failures_are_one_line_and_exit_2(
    argv: list[str], message: str, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file.txt").write_text("notes\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        code = cli.main(argv)
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "run").exists()  # a refused run writes no folder


def test_train_says_when_a_rollout_is_more_than_the_steps_asked(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["train", "Minesweeper-v0", "--set", "rows=5", "--set", "cols=5", "--set", "mines=3",
            "--timesteps", "64", "--n-envs", "4", "--out", str(tmp_path / "run"),
            "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    trained = int(out.split("trained ")[1].split(" steps")[0])
    assert trained > 64
    assert f"PPO trains whole rollouts of 4 envs x {trained // 4} steps" in out
    assert f"64 requested, {trained:,} trained" in out


def test_train_takes_ppo_sizes_and_evaluates_at_most_once_a_rollout(tmp_path) -> None:
    """--n-steps, --batch-size, --n-epochs and --eval-freq reach the run's settings; an
    evaluation every 10 steps comes once a rollout of 4 x 8 steps, not at every step."""
    out = tmp_path / "run"
    argv = ["train", "Minesweeper-v0", "--set", "rows=5", "--set", "cols=5", "--set", "mines=3",
            "--timesteps", "96", "--n-envs", "4", "--n-steps", "8", "--batch-size", "16",
            "--n-epochs", "2", "--eval-freq", "10", "--out", str(out), "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 0
    settings = json.loads((out / "settings.json").read_text())
    assert (settings["n_steps"], settings["batch_size"], settings["n_epochs"]) == (8, 16, 2)
    assert settings["eval_freq"] == 10
    evaluated = np.load(out / "eval" / "evaluations.npz")["timesteps"].tolist()
    assert [t for t in evaluated if t] == [32, 64, 96]  # once a rollout of 32 steps


# each command with an argument that makes it stop before any work (an unknown env, a
# missing file), so that an option value the parser accepts still ends at once
REFUSED = {
    "list": ["list"], "play": ["play", "Nope-v0"], "solve": ["solve", "{tmp}/none.xsb"],
    "generate": ["generate", "knight", "--out", "{tmp}"], "train": ["train", "Nope-v0"],
    "compare": ["compare", "--envs", "Nope-v0"], "bench": ["bench", "--envs", "Nope-v0"],
    "demos": ["demos", "Nope-v0"], "eval": ["eval", "Nope-v0"], "iterate": ["iterate", "Nope-v0"],
}  # fmt: skip


def typed_options() -> list[tuple[str, str]]:
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [(name, action.option_strings[0]) for name, sub in commands.choices.items()
            for action in sub._actions
            if action.option_strings and action.nargs != 0 and action.type is not None]  # fmt: skip


def test_ctrl_c_and_errors_of_the_package_itself_are_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C names the command and what it kept; an error that is not a refusal (a bug)
    is one line naming the command and exits 1; --debug shows its traceback instead."""

    def stop(_: object) -> int:
        raise KeyboardInterrupt

    def broken(_: object) -> int:
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setitem(cli.COMMANDS, "generate", stop)
    assert cli.main(["generate", "knight", "--out", "x.txt"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "grid-games generate: interrupted; no file was written"
    monkeypatch.setitem(cli.COMMANDS, "list", broken)
    assert cli.main(["list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("grid-games list: ZeroDivisionError: float division by zero")
    assert "--debug" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(ZeroDivisionError):
        cli.main(["--debug", "list"])


def test_every_command_has_a_refused_form() -> None:
    assert set(REFUSED) == set(cli.COMMANDS)


@pytest.mark.parametrize(("command", "option"), typed_options())
def test_every_typed_option_refuses_nonsense_in_one_line(
    command: str, option: str, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command's every typed option, given text, not-a-number, a negative and a
    fraction: exit code 2 and one line on stderr, never a traceback (text always names the
    option; a value the parser accepts ends at the command's own refusal)."""
    base = [a.replace("{tmp}", str(tmp_path)) for a in REFUSED[command]]
    for value in ("x", "nan", "-1", "2.5", "1e999"):
        try:
            code = cli.main([*base, option, value])
        except SystemExit as stop:
            code = stop.code
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, (value, err)
        assert "Traceback" not in err
        if value == "x":
            assert option in err, err


def test_an_unknown_option_or_a_missing_argument_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv in (["list", "--bogus"], *[[name] for name in cli.COMMANDS if name != "list"]):
        if argv == ["compare"] or argv == ["bench"]:
            continue  # these run with no argument at all
        with pytest.raises(SystemExit) as stop:
            cli.main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and len(err.strip().splitlines()) == 1, (argv, err)


def test_every_argument_has_help() -> None:
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {action.option_strings or action.dest}"
               for name, sub in commands.choices.items() for action in sub._actions
               if not isinstance(action, argparse._HelpAction) and not action.help]  # fmt: skip
    assert not missing


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_command_and_argument_has_help() -> None:
    parser = cli.build_parser()
    commands = _subparsers(parser)
    assert set(commands) == set(cli.COMMANDS)  # each name registered once, with its handler
    for name, sub in commands.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            what = f"{name} {'/'.join(action.option_strings) or action.dest}"
            if type(action).__name__ == "_Renamed":  # an old name, refused: not in the help
                assert action.help == argparse.SUPPRESS, what
                continue
            assert action.help and action.help != argparse.SUPPRESS, what


def test_shared_options_mean_one_thing_everywhere() -> None:
    """--seed, --json, --threads, --no-progress and --set: the same type and action in
    every command that takes them (each defined once, in cli.py's shared options)."""
    seen: dict[str, set[tuple[object, ...]]] = {}
    for sub in _subparsers(cli.build_parser()).values():
        for action in sub._actions:
            for flag in set(action.option_strings) & {"--seed", "--json", "--threads",
                                                       "--no-progress", "--set"}:  # fmt: skip
                kind = (type(action), getattr(action.type, "__qualname__", action.type))
                seen.setdefault(flag, set()).add(kind)
    assert set(seen) == {"--seed", "--json", "--threads", "--no-progress", "--set"}
    assert all(len(kinds) == 1 for kinds in seen.values()), seen


def test_agent_help_names_every_registered_agent() -> None:
    from agents.registry import agent_names

    for name in ("eval", "demos"):
        (agent,) = [a for a in _subparsers(cli.build_parser())[name]._actions
                    if "--agent" in a.option_strings]  # fmt: skip
        assert all(n in agent.help for n in agent_names()), name


def test_solve_serves_every_game_that_declares_a_solver(capsys: pytest.CaptureFixture[str]) -> None:
    """The Knight's maps by Dijkstra: each route replayed at the exact energy, its cost the
    map's cheapest."""
    from grid_envs.knight.levels import samples

    assert cli.main(["solve", "samples", "--game", "knight", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["cost"] for r in rows] == [level.cheapest for level in samples()]
    assert all(r["solved"] and len(r["solution"]) == r["moves"] for r in rows)
    assert cli.main(["solve", "samples", "--game", "knight", "--level", "11"]) == 2


def test_outputs_are_not_overwritten_without_force(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """generate keeps an existing file; compare goes on in its own folder, refuses another
    compare's (or one in use), and --force replaces either."""
    from agents.train.runs import run_lock

    level_file = tmp_path / "levels.txt"
    knight = ["generate", "knight", "--out", str(level_file)]
    assert cli.main(knight) == 0
    kept = level_file.read_bytes()
    assert cli.main([*knight, "--seed", "5"]) == 2
    assert "exists already; choose another name or add --force" in capsys.readouterr().err
    assert level_file.read_bytes() == kept
    assert cli.main([*knight, "--seed", "5", "--force"]) == 0 and level_file.read_bytes() != kept
    out = tmp_path / "cmp"
    compare = ["compare", "--no-train", "--envs", "Knight-v0", "--episodes", "2", "--out",
               str(out), "--no-progress"]  # fmt: skip
    assert cli.main(compare) == 0
    table = (out / "table.md").read_text()
    assert cli.main(compare) == 0  # the same command goes on in its own folder
    assert cli.main([*compare, "--episodes", "3"]) == 2
    err = capsys.readouterr().err
    assert "holds a compare with other settings {'episodes': (2, 3)}" in err
    table = (out / "table.md").read_text()
    assert cli.main([*compare, "--episodes", "3"]) == 2
    assert (out / "table.md").read_text() == table  # what the refused run would replace
    with run_lock(out):
        assert cli.main(compare) == 2
    assert "is in use by another run" in capsys.readouterr().err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine\n")
    assert cli.main([*compare, "--out", str(tmp_path / "mine")]) == 2
    assert "holds other files" in capsys.readouterr().err
    assert cli.main([*compare, "--episodes", "3", "--force"]) == 0
    assert json.loads((out / "results.json").read_text())["episodes"] == 3


@pytest.mark.parametrize(
    "more", [["--n-envs", "1048576"], ["--n-steps", "100000000"], ["--net-width", "200000"]]
)
def test_a_training_the_machine_cannot_hold_is_refused_before_anything_is_written(
    more: list[str], tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["train", "Minesweeper-v0", *more, "--out", str(out), "--no-progress"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "would take about" in err and "make --n-envs, --n-steps" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
