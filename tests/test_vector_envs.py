"""The native batched envs against N single envs: the same seeds and actions give exactly the
same observations, rewards, ends, infos and masks, resets and generated boards included."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import grid_envs
from grid_envs.core.render import tiled


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return bool(a == b)


def run_both(
    env_id: str, num_envs: int, steps: int, seed: int, seen: list | None = None,
    render: bool = False, **kwargs: Any,
) -> int:  # fmt: skip
    """Step a batched env and ``num_envs`` single envs side by side; the episodes ended.

    ``seen`` collects the batched env's (rewards, terminated, infos) of every step; with
    ``render`` the batch's picture is the singles' frames tiled, at every step."""
    if render:
        kwargs = {**kwargs, "render_mode": "rgb_array"}
    vec = gym.make_vec(env_id, num_envs, vectorization_mode="vector_entry_point", **kwargs)
    singles = [gym.make(env_id, **kwargs) for _ in range(num_envs)]
    obs, infos = vec.reset(seed=seed)
    pending = [False] * num_envs
    single_info = []
    for i, env in enumerate(singles):
        o, info = env.reset(seed=seed + i)
        assert np.array_equal(obs[i], o)
        single_info.append(info)
    rng = np.random.default_rng(seed)
    ended = 0
    for _ in range(steps):
        mask = vec.unwrapped.action_masks()
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        wild = rng.random(num_envs) < 0.1  # some actions from the whole space: often illegal
        actions[wild] = rng.integers(vec.single_action_space.n, size=int(wild.sum()))
        obs, rewards, terminated, truncated, infos = vec.step(actions)
        if seen is not None:
            seen.append((rewards, terminated, infos))
        for i, env in enumerate(singles):
            if pending[i]:
                o, info = env.reset()
                r, te, tr = 0.0, False, False
            else:
                assert np.array_equal(mask[i], single_info[i]["action_mask"])
                o, r, te, tr, info = env.step(int(actions[i]))
            pending[i] = te or tr
            ended += pending[i]
            single_info[i] = info
            assert np.array_equal(obs[i], o), (i, "observation")
            assert rewards[i] == pytest.approx(r, abs=1e-12), (i, rewards[i], r)
            assert (terminated[i], truncated[i]) == (te, tr), i
            for key, value in info.items():
                assert infos[f"_{key}"][i], (i, key)
                assert _equal(infos[key][i], value), (i, key, infos[key][i], value)
            extra = [k for k in infos if not k.startswith("_") and infos[f"_{k}"][i]]
            assert set(extra) <= set(info), (i, set(extra) - set(info))
        if render:
            assert np.array_equal(vec.render(), tiled([env.render() for env in singles]))
    return ended


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"first_click": "zero", "rows": 6, "cols": 7, "mines": 8},
        {"first_click": "any", "rows": 5, "cols": 5, "mines": 3},
        {"allow_flags": True, "rows": 6, "cols": 6, "mines": 5},
        {"observation_mode": "compact", "max_episode_steps": 6},
        {"rows": 3, "cols": 66, "mines": 12},  # wider than a packed row: one board at a time
    ],
    ids=["default", "zero", "any", "flags", "compact-timelimit", "wide"],
)
def test_batched_minesweeper_matches_single_envs(kwargs: dict[str, Any]) -> None:
    ended = run_both("GridGames/Minesweeper-v0", 6, 60, 11, **kwargs)
    assert ended >= 6  # autoresets were exercised


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"levels": "samples", "energy_slack": 1.5},
        {"rows": 5, "cols": 7, "monster_density": 0.4, "item_density": 0.3, "energy_slack": 2.0},
        {"observation_mode": "compact", "energy_slack": 3.0, "max_episode_steps": 9},
        {"level_pool": 25, "energy_slack": 1.3, "monster_density": 0.3, "item_density": 0.2},
        {"level_pool": 25, "obs_shape": (11, 10), "observation_mode": "compact"},
    ],
    ids=["default", "samples", "monsters-items", "compact-timelimit", "pool", "pool-padded"],
)
def test_batched_knight_matches_single_envs(kwargs: dict[str, Any]) -> None:
    ended = run_both("GridGames/Knight-v0", 5, 60, 3, **kwargs)
    assert ended >= 5


@pytest.mark.parametrize(
    "kwargs",
    [
        {"rows": 7, "cols": 7, "num_boxes": 2},
        {"level_pool": 30, "rows": 7, "cols": 8, "num_boxes": 2},
        {"level_pool": 20, "terminate_on_deadlock": False, "observation_mode": "compact"},
        {"level_pool": 20, "obs_shape": (12, 11), "max_episode_steps": 15},
    ],
    ids=["generated", "pool", "no-deadlock-end-compact", "padded-timelimit"],
)
def test_batched_sokoban_matches_single_envs(kwargs: dict[str, Any]) -> None:
    seen: list = []
    ended = run_both("GridGames/Sokoban-v0", 6, 150, 5, seen, **kwargs)
    assert ended >= 6
    assert sum(info["deadlocked"].sum() for _, _, info in seen) > 0  # freezes were tested
    assert sum((info["pushes"] > 0).sum() for _, _, info in seen) > 0


# Small rooms that random play solves now and then, read in order (each env keeps its place).
TINY = """
#####
#@$.#
#####

######
#@ $.#
#  $.#
######

#####
#.  #
#$$ #
#.@ #
#####
"""


def test_batched_sokoban_on_level_lists_matches_single_envs() -> None:
    seen: list = []
    kwargs = {"levels": TINY, "level_order": "sequential", "max_episode_steps": 12}
    ended = run_both("GridGames/Sokoban-v0", 4, 80, 2, seen, **kwargs)
    assert ended >= 8
    assert sum(info["solved"].sum() for _, _, info in seen) > 0  # solves were tested
    assert sum((r > 5).sum() for r, _, _ in seen) > 0


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("GridGames/Lines98-v0", {}),
        ("GridGames/Lines98-Small-v0", {"target_score": 12}),
        ("GridGames/Lines98-Small-v0", {"rows": 4, "cols": 4, "observation_mode": "compact"}),
        ("GridGames/Lines98-v0", {"max_episode_steps": 7, "spawn": 6}),
    ],
    ids=["classic", "small-target", "tiny-compact", "timelimit-crowded"],
)
def test_batched_lines98_matches_single_envs(env_id: str, kwargs: dict[str, Any]) -> None:
    seen: list = []
    ended = run_both(env_id, 5, 60, 4, seen, **kwargs)
    assert ended >= 5
    if "Small" in env_id:  # random play rarely lines up five on the classic board
        assert sum((r > 0).sum() for r, _, _ in seen) > 0  # lines were cleared and scored


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("GridGames/Pikachu-v0", {}),
        ("GridGames/Pikachu-Shuffle-v0", {}),
        ("GridGames/Pikachu-Small-v0", {"kinds": 9}),
        ("GridGames/Pikachu-Small-v0", {"rows": 4, "cols": 4, "kinds": 4, "gravity": "left"}),
        ("GridGames/Pikachu-Small-v0", {"kinds": 18, "gravity": "left",
                                        "observation_mode": "compact"}),
        ("GridGames/Pikachu-Small-v0", {"pair_reward": 0.5, "max_episode_steps": 5}),
    ],
    ids=["classic", "classic-shuffle", "small", "tiny-gravity", "shuffles-compact",
         "reward-timelimit"],
)  # fmt: skip
def test_batched_pikachu_matches_single_envs(env_id: str, kwargs: dict[str, Any]) -> None:
    seen: list = []
    run_both(env_id, 5, 50, 6, seen, **kwargs)
    if kwargs.get("kinds") == 9:
        assert sum(info["is_success"].sum() for _, _, info in seen) > 0  # boards were cleared
    if kwargs.get("kinds") == 18:
        assert max(info["shuffles"].max() for _, _, info in seen) > 0  # reshuffles were tested


def test_batched_pikachu_matches_single_envs_where_the_placed_shuffle_decides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No random layouts for a stuck board: every reshuffle is the placed one, which the
    batch settles in Python for the games that need it."""
    from grid_envs.pikachu.env import PikachuEnv

    monkeypatch.setattr(PikachuEnv, "shuffle_tries", 0)
    seen: list = []
    run_both("GridGames/Pikachu-Small-v0", 5, 60, 6, seen, kinds=18, on_stuck="shuffle")
    assert max(info["shuffles"].max() for _, _, info in seen) > 0  # placed shuffles ran


def test_batched_pikachu_matches_single_envs_where_a_deal_is_stuck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Small boards of many kinds are often dealt stuck; with no random layouts to try,
    every such deal is settled by the placed shuffle, in the batch as in the single env."""
    from grid_envs.pikachu import rules

    settled = []
    settle = rules.settle_deal
    monkeypatch.setattr(rules, "SHUFFLE_TRIES", 0)
    monkeypatch.setattr(rules, "settle_deal", lambda *a: settled.append(1) or settle(*a))
    run_both("GridGames/Pikachu-Small-v0", 6, 40, 2, rows=4, cols=4, kinds=8)
    assert len(settled) > 4  # stuck deals were settled, in both


def test_every_id_with_a_vector_entry_point_is_batched_natively() -> None:
    natives = [i for i in grid_envs.ENVS if gym.spec(i).vector_entry_point]
    assert {
        "GridGames/Minesweeper-Expert-v0",
        "GridGames/Knight-Large-v0",
        "GridGames/Sokoban-Small-v0",
    } <= set(natives)
    for env_id in natives:
        vec = gym.make_vec(env_id, 3, vectorization_mode="vector_entry_point")
        obs, info = vec.reset(seed=0)
        assert vec.observation_space.contains(obs)
        assert info["action_mask"].shape == (3, vec.single_action_space.n)
        assert vec.unwrapped.action_masks().shape == info["action_mask"].shape


RENDERED = [("GridGames/Sokoban-Small-v0", {"max_episode_steps": 12}),
            ("GridGames/Minesweeper-v0", {"rows": 5, "cols": 5, "mines": 4}),
            ("GridGames/Knight-v0", {"max_episode_steps": 15}),
            ("GridGames/Lines98-Small-v0", {"max_episode_steps": 10}),
            ("GridGames/Pikachu-Small-v0", {"max_episode_steps": 10})]  # fmt: skip


@pytest.mark.parametrize("env_id, kwargs", RENDERED, ids=[i for i, _ in RENDERED])
def test_a_rendered_batch_is_its_singles_frames_tiled(env_id: str, kwargs: dict[str, Any]) -> None:
    """Every game: the batch's picture is each single env's frame at every step, ended
    episodes (drawn as over: Minesweeper's mines shown) and restarts included."""
    assert run_both(env_id, 5, 40, 3, render=True, **kwargs) > 0
    vec = gym.make_vec(env_id, 2, vectorization_mode="vector_entry_point")
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert vec.render() is None
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        gym.make_vec(env_id, 2, vectorization_mode="vector_entry_point", render_mode="human")
    vec = gym.make_vec(env_id, 2, vectorization_mode="vector_entry_point", render_mode="rgb_array")
    with pytest.raises(RuntimeError, match="call reset"):
        vec.render()


def test_bad_batched_actions_are_refused_with_the_space() -> None:
    vec = gym.make_vec("GridGames/Minesweeper-v0", 2, vectorization_mode="vector_entry_point")
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="outside the action space"):
        vec.step(np.array([0, 81]))
    with pytest.raises(ValueError, match="2 integers"):
        vec.step(np.array([0]))


@pytest.mark.parametrize("terminate", [True, False])
def test_batched_sokoban_deadlock_flag_is_the_rules_verdict(terminate: bool) -> None:
    # every live env's flag, after every step, against the single env's full deadlock test
    # on its position (pushes into freezes, pairs of boxes, boxes on goals, later pushes)
    from grid_envs.sokoban import rules

    vec = gym.make_vec(
        "GridGames/Sokoban-v0", 256, vectorization_mode="vector_entry_point",
        level_pool=40, terminate_on_deadlock=terminate,
    )  # fmt: skip
    env = vec.unwrapped
    _, info = vec.reset(seed=3)
    rng = np.random.default_rng(3)
    flagged = 0
    for _ in range(120):
        mask = info["action_mask"]
        _, _, _, _, info = vec.step(np.argmax(rng.random(mask.shape) * mask, axis=1))
        for i in range(256):  # an ended episode keeps its last position until its reset
            assert env.deadlocked[i] == rules.is_deadlocked(env._state_of(i)), i
        flagged += int(env.deadlocked.sum())
    assert flagged > 100  # deadlocks were met


AUTORESET_CASES = [
    ("GridGames/Sokoban-v0", {"level_pool": 20, "rows": 7, "cols": 7, "num_boxes": 2,
                              "max_episode_steps": 25}),
    ("GridGames/Knight-v0", {"level_pool": 20, "rows": 5, "cols": 5}),
    ("GridGames/Minesweeper-v0", {"rows": 5, "cols": 5, "mines": 4, "max_episode_steps": 8}),
    ("GridGames/Pikachu-Small-v0", {"rows": 4, "cols": 4, "kinds": 4}),
    ("GridGames/Lines98-Small-v0", {"target_score": 12, "max_episode_steps": 10}),
]  # fmt: skip


@pytest.mark.parametrize("copy_masks", [True, False], ids=["copied", "shared"])
@pytest.mark.parametrize("mode", ["NextStep", "SameStep", "Disabled"])
@pytest.mark.parametrize("env_id, kwargs", AUTORESET_CASES, ids=lambda x: str(x)[:24])
def test_batched_autoreset_modes_match_gymnasiums_sync_vector_env(
    env_id: str, kwargs: dict[str, Any], mode: str, copy_masks: bool
) -> None:
    """Each of Gymnasium's autoreset modes, partial resets (``reset_mask``) included, gives
    what Gymnasium's own SyncVectorEnv over single envs gives, masks handed out copied or
    shared."""
    n = 4
    native = gym.make_vec(
        env_id, n, vectorization_mode="vector_entry_point", autoreset_mode=mode,
        copy_masks=copy_masks, **kwargs,
    )  # fmt: skip
    sync = gym.vector.SyncVectorEnv(
        [lambda: gym.make(env_id, **kwargs) for _ in range(n)], autoreset_mode=mode
    )
    assert native.metadata["autoreset_mode"].value == mode
    obs, _ = native.reset(seed=7)
    expected, _ = sync.reset(seed=7)
    assert np.array_equal(obs, expected)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        mask = native.unwrapped.action_masks()
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        got = native.step(actions)
        want = sync.step(actions)
        for a, b in zip(got[:4], want[:4], strict=True):
            assert np.array_equal(a, b)
        assert np.array_equal(got[4]["action_mask"], np.stack(want[4]["action_mask"]))
        done = got[2] | got[3]
        ended += int(done.sum())
        if mode == "SameStep" and done.any():
            for i in np.flatnonzero(done):
                assert np.array_equal(got[4]["final_obs"][i], want[4]["final_obs"][i])
                final, theirs = got[4]["final_info"], want[4]["final_info"]
                assert final["is_success"][i] == theirs["is_success"][i]
                assert np.array_equal(final["action_mask"][i], theirs["action_mask"][i])
            assert np.array_equal(got[4]["_final_obs"], done)
        if mode == "Disabled" and done.any():
            with pytest.raises(RuntimeError, match="reset it"):
                native.step(actions)
            obs, _ = native.reset(options={"reset_mask": done})
            expected, _ = sync.reset(options={"reset_mask": done.copy()})
            assert np.array_equal(obs, expected)
    assert ended >= 2


@pytest.mark.parametrize("env_id", ["GridGames/Lines98-Small-v0", "GridGames/Pikachu-Small-v0"])
def test_shared_masks_are_read_only_views_the_next_step_rewrites(env_id: str) -> None:
    """``copy_masks=False``: the info's mask and ``action_masks()`` are the batch's own
    array, which a caller cannot write and the next step rewrites; by default each is a
    fresh copy that stays as it was."""
    shared = gym.make_vec(env_id, 3, vectorization_mode="vector_entry_point", copy_masks=False)
    copied = gym.make_vec(env_id, 3, vectorization_mode="vector_entry_point")
    _, info = shared.reset(seed=3)
    _, kept = copied.reset(seed=3)
    view, first = info["action_mask"], kept["action_mask"]
    before = first.copy()
    assert not view.flags.writeable and first.flags.writeable
    assert np.shares_memory(view, shared.unwrapped.action_masks())
    with pytest.raises(ValueError, match="read-only"):
        view[0, 0] = True
    actions = np.argmax(first, axis=1)
    _, _, _, _, info = shared.step(actions)
    _, _, _, _, kept = copied.step(actions)
    assert np.array_equal(info["action_mask"], kept["action_mask"])
    assert np.array_equal(view, kept["action_mask"])  # rewritten by the step
    assert np.array_equal(first, before) and not np.array_equal(first, kept["action_mask"])
    with pytest.raises(ValueError, match="copy_masks must be True or False"):
        gym.make_vec(env_id, 2, vectorization_mode="vector_entry_point", copy_masks="no")


def test_a_partial_reset_is_checked_and_reseeds_only_its_envs() -> None:
    vec = gym.make_vec(
        "GridGames/Minesweeper-v0", 3, vectorization_mode="vector_entry_point",
        autoreset_mode="Disabled",
    )  # fmt: skip
    with pytest.raises(ValueError, match="first reset"):
        vec.reset(options={"reset_mask": np.array([True, False, False])})
    vec.reset(seed=1)
    with pytest.raises(ValueError, match="shape"):
        vec.reset(options={"reset_mask": np.array([True, False])})
    with pytest.raises(ValueError, match="bool array"):
        vec.reset(options={"reset_mask": [1, 0, 0]})
    before = [r.bit_generator.state for r in vec.unwrapped.rngs]
    _, info = vec.reset(seed=[None, 5, 9], options={"reset_mask": np.array([False, True, False])})
    after = [r.bit_generator.state for r in vec.unwrapped.rngs]
    assert after[0] == before[0] and after[2] == before[2] and after[1] != before[1]
    assert info["_action_mask"].tolist() == [False, True, False]
    with pytest.raises(ValueError, match="autoreset_mode"):
        gym.make_vec("GridGames/Minesweeper-v0", 2, vectorization_mode="vector_entry_point",
                     autoreset_mode="sometimes")  # fmt: skip


CACHES = {
    "runs",
    "zero_bits",
    "room",
}  # found when first needed: Minesweeper's flood caches, Sokoban's Room


def _same_state(a: Any, b: Any) -> None:
    """Two game-state dataclasses hold the same game (arrays compared by value)."""
    assert type(a) is type(b)
    for key, value in vars(a).items():
        if key in CACHES:
            continue
        other = getattr(b, key)
        if hasattr(value, "__dataclass_fields__"):
            _same_state(value, other)
        else:
            assert _equal(value, other), key


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("GridGames/Sokoban-v0", {"rows": 7, "cols": 7, "num_boxes": 2}),
        ("GridGames/Knight-v0", {"level_pool": 20, "energy_slack": 2.0}),
        ("GridGames/Knight-v0", {"rows": 5, "cols": 6}),
        ("GridGames/Minesweeper-v0", {}),
        ("GridGames/Pikachu-Small-v0", {}),
        ("GridGames/Lines98-Small-v0", {}),
    ],
    ids=lambda x: str(x)[:22],
)
def test_batched_game_state_is_the_single_envs_state(env_id: str, kwargs: dict[str, Any]) -> None:
    n = 4
    vec = gym.make_vec(env_id, n, vectorization_mode="vector_entry_point", **kwargs)
    singles = [gym.make(env_id, **kwargs) for _ in range(n)]
    vec.reset(seed=2)
    for i, env in enumerate(singles):
        env.reset(seed=2 + i)
    rng = np.random.default_rng(2)
    for _ in range(12):
        mask = vec.unwrapped.action_masks()
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        _, _, terminated, truncated, _ = vec.step(actions)
        for i, env in enumerate(singles):
            if env.unwrapped.episode_over:
                continue  # the batch restarts it at its next step
            env.step(int(actions[i]))
            if not (terminated[i] or truncated[i]):
                _same_state(vec.unwrapped.game_state(i), env.unwrapped.game_state())
    copy = vec.unwrapped.game_state(0)
    with pytest.raises(IndexError):
        vec.unwrapped.game_state(n)
    assert copy is not vec.unwrapped.game_state(0)


# one id per game, and the players whose episodes end won, lost or unfinished
LAST_STEP = [
    ("GridGames/Sokoban-Small-v0", {}, ("optimal", "random")),
    ("GridGames/Minesweeper-v0", {"rows": 5, "cols": 5, "mines": 4}, ("solver", "random")),
    ("GridGames/Knight-v0", {}, ("dijkstra", "random")),
    ("GridGames/Lines98-Small-v0", {"time_limit": 400}, ("greedy", "random")),
    ("GridGames/Pikachu-v0", {}, ("planner", "random")),
]


@pytest.mark.parametrize("env_id, kwargs, players", LAST_STEP, ids=[i for i, _, _ in LAST_STEP])
def test_an_episode_on_its_last_allowed_step_ends_alike_in_the_batch(
    env_id: str, kwargs: dict[str, Any], players: tuple[str, ...]
) -> None:
    """Episodes that end won, lost or not at all on the last step the limit allows, the
    env's own ``time_limit`` or make's ``max_episode_steps``: the batch gives the single
    env's ``terminated`` and ``truncated`` at every step (a game won on its last step is
    won, not truncated; make's ``TimeLimit`` truncates at its step whatever happened)."""
    from agents import make_agent

    episodes = []  # (seed, actions, won, terminated)
    for seed in range(4):
        for name in players:
            env = gym.make(env_id, **kwargs)
            agent = make_agent(name, env, seed=seed)
            obs, _ = env.reset(seed=seed)
            actions, done = [], False
            while not done:
                actions.append(int(agent.predict(obs)[0]))
                obs, _, terminated, truncated, info = env.step(actions[-1])
                done = terminated or truncated
            episodes.append((seed, actions, info["is_success"], terminated))
    kinds = {("won" if won else "lost") if ended else "unfinished" for _, _, won, ended in episodes}
    assert {"won", "lost"} <= kinds, kinds
    for seed, actions, _, _ in episodes:
        for limit in (len(actions), len(actions) - 1):  # its last step; one step before it
            if limit < 1:
                continue
            for setting in ({"time_limit": limit}, {"max_episode_steps": limit}):
                made = {**kwargs, **setting}
                single = gym.make(env_id, **made)
                batch = gym.make_vec(env_id, 1, vectorization_mode="vector_entry_point", **made)
                single.reset(seed=seed)
                batch.reset(seed=seed)
                for t, action in enumerate(actions[:limit]):
                    _, r, te, tr, _ = single.step(action)
                    _, rs, tes, trs, _ = batch.step(np.array([action]))
                    assert (bool(tes[0]), bool(trs[0])) == (te, tr), (seed, limit, setting, t)
                    assert rs[0] == pytest.approx(r)
                    if te or tr:
                        break
