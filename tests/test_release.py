"""What a release carries: one version in every place that states it, a changelog entry
for it, the licence, the citation and the packages' type marker."""

from __future__ import annotations

import re
from pathlib import Path

import grid_envs

ROOT = Path(__file__).parents[1]
PYPROJECT = (ROOT / "pyproject.toml").read_text()  # read as text: tomllib is Python 3.11's


def test_one_version_everywhere() -> None:
    version = re.search(r'^version = "(.*)"$', PYPROJECT, re.M)
    assert version is not None
    citation = (ROOT / "CITATION.cff").read_text()
    changelog = (ROOT / "CHANGELOG.md").read_text()
    newest = re.search(r"^## (\d+\.\d+\.\d+) \(\d{4}-\d\d-\d\d\)$", changelog, re.M)
    assert newest is not None, "the changelog's entries are '## X.Y.Z (YYYY-MM-DD)'"
    assert version.group(1) == grid_envs.__version__ == newest.group(1)
    assert f'version: "{grid_envs.__version__}"' in citation
    assert "tag `vMAJOR.MINOR.PATCH`" in changelog


def test_the_renamed_settings_are_listed_in_the_changelog() -> None:
    from grid_envs.core.checks import RENAMED

    changelog = (ROOT / "CHANGELOG.md").read_text()
    for old, new in RENAMED.items():
        assert f"`{old}`" in changelog and f"`{new}`" in changelog, old


def test_the_licence_and_the_type_markers_ship() -> None:
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    for package in ("grid_envs", "agents", "grid_games"):
        assert (ROOT / package / "py.typed").is_file()
        assert f'"{package}" = ["py.typed"]' in PYPROJECT
