"""Bad input gets a ValueError naming the problem, before anything is built, and never
changes an env's state: constructor arguments, snapshots from elsewhere, the time limit
after a restore."""

from __future__ import annotations

import copy
import math
import pickle
import re

import gymnasium as gym
import numpy as np
import pytest

import grid_envs
from agents.evaluation import evaluate
from grid_envs.knight.generator import KnightGenerator
from grid_envs.sokoban.generator import SokobanGenerator

CORNER = "######\n#    #\n# $  #\n#@  .#\n######\n"

BAD_KWARGS = [
    # a negative limit turned Sokoban's deadlock penalty into a reward
    ("GridGames/Sokoban-v0", {"levels": CORNER, "time_limit": -1000}, "time_limit"),
    ("GridGames/Sokoban-v0", {"time_limit": 0}, "time_limit must be at least 1"),
    ("GridGames/Sokoban-v0", {"time_limit": 2.5}, "time_limit must be an integer"),
    ("GridGames/Sokoban-v0", {"step_reward": math.nan}, "step_reward must be a finite"),
    ("GridGames/Sokoban-v0", {"win_reward": "10"}, "win_reward must be a number"),
    ("GridGames/Sokoban-v0", {"loss_reward": math.inf}, "loss_reward"),
    ("GridGames/Sokoban-v0", {"terminate_on_deadlock": "no"}, "terminate_on_deadlock"),
    ("GridGames/Sokoban-v0", {"rows": 10.5}, "rows must be an integer"),
    ("GridGames/Sokoban-v0", {"rows": 100_000}, "rows must be between 5 and 256"),
    ("GridGames/Sokoban-v0", {"obs_shape": (10,)}, "obs_shape must be a"),
    ("GridGames/Sokoban-v0", {"illegal_reward": math.nan}, "illegal_reward"),
    ("GridGames/Sokoban-v0", {"tile_size": 2}, "tile_size"),
    ("GridGames/Minesweeper-v0", {"mines": 3.7}, "mines must be an integer"),
    ("GridGames/Minesweeper-v0", {"mines": True}, "mines must be an integer"),
    ("GridGames/Minesweeper-v0", {"rows": 0}, "rows must be between 1 and 256"),
    ("GridGames/Minesweeper-v0", {"loss_reward": -math.inf}, "loss_reward"),
    ("GridGames/Minesweeper-v0", {"allow_flags": 1}, "allow_flags must be True or False"),
    ("GridGames/Lines98-v0", {"target_score": 0}, "target_score must be at least 1"),
    ("GridGames/Lines98-v0", {"target_score": -5}, "target_score"),
    ("GridGames/Lines98-v0", {"rows": 1000}, "rows must be between 2 and 32"),
    ("GridGames/Lines98-v0", {"loss_reward": math.nan}, "loss_reward"),
    ("GridGames/Knight-v0", {"energy_slack": math.inf}, "energy_slack"),
    ("GridGames/Knight-v0", {"energy_slack": math.nan}, "energy_slack"),
    ("GridGames/Knight-v0", {"rows": 100_000, "cols": 100_000}, "rows must be between"),
    ("GridGames/Knight-v0", {"monster_cost": 2.5}, "monster_cost must be an integer"),
    ("GridGames/Knight-v0", {"loops": 2.0}, "loops must be between 0.0 and 1.0"),
    ("GridGames/Knight-v0", {"win_reward": math.nan}, "win_reward"),
    ("GridGames/Pikachu-v0", {"rows": 64}, "rows must be between 1 and 32"),
    ("GridGames/Pikachu-v0", {"kinds": 3.0}, "kinds must be an integer"),
    ("GridGames/Pikachu-v0", {"win_reward": math.nan}, "win_reward"),
    ("GridGames/Pikachu-v0", {"levels": [[1, 1], [2]]}, "levels must be one board, a 2-D array"),
    ("GridGames/Pikachu-v0", {"solvable_only": "yes"}, "solvable_only"),
    # the level sources: of the right kind, one at a time
    ("GridGames/Sokoban-v0", {"levels": 123}, "levels must be a path, XSB text or a list"),
    ("GridGames/Sokoban-v0", {"generator": "big"}, "generator must be a SokobanGenerator"),
    (
        "GridGames/Sokoban-v0",
        {"levels": CORNER, "generator": SokobanGenerator(7, 7, 2)},
        "levels= and generator= cannot go together",
    ),
    ("GridGames/Sokoban-v0", {"pool_seed": None}, "pool_seed must be an integer, got None"),
    ("GridGames/Sokoban-v0", {"pool_seed": "a"}, "pool_seed must be an integer"),
    ("GridGames/Sokoban-v0", {"level_pool": [1, 2]}, "level_pool must be an integer"),
    ("GridGames/Sokoban-v0", {"level_order": "sequential"}, "plays a list of levels"),
    ("GridGames/Knight-v0", {"generator": "big"}, "generator must be a KnightGenerator"),
    (
        "GridGames/Knight-v0",
        {"levels": "default", "generator": KnightGenerator()},
        "levels= and generator= cannot go together",
    ),
    ("GridGames/Knight-v0", {"pool_seed": None}, "pool_seed must be an integer"),
    ("GridGames/Knight-v0", {"monster_cost": 10**12}, "monster_cost must be between 1 and"),
]


@pytest.mark.parametrize(("env_id", "kwargs", "message"), BAD_KWARGS)
def test_bad_kwargs_are_refused_at_construction(env_id: str, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make(env_id, **kwargs)


def test_a_deadlock_never_pays() -> None:
    env = gym.make("GridGames/Sokoban-v0", levels=CORNER, time_limit=1000)
    env.reset(seed=0)
    env.step(3)  # right
    _, reward, terminated, _, info = env.step(4)  # the box up into the corner
    assert terminated and info["deadlocked"] and reward < 0


def snapshot_of(env_id: str, seed: int = 0, **kwargs: object) -> object:
    env = gym.make(env_id, **kwargs)
    env.reset(seed=seed)
    return env.unwrapped.snapshot()


@pytest.mark.parametrize(
    ("env_id", "other", "kwargs", "message"),
    [
        ("GridGames/Sokoban-v0", "GridGames/Sokoban-Small-v0", {}, "observation_space"),
        ("GridGames/Minesweeper-v0", "GridGames/Minesweeper-Expert-v0", {}, "observation_space"),
        ("GridGames/Minesweeper-v0", "GridGames/Minesweeper-v0", {"mines": 11}, "mines 11"),
        ("GridGames/Pikachu-v0", "GridGames/Pikachu-Small-v0", {}, "observation_space"),
        ("GridGames/Knight-v0", "GridGames/Sokoban-v0", {}, "env 'SokobanEnv'"),
        ("GridGames/Lines98-v0", "GridGames/Lines98-v0", {"spawn": 2}, "spawn 2"),
    ],
)
def test_restore_refuses_a_snapshot_of_another_env(
    env_id: str, other: str, kwargs: dict, message: str
) -> None:
    env = gym.make(env_id)
    obs, _ = env.reset(seed=3)
    before = env.unwrapped.snapshot()
    with pytest.raises(ValueError, match=message):
        env.unwrapped.restore(snapshot_of(other, **kwargs))
    np.testing.assert_array_equal(env.unwrapped.observe(), obs)  # unchanged
    env.unwrapped.restore(before)  # and its own snapshot still goes back
    env.reset()  # later resets work


@pytest.mark.parametrize("bad", [None, 3, "snapshot", {"game": None}])
def test_restore_refuses_what_is_not_a_snapshot(bad: object) -> None:
    env = gym.make("GridGames/Minesweeper-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="restore\\(\\) takes a Snapshot"):
        env.unwrapped.restore(bad)


@pytest.mark.parametrize("env_id", ["GridGames/Sokoban-Small-v0", "GridGames/Pikachu-Small-v0"])
def test_the_time_limit_is_rewound_by_restore(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    limit = env.unwrapped.time_limit
    start = env.unwrapped.snapshot()
    for _ in range(limit - 1):  # a walk up (Sokoban) or one pair (Pikachu): never an end
        *_, terminated, truncated, _ = env.step(0)
        assert not (terminated or truncated)
    *_, truncated, _ = env.step(0)
    assert truncated
    env.unwrapped.restore(start)
    *_, truncated, _ = env.step(0)
    assert not truncated and env.unwrapped.steps == 1


def test_a_shorter_max_episode_steps_still_truncates() -> None:
    env = gym.make("GridGames/Minesweeper-v0", max_episode_steps=1, allow_flags=True)
    env.reset(seed=0)
    *_, truncated, _ = env.step(81)  # a flag: the game goes on
    assert truncated


def test_the_episode_ends_at_the_env_own_limit() -> None:
    env = gym.make("GridGames/Minesweeper-v0", time_limit=2, allow_flags=True)
    env.reset(seed=0)
    assert env.spec is not None and env.spec.kwargs["time_limit"] == 2
    assert not env.step(81)[3]
    assert env.step(81)[3]
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(81)


# ------------------------------------------------------------------ level and map files
SMALL = "#####\n#@$.#\n#####\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("999999999#\n#@$.#\n#####\n", "run-length count 999999999 is longer"),
        ("99999999#\n", "run-length count 99999999"),
        ("#" * 300 + "\n#@$.#\n#####\n", "larger than a level may be"),
        ("######\n#    #\n#$   #\n#@  .#\n######\n", "deadlocked at the start"),
    ],
)
def test_bad_xsb_is_refused_quickly(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make("GridGames/Sokoban-v0", levels=text)


def test_a_byte_order_mark_is_not_a_border(tmp_path) -> None:
    path = tmp_path / "bom.xsb"
    path.write_bytes(b"\xef\xbb\xbf" + SMALL.encode())
    env = gym.make("GridGames/Sokoban-v0", levels=str(path))
    env.reset(seed=0)
    assert env.step(7)[4]["is_success"]


@pytest.mark.parametrize("levels", ["", "   "])
def test_empty_levels_are_refused_not_scanned(levels: str) -> None:
    with pytest.raises(ValueError, match="levels is empty"):
        gym.make("GridGames/Sokoban-v0", levels=levels)


def test_file_problems_are_named(tmp_path) -> None:
    from grid_envs.knight.levels import load
    from grid_envs.sokoban.levels import BoxobanDirectory, read_collection

    with pytest.raises(ValueError, match="is a folder, not a file"):
        read_collection(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        read_collection(tmp_path / "missing.xsb")
    (tmp_path / "latin1.xsb").write_bytes(SMALL.encode() + b"; caf\xe9\n")
    with pytest.raises(ValueError, match="line 4: not UTF-8 text"):
        read_collection(tmp_path / "latin1.xsb")
    (tmp_path / "map.txt").write_bytes(b"knight-map 1\nsize 2 \xff\n")
    with pytest.raises(ValueError, match=r"map\.txt', line 2: not UTF-8 text"):
        load(tmp_path / "map.txt")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        BoxobanDirectory(tmp_path / "latin1.xsb")


def knight_map(**changes: str) -> str:
    from grid_envs.knight.levels import sample_paths

    text = sample_paths()[0].read_text()
    for key, value in changes.items():
        lines = text.splitlines()
        at = next(i for i, ln in enumerate(lines) if ln.startswith(key + " "))
        lines[at] = f"{key} {value}"
        text = "\n".join(lines) + "\n"
    return text


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"monster_cost": "--4"}, "line 5: 'monster_cost' takes 1 whole number"),
        ({"size": "100000 100000"}, "line 2: the size must be from 1x1 to 256x256"),
        ({"exit": "4 4"}, "line 4: the exit \\(4, 4\\) is the start"),
    ],
)
def test_bad_knight_maps_name_the_line(changes: dict, message: str) -> None:
    from grid_envs.knight.levels import loads

    with pytest.raises(ValueError, match=message):
        loads(knight_map(**changes))


def test_a_knight_map_with_a_byte_order_mark_loads(tmp_path) -> None:
    from grid_envs.knight.levels import load

    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + knight_map().encode())
    assert load(path).shape == (5, 5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"level_pool": 10**12}, "level_pool must be between 1 and 10000000"),
        ({"level_pool": 0}, "level_pool must be between 1"),
        ({"pool_seed": -1}, "pool_seed must be at least 0"),
    ],
)
def test_pool_sizes_are_bounded_before_allocation(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make("GridGames/Knight-v0", **kwargs)


@pytest.mark.parametrize("num_envs", [0, 10**9, 2.5])
def test_batch_sizes_are_bounded(num_envs: object) -> None:
    with pytest.raises(ValueError, match="num_envs must be"):
        gym.make_vec("GridGames/Minesweeper-v0", num_envs=num_envs,
                     vectorization_mode="vector_entry_point")  # fmt: skip


@pytest.mark.parametrize("env_id", sorted(grid_envs.ENVS))
def test_reset_options_are_checked(env_id: str) -> None:
    env = gym.make(env_id)
    with pytest.raises(ValueError, match="options must be a dict"):
        env.reset(seed=0, options=[1, 2])
    with pytest.raises(ValueError, match="reset\\(\\) takes no option 'levle'"):
        env.reset(seed=0, options={"levle": 1})
    env.reset(seed=0, options={})  # still playable
    if gym.spec(env_id).vector_entry_point is None:
        return  # no batched env
    vec = gym.make_vec(env_id, 2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="takes no option 'reset_mak'"):
        vec.reset(seed=0, options={"reset_mak": np.ones(2, dtype=bool)})


@pytest.mark.parametrize("env_id", sorted(grid_envs.ENVS))
def test_before_the_first_reset_there_is_no_game(env_id: str) -> None:
    env = gym.make(env_id, render_mode="ansi").unwrapped
    for read in (env.snapshot, env.game_state, env.observe, env.render_text, env.render):
        with pytest.raises(RuntimeError, match="call reset\\(\\) first"):
            read()
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    # a snapshot of a game puts a fresh env where that game was
    other = gym.make(env_id, render_mode="ansi").unwrapped
    other.reset(seed=3)
    env.restore(other.snapshot())
    assert env.render_text() == other.render_text()
    action = int(np.flatnonzero(other.action_masks())[0])
    assert np.array_equal(env.step(action)[0], other.step(action)[0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"episodes": 2.5}, "episodes must be an integer"),
        ({"episodes": 0}, "episodes must be at least 1"),
        ({"seed": -1}, "seed must be at least 0"),
        ({"seed": "a"}, "seed must be an integer"),
    ],
)
def test_evaluate_checks_its_counts(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate("GridGames/Knight-v0", "random", **kwargs)


def test_the_gate_names_what_a_board_or_a_level_from_outside_cannot_hold() -> None:
    """Boards and level objects go through their game's one gate before the compiled
    rules: the refusal names the part and what is wrong with it."""
    import dataclasses

    from grid_envs.knight.levels import samples
    from grid_envs.sokoban.levels import parse_xsb

    cases = [
        ("GridGames/Pikachu-v0", {"levels": [[1, 1], [2, 2]]},
         "a 2x2 board, but this env's board is 9x16; pass rows=2, cols=2"),
        ("GridGames/Pikachu-Small-v0", {"levels": [[40000, 40000], [2, 2]], "rows": 2, "cols": 2},
         "the board holds kind 40000, but this env has 9 kinds"),
        ("GridGames/Pikachu-Small-v0", {"levels": [[1, 2], [2, 3]], "rows": 2, "cols": 2},
         "kind(s) 1, 3 occur an odd number of times"),
    ]  # fmt: skip
    level = samples()[0]
    for change, message in [
        ({"exit": (99, 99)}, "the level's exit's row must be between 0 and"),
        ({"monster_cost": -3}, "monster_cost must be between 1 and 1000"),
        ({"cheapest": level.cheapest + 1}, f"cheapest says {level.cheapest + 1}"),
        ({"cells": level.cells.astype(np.int64)}, "the level's cells must be uint8"),
    ]:
        cases.append(("GridGames/Knight-v0", {"levels": dataclasses.replace(level, **change)},
                      message.replace("the level", "level")))  # fmt: skip
    room = parse_xsb("#####\n#@$.#\n#####\n")[0]
    edge = room.floor.copy()
    edge[1, 0] = True
    cases.append(("GridGames/Sokoban-v0", {"levels": dataclasses.replace(room, floor=edge)},
                  "'s floor reaches the board's edge at (1, 0)"))  # fmt: skip
    for env_id, kwargs, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            gym.make(env_id, **kwargs).reset(seed=0)
    board = grid_envs.pikachu.env.PikachuEnv(levels=[[1, 1], [2, 2]])  # its own size
    assert (board.rows, board.cols, board.kinds) == (2, 2, 2)


@pytest.mark.parametrize("env_id", ["GridGames/Lines98-v0", "GridGames/Pikachu-v0"])
def test_a_tampered_or_older_snapshot_is_refused_and_changes_nothing(env_id: str) -> None:
    import dataclasses

    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    snap = env.snapshot()
    before = env.observe().copy()
    game = copy.deepcopy(snap.game)
    if env_id.startswith("GridGames/Lines98"):
        game.ann_cell[0] = 10**6
        message = "the announced cells must be distinct cells of the 81"
    else:
        game.board = game.board.astype(np.int64)
        game.board[0, 0] = 40_000
        message = "the board must be int16, got int64"
    older = dataclasses.replace(snap, format=0)
    for bad, why in ((dataclasses.replace(snap, game=game), message),
                     (older, "this snapshot has format 0")):  # fmt: skip
        with pytest.raises(ValueError, match=why):
            env.restore(bad)
        assert np.array_equal(env.observe(), before)


@pytest.mark.parametrize("env_id", ["GridGames/Lines98-v0", "GridGames/Pikachu-v0"])
def test_a_snapshot_changed_in_place_is_checked_again(
    env_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot this process made is restored without the gate's checks only while it is
    unchanged: its arrays are read-only, and one made writeable again, or a part replaced,
    sends it through the gate."""
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    snap = env.snapshot()
    before = env.observe().copy()
    board = snap.game.ann_cell if env_id.startswith("GridGames/Lines98") else snap.game.board
    with pytest.raises(ValueError, match="read-only"):
        board[0] = 40_000 if board.dtype == np.int16 else 10**6
    checked: list[object] = []
    gate = type(env)._check_game
    monkeypatch.setattr(type(env), "_check_game", lambda s, g: checked.append(g) or gate(s, g))
    env.restore(snap)  # sealed: not checked
    assert checked == []
    board.flags.writeable = True
    board.flat[0] = 10**6 if board.dtype == np.int64 else 30_000
    with pytest.raises(ValueError, match="the "):
        env.restore(snap)
    assert len(checked) == 1 and np.array_equal(env.observe(), before)
    fresh = env.snapshot()
    object.__setattr__(fresh, "game", copy.deepcopy(fresh.game))
    env.restore(fresh)  # a part replaced: checked, and sound
    assert len(checked) == 2
    env.restore(pickle.loads(pickle.dumps(env.snapshot())))  # unpickled: checked
    assert len(checked) == 3
