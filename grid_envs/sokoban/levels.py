"""Sokoban level files: the XSB text format, collections, and Boxoban's directory layout.

XSB: ``#`` wall, ``@`` player, ``+`` player on goal, ``$`` box, ``*`` box on goal, ``.`` goal,
space, ``-`` or ``_`` floor. Run-length digits (``4#``) and ``|`` row separators are read too.
Lines starting with ``;`` are comments; other text lines (``Title: ...``) are metadata. Both
are kept with the level that follows them (a ``Title:``/``Author:`` line right under a board
belongs to that board) and written back, so a collection survives a round trip.

Every error is a ``ValueError`` that names the file line and the problem.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from grid_envs.core import checks
from grid_envs.sokoban.state import Level

BOARD_CHARS = set("#@+$*. -_")
_RLE = re.compile(r"(\d+)(.)")
_TRAILING_KEYS = ("title:", "author:", "comment:")
# a board line's start: any floor (spaces, '-', '_'), then a wall or a run-length wall
_BOARD = r"[ \-_]*(?:#|\d+#)"
_BOARD_LINE = re.compile(_BOARD)
# the first line of a board (a board line after any other line): one scan of the whole
# text counts the levels before any line is split off
_BOARD_STARTS = re.compile(rf"(?:\A|^(?!{_BOARD}).*\n){_BOARD}", re.MULTILINE)


def _expand_rle(text: str, where: str) -> str:
    """A run-length encoded line (``4#``, rows split by ``|``) written out; a count longer
    than a board side may be is refused before anything is allocated."""
    for m in _RLE.finditer(text):
        if int(m.group(1)) > checks.MAX_SIDE:
            raise ValueError(
                f"{where}: the run-length count {m.group(1)} is longer than a board side "
                f"may be ({checks.MAX_SIDE})"
            )
    return _RLE.sub(lambda m: m.group(2) * int(m.group(1)), text).replace("|", "\n")


def _is_board_line(line: str) -> bool:
    """A line of a board: after any floor (spaces, '-', '_'), a wall or a run-length wall."""
    return _BOARD_LINE.match(line) is not None


def parse_xsb(text: str, source: str = "<string>") -> list[Level]:
    """Read every level of an XSB text; raise ``ValueError`` naming the line on bad input."""
    if len(text) > checks.MAX_LEVEL_TEXT:
        raise ValueError(
            f"{source}: {len(text):,} characters, more than the {checks.MAX_LEVEL_TEXT:,} a "
            f"level text may have"
        )
    text = text.removeprefix("\ufeff")
    _check_count(text, source)
    lines = text.splitlines()
    levels: list[Level] = []
    pending: list[str] = []
    trailing = False  # inside the Title:/Author: lines right under a board
    i = 0
    while i < len(lines):
        if not _is_board_line(lines[i]):
            text_line = lines[i].rstrip()
            trailing = trailing and text_line.lower().startswith(_TRAILING_KEYS)
            if trailing:
                levels[-1] = _with_meta(levels[-1], (*levels[-1].meta, text_line))
            elif text_line:
                pending.append(text_line)
            i += 1
            continue
        start = i
        while i < len(lines) and _is_board_line(lines[i]):
            i += 1
        levels.append(_parse_board(lines[start:i], start + 1, source, tuple(pending)))
        pending = []
        trailing = True
    if pending and levels:
        levels[-1] = _with_meta(levels[-1], (*levels[-1].meta, *pending))
    if not levels:
        raise ValueError(f"{source}: no level found (a board line starts with '#')")
    return levels


def _check_count(text: str, source: str) -> None:
    """Refuse a text of more than :data:`checks.MAX_LEVELS` levels, counted in one scan
    before any line is split off, so a huge file is refused before it costs memory."""
    count = sum(1 for _ in _BOARD_STARTS.finditer(text))
    if count > checks.MAX_LEVELS:
        raise ValueError(
            f"{source}: {count:,} levels, more than the {checks.MAX_LEVELS:,} a level file or "
            f"text may hold; split the collection into *.txt files of at most that many in a "
            f"folder (Boxoban's layout), which levels= reads a file at a time"
        )


def _with_meta(level: Level, meta: tuple[str, ...]) -> Level:
    return Level(level.walls, level.floor, level.goals, level.boxes, level.player, meta, level.line)


def _parse_board(raw: Sequence[str], first_line: int, source: str, meta: tuple[str, ...]) -> Level:
    rows: list[str] = []
    row_lines: list[int] = []
    for k, line in enumerate(raw):
        for part in _expand_rle(line.rstrip(), f"{source}, line {first_line + k}").split("\n"):
            rows.append(part)
            row_lines.append(first_line + k)
    height, width = len(rows), max(len(r) for r in rows)
    if max(height, width) > checks.MAX_SIDE:
        raise ValueError(
            f"{source}, level at line {first_line}: {height}x{width} is larger than a level "
            f"may be ({checks.MAX_SIDE} a side)"
        )
    grid = np.full((height, width), " ", dtype="<U1")
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch not in BOARD_CHARS:
                raise ValueError(
                    f"{source}, line {row_lines[r]}: unknown character {ch!r} at column {c + 1} "
                    f"(XSB uses # @ + $ * . space - _)"
                )
            grid[r, c] = ch
    where = f"{source}, level at line {first_line}"
    players = np.argwhere((grid == "@") | (grid == "+"))
    if len(players) == 0:
        raise ValueError(f"{where}: no player ('@' or '+')")
    if len(players) > 1:
        found = ", ".join(f"line {row_lines[r]} column {c + 1}" for r, c in players)
        raise ValueError(f"{where}: {len(players)} players ({found}); a level has exactly one")
    walls = grid == "#"
    boxes = (grid == "$") | (grid == "*")
    goals = (grid == ".") | (grid == "*") | (grid == "+")
    if int(boxes.sum()) != int(goals.sum()):
        raise ValueError(
            f"{where}: {int(boxes.sum())} boxes but {int(goals.sum())} goals; they must be equal"
        )
    if not boxes.any():
        raise ValueError(f"{where}: no box; a level needs at least one box and goal")
    player = (int(players[0][0]), int(players[0][1]))
    floor = _room(walls, player, row_lines, where)
    # A box on a goal outside the room ('*' built into a wall, as in Microban's "The
    # Dungeon") is decoration: it never moves and stays solved. A lone box or goal there
    # would make the level unsolvable.
    for name, mask in (("box", boxes & ~goals), ("goal", goals & ~boxes)):
        outside = np.argwhere(mask & ~floor)
        if len(outside):
            r, c = outside[0]
            raise ValueError(
                f"{where}: the {name} at line {row_lines[r]} column {c + 1} is outside "
                f"the player's room"
            )
    if not (boxes & ~goals & floor).any():  # it could never be won, nor end but at the limit
        raise ValueError(f"{where}: every box starts on a goal; a level needs one to push")
    return Level(walls, floor, goals, boxes, player, meta, first_line)


def _room(
    walls: np.ndarray, player: tuple[int, int], row_lines: list[int], where: str
) -> np.ndarray:
    """Flood fill from the player through non-wall cells; the room must be closed."""
    height, width = walls.shape
    seen = np.zeros_like(walls)
    seen[player] = True
    queue = deque([player])
    while queue:
        r, c = queue.popleft()
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if not (0 <= rr < height and 0 <= cc < width):
                raise ValueError(
                    f"{where}: open border: the room leaks at line {row_lines[r]} "
                    f"column {c + 1} (walk off the map there)"
                )
            if not walls[rr, cc] and not seen[rr, cc]:
                seen[rr, cc] = True
                queue.append((rr, cc))
    return seen


def check_level(level: object, name: str = "the level", solved_ok: bool = False) -> Level:
    """Sokoban's one gate for a level object from outside (``levels=``, a reset's
    ``options``, a snapshot's game): boolean masks of one shape of at most
    :data:`checks.MAX_SIDE` a side, a room walled in (no floor on the board's edge, where a
    step would leave the board), the player on the floor, walls off it, as many boxes as
    goals, and a box or goal off the floor only where a box sits on its goal (a level
    file's decoration), with a box to push. What the XSB reader builds passes it; a
    ``ValueError`` naming what is wrong otherwise (``solved_ok`` lets a position with
    every box on a goal pass, for the solver, which answers it at once). The level
    itself."""
    if not isinstance(level, Level):
        raise ValueError(f"{name} must be a Level, got {level!r}")
    shape = checks.board_shape(name, "floor", level.floor)
    floor = level.floor
    floor = checks.array(f"{name}'s floor", floor, shape, bool)
    walls = checks.array(f"{name}'s walls", level.walls, shape, bool)
    goals = checks.array(f"{name}'s goals", level.goals, shape, bool)
    boxes = checks.array(f"{name}'s boxes", level.boxes, shape, bool)
    edge = floor.copy()
    edge[1:-1, 1:-1] = False
    if edge.any():
        r, c = (int(x) for x in np.argwhere(edge)[0])
        raise ValueError(
            f"{name}'s floor reaches the board's edge at ({r}, {c}): a room is walled in"
        )
    if (walls & floor).any():
        raise ValueError(f"{name} has walls on its floor")
    player = checks.cell(f"{name}'s player", level.player, shape)
    if not floor[player]:
        raise ValueError(f"{name}'s player {player} is not on its floor")
    if int(boxes.sum()) != int(goals.sum()):
        raise ValueError(f"{name} has {int(boxes.sum())} boxes but {int(goals.sum())} goals")
    if ((boxes ^ goals) & ~floor).any():
        raise ValueError(f"{name} has a box or a goal off its floor that is not a box on a goal")
    if not solved_ok and not (boxes & ~goals).any():
        raise ValueError(f"{name} has no box off a goal: nothing to push")
    return level


def level_to_xsb(level: Level) -> str:
    """The board of one level as XSB text (no metadata)."""
    rows, cols = level.shape
    out = []
    for r in range(rows):
        chars = []
        for c in range(cols):
            if level.walls[r, c]:
                ch = "#"
            elif level.boxes[r, c] and not level.floor[r, c]:
                ch = "*"  # decoration outside the room
            elif not level.floor[r, c]:
                ch = " "
            elif (r, c) == level.player:
                ch = "+" if level.goals[r, c] else "@"
            elif level.boxes[r, c]:
                ch = "*" if level.goals[r, c] else "$"
            else:
                ch = "." if level.goals[r, c] else " "
            chars.append(ch)
        out.append("".join(chars).rstrip())
    return "\n".join(out)


def write_xsb(levels: Iterable[Level]) -> str:
    """A collection as XSB text: each level's metadata lines, its board, a blank line."""
    blocks = []
    for level in levels:
        meta = "\n".join(level.meta)
        blocks.append((meta + "\n\n" if meta else "") + level_to_xsb(level))
    return "\n\n".join(blocks) + "\n"


def read_collection(path: str | Path) -> list[Level]:
    return parse_xsb(checks.read_text(path, "level file"), source=str(path))


def save_collection(path: str | Path, levels: Iterable[Level]) -> None:
    Path(path).write_text(write_xsb(levels), encoding="utf-8")


class BoxobanDirectory:
    """Levels from a local directory in Boxoban's layout (``*.txt`` files of ``; N`` + board).

    Nothing is downloaded. Files are read lazily (a few are cached), so pointing at a
    directory of a million levels costs nothing until a level is drawn. ``sample`` picks a
    file uniformly, then a level in it uniformly: uniform over levels when files hold the
    same number of levels, as Boxoban's do (1,000 each).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            problem = "is a file, not a folder" if self.path.exists() else "does not exist"
            raise ValueError(f"Boxoban directory {str(self.path)!r} {problem}")
        self.files = sorted(self.path.rglob("*.txt"))
        if not self.files:
            raise ValueError(f"Boxoban directory {str(self.path)!r} holds no *.txt level file")

    def file_levels(self, index: int) -> list[Level]:
        return _cached_file(str(self.files[index]))

    def sample(self, rng: np.random.Generator) -> tuple[int, Level]:
        f = int(rng.integers(len(self.files)))
        levels = self.file_levels(f)
        k = int(rng.integers(len(levels)))
        return f * 1_000_000 + k, levels[k]


@lru_cache(maxsize=8)
def _cached_file(path: str) -> list[Level]:
    return read_collection(path)
