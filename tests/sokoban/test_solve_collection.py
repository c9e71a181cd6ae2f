"""benchmarks/solve_collection.py end to end, on a small file in xsok's level format."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# two small levels of our own, written as xsok writes its level files: a settings header,
# then ``;LEVEL n`` and the board
XSOK_TEXT = """;WALLS
#     0   wall
;MAXLEVEL 2
;LEVEL 1
#######
#@ $ .#
#######
;LEVEL 2
#######
#.    #
# $$@ #
#.    #
#######
"""


def test_solves_an_xsok_file_and_replays_every_answer(tmp_path: Path) -> None:
    levels = tmp_path / "Sokoban.def"
    levels.write_text(XSOK_TEXT)
    out = tmp_path / "rows.jsonl"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "solve_collection.py"), str(levels),
         "--max-seconds", "5", "--json", str(out), "--without", "packing-advice",
         "--reference", "20000"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "solved 2/2" in done.stdout
    assert "without packing-advice" in done.stdout
    # the sitting's speed: the same reference search timed before and after the levels
    reference = re.search(r"reference: ([\d,]+) states a second before the levels, ([\d,]+) after",
                          done.stdout)  # fmt: skip
    assert reference is not None, done.stdout
    assert all(int(rate.replace(",", "")) > 0 for rate in reference.groups())
    assert "at once, on " in done.stdout  # the processor named: a sitting may be its host's
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["title"] for row in rows] == ["1", "2"]
    assert all(row["solved"] and row["pushes"] > 0 for row in rows)


def test_bad_job_and_thread_counts_are_refused_and_shared_cores_named(tmp_path: Path) -> None:
    levels = tmp_path / "Sokoban.def"
    levels.write_text(XSOK_TEXT)
    script = str(ROOT / "benchmarks" / "solve_collection.py")
    for flag in ("--jobs", "--threads"):
        done = subprocess.run(
            [sys.executable, script, str(levels), flag, "0", "--reference", "0"],
            capture_output=True, text=True, timeout=120, cwd=ROOT,
        )  # fmt: skip
        assert done.returncode == 2 and f"argument {flag}: must be at least 1, got 0" in done.stderr
        assert "Traceback" not in done.stderr
    threads = (os.cpu_count() or 1) + 1  # more threads than the machine has cores
    done = subprocess.run(
        [sys.executable, script, str(levels), "--threads", str(threads), "--max-seconds", "5",
         "--reference", "0"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"1 job(s) of {threads} thread(s) share" in done.stderr
    assert "solved 2/2" in done.stdout
    assert "reference:" not in done.stdout


def test_solves_positions_of_a_game_in_progress(tmp_path: Path) -> None:
    """benchmarks/solve_in_progress.py: after the first box goes onto a goal the player
    stands on the goal beside it; that position is solved afresh and replayed."""
    levels = tmp_path / "tiny.xsb"
    levels.write_text("; 1\n\n#######\n#@$ ..#\n# $   #\n#     #\n#######\n")
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "solve_in_progress.py"), str(levels),
         "--every", "1", "--seconds", "5", "--max-seconds", "5"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "solved 1 of 1 positions within 5 s each" in done.stdout
