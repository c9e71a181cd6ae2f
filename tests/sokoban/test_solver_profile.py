"""benchmarks/solver_profile.py: perf's map of the compiled functions, and its report's sums;
benchmarks/solve_collection.py's ``--levels`` lists."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from solve_collection import level_indices  # noqa: E402
from solver_profile import compiled_shares  # noqa: E402

# one compiled helper, compiled in a fresh process into a cache of its own, then mapped
MAP_SCRIPT = """
import numpy as np
from grid_envs.sokoban.compiled.pruning import sort_few
from solver_profile import perf_map_entries
order = np.array([3, 1, 2], np.int64)
sort_few(order, 3)
assert list(order) == [1, 2, 3]
for address, size, name in perf_map_entries():
    print(address, size, name)
"""


def test_the_map_names_each_compiled_function_where_it_is_defined(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", MAP_SCRIPT], capture_output=True, text=True, timeout=300,
        cwd=ROOT / "benchmarks",
        env={"NUMBA_CACHE_DIR": str(tmp_path), "PATH": "", "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    names = {row[2]: (int(row[0]), int(row[1])) for row in rows}
    address, size = names["grid_envs.sokoban.compiled.pruning.sort_few"]
    assert address > 0 and 0 < size <= 1 << 20
    starts = sorted(int(row[0]) for row in rows)
    assert len(set(starts)) == len(starts)  # one entry an address


def test_the_report_sums_the_compiled_code_by_function() -> None:
    text = """
    40.00%  [JIT] tid 7                 [.] grid_envs.sokoban.compiled.loop.run
    10.50%  libpython3.11.so.1.0        [.] _PyEval_EvalFrameDefault
     5.25%  [JIT] tid 7                 [.] grid_envs.sokoban.compiled.pruning.flood
     4.75%  [JIT] tid 8                 [.] grid_envs.sokoban.compiled.pruning.flood
    """
    assert compiled_shares(text) == {
        "grid_envs.sokoban.compiled.loop.run": 40.0,
        "grid_envs.sokoban.compiled.pruning.flood": 10.0,
    }


def test_level_lists_are_read_and_checked() -> None:
    assert level_indices("1-3,7", 10) == [0, 1, 2, 6]
    for bad, why in (("0", "outside"), ("3-12", "outside"), ("x", "not a level")):
        with pytest.raises(SystemExit, match=why):
            level_indices(bad, 10)
