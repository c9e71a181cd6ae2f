"""``grid-games bench``: every figure is there, positive, and the JSON round-trips."""

from __future__ import annotations

import json

import pytest

from grid_envs.bench import _paired_rates, bench, table
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
    # a ratio is the median of its windows' own (one window here: the plain ratio)
    assert game["ratio_to_frozenlake"] == pytest.approx(
        game["single_steps_per_s"] / game["frozenlake_steps_per_s"]
    )
    assert set(game["batched_ratio_to_frozenlake"]) == {"1", "8"}
    assert all(r > 0 for r in game["batched_ratio_to_frozenlake"].values())
    assert game["kwargs"] == {"level_pool": 30} and game["pool_fill_s"] > 0
    assert game["pool_levels"] == 30
    assert "| Knight-v0 |" in table(report) and "{'level_pool': 30}" in table(report)
    assert "pool of 30 levels" in table(report)
    rate, ratio = game["batched_steps_per_s"]["8"], game["batched_ratio_to_frozenlake"]["8"]
    assert f"{rate:,.0f} ({ratio:.2f}x)" in table(report)


def test_a_ratio_is_the_median_of_its_paired_windows_own_ratios() -> None:
    # FrozenLake then the game, three times, on a machine that drifts between the pairs:
    # the windows' ratios are 0.5, 0.5 and 0.9, so the ratio is 0.5, where the ratio of
    # the two medians (1,800 / 2,000) would be 0.9
    speeds = iter([1000, 500, 4000, 2000, 2000, 1800])

    def timed(deadline: float) -> tuple[int, float]:
        return next(speeds), 1.0

    rate, reference, ratio = _paired_rates(0.0, 3, timed, timed)
    assert ratio == pytest.approx(0.5)
    assert (rate, reference) == (1800, 2000)


def test_bench_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "--envs", "Minesweeper-v0", "--batches", "2", "--seconds", "0.05"]
    assert cli.main([*args, "--repeats", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"][0]["env"] == "GridGames/Minesweeper-v0"
    assert "machine" in report and "date" in report


def _run(args: list[str]) -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, *args], cwd=root, check=True, capture_output=True, text=True)


def test_the_scaling_mode_writes_its_record(tmp_path) -> None:
    """``train_speed.py --scaling --quick``: a row per number of envs, every figure
    positive, the network's FLOPs counted and the matrix product's ceiling beside them."""
    record = tmp_path / "scaling.json"
    _run(["benchmarks/train_speed.py", "--scaling", "--quick", "--devices", "cpu",
          "--n-envs", "4", "8", "--n-steps", "4", "--iterations", "2",
          "--json", str(record)])  # fmt: skip
    report = json.loads(record.read_text())
    assert report["mode"] == "scaling" and report["matmul_flop_s"]["cpu"]["fp32"] > 0
    assert [r["n_envs"] for r in report["rows"]] == [4, 8]
    for row in report["rows"]:
        assert row["env"] == "GridGames/Minesweeper-v0" and row["device"] == "cpu"
        for key in ("env_alone", "collection", "update", "iteration", "collection_flop_s",
                    "update_flop_s"):  # fmt: skip
            assert row[key] > 0, key
        assert row["train_flops"] > 2 * row["forward_flops"] > 0  # backward costs more


def test_the_cold_start_benchmark_times_a_fresh_process(tmp_path) -> None:
    record = tmp_path / "cold.json"
    _run(["benchmarks/cold_start.py", "--envs", "GridGames/Knight-v0", "--num-envs", "8",
          "--seconds", "4", "--repeats", "1", "--json", str(record)])  # fmt: skip
    (row,) = json.loads(record.read_text())["rows"]
    assert row["env"] == "GridGames/Knight-v0" and row["steps_per_s"] > 0
    assert row["ratio"] == pytest.approx(row["steps_per_s"] / row["frozenlake_steps_per_s"])


def test_the_shaping_benchmark_writes_its_record_and_evaluates_raw_rewards(tmp_path) -> None:
    """``shaping.py --quick``: both arms' runs, pooled, judged and drawn; the held-out
    figures are the env's own rewards (the shaped model replayed on the raw env gives the
    recorded return); a rerun goes on from the finished runs instead of training again."""
    from agents import evaluate
    from agents.train.models import PolicyAgent

    out, record = tmp_path / "runs", tmp_path / "shaping.json"
    args = ["benchmarks/shaping.py", "--quick", "--budget", "3", "--episodes", "6",
            "--out", str(out), "--record", str(record)]  # fmt: skip
    _run(args)
    report = json.loads(record.read_text())
    assert record.with_suffix(".png").stat().st_size > 1000
    (name,) = report["settings"]
    row = report["settings"][name]
    for arm in ("plain", "shaped"):
        assert (
            row[arm]["runs"] == 1 and row[arm]["episodes"] == 6 and row[arm]["steps_per_second"] > 0
        )
    assert row["verdict"] and row["shaping_speed"] > 0 and row["potential"] == "distance"
    shaped = next(r for r in report["runs"] if r["arm"] == "shaped")
    assert shaped["shaping"] == "distance" and shaped["curve"] and shaped["timesteps"] > 0
    agent = PolicyAgent.load(str(out / "runs" / f"{name}-shaped-s0" / "model.zip"))
    raw = evaluate("GridGames/Knight-v0", agent, 6, 1_000_000,
                   {"energy_slack": 2.0, "pool_seed": 1})  # fmt: skip
    assert raw.mean_return == pytest.approx(shaped["final"]["mean_return"], abs=1e-6)
    _run(args)  # the runs are kept: the same figures, no training
    assert json.loads(record.read_text())["runs"] == report["runs"]
    taught = next(r for r in report["runs"] if r["arm"] == "input")
    assert taught["potential_input"] == "distance" and taught["shaping"] is None
    assert row["input"]["runs"] == 1 and row["input_verdict"] and row["input_speed"] > 0


def test_the_shaping_record_is_built_from_the_runs_another_record_kept(tmp_path) -> None:
    """``--runs-from`` keeps an earlier record's runs; ``--kept-only`` trains nothing and
    pools what is kept, a sweep's arm included, leaving out the arms that have no runs."""
    first, out = tmp_path / "first.json", tmp_path / "again"
    runs = str(tmp_path / "runs")
    _run(["benchmarks/shaping.py", "--quick", "--budget", "2", "--episodes", "4", "--arms",
          "plain", "--scales", "0.5", "--out", runs, "--record", str(first)])  # fmt: skip
    again = tmp_path / "again.json"
    _run(["benchmarks/shaping.py", "--kept-only", "--runs-from", str(first), "--scales", "0.5",
          "--out", str(out), "--record", str(again)])  # fmt: skip
    before, after = json.loads(first.read_text()), json.loads(again.read_text())
    assert after["runs"] == before["runs"] and list(after["settings"]) == ["knight-slack-cnn"]
    row = after["settings"]["knight-slack-cnn"]
    assert {"plain", "shaped-x0.5"} <= set(row) and "input" not in row and "shaped" not in row
    assert row["shaped-x0.5_verdict"] and before["runs"][1]["shaping_scale"] == 0.5


def test_the_step_profile_times_every_hook_of_a_native_batch() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from step_profile import HOOKS, profile

    result = profile("GridGames/Lines98-Small-v0", 16, steps=3, warm_up=2)
    assert set(result["hooks_ms"]) == set(HOOKS)
    assert result["hooks_ms"]["_apply"] > 0 and result["hooks_ms"]["_observations"] > 0
    hooks = result["hooks_ms"]  # the step runs the hooks once each (and _start as it needs)
    parts = hooks["_apply"] + hooks["_all_infos"] + hooks["_observations"]
    assert 0 < parts <= result["step_ms"]
    assert result["env_steps_per_s"] == pytest.approx(16e3 / result["step_ms"])
