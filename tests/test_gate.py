"""Nothing unchecked reaches the compiled rules: every game's boards, levels, settings and
tampered snapshots (``tests/gate_driver.py``) are refused in one ``ValueError`` or played
within the contract, in a process of its own so that a crash or an abort fails the test,
and again with numba's bounds checks on (``NUMBA_BOUNDSCHECK=1``, compiled afresh into a
cache of their own), where a read out of bounds raises instead of reading memory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import grid_envs

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="session")
def bounds_checked_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the bounds-checked compiled rules are cached: apart from the usual ones, which
    were compiled without the checks and would be loaded instead."""
    return tmp_path_factory.mktemp("numba-boundscheck")


@pytest.mark.parametrize("checked", [False, True], ids=["compiled", "bounds-checked"])
@pytest.mark.parametrize("game", grid_envs.GAMES)
def test_bad_boards_levels_settings_and_snapshots_are_refused_or_played(
    game: str, checked: bool, bounds_checked_cache: Path
) -> None:
    env = {**os.environ}
    if checked:
        env |= {"NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(bounds_checked_cache)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.gate_driver", game], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-4000:]}"
    assert f"{game}: " in done.stdout and " refused, " in done.stdout
