"""The packages' layout: the games never depend on the training side."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grid_envs
from grid_envs.core.spec import load

GAMES = grid_envs.GAMES  # every game reads its list from the specs
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


def test_each_game_declares_its_ids_and_potentials_in_its_spec() -> None:
    import importlib

    import gymnasium as gym

    specs = grid_envs.game_specs()
    assert [s.name for s in specs] == list(grid_envs.GAMES)
    ids = [i.id for s in specs for i in s.ids]
    assert ids == list(grid_envs.ENVS) and len(set(ids)) == len(ids)
    for spec in specs:
        assert spec.bench_id in [i.id for i in spec.ids]
        for i in spec.ids:
            assert spec.serves(i.id)
            assert gym.spec(i.id).vector_entry_point == i.vector_entry_point
        for target in [*spec.potentials.values(), *spec.batched_potentials.values()]:
            module, name = target.split(":")
            assert callable(getattr(importlib.import_module(module), name)), target
        assert set(spec.batched_potentials) <= set(spec.potentials)
        for hook in (spec.writer, spec.solver):
            if hook:
                assert callable(load(hook)), hook
        if spec.agents:
            from agents.registry import list_agents

            importlib.import_module(spec.agents)
            assert spec.picture_agent in list_agents(spec.ids[0].id), spec.name


def test_importing_the_games_loads_no_game_code() -> None:
    code = "import sys, grid_envs; print(sorted(m for m in sys.modules if m.endswith('.env')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def agents_imports() -> dict[str, set[str]]:
    """Which ``agents`` modules each ``agents`` module imports, inside functions too."""
    import agents

    root = Path(agents.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in root.glob("*.py"):
        if path.stem == "__init__":
            continue
        found = graph.setdefault(path.stem, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "agents":
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agents."):
                found.add((node.module or "").split(".")[1])
    return {name: deps & set(graph) - {name} for name, deps in graph.items()}


def test_the_agents_modules_import_each_other_without_a_cycle() -> None:
    graph = agents_imports()
    assert {"sb3", "runs", "policy", "networks", "imitation"} <= set(graph)
    assert "sb3" not in graph["imitation"] and "sb3" not in graph["rllib"]
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"import cycle: {' -> '.join((*path, name))}"
        if name not in done:
            for dep in sorted(graph[name]):
                visit(dep, (*path, name))
            done.add(name)

    for name in sorted(graph):
        visit(name, ())


def test_run_folders_need_no_learning_library() -> None:
    code = (
        "import sys, agents.runs, agents.policy\n"
        "libraries = ('torch', 'stable_baselines3', 'sb3_contrib')\n"
        "print(sorted(m for m in libraries if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# the search loops, whose one long loop reads best whole (the solvers' and the agent's)
SEARCH_LOOPS = {
    ("grid_envs/sokoban/solver.py", "run"),
    ("grid_envs/minesweeper/solver.py", "walk"),
    ("agents/search.py", "_discrepancies"),
    ("agents/search.py", "_levin"),
}


def test_no_function_runs_over_60_lines_but_the_search_loops() -> None:
    root = Path(grid_envs.__file__).parent.parent
    long = []
    for package in ("grid_envs", "agents", "grid_games", "benchmarks", "docs"):
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    size = (node.end_lineno or node.lineno) - node.lineno + 1
                    if size > 60 and (name, node.name) not in SEARCH_LOOPS:
                        long.append(f"{name}:{node.lineno} {node.name}, {size} lines")
    assert not long, long


def test_no_docs_page_runs_far_over_200_lines() -> None:
    root = Path(grid_envs.__file__).parent.parent / "docs"
    pages = {p.relative_to(root).as_posix(): len(p.read_text().splitlines())
             for p in root.rglob("*.md")}  # fmt: skip
    assert pages and {p: n for p, n in pages.items() if n > 220} == {}


def test_every_training_setting_is_documented_in_its_docstring() -> None:
    from dataclasses import fields

    from agents.sb3 import TrainConfig

    doc = TrainConfig.__doc__ or ""
    assert [f.name for f in fields(TrainConfig) if f.name not in doc] == []
