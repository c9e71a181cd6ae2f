"""Level pools: level k depends only on (seed, k), episodes pick it with the env's seed."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from grid_envs.knight.generator import KnightGenerator
from grid_envs.knight.pool import KnightLevelPool
from grid_envs.knight.rules import level_costs
from grid_envs.knight.solver import distances
from grid_envs.sokoban import rules
from grid_envs.sokoban.generator import SokobanGenerator
from grid_envs.sokoban.pool import SokobanLevelPool as LevelPool
from grid_envs.sokoban.state import cell_codes


def test_level_k_is_the_same_in_any_order_of_generation() -> None:
    gen = SokobanGenerator(7, 7, 2)
    lazy, bulk = LevelPool(gen, 12, seed=3), LevelPool(gen, 12, seed=3)
    for k in (9, 2, 5):
        lazy[k]
    assert lazy.fill() == 9 and bulk.fill(range(12)) == 12
    for k in range(12):
        assert lazy[k].same_puzzle(bulk[k])
        assert np.array_equal(lazy.codes[k], bulk.codes[k])
    other = LevelPool(gen, 12, seed=4)
    assert not all(other[k].same_puzzle(bulk[k]) for k in range(12))


def test_a_pooled_level_is_the_generators_level() -> None:
    """The pool keeps arrays only; the level built back from them is the generated one."""
    gen = SokobanGenerator(7, 8, 2)
    pool = LevelPool(gen, 6, seed=2)
    for k in range(6):
        made = gen.generate(np.random.default_rng([2, k])).level
        assert pool[k].same_puzzle(made) and np.array_equal(pool[k].walls, made.walls)


def test_pool_arrays_describe_their_levels() -> None:
    pool = LevelPool(SokobanGenerator(7, 8, 2), 5)
    pool.fill()
    for k in range(5):
        state = rules.new_state(pool[k])
        assert np.array_equal(pool.codes[k], cell_codes(state, (7, 8)))
        assert np.array_equal(pool.dead(np.array([k]))[0], state.dead)
        assert tuple(pool.player[k]) == state.player
        assert pool.num_boxes[k] == 2 and pool.goals_free[k] + pool.boxes_on[k] == 2
        assert not pool.deadlocked[k]
        assert np.array_equal(pool.push_dist[k], state.push_dist)


def test_a_pooled_start_is_the_start_worked_out_afresh() -> None:
    env = gym.make("GridGames/Sokoban-Small-v0", level_pool=30).unwrapped
    for seed in range(20):
        _, info = env.reset(seed=seed)
        fresh = rules.new_state(env.level)  # what an env without the pool computes
        assert np.array_equal(env.state.push_dist, fresh.push_dist)
        assert np.array_equal(env.state.dead, fresh.dead)
        assert info["deadlocked"] == rules.is_deadlocked(fresh)


def test_envs_with_a_pool_share_it_and_replay_their_seeds() -> None:
    a = gym.make("GridGames/Sokoban-Small-v0", level_pool=40)
    b = gym.make("GridGames/Sokoban-Small-v0", level_pool=40)
    assert a.unwrapped.pool is b.unwrapped.pool
    first = [a.reset(seed=s)[1]["level_index"] for s in range(10)]
    assert first == [b.reset(seed=s)[1]["level_index"] for s in range(10)]
    assert all(0 <= k < 40 for k in first) and len(set(first)) > 3
    obs, _ = a.reset(seed=7)
    again, _ = b.reset(seed=7)
    assert np.array_equal(obs, again)


def test_bad_pools_are_refused() -> None:
    with pytest.raises(ValueError, match="level_pool must be between 1 and"):
        gym.make("GridGames/Sokoban-v0", level_pool=0)
    with pytest.raises(ValueError, match="pool_seed must be at least 0"):
        gym.make("GridGames/Sokoban-v0", level_pool=10, pool_seed=-1)
    with pytest.raises(ValueError, match="cannot go with levels="):
        gym.make("GridGames/Sokoban-v0", level_pool=10, levels="#####\n#@$.#\n#####\n")
    with pytest.raises(IndexError, match="outside the pool"):
        LevelPool(SokobanGenerator(7, 7, 2), 3)[3]
    with pytest.raises(ValueError, match="'auto' or None"):
        gym.make("GridGames/Sokoban-v0", level_pool="big")


def test_generated_levels_come_from_a_large_pool_by_default() -> None:
    from grid_envs.core.pool import auto_size

    for env_id in ("GridGames/Sokoban-v0", "GridGames/Sokoban-Small-v0", "GridGames/Knight-v0",
                   "GridGames/SokobanPush-v0"):  # fmt: skip
        env = gym.make(env_id).unwrapped
        assert env.pool is not None and len(env.pool) == 100_000, env_id
        env.reset(seed=0)
    assert (
        len(gym.make("GridGames/Knight-Large-v0").unwrapped.pool) == 10_000 == auto_size((25, 25))
    )
    assert gym.make("GridGames/Sokoban-v0", level_pool=None).unwrapped.pool is None
    level_file = gym.make("GridGames/Sokoban-v0", levels="#####\n#@$.#\n#####\n").unwrapped
    assert level_file.pool is None
    assert gym.make("GridGames/Knight-v0", levels="samples").unwrapped.pool is None
    held_out = gym.make("GridGames/Knight-v0", pool_seed=1).unwrapped.pool
    assert held_out is not gym.make("GridGames/Knight-v0").unwrapped.pool


def test_knight_pool_keeps_each_level_and_its_dijkstra_map() -> None:
    gen = KnightGenerator(6, 7, monster_density=0.3)
    pool, again = KnightLevelPool(gen, 8, seed=1), KnightLevelPool(gen, 8, seed=1)
    pool.fill()
    for k in (5, 0):
        level = again[k]
        made = gen.generate(np.random.default_rng([1, k]))
        assert np.array_equal(level.cells, made.cells) and level.exit == made.exit
        assert np.array_equal(level.items, made.items) and level.cheapest == made.cheapest
        assert np.array_equal(pool.cells[k], level.cells)
        assert np.array_equal(pool.monsters[k], level.monsters)
        assert np.array_equal(pool.dist[k], distances(level.cells, level_costs(level), level.exit))
        assert tuple(pool.start[k]) == level.start and pool.cheapest[k] == level.cheapest
    env = gym.make("GridGames/Knight-v0", level_pool=8, rows=6, cols=7, monster_density=0.3)
    assert env.unwrapped.pool is KnightLevelPool.shared(gen, 8, 0)
    with pytest.raises(ValueError, match="cannot go with levels="):
        gym.make("GridGames/Knight-v0", level_pool=8, levels="samples")


def test_a_fill_split_over_processes_gives_the_same_levels() -> None:
    gen = SokobanGenerator(7, 7, 2)
    alone, shared = LevelPool(gen, 600, seed=5), LevelPool(gen, 600, seed=5)
    alone.fill(range(550))
    assert shared.fill(range(550), processes=2) == 550 and shared.missing == 50
    for name, values in alone._arrays().items():
        assert np.array_equal(values, getattr(shared, name)), name
    assert shared[3].same_puzzle(alone[3])
    knight = KnightLevelPool(KnightGenerator(5, 5), 600, seed=1)
    knight.fill(processes=2)
    again = KnightLevelPool(KnightGenerator(5, 5), 600, seed=1)
    again.fill([0, 599])
    assert knight.missing == 0
    assert np.array_equal(knight.dist[[0, 599]], again.dist[[0, 599]])


def _shipped_pools() -> list[tuple[str, object]]:
    """The registered ids whose default pool the package ships, with that pool."""
    found = []
    for env_id in sorted(gym.registry):
        if not env_id.startswith("GridGames/"):
            continue
        pool = getattr(gym.make(env_id).unwrapped, "pool", None)
        shipped = None if pool is None else pool.shipped_file()
        if shipped is not None and shipped.is_file():
            found.append((env_id, pool))
    return found


def test_the_registered_default_pools_ship_filled() -> None:
    ids = [env_id for env_id, pool in _shipped_pools()]
    assert {"GridGames/Sokoban-v0", "GridGames/Knight-v0"} <= set(ids)
    for env_id, pool in _shipped_pools():
        assert pool.missing == 0 and pool.filled.all(), env_id


@pytest.mark.parametrize("env_id", ["GridGames/Sokoban-v0", "GridGames/Sokoban-Small-v0",
                                    "GridGames/Knight-v0"])  # fmt: skip
def test_a_shipped_pool_holds_the_generators_levels(env_id: str) -> None:
    """Regenerate a sample of the shipped levels: every array the envs copy is the same (a
    change to a generator that the shipped files miss fails here)."""
    pool = gym.make(env_id).unwrapped.pool
    assert pool.missing == 0, f"{env_id} ships no pool"
    ks = np.concatenate([[0, pool.size - 1], np.random.default_rng(1).choice(pool.size, 40)])
    fresh = type(pool)(pool.generator, pool.size, pool.seed)
    fresh.fill(ks)
    for name, values in fresh._arrays().items():
        assert np.array_equal(values[ks], getattr(pool, name)[ks]), (env_id, name)


def test_a_pool_saves_and_loads_what_it_generated() -> None:
    knight = KnightGenerator(6, 5, monster_density=0.3)
    for pool in (LevelPool(SokobanGenerator(7, 8, 2), 30, seed=4), KnightLevelPool(knight, 30, 4)):
        with pytest.raises(ValueError, match="30 of the pool's 30 levels are not generated yet"):
            pool.save()
        pool.fill()
        loaded = type(pool)(pool.generator, 30, seed=4)
        loaded.load(pool.save())
        assert loaded.missing == 0
        for name, values in pool._arrays().items():
            assert np.array_equal(values, getattr(loaded, name)), name
        other = type(pool)(pool.generator, 30, seed=5)
        with pytest.raises(ValueError, match=r"the file holds the pool .* not "):
            other.load(pool.save())
        assert other.missing == 30  # refused before anything was written


def test_a_pool_that_ships_no_file_fills_as_episodes_draw() -> None:
    pool = gym.make("GridGames/Sokoban-v0", pool_seed=1).unwrapped.pool
    assert not pool.shipped_file().is_file() and pool.missing > 0


def test_a_fresh_process_batch_starts_on_the_shipped_pool() -> None:
    """``make_vec`` with no extra arguments, in a new process: the pools are full before the
    first step, so no episode waits on the generator."""
    import subprocess
    import sys

    code = (
        "import gymnasium as gym, numpy as np, grid_envs\n"
        "for env_id in ('GridGames/Sokoban-v0', 'GridGames/Knight-v0'):\n"
        "    envs = gym.make_vec(env_id, num_envs=256, vectorization_mode='vector_entry_point')\n"
        "    _, info = envs.reset(seed=0)\n"
        "    for _ in range(20):\n"
        "        _, _, _, _, info = envs.step(np.argmax(info['action_mask'], axis=1))\n"
        "    print(env_id, envs.template.pool.missing)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300).stdout  # fmt: skip
    assert out.split() == ["GridGames/Sokoban-v0", "0", "GridGames/Knight-v0", "0"]
