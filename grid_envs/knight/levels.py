"""Knight map files: a plain text format that stores everything a level needs.

::

    knight-map 1
    size 3 4                # rows cols
    start 2 0               # row col
    exit 0 3
    monster_cost 3
    cheapest 9              # cost of the cheapest route, checked on load
    grid                    # rows lines of cols numbers: the source article's URDL bits
    2 10 12 4
    6 9 7 9
    3 10 9 0
    monsters                # one "row col" per line
    1 1
    items
    0 0
    end

Lines may carry ``#`` comments. Every error is a ``ValueError`` naming the line.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import numpy as np

from grid_envs.core import checks
from grid_envs.knight import maze
from grid_envs.knight.generator import MAX_MONSTER_COST
from grid_envs.knight.rules import level_costs
from grid_envs.knight.solver import distances
from grid_envs.knight.state import KnightLevel

MAGIC = "knight-map 1"


_WHOLE = re.compile(r"-?\d+")  # a whole number, as the map writes it


def dumps(level: KnightLevel) -> str:
    rows, cols = level.shape
    lines = [
        MAGIC,
        f"size {rows} {cols}",
        f"start {level.start[0]} {level.start[1]}",
        f"exit {level.exit[0]} {level.exit[1]}",
        f"monster_cost {level.monster_cost}",
        f"cheapest {level.cheapest}",
        "grid",
    ]
    lines += [" ".join(str(int(v)) for v in row) for row in level.cells]
    lines.append("monsters")
    lines += [f"{r} {c}" for r, c in np.argwhere(level.monsters)]
    lines.append("items")
    lines += [f"{r} {c}" for r, c in np.argwhere(level.items)]
    lines.append("end")
    return "\n".join(lines) + "\n"


def save(path: str | Path, level: KnightLevel) -> None:
    Path(path).write_text(dumps(level), encoding="utf-8")


class _Reader:
    """The lines of a knight map (comments and blank lines gone, each with its number), read
    in order; every error names the source and the line."""

    def __init__(self, text: str, source: str) -> None:
        lines = [(i + 1, ln.split("#", 1)[0].strip()) for i, ln in enumerate(text.splitlines())]
        self.lines = [(n, ln) for n, ln in lines if ln]
        self.source = source
        if not self.lines or self.lines[0][1] != MAGIC:
            raise ValueError(f"{source}: not a knight map (the first line must be '{MAGIC}')")
        self.pos = 1
        self.rows = self.cols = 0

    def fail(self, line: int, message: str) -> ValueError:
        return ValueError(f"{self.source}, line {line}: {message}")

    def take(self, key: str, count: int) -> tuple[int, list[int]]:
        """The line ``key n1 .. n{count}``: its number and its whole numbers."""
        if self.pos >= len(self.lines):
            raise ValueError(f"{self.source}: the file ends before '{key}'")
        n, ln = self.lines[self.pos]
        parts = ln.split()
        if parts[0] != key:
            raise self.fail(n, f"expected '{key}', found {parts[0]!r}")
        if len(parts) != count + 1 or not all(_WHOLE.fullmatch(p) for p in parts[1:]):
            raise self.fail(n, f"'{key}' takes {count} whole number(s), got {ln!r}")
        self.pos += 1
        return n, [int(p) for p in parts[1:]]

    def size(self) -> None:
        n, (rows, cols) = self.take("size", 2)
        if not (1 <= rows <= checks.MAX_SIDE and 1 <= cols <= checks.MAX_SIDE):
            raise self.fail(
                n, f"the size must be from 1x1 to {checks.MAX_SIDE}x{checks.MAX_SIDE}, "
                f"got {rows}x{cols}",
            )  # fmt: skip
        self.rows, self.cols = rows, cols

    def cell(self, key: str) -> tuple[int, tuple[int, int]]:
        n, (r, c) = self.take(key, 2)
        if not (0 <= r < self.rows and 0 <= c < self.cols):
            raise self.fail(n, f"{key} ({r}, {c}) is outside the {self.rows}x{self.cols} maze")
        return n, (r, c)

    def expect(self, key: str) -> None:
        """The line ``key`` alone, which opens a section."""
        if self.pos >= len(self.lines) or self.lines[self.pos][1] != key:
            raise self.fail(self.lines[min(self.pos, len(self.lines) - 1)][0], f"expected '{key}'")
        self.pos += 1

    def grid(self) -> np.ndarray:
        """The maze's rows of wall codes, checked to be a valid maze."""
        rows, cols = self.rows, self.cols
        cells = np.zeros((rows, cols), dtype=np.uint8)
        for r in range(rows):
            if self.pos >= len(self.lines):
                raise ValueError(f"{self.source}: the grid ends after {r} of {rows} rows")
            n, ln = self.lines[self.pos]
            parts = ln.split()
            if len(parts) != cols or not all(p.isdigit() and int(p) <= 15 for p in parts):
                raise self.fail(n, f"a grid row needs {cols} numbers from 0 to 15, got {ln!r}")
            cells[r] = [int(p) for p in parts]
            self.pos += 1
        problems = maze.check(cells)
        if problems:
            line = self.lines[self.pos - rows][0]
            raise self.fail(line, f"the grid is not a valid maze: {problems[0]}")
        return cells

    def marks(self, key: str) -> np.ndarray:
        """The section ``key`` (monsters or items): one cell a line, as a mask."""
        self.expect(key)
        mask = np.zeros((self.rows, self.cols), dtype=bool)
        while self.pos < len(self.lines) and self.lines[self.pos][1] not in ("items", "end"):
            _, (r, c) = cell_line(self.lines[self.pos], self.rows, self.cols, self.source)
            mask[r, c] = True
            self.pos += 1
        return mask


def check_level(level: object, name: str = "the level") -> KnightLevel:
    """The Knight's one gate for a level object from outside (``levels=``, a reset's
    ``options``, a snapshot's game): its maze a valid one of at most
    :data:`checks.MAX_SIDE` a side, its start and exit distinct cells of it, its monsters
    and items boolean masks of it, its monster cost from 1 to ``MAX_MONSTER_COST``, and
    its cheapest cost the one Dijkstra finds from the start (the start's energy). A
    ``ValueError`` naming what is wrong; the level itself."""
    if not isinstance(level, KnightLevel):
        raise ValueError(f"{name} must be a KnightLevel, got {level!r}")
    cells = level.cells
    shape = checks.board_shape(name, "cells", cells)
    checks.array(f"{name}'s cells", cells, shape, np.uint8, 0, 15)
    problems = maze.check(cells)
    if problems:
        raise ValueError(f"{name} is not a valid maze: {problems[0]}")
    start = checks.cell(f"{name}'s start", level.start, shape)
    exit_ = checks.cell(f"{name}'s exit", level.exit, shape)
    if start == exit_:
        raise ValueError(f"{name}'s exit {exit_} is its start: there is no way to go")
    checks.array(f"{name}'s monsters", level.monsters, shape, bool)
    checks.array(f"{name}'s items", level.items, shape, bool)
    checks.integer(f"{name}'s monster_cost", level.monster_cost, 1, MAX_MONSTER_COST)
    cheapest = checks.integer(f"{name}'s cheapest", level.cheapest, 0)
    found = level.exit_dist  # worked out once a level and kept (a search restores it often)
    if found is None:
        found = distances(cells, level_costs(level), exit_)
    else:
        kept = found.dtype if isinstance(found, np.ndarray) else None
        dtype = kept if kept in (np.dtype(np.int32), np.dtype(np.int64)) else np.dtype(np.int64)
        checks.array(f"{name}'s exit distances", found, shape, dtype, -1)
        if found[exit_] != 0:
            raise ValueError(f"{name}'s exit distances are not its exit's")
    actual = int(found[start])
    if actual < 0:
        raise ValueError(f"{name}'s exit cannot be reached from its start")
    if actual != cheapest:
        raise ValueError(f"{name}'s cheapest says {cheapest} but the cheapest route costs {actual}")
    return level


def loads(text: str, source: str = "<string>") -> KnightLevel:
    """The level a knight map's ``text`` holds; a ``ValueError`` naming ``source`` and the
    line of the first thing wrong, the stated cheapest route checked against Dijkstra's."""
    read = _Reader(text.removeprefix("\ufeff"), source)
    read.size()
    _, start = read.cell("start")
    n_exit, exit_ = read.cell("exit")
    if exit_ == start:
        raise read.fail(n_exit, f"the exit {exit_} is the start: there is no way to go")
    n_cost, (monster_cost,) = read.take("monster_cost", 1)
    if not 1 <= monster_cost <= MAX_MONSTER_COST:
        raise read.fail(
            n_cost, f"monster_cost must be between 1 and {MAX_MONSTER_COST}, got {monster_cost}"
        )
    n_cheap, (cheapest,) = read.take("cheapest", 1)
    read.expect("grid")
    cells = read.grid()
    monsters, items = read.marks("monsters"), read.marks("items")
    if read.pos >= len(read.lines) or read.lines[read.pos][1] != "end":
        raise ValueError(f"{source}: the file must finish with 'end'")
    level = KnightLevel(cells, start, exit_, monsters, items, monster_cost, 0)
    actual = int(distances(cells, level_costs(level), exit_)[start])
    if actual < 0:
        raise read.fail(n_cheap, "the exit cannot be reached from the start")
    if actual != cheapest:
        raise read.fail(n_cheap, f"cheapest says {cheapest} but the cheapest route costs {actual}")
    return KnightLevel(cells, start, exit_, level.monsters, level.items, monster_cost, cheapest)


def cell_line(
    entry: tuple[int, str], rows: int, cols: int, source: str
) -> tuple[int, tuple[int, int]]:
    n, ln = entry
    parts = ln.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"{source}, line {n}: expected 'row col', got {ln!r}")
    r, c = int(parts[0]), int(parts[1])
    if not (r < rows and c < cols):
        raise ValueError(f"{source}, line {n}: ({r}, {c}) is outside the {rows}x{cols} maze")
    return n, (r, c)


def load(path: str | Path) -> KnightLevel:
    return loads(checks.read_text(path, "knight map"), source=str(path))


def sample_paths() -> list[Path]:
    """The 10 sample levels shipped with the package, as the source article's release ships 10."""
    folder = resources.files("grid_envs.knight") / "levels"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".txt"))


def samples() -> list[KnightLevel]:
    return [load(p) for p in sample_paths()]
