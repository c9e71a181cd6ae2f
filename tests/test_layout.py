"""The packages' layout: the games never depend on the training side."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
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
        for potential in spec.potentials.values():
            for target in potential.forms().values():
                module, name = target.split(":")
                assert callable(getattr(importlib.import_module(module), name)), target
        for hook in (spec.writer, spec.solver):
            if hook:
                assert callable(load(hook)), hook
        if spec.agents:
            from agents.games.spec import AgentsSpec
            from agents.registry import list_agents

            declared = load(spec.agents)
            assert isinstance(declared, AgentsSpec) and declared.game == spec.name
            assert spec.picture_agent in list_agents(spec.ids[0].id), spec.name


def test_importing_the_games_loads_no_game_code() -> None:
    code = "import sys, grid_envs; print(sorted(m for m in sys.modules if m.endswith('.env')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


PACKAGES = ("grid_envs", "agents", "grid_games")


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``root`` by its dotted name (a package's
    ``__init__`` under the package's own name)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts).removesuffix(".__init__")] = path
    return found


def import_graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Which of the packages' modules each module imports, inside functions and
    ``TYPE_CHECKING`` blocks too, ``__init__`` files included: ``from a.b import c`` is an
    arrow to ``a.b.c`` where that is a module, else to ``a.b``."""
    modules: dict[str, Path] = {}
    for package in packages:
        modules |= module_names(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    inner = f"{node.module}.{alias.name}"
                    target = inner if inner in modules else node.module
                    if target in modules:
                        found.add(target)
        found.discard(name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of imports in ``graph`` as the modules along it, or None."""
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> list[str] | None:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return None
        for dep in sorted(graph.get(name, ())):
            cycle = visit(dep, (*path, name))
            if cycle:
                return cycle
        done.add(name)
        return None

    for name in sorted(graph):
        cycle = visit(name, ())
        if cycle:
            return cycle
    return None


def test_no_module_of_the_three_packages_imports_in_a_circle() -> None:
    root = Path(grid_envs.__file__).parents[1]
    graph = import_graph(root)
    assert {"agents", "agents.games", "agents.train.sb3", "grid_games.cli"} <= set(graph)
    assert "agents.games" in graph["agents"]  # __init__ files are read
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    """The check above fails on a cycle, through an ``__init__`` file and inside a function
    alike."""
    package = tmp_path / "planted"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("from planted.inner.low import thing\nVALUE = 1\n")
    (package / "inner" / "__init__.py").write_text("")
    (package / "inner" / "low.py").write_text("def thing():\n    from planted import VALUE\n")
    graph = import_graph(tmp_path, ("planted",))
    assert find_cycle(graph) == ["planted", "planted.inner.low", "planted"]
    (package / "inner" / "low.py").write_text("def thing():\n    return 1\n")
    assert find_cycle(import_graph(tmp_path, ("planted",))) is None


def test_the_training_side_imports_no_sb3_from_the_teaching() -> None:
    root = Path(grid_envs.__file__).parents[1]
    graph = import_graph(root, ("agents",))
    assert "agents.train.sb3" not in graph["agents.train.teaching"]
    assert "agents.train.sb3" not in graph["agents.train.rllib"]


def test_run_folders_need_no_learning_library() -> None:
    code = (
        "import sys, agents.train.runs, agents.train.models\n"
        "libraries = ('torch', 'stable_baselines3', 'sb3_contrib')\n"
        "print(sorted(m for m in libraries if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# the search loops, whose one long loop reads best whole (the solvers' and the agent's)
SEARCH_LOOPS = {
    ("grid_envs/sokoban/python_search.py", "run"),
    ("grid_envs/sokoban/compiled/loop.py", "run"),  # the same search, compiled
    ("grid_envs/minesweeper/placements.py", "walk_part"),
    ("agents/search/lines.py", "_choose"),  # Levin's and limited discrepancy search's
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

    from agents.train.config import TrainConfig

    doc = TrainConfig.__doc__ or ""
    assert [f.name for f in fields(TrainConfig) if f.name not in doc] == []


# a figure with a unit of time, a percentage or a speed-up ("3x faster"): a measurement,
# which goes stale in code (a board's "10x10" is no figure)
FIGURE = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:%|percent\b|ms\b|µs\b|us\b|ns\b|s\b|secs?\b|seconds?\b"
    r"|minutes?\b|mins?\b|hours?\b|h\b|x\b(?!\s?\d))"
)
# a confidence level is a setting of the statistics, not a measurement
CONFIDENCE = re.compile(r"95%\s+(?:Wilson|intervals?|confidence)")


def code_texts(path: Path) -> Iterator[tuple[int, str]]:
    """The docstrings (whole, their first line's number) and comments of a module."""
    source = path.read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield node.body[0].lineno, doc
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def measured_figures(text: str) -> list[str]:
    return FIGURE.findall(CONFIDENCE.sub("", text))


def test_no_measured_figure_in_a_docstring_or_a_comment() -> None:
    """Docstrings and comments say what the code does and why; a time or a percentage that
    was measured lives in docs/ and benchmarks/records/, where it is regenerated."""
    root = Path(grid_envs.__file__).parents[1]
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for line, text in code_texts(path):
                if measured_figures(text):
                    found.append(f"{path.relative_to(root)}:{line}: {measured_figures(text)}")
    assert not found, found
    assert measured_figures("solved 99.2% of 500 levels, 0.7 s a level") == ["99.2%", "0.7 s"]
    assert measured_figures("a 95% Wilson interval, 2 ms") == ["2 ms"]
    assert measured_figures("about 3x faster on 10x10 boards") == ["3x"]
