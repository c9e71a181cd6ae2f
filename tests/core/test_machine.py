"""What the machine can hold and run: sizes checked before anything is allocated, worker
counts held to the usable cores."""

from __future__ import annotations

import gymnasium as gym
import pytest

from grid_envs.core import machine


def test_a_size_over_half_the_available_memory_is_refused_naming_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(machine, "available_bytes", lambda: 4 * 2**30)
    machine.check_fits("a table", 2**30)
    with pytest.raises(ValueError, match=r"a table would take about 3.0 GiB, more than the "
                                         r"2.0 GiB .*; make it smaller"):  # fmt: skip
        machine.check_fits("a table", 3 * 2**30, "make it smaller")
    assert machine.available_bytes() == 4 * 2**30 and machine.usable_cores() >= 1


def test_a_batch_the_machine_cannot_hold_is_refused_before_it_is_allocated() -> None:
    with pytest.raises(ValueError, match=r"a batch of 1,048,576 PikachuEnv envs \(10,296 "
                                         r"actions.* would take about 40.4 GiB"):  # fmt: skip
        gym.make_vec("GridGames/Pikachu-v0", 2**20, vectorization_mode="vector_entry_point")


def test_workers_are_held_to_the_usable_cores_with_a_note(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from grid_games import cli

    monkeypatch.setattr(machine, "usable_cores", lambda: 2)
    assert machine.capped_workers(2, "--workers") == (2, None)
    assert cli.base.capped(8, "--teacher-workers") == 2
    err = capsys.readouterr().err
    assert err.strip() == ("grid-games: --teacher-workers 8: this process may use 2 cores, so 2 "
                           "run instead (more would only take turns)")  # fmt: skip
    assert cli.base.capped(3, "--num-env-runners", spare=1) == 1


def test_a_ray_address_that_does_not_answer_is_refused_in_seconds() -> None:
    import time

    from agents.train.rllib import check_reachable

    started = time.perf_counter()
    with pytest.raises(ValueError, match="no Ray cluster answered there within 1 s"):
        check_reachable("127.0.0.1:9", seconds=1.0)  # the discard port: nothing listens
    assert time.perf_counter() - started < 5
    with pytest.raises(ValueError, match="give host:port"):
        check_reachable("nowhere")
    check_reachable("auto")
