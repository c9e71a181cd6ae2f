"""The compiled rules' foundations (grid_envs.core.jit): draws exactly numpy's, and the
compiled code cached on disk, so that a fresh process does not compile again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grid_envs.core.jit import choice_without_replacement, generators


@pytest.mark.parametrize("population", [1, 2, 5, 30, 81, 400])
def test_choice_without_replacement_draws_what_numpy_draws(population: int) -> None:
    for seed in range(60):
        size = seed % (population + 1)
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        got = choice_without_replacement(ours, population, size)
        assert got.tolist() == theirs.choice(population, size=size, replace=False).tolist()
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


_PLAY = """
import gymnasium as gym, numpy as np, grid_envs
from grid_envs.lines98 import rules
env = gym.make("GridGames/Lines98-v0")
env.reset(seed=0)
env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
stats = rules._step.stats
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
