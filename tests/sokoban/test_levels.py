"""XSB reading and writing, collections, Boxoban directories, malformed input."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from grid_envs.sokoban import (
    BoxobanDirectory,
    SokobanGenerator,
    parse_xsb,
    read_collection,
    save_collection,
    write_xsb,
)
from grid_envs.sokoban.levels import _BOARD_STARTS, level_to_xsb

COLLECTION = """; GridGames test collection
; written for these tests

; first
  #####
###   #
#.@$  #
### $.#
#.##$ #
# # . ##
#$ *$$.#
#   .  #
########

Title: Second
Author: GridGames
#####
#@$.#
#####

; third, run-length encoded
5#|#@$.#|5#
"""


def test_parse_collection_keeps_titles_and_comments() -> None:
    levels = parse_xsb(COLLECTION)
    assert len(levels) == 3
    first, second, third = levels
    assert first.title == "first"
    assert first.meta[0] == "; GridGames test collection"
    assert second.title == "Second"
    assert "Author: GridGames" in second.meta
    assert third.title == "third, run-length encoded"
    assert first.num_boxes == 7 and int(first.goals.sum()) == 7
    assert first.player == (2, 2) and first.line == 5
    assert second.same_puzzle(third)


def test_xsb_round_trip(tmp_path: Path) -> None:
    levels = parse_xsb(COLLECTION)
    path = tmp_path / "c.xsb"
    save_collection(path, levels)
    again = read_collection(path)
    assert len(again) == len(levels)
    for a, b in zip(levels, again, strict=True):
        assert a.same_puzzle(b)
        assert a.meta == b.meta and a.title == b.title
        np.testing.assert_array_equal(a.walls, b.walls)
    assert write_xsb(again) == write_xsb(levels)


def test_generated_levels_round_trip() -> None:
    gen = SokobanGenerator(9, 9, 3)
    rng = np.random.default_rng(0)
    for _ in range(30):
        level = gen.generate(rng).level
        (back,) = parse_xsb(level_to_xsb(level))
        assert back.same_puzzle(level)


def test_box_on_goal_built_into_a_wall_is_decoration() -> None:
    text = "#####\n#@$.#\n#####\n #*#\n ###"
    (level,) = parse_xsb(text)
    assert level.num_boxes == 2 and not level.floor[3, 2]
    assert level_to_xsb(level) == text
    env = gym.make("GridGames/Sokoban-v0", levels=level)
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(4 + 3)
    assert terminated and info["is_success"] and info["boxes_on_target"] == 2


def test_floor_variants_are_floor() -> None:
    a = parse_xsb("#####\n#@$.#\n#####")[0]
    b = parse_xsb("#####\n#@$.#\n#####".replace(" ", "-"))[0]
    c = parse_xsb("######\n#@-$.#\n#_   #\n######")[0]
    assert a.same_puzzle(b)
    assert c.floor[1, 2] and c.floor[2, 1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("#####\n#  .#\n# $ #\n#####", r"line 1: no player"),
        ("#####\n#@$.#\n#@$.#\n#####", r"2 players \(line 2 column 2, line 3 column 2\)"),
        ("#####\n#@$ #\n#####", r"1 boxes but 0 goals"),
        ("#####\n#@$x#\n#####", r"line 2: unknown character 'x' at column 4"),
        ("#####\n#@$.\n#####", r"open border: the room leaks at line 2 column 5"),
        ("####\n#@ #\n####", r"no box"),
        ("#####\n#@* #\n#####", r"every box starts on a goal"),
        ("#####\n#@$.#\n#####\n#.$#\n####", r"the box at line 4 column 3 is outside the player"),
        ("; only a comment\n", r"no level found"),
    ],
)
def test_malformed_levels_name_the_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_xsb(text)


def test_malformed_level_in_a_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.xsb"
    path.write_text("; ok\n#####\n#@$.#\n#####\n\n; bad\n#####\n#@$.#\n#$  #\n#####\n")
    with pytest.raises(ValueError, match=r"bad\.xsb, level at line 7: 2 boxes but 1 goals"):
        read_collection(path)


def test_missing_file_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="neither an XSB file"):
        gym.make("GridGames/Sokoban-v0", levels="no/such/file.xsb")


def test_play_a_level_file_through_make(tmp_path: Path) -> None:
    path = tmp_path / "mine.xsb"
    save_collection(path, parse_xsb(COLLECTION))
    env = gym.make("GridGames/Sokoban-v0", levels=str(path), level_order="sequential")
    obs, info = env.reset(seed=0)
    assert obs.shape == (7, 9, 8)  # the largest level of the file
    assert info["level_index"] == 0
    assert env.reset()[1]["level_index"] == 1
    obs, info = env.reset(options={"level": 2})
    assert info["level_index"] == 2
    # the small level sits top-left, padded with walls
    assert obs[0, 3:, :].all() and obs[0, :, 5:].all()
    with pytest.raises(ValueError, match=r"index in \[0, 2\]"):
        env.reset(options={"level": 3})


def test_boxoban_directory(tmp_path: Path) -> None:
    gen = SokobanGenerator(10, 10, 4)
    rng = np.random.default_rng(1)
    for f in range(3):
        blocks = [f"; {k}\n{level_to_xsb(gen.generate(rng).level)}" for k in range(4)]
        (tmp_path / f"{f:03d}.txt").write_text("\n\n".join(blocks) + "\n")
    source = BoxobanDirectory(tmp_path)
    assert len(source.files) == 3 and len(source.file_levels(2)) == 4
    env = gym.make("GridGames/Sokoban-v0", levels=str(tmp_path))
    seen = {env.reset(seed=s)[1]["level_index"] for s in range(40)}
    assert len(seen) > 5
    with pytest.raises(ValueError, match="holds no"):
        BoxobanDirectory(tmp_path / "empty_dir" if (tmp_path / "empty_dir").mkdir() is None else "")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_level_count_scan_agrees_with_the_parser(newline: str) -> None:
    """The one-scan count that bounds a collection sees the levels the parser reads:
    comments, titles, run-length lines, '-' floors, boards back to back after a comment."""
    text = COLLECTION + "; fourth\n--#####\n--#@$.#\n--#####\n; fifth\n#####\n#@$.#\n#####\n"
    text = text.replace("\n", newline)
    assert sum(1 for _ in _BOARD_STARTS.finditer(text)) == len(parse_xsb(text)) == 5


def test_a_collection_over_the_level_bound_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grid_envs.core import checks

    monkeypatch.setattr(checks, "MAX_LEVELS", 1_000)
    path = tmp_path / "many.xsb"
    path.write_text("; a\n#####\n#@$.#\n#####\n\n" * 1_001)
    with pytest.raises(ValueError, match="1,001 levels, more than the 1,000 a level file"):
        gym.make("GridGames/Sokoban-v0", levels=str(path))
    path.write_text("; a\n#####\n#@$.#\n#####\n\n" * 1_000)
    assert len(gym.make("GridGames/Sokoban-v0", levels=str(path)).unwrapped.levels) == 1_000
