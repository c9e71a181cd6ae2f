"""The gate before the compiled rules, driven hard: ``python -m tests.gate_driver GAME``.

For every registered id of ``GAME`` (single env, and its native batch where it has one) it
tries values no player should send: boards, levels and settings out of range, of the wrong
type, dtype or shape, breaking the game's invariants; and snapshots taken mid-game, each
with one part of its game replaced by such a value. Each must be refused with a
``ValueError`` (or a ``TypeError`` for an argument the env does not take), leaving the env
as it was, or be played: then every step keeps the contract (the observation in its space,
a legal action open while the game runs, a finite reward).

It runs in a process of its own (``tests/test_gate.py``), so that a crash, an abort or
memory the compiled code wrote out of bounds fails the test instead of the test run;
under ``NUMBA_BOUNDSCHECK=1`` a read out of bounds raises ``IndexError``, which fails it
too. It prints what it refused and what it played.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np

import grid_envs
from grid_envs.knight.state import KnightLevel
from grid_envs.sokoban.state import Level

LIGHT: dict[str, dict[str, Any]] = {
    "GridGames/Sokoban-v0": {"level_pool": 20},
    "GridGames/SokobanPush-v0": {"level_pool": 20},
    "GridGames/Knight-Large-v0": {"level_pool": 5},
}
REFUSALS = (ValueError, TypeError)
tally = {"refused": 0, "played": 0}


def play(env: Any, steps: int = 25, seed: int = 0) -> None:
    """Random legal moves from where ``env`` is, checking the contract at every step."""
    rng = np.random.default_rng(seed)
    base = env.unwrapped
    for _ in range(steps):
        if base.episode_over:
            env.reset()
        mask = base.action_masks()
        assert mask.any(), "a running game with no legal action"
        obs, reward, *_ = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs), "an observation outside its space"
        assert math.isfinite(reward), f"reward {reward}"


def play_batch(env_id: str, kwargs: dict[str, Any]) -> None:
    """The native batch made with ``kwargs`` (refused alike, or played)."""
    if gym.spec(env_id).vector_entry_point is None:
        return
    try:
        envs = gym.make_vec(env_id, 3, vectorization_mode="vector_entry_point", **kwargs)
        envs.reset(seed=0)
    except REFUSALS:
        tally["refused"] += 1
        return
    rng = np.random.default_rng(0)
    for _ in range(25):
        masks = envs.unwrapped.action_masks()
        obs, rewards, *_ = envs.step(np.argmax(masks * rng.random(masks.shape), axis=1))
        assert envs.observation_space.contains(obs) and np.isfinite(rewards).all()
    tally["played"] += 1


def try_env(env_id: str, kwargs: dict[str, Any], options: dict[str, Any] | None = None) -> None:
    """An env made with ``kwargs`` and reset with ``options``: refused, or played."""
    try:
        env = gym.make(env_id, **{**LIGHT.get(env_id, {}), **kwargs})
        env.reset(seed=0, options=options)
    except REFUSALS:
        tally["refused"] += 1
    else:
        play(env)
        tally["played"] += 1
    if options is None:
        play_batch(env_id, {**LIGHT.get(env_id, {}), **kwargs})


# ------------------------------------------------------------------ bad values
def bad_arrays(a: np.ndarray) -> Iterator[Any]:
    """Arrays like ``a`` but out of range, of another dtype or shape, or not arrays."""
    if a.size:
        big = a.astype(np.int64)
        big.flat[0] = 40_000
        yield big
        yield a.astype(np.float64)
        if a.dtype.kind in "iu":  # the largest value of its dtype, and the least
            for value in (np.iinfo(a.dtype).max, np.iinfo(a.dtype).min):
                worse = a.copy()
                worse.flat[-1] = value
                yield worse
        elif a.dtype.kind == "f":
            worse = a.copy()
            worse.flat[-1] = np.nan
            yield worse
        if a.dtype == bool:
            yield ~a
    yield np.concatenate([a, a[:1]]) if a.ndim else a
    yield a[..., :0] if a.ndim else a
    yield a.tolist()


def bad_values(value: Any) -> Iterator[Any]:
    """Values like ``value`` (a part of a game) that no game of the env holds."""
    if isinstance(value, np.ndarray):
        yield from bad_arrays(value)
    elif isinstance(value, (bool, np.bool_)):
        yield 2
    elif isinstance(value, (int, np.integer)):
        yield from (-1, -(2**40), 2**40, 2**70, 1.5)
    elif isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        yield from ((-1, 0), (0, -1), (10**6, 0), (0, 10**6), (0,), "cell")
    elif isinstance(value, str):
        yield "nonsense"


def replaced(obj: Any, name: str, value: Any) -> Any:
    """A shallow copy of ``obj`` with its part ``name`` (an attribute, or an index of a
    tuple) replaced by ``value``: the original is never written."""
    if isinstance(obj, tuple):
        parts = list(obj)
        parts[int(name)] = value
        return tuple(parts)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name for f in dataclasses.fields(obj)}
        if name in fields:
            return dataclasses.replace(obj, **{name: value})
    clone = copy.copy(obj)
    object.__setattr__(clone, name, value)
    return clone


def parts(obj: Any) -> list[tuple[str, Any]]:
    if isinstance(obj, tuple):
        return [(str(k), v) for k, v in enumerate(obj)]
    return [(k, v) for k, v in vars(obj).items() if not k.startswith("__")]


def tampered(game: Any, depth: int = 2) -> Iterator[tuple[str, Any]]:
    """Copies of ``game`` with one part (``depth`` levels down) replaced by a bad value."""
    for name, value in parts(game):
        for bad in bad_values(value):
            yield name, replaced(game, name, bad)
        is_object = hasattr(value, "__dict__") or dataclasses.is_dataclass(value)
        if depth > 1 and ((isinstance(value, tuple) and len(value) > 2) or is_object):
            for inner, worse in tampered(value, depth - 1):
                yield f"{name}.{inner}", replaced(game, name, worse)


def try_snapshots(env_id: str) -> None:
    """A snapshot taken mid-game, each part of its game replaced by bad values, restored:
    refused with the env unchanged, or played."""
    env = gym.make(env_id, **LIGHT.get(env_id, {}))
    env.reset(seed=1)
    play(env, steps=3)
    base = env.unwrapped
    snap = base.snapshot()
    variants = [(f"game.{name}", dataclasses.replace(snap, game=game))
                for name, game in tampered(snap.game)]  # fmt: skip
    variants += [(f"snapshot.{name}", dataclasses.replace(snap, **{name: bad}))
                 for name in ("steps", "done", "won", "format")
                 for bad in bad_values(getattr(snap, name))]  # fmt: skip
    variants.append(("snapshot.rng_state", dataclasses.replace(snap, rng_state={"x": 1})))
    for what, bad in variants:
        base.restore(snap)
        before = base.observe().copy()
        try:
            base.restore(bad)
        except REFUSALS:
            tally["refused"] += 1
            assert np.array_equal(base.observe(), before), f"{what}: refused, but changed the env"
            continue
        try:
            play(env)
        except AssertionError as error:
            raise AssertionError(
                f"{env_id}: the snapshot with a bad {what} broke: {error}"
            ) from error
        tally["played"] += 1


# ------------------------------------------------------- boards, levels, settings
def pikachu_cases() -> list[dict[str, Any]]:
    boards = [[[40000, 40000], [2, 2]], [[65536, 65536], [2, 2]], [[32768, 32768], [1, 1]],
              [[-1, -1], [2, 2]], [[1, 2], [2, 3]], [[1.5, 1.5], [2, 2]], [[[1]]], [],
              np.full((40, 40), 1)]  # fmt: skip
    cases: list[dict[str, Any]] = [{"levels": b} for b in boards]
    cases += [{"levels": [[1, 1], [2, 2]]}, {"levels": [[1, 1], [2, 2]], "rows": 2, "cols": 2},
              {"levels": [[1, 1], [2, 2]], "rows": 2, "cols": 2, "kinds": 1},
              {"kinds": 10**6}, {"kinds": 0}, {"rows": 0}, {"rows": 40, "cols": 40},
              {"kinds": 2**70}, {"plan_nodes": -1}]  # fmt: skip
    return cases


def knight_level(**change: Any) -> KnightLevel:
    from grid_envs.knight.levels import samples

    return dataclasses.replace(samples()[0], **change)


def knight_cases() -> list[dict[str, Any]]:
    level = knight_level()
    cells = level.cells.copy()
    cells[0, 0] |= 1  # opens through the top border
    half = level.cells.copy()
    half[1, 1] ^= 2  # a wall only one side of it sees
    changes = [{"cells": cells}, {"cells": half}, {"cells": level.cells.astype(np.int64) + 16},
               {"start": (-1, 0)}, {"exit": (99, 99)}, {"exit": level.start},
               {"monster_cost": -3}, {"monster_cost": 10**9}, {"cheapest": level.cheapest + 1},
               {"cheapest": -1}, {"monsters": level.monsters.astype(int)},
               {"items": level.items[:-1]}, {"cells": np.zeros((0, 0), np.uint8)}]  # fmt: skip
    bad = [knight_level(**c) for c in changes]
    return (
        [{"levels": b} for b in bad]
        + [{"__options__": b} for b in bad]
        + [{"rows": 0}, {"rows": 10**6}, {"monster_cost": -1}, {"energy_slack": float("nan")}]
    )


def sokoban_level(**change: Any) -> Level:
    from grid_envs.sokoban.levels import parse_xsb

    return dataclasses.replace(parse_xsb("#####\n#@$.#\n#####\n")[0], **change)


def sokoban_cases() -> list[dict[str, Any]]:
    level = sokoban_level()
    edge = level.floor.copy()
    edge[1, 0] = True  # the floor reaches the board's left edge
    walls = level.walls.copy()
    walls[1, 1] = True
    changes = [{"floor": edge}, {"walls": walls}, {"player": (0, 0)}, {"player": (-1, -1)},
               {"boxes": np.zeros_like(level.boxes)}, {"goals": level.goals.astype(int)},
               {"floor": level.floor[:, :-1]}, {"player": (1, 3)}]  # fmt: skip
    bad = [sokoban_level(**c) for c in changes]
    return [{"levels": b} for b in bad] + [{"__options__": b} for b in bad]


def lines98_cases() -> list[dict[str, Any]]:
    return [{"target_score": 10**20}, {"target_score": 1e20}, {"colours": 0},
            {"colours": 200}, {"rows": 1}, {"rows": 40}, {"line_length": 0},
            {"line_length": 99}, {"spawn": 0}, {"spawn": 10**6}, {"initial": 10**6}]  # fmt: skip


def minesweeper_cases() -> list[dict[str, Any]]:
    return [{"mines": 10**6}, {"mines": -1}, {"mines": 2**70}, {"rows": 0}, {"cols": 10**6},
            {"rows": 1, "cols": 1, "mines": 1}, {"first_click": "nowhere"}]  # fmt: skip


CASES: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "pikachu": pikachu_cases, "knight": knight_cases, "sokoban": sokoban_cases,
    "lines98": lines98_cases, "minesweeper": minesweeper_cases,
}  # fmt: skip


def main(game: str) -> None:
    spec = next(s for s in grid_envs.game_specs() if s.name == game)
    for i in spec.ids:
        try_snapshots(i.id)
        for case in CASES[game]():
            options = case.pop("__options__", None)
            if options is not None:
                try_env(i.id, {}, {"level": options})
            else:
                try_env(i.id, case)
    print(f"{game}: {tally['refused']} refused, {tally['played']} played")


if __name__ == "__main__":
    main(sys.argv[1])
