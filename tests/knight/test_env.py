"""Knight-v0: the exact energy budget, map files, samples, the Dijkstra agent."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from agents import make_agent
from grid_envs.knight import levels
from grid_envs.knight.env import KnightEnv, load_knight_levels
from grid_envs.knight.generator import KnightGenerator
from grid_envs.knight.rules import level_costs
from tests.conftest import play_with_restores


def test_the_first_wasted_step_loses() -> None:
    env = gym.make("GridGames/Knight-v0")
    agent = make_agent("dijkstra", env)
    for seed in range(30):
        obs, info = env.reset(seed=seed)
        best = int(agent.predict(obs)[0])
        mask = env.unwrapped.action_masks()
        worse = [a for a in np.flatnonzero(mask) if a != best]
        if not worse:
            continue
        state = env.unwrapped.snapshot()
        _, reward, terminated, _, info = env.step(int(worse[0]))
        if terminated:  # off the cheapest route: lost at once
            assert not info["is_success"] and reward == pytest.approx(
                -0.01 - 1.0 + (0.1 if info["items_collected"] else 0)
            )
        else:  # another cheapest route (loops): still exactly enough energy
            env.unwrapped.restore(state)


def test_slack_allows_detours() -> None:
    env = gym.make("GridGames/Knight-v0", energy_slack=1.5)
    _, info = env.reset(seed=0)
    assert info["energy"] == int(np.ceil(info["cheapest"] * 1.5 - 1e-9))
    with pytest.raises(ValueError, match=r"energy_slack must be between 1\.0 and 1000\.0"):
        gym.make("GridGames/Knight-v0", energy_slack=0.5)


def test_mask_opens_exactly_the_cells_sides() -> None:
    env = gym.make("GridGames/Knight-v0")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    for _ in range(200):
        s = env.unwrapped.game_state()
        bits = int(s.level.cells[s.knight])
        np.testing.assert_array_equal(
            info["action_mask"], [bool(bits & 1), bool(bits & 4), bool(bits & 8), bool(bits & 2)]
        )
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            _, info = env.reset()


def test_observation_planes() -> None:
    env = KnightEnv(levels=levels.sample_paths()[0])
    obs, _info = env.reset(seed=0)
    lv = env.state.level
    assert obs.shape == (9, 5, 5) and obs[4].sum() == 1 and obs[5].sum() == 1
    assert obs[4][lv.start] == 1 and obs[5][lv.exit] == 1
    assert (obs[8] == lv.cheapest).all()
    np.testing.assert_array_equal(obs[0], (lv.cells & 1) > 0)  # up
    np.testing.assert_array_equal(obs[1], (lv.cells & 2) > 0)  # right


def test_planes_kept_step_by_step_match_planes_built_again() -> None:
    # the env moves the knight, clears items and sets the energy in its planes as it
    # steps; a second env restored to the same snapshot builds them from scratch
    env, ref = KnightEnv(), KnightEnv()
    ref.reset(seed=0)

    def check(obs: np.ndarray, info: dict) -> None:
        ref.restore(env.snapshot())
        np.testing.assert_array_equal(obs, ref.observe())

    play_with_restores(env, 30, check)


def test_map_file_round_trip(tmp_path: Path) -> None:
    level = KnightGenerator(6, 7, loops=0.2).generate(np.random.default_rng(4))
    path = tmp_path / "m.txt"
    levels.save(path, level)
    back = levels.load(path)
    np.testing.assert_array_equal(back.cells, level.cells)
    np.testing.assert_array_equal(back.monsters, level.monsters)
    np.testing.assert_array_equal(back.items, level.items)
    assert (back.start, back.exit, back.cheapest, back.monster_cost) == (
        level.start, level.exit, level.cheapest, level.monster_cost,
    )  # fmt: skip
    assert levels.dumps(back) == levels.dumps(level)


GOOD = levels.dumps(KnightGenerator(3, 4).generate(np.random.default_rng(0)))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("knight-map 1", "maze 1"), "not a knight map"),
        (lambda t: t.replace("size 3 4", "size 3"), r"line 2: 'size' takes 2"),
        (lambda t: t.replace("start ", "begin "), r"line 3: expected 'start'"),
        (lambda t: _replace_line(t, 2, "start 7 7"), r"line 3: start \(7, 7\) is outside"),
        (lambda t: _replace_line(t, 5, "cheapest 999"), r"line 6: cheapest says 999"),
        (lambda t: _replace_line(t, 7, "1 2 3"), r"line 8: a grid row needs 4 numbers"),
        (lambda t: _replace_line(t, 7, "15 15 15 15"), r"line 8: the grid is not a valid maze"),
        (lambda t: t.replace("\nend", ""), "must finish with 'end'"),
    ],
)
def test_malformed_map_files_name_the_line(edit, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        levels.loads(edit(GOOD))


def _replace_line(text: str, index: int, new: str) -> str:
    lines = text.splitlines()
    lines[index] = new
    return "\n".join(lines) + "\n"


def test_distance_potential() -> None:
    from grid_envs.wrappers import PotentialShaping

    env = PotentialShaping(gym.make("GridGames/Knight-v0"), "distance", gamma=1.0)
    agent = make_agent("dijkstra", env.env)
    obs, info = env.reset(seed=1)
    phi0 = -info["cheapest"]
    total_raw = total = 0.0
    done = False
    while not done:
        obs, r, done, _, info = env.step(int(agent.predict(obs)[0]))
        total += r
        total_raw += info["raw_reward"]
    assert total == pytest.approx(total_raw - phi0)


def test_cli_generate_writes_a_loadable_map(tmp_path: Path) -> None:
    from grid_games import cli

    out = tmp_path / "k.txt"
    assert (
        cli.main(
            ["generate", "knight", "--rows", "6", "--cols", "8", "--seed", "2", "--out", str(out)]
        )
        == 0
    )
    level = levels.load(out)
    assert level.shape == (6, 8)
    env = gym.make("GridGames/Knight-v0", levels=str(out))
    assert env.reset(seed=0)[0].shape == (9, 6, 8)


@pytest.mark.parametrize("monsters", [0.1, 0.5])
def test_the_generators_dijkstra_map_is_the_levels_own(monsters: float) -> None:
    """The generator hands its last Dijkstra map to the env instead of a fresh run: it must
    be exactly the finished level's (the start's and the exit's monsters removed)."""
    from grid_envs.knight.solver import distances, exit_distances

    gen = KnightGenerator(7, 8, 0.2, monsters, 0.1, 4)
    rng = np.random.default_rng(5)
    for _ in range(200):
        level = gen.generate(rng)
        fresh = distances(level.cells, level_costs(level), level.exit)
        assert np.array_equal(exit_distances(level), fresh)
        assert level.cheapest == fresh[level.start] == fresh.max()


def test_levels_from_the_pool_and_from_files_carry_the_right_dijkstra_map() -> None:
    """A pooled level is rebuilt with the pool's stored map; a level read from a file has
    none until :func:`exit_distances` computes it: both must equal a fresh Dijkstra run."""
    from grid_envs.knight.pool import KnightLevelPool
    from grid_envs.knight.solver import distances, exit_distances

    pool = KnightLevelPool(KnightGenerator(6, 7, 0.2, 0.3, 0.1, 3), 20, seed=4)
    levels = [pool[k] for k in range(20)] + load_knight_levels("samples")
    for level in levels:
        fresh = distances(level.cells, level_costs(level), level.exit)
        assert np.array_equal(exit_distances(level), fresh)
        assert level.exit_dist is not None and exit_distances(level) is level.exit_dist


def test_the_generator_makes_mazes_larger_than_the_env_plays() -> None:
    from grid_envs.knight.generator import MAX_CELLS

    level = KnightGenerator(300, 300).generate(np.random.default_rng(0))
    assert level.shape == (300, 300) and level.cheapest > 0
    with pytest.raises(ValueError, match=f"at most {MAX_CELLS:,} cells"):
        KnightGenerator(5_000, 5_000)
    with pytest.raises(ValueError, match="rows must be between 1 and 256"):
        gym.make("GridGames/Knight-v0", rows=300)


def test_a_maze_the_time_limit_makes_impossible_is_named_once() -> None:
    """A cheapest route longer than the episode may run: one warning naming both, at the
    first such episode; a maze the limit allows says nothing."""
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        env = gym.make("GridGames/Knight-v0", rows=60, cols=60, time_limit=50)
        for seed in range(3):
            env.reset(seed=seed)
        gym.make("GridGames/Knight-v0").reset(seed=0)
    said = [str(w.message) for w in seen if "cannot be won" in str(w.message)]
    assert len(said) == 1 and "but an episode ends after 50" in said[0]
