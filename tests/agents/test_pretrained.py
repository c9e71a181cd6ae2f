"""The networks shipped with the package: each loads, plays legal moves, wins the share of
20 held-out episodes its card states (or scores its points, Lines98), and guides a search
from the command line. Marked ``pretrained``: CI runs these in both of its environments,
the main one and the RLlib one, whose Ray pins an older gymnasium than the networks were
saved under."""

from __future__ import annotations

import json

import pytest

from agents import evaluate
from agents.compare import search_player
from agents.evaluation import load_policy
from agents.pretrained import available, card, model_path
from agents.search import search_defaults
from grid_games import cli

pytestmark = pytest.mark.pretrained

SHIPPED = available()
POOLS = ("GridGames/Sokoban", "GridGames/Knight")  # held-out levels: a pool never trained on


def test_every_shipped_model_has_a_card_that_says_how_to_make_it() -> None:
    assert {"GridGames/Knight-v0", "GridGames/Lines98-v0"} <= set(SHIPPED)
    for env_id in SHIPPED:
        settings = card(env_id)
        assert settings["env_id"] == env_id
        assert any(command.startswith("grid-games ") for command in settings["reproduce"])
        assert settings["smoke"]["episodes"] == 20
        assert model_path(env_id).stat().st_size < 5_000_000
    with pytest.raises(ValueError, match="no pretrained model for GridGames/Lines98-Small-v0"):
        model_path("GridGames/Lines98-Small-v0")


# what a card's train command must give as the card says (the rest: the machine, the time)
REPRODUCED = ("env_kwargs", "policy", "teacher", "teacher_states", "dagger_rounds",
              "teacher_epochs", "net_width", "net_depth", "shaping", "algo", "seed")  # fmt: skip


@pytest.mark.parametrize("env_id", SHIPPED)
def test_a_card_train_command_gives_the_settings_the_card_holds(env_id: str) -> None:
    settings = card(env_id)
    command = next(c for c in settings["reproduce"] if c.startswith("grid-games train "))
    args = cli.build_parser().parse_args(command.split()[1:])
    config = cli.train.train_config(cli.base.env_id(args.env), args)
    for key in REPRODUCED:
        assert getattr(config, key) == settings[key], (env_id, key)


@pytest.mark.parametrize("env_id", SHIPPED)
def test_a_shipped_model_wins_its_stated_share(env_id: str) -> None:
    smoke = card(env_id)["smoke"]
    agent, board = load_policy(str(model_path(env_id)), env_id, sample=smoke["sample"])
    if env_id.startswith(POOLS):
        board = {**board, "pool_seed": 1}
    result = evaluate(env_id, agent, episodes=20, seed=1_000_000, env_kwargs=board)
    if "points_at_least" in smoke:
        assert result.mean_return >= smoke["points_at_least"], (env_id, result.mean_return)
    else:
        assert result.wins >= smoke["wins_at_least"], (env_id, result.wins)


@pytest.mark.parametrize("env_id", SHIPPED)
def test_every_shipped_network_plays_alone_and_guides_a_search_from_the_command_line(
    env_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The commands a new user runs first, on every shipped network: loaded, its spaces
    checked against the env's (by what they are, not by their text), and played."""
    name = env_id.split("/")[1]
    short = ["--set", "time_limit=8"] if name.startswith("Lines98") else []
    for agent in (["pretrained"], ["search", "--model", "pretrained", "--simulations", "2"]):
        argv = ["eval", name, "--agent", *agent, "--episodes", "1", "--seed", "1000000",
                "--json", "--no-progress", *short]  # fmt: skip
        assert cli.main(argv) == 0, capsys.readouterr().err
        row = json.loads(capsys.readouterr().out)
        assert row["episodes"] == 1 and row["mean_length"] >= 1


def test_the_shipped_network_guides_a_search_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["eval", "Knight-v0", "--agent", "search", "--model", "pretrained",
            "--simulations", "4", "--episodes", "2", "--seed", "1000000", "--json"]  # fmt: skip
    assert cli.main(args) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["agent"].startswith("search4:") and row["episodes"] == 2
    assert cli.main(["eval", "Knight-v0", "--agent", "pretrained", "--episodes", "2"]) == 0
    assert cli.main(["eval", "Lines98-Small-v0", "--agent", "pretrained"]) == 2
    assert "no pretrained model for GridGames/Lines98-Small-v0" in capsys.readouterr().err
    for variant in ("lds", "levin"):  # every variant is taken
        assert cli.main([*args[:6], "--variant", variant, "--episodes", "1"]) == 0
    capsys.readouterr()
    assert cli.main([*args[:6], "--variant", "exact"]) == 2  # the Knight has no exact solver
    assert "KnightEnv has no exact solver" in capsys.readouterr().err
    assert cli.main([*args[:6], "--leaf-value", "algorithm"]) == 2  # nor a judgement
    assert "KnightEnv has no judgement of positions" in capsys.readouterr().err
    assert cli.main(["eval", "Knight-v0", "--agent", "dijkstra", "--leaf-value", "network"]) == 2
    assert "--leaf-value" in capsys.readouterr().err


def test_the_lines98_search_takes_the_look_aheads_judgement_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["eval", "Lines98-v0", "--agent", "search", "--model", "pretrained",
            "--simulations", "4", "--episodes", "1", "--set", "time_limit=12",
            "--seed", "1000000", "--json"]  # fmt: skip
    for more in (["--variant", "gumbel", "--leaf-value", "algorithm"], []):  # and the default
        assert cli.main([*args, *more]) == 0
        row = json.loads(capsys.readouterr().out)
        assert row["agent"].startswith("search4:") and row["mean_length"] == 12
    assert search_defaults("GridGames/Lines98-v0") == {"variant": "ordered", "simulations": 12}
    assert cli.main([*args, "--replies", "0"]) == 0  # the judge's first step on its candidates
    row = json.loads(capsys.readouterr().out)
    assert row["agent"].startswith("search4r0:") and row["mean_length"] == 12
    assert cli.main([*args, "--variant", "gumbel", "--replies", "0"]) == 2
    assert "replies is a setting of the ordered search" in capsys.readouterr().err
    assert cli.main(["eval", "Lines98-v0", "--agent", "greedy", "--replies", "0"]) == 2
    assert "--replies: options of --agent search" in capsys.readouterr().err
    settings = {"episodes": 1, "network": "pretrained", "simulations": 2, "replies": 0}
    row = search_player("GridGames/Lines98-v0", settings, None, {}, 5)
    assert row is not None and row.label == "search (2 candidates, no replies, pretrained network)"
    assert row.episodes == 1
    assert evaluate("GridGames/Lines98-v0", row.agent, row.episodes).mean_return > 0
