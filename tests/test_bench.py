"""``grid-games bench``: every figure is there, positive, and the JSON round-trips."""

from __future__ import annotations

import json

import pytest

from grid_envs.bench import bench, table
from grid_games import cli


def test_bench_reports_every_figure_next_to_frozenlake() -> None:
    settings = {"GridGames/Knight-v0": {"level_pool": 30}}
    report = bench(("GridGames/Knight-v0",), (1, 8), window=0.05, repeats=1, settings=settings)
    assert report["frozenlake_steps_per_s"] > 0
    (game,) = report["games"]
    assert game["env"] == "GridGames/Knight-v0" and game["vector_mode"] in (
        "sync",
        "vector_entry_point",
    )
    assert game["single_steps_per_s"] > 0 and game["resets_per_s"] > 0
    assert set(game["batched_steps_per_s"]) == {"1", "8"}
    assert all(rate > 0 for rate in game["batched_steps_per_s"].values())
    assert game["ratio_to_frozenlake"] == pytest.approx(
        game["single_steps_per_s"] / game["frozenlake_steps_per_s"]
    )
    assert game["kwargs"] == {"level_pool": 30} and game["pool_fill_s"] > 0
    assert game["pool_levels"] == 30
    assert "| Knight-v0 |" in table(report) and "{'level_pool': 30}" in table(report)
    assert "pool of 30 levels" in table(report)


def test_bench_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "--envs", "Minesweeper-v0", "--batches", "2", "--seconds", "0.05"]
    assert cli.main([*args, "--repeats", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"][0]["env"] == "GridGames/Minesweeper-v0"
    assert "machine" in report and "date" in report
