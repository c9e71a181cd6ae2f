"""The compiled rules' foundations (grid_envs.core.jit): draws exactly numpy's, and the
compiled code cached on disk, so that a fresh process does not compile again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from grid_envs.core import jit
from grid_envs.core.jit import below, choice_without_replacement, compiled, generators


@pytest.mark.parametrize("population", [1, 2, 5, 30, 81, 400])
def test_choice_without_replacement_draws_what_numpy_draws(population: int) -> None:
    for seed in range(60):
        size = seed % (population + 1)
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        got = choice_without_replacement(ours, population, size)
        assert got.tolist() == theirs.choice(population, size=size, replace=False).tolist()
        assert ours.integers(1_000) == theirs.integers(1_000)  # the streams go on alike


@compiled
def _draws(rng: np.random.Generator, bounds: np.ndarray) -> np.ndarray:
    out = np.empty(len(bounds), dtype=np.int64)
    for i in range(len(bounds)):
        out[i] = below(rng, bounds[i])
    return out


def test_below_draws_what_numpy_integers_draws() -> None:
    """Small bounds, bounds on both sides of 2**32 (where numpy changes method) and
    large ones, each from the same stream as numpy's ``integers(0, bound)``."""
    pick = np.random.default_rng(7)
    edges = [1, 2, 3, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**33, 2**62, 2**63 - 1]
    bounds = np.concatenate([pick.integers(1, 100, 3_000), pick.integers(1, 2**45, 3_000),
                             np.repeat(edges, 30)])  # fmt: skip
    pick.shuffle(bounds)
    ours, theirs = np.random.default_rng(3), np.random.default_rng(3)
    got = _draws(ours, bounds)
    assert got.tolist() == [int(theirs.integers(0, b)) for b in bounds.tolist()]
    assert ours.integers(1_000) == theirs.integers(1_000)  # the streams go on alike


def test_a_compiled_permutation_draws_what_numpy_draws() -> None:
    """The reshuffles of a stuck Pikachu board rely on it."""
    import numba

    permute = numba.njit(lambda rng, tiles: rng.permutation(tiles))
    for seed in range(50):
        tiles = np.arange(1 + seed * 3, dtype=np.int16) % 7
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        assert permute(ours, tiles).tolist() == theirs.permutation(tiles).tolist()
        assert ours.integers(1_000) == theirs.integers(1_000)


def test_a_generator_list_holds_the_envs_own_generators() -> None:
    rngs = [np.random.default_rng(s) for s in range(3)]
    typed = generators(rngs)
    assert all(typed[i] is rngs[i] for i in range(3))


def test_a_lone_generator_is_kept_and_draws_from_the_envs_own_stream() -> None:
    """A single env hands its generator to compiled code as a kept one-item list: the same
    list while the generator lives, another for another generator, and its draws advance
    the generator itself, exactly as numpy's would."""
    import numba

    draw = numba.njit(lambda rngs, at: rngs[at].integers(0, 1_000_000))
    rng, twin, other = (np.random.default_rng(s) for s in (7, 7, 8))
    kept = jit.lone(rng)
    assert jit.lone(rng) is kept and kept[0] is rng and jit.lone(other) is not kept
    assert [draw(kept, 0) for _ in range(5)] == twin.integers(0, 1_000_000, size=5).tolist()
    assert rng.integers(1_000) == twin.integers(1_000)  # the env's own stream moved on


_PLAY = """
import gymnasium as gym, numpy as np, grid_envs
from grid_envs.lines98 import env as lines98_env
env = gym.make("GridGames/Lines98-v0")
env.reset(seed=0)
env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
stats = lines98_env._step_views.stats
print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
"""


def test_a_fresh_process_loads_the_compiled_rules_from_the_disk_cache(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", _PLAY], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0] == ["0", "1"]  # compiled once ...
    assert runs[1] == ["1", "0"]  # ... and loaded, not compiled, by the next process
    assert any(tmp_path.iterdir())


def _played(env_id: str, n: int, steps: int) -> str:
    import hashlib

    import gymnasium as gym

    vec = gym.make_vec(env_id, n, vectorization_mode="vector_entry_point")
    vec.reset(seed=7)
    rng, digest = np.random.default_rng(0), hashlib.sha256()
    for _ in range(steps):
        masks = vec.unwrapped.action_masks()
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        out = vec.step(actions)
        for array in (*out[:4], masks, vec.unwrapped.action_masks()):
            digest.update(np.ascontiguousarray(array).tobytes())
    vec.close()
    return digest.hexdigest()


@pytest.mark.parametrize("env_id", ["GridGames/Lines98-v0", "GridGames/Pikachu-v0"])
def test_a_batch_split_over_threads_plays_the_same_games(
    env_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled loops split a large batch's rows over threads: one, two or three
    threads give the same observations, rewards, ends and masks."""
    n = 3 * jit.MIN_ROWS + 7
    played = set()
    for threads in (1, 2, 3):
        monkeypatch.setenv(jit.THREADS_VARIABLE, str(threads))
        played.add(_played(env_id, n, 30))
    assert len(played) == 1


def test_the_env_threads_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    for bad in ("two", "0"):
        monkeypatch.setenv(jit.THREADS_VARIABLE, bad)
        with pytest.raises(ValueError, match=jit.THREADS_VARIABLE):
            jit.env_threads()
    monkeypatch.setenv(jit.THREADS_VARIABLE, "2")
    calls = []

    def call(rows: np.ndarray, extra: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls.append(len(rows))
        return rows * 2, extra + 1

    idx = np.arange(3 * jit.MIN_ROWS)
    doubled, more = jit.over_threads(call, idx, idx.copy())
    assert sorted(calls) == [3 * jit.MIN_ROWS // 2] * 2
    np.testing.assert_array_equal(doubled, idx * 2)
    np.testing.assert_array_equal(more, idx + 1)
    calls.clear()
    jit.over_threads(call, idx[: jit.MIN_ROWS], idx[: jit.MIN_ROWS])
    assert calls == [jit.MIN_ROWS]  # too few rows to split


@jit.uncounted
def _total_into(values: np.ndarray, out: np.ndarray) -> int:
    total = 0
    for q in range(values.shape[0]):
        total += values[q]
    out[0] = total
    return total


@compiled
def _sum_of_totals(values: np.ndarray, out: np.ndarray, times: int) -> int:
    total = 0
    for _ in range(times):
        total += _total_into(values, out)
    return total


@jit.uncounted
def _makes_an_array(n: int) -> float:
    return float(np.zeros(n).sum())


def test_an_uncounted_function_works_on_the_arrays_its_caller_holds() -> None:
    values = np.arange(10, dtype=np.int64)
    out = np.zeros(1, np.int64)
    assert _sum_of_totals(values, out, 3) == 135  # called from compiled code
    assert out[0] == 45
    out[0] = 0
    assert _total_into(values, out) == 45 and out[0] == 45  # and from Python


def test_an_uncounted_function_may_not_make_an_array() -> None:
    with pytest.raises(numba.core.errors.NumbaError):  # refused as it is compiled
        _makes_an_array(3)
