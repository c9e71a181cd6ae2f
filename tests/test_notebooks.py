"""The notebooks: each runs from scratch with its small default budget, and each is committed
with the outputs of a real run (plots included), so the code host shows them."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
BUDGET_VARIABLES = ("BUDGET", "EPISODES", "SEEDS", "LEVELS", "GAMES", "DEALS", "ENVS")
# the baselines notebook trains every game twice (taught, then from scratch for as long):
# its full run is `slow`, and the main suite runs it on one game
COMPARE = "02_baselines_vs_learned"


def test_the_four_notebooks_exist() -> None:
    names = [p.name for p in NOTEBOOKS]
    assert names == [
        "01_quickstart.ipynb",
        "02_baselines_vs_learned.ipynb",
        "03_reward_shaping.ipynb",
        "04_solvers.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_with_its_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code), "a code cell was never run"
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "no plot in the outputs"


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=[pytest.mark.slow] if p.stem == COMPARE else []) for p in NOTEBOOKS],
    ids=lambda p: p.stem,
)
def test_notebook_runs_from_scratch(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(path, tmp_path, monkeypatch)


def test_the_baselines_notebook_runs_from_scratch_on_one_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every cell of the baselines notebook, on the quickest game to train."""
    (path,) = [p for p in NOTEBOOKS if p.stem == COMPARE]
    outputs = _run(path, tmp_path, monkeypatch, ENVS="GridGames/Minesweeper-v0")
    (table,) = [o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {})]
    assert "Minesweeper-v0" in table and "Sokoban" not in table and "Lines98" not in table


def _run(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **settings: str
) -> list[dict]:
    """Run a copy of the notebook in ``tmp_path`` with its small defaults, bar ``settings``
    (environment variables its first cell reads), check that it drew a plot, and return its
    outputs."""
    for name in BUDGET_VARIABLES:  # the small defaults, whatever the caller's shell says
        monkeypatch.delenv(name, raising=False)
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    copy = tmp_path / path.name  # figures written by the notebook land here, not in the repo
    shutil.copy(path, copy)
    nb = nbformat.read(copy, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()  # raises CellExecutionError, with the cell and traceback, on any error
    produced = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any("image/png" in o.get("data", {}) for o in produced)
    return produced
