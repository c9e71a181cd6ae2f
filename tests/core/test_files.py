"""Files written for a user (grid_envs.core.files): an existing file is kept unless the
caller says to replace it, and a write that fails leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from grid_envs.core import files


def test_a_target_is_a_new_file_in_a_folder_that_exists(tmp_path: Path) -> None:
    assert files.check_target(tmp_path / "a.xsb", "--out") == tmp_path / "a.xsb"
    with pytest.raises(ValueError, match="is a folder; give a file name"):
        files.check_target(tmp_path, "--out")
    with pytest.raises(ValueError, match="does not exist"):
        files.check_target(tmp_path / "no" / "a.xsb", "--out")
    (tmp_path / "a.xsb").write_text("kept")
    with pytest.raises(ValueError, match=r"--out .* exists already; .* add --force"):
        files.check_target(tmp_path / "a.xsb", "--out")
    assert files.check_target(tmp_path / "a.xsb", "--out", force=True) == tmp_path / "a.xsb"


def test_a_file_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "levels.xsb"
    with files.written(target) as partial:
        partial.write_text("#####\n")
        assert not target.exists()  # not yet: only once the block ends well
    assert target.read_text() == "#####\n"
    with pytest.raises(RuntimeError), files.written(tmp_path / "broken.xsb") as partial:
        partial.write_text("half")
        raise RuntimeError("the check failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["levels.xsb"]
    with files.written(target) as partial:  # replacing keeps the user's usual mode
        partial.write_text("new")
    assert target.read_text() == "new" and target.stat().st_mode & 0o044
