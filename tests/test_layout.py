"""The packages' layout: the games never depend on the training side."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grid_envs

GAMES = ("sokoban", "minesweeper", "knight", "pikachu", "lines98")
TRAINING_SIDE = {"agents", "grid_games"}


def test_the_games_never_import_the_agents_or_the_command() -> None:
    root = Path(grid_envs.__file__).parent
    modules = sorted(
        ".".join(("grid_envs", *path.relative_to(root).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        for path in root.rglob("*.py")
    )
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {TRAINING_SIDE!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert len(modules) > 40
    assert out.stdout.strip() == "[]", f"grid_envs imported {out.stdout.strip()}"


def test_no_import_of_the_agents_even_inside_a_function() -> None:
    root = Path(grid_envs.__file__).parent
    found = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in TRAINING_SIDE]
    assert not found


def test_every_game_is_a_package() -> None:
    root = Path(grid_envs.__file__).parent
    for game in GAMES:
        assert (root / game / "__init__.py").is_file(), f"grid_envs/{game} has no __init__.py"
