"""Potential-based shaping: phi(terminal) = 0 and the policy ordering is kept."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from grid_envs.sokoban import rules
from grid_envs.wrappers import (
    PotentialShaping,
    VectorPotentialShaping,
    get_potential,
    potential_names,
    shaped_return,
)
from tests.conftest import ONE_PUSH

# Two pushes to solve: the player must walk around once.
TWO_PUSH = "########\n#      #\n# . $ @#\n#      #\n########"


def run(env: gym.Env, lurd: str, gamma: float) -> tuple[list[float], list[float], float]:
    env.reset(seed=0)
    phi0 = env.get_wrapper_attr("_phi") if isinstance(env, PotentialShaping) else 0.0
    raw, shaped = [], []
    for a in rules.lurd_to_actions(env.unwrapped.game_state(), lurd):
        _, r, terminated, _, info = env.step(a)
        shaped.append(r)
        raw.append(info.get("raw_reward", r))
        if terminated:
            break
    return raw, shaped, phi0


@pytest.mark.parametrize("gamma", [1.0, 0.99, 0.9])
@pytest.mark.parametrize("lurd", ["lLL", "udlLL", "lLrlL"])
def test_shaped_return_differs_by_minus_phi_s0(gamma: float, lurd: str) -> None:
    env = PotentialShaping(gym.make("GridGames/Sokoban-v0", levels=TWO_PUSH), "distance", gamma)
    raw, shaped, phi0 = run(env, lurd, gamma)
    assert phi0 == -2.0
    assert shaped_return(shaped, gamma) == pytest.approx(shaped_return(raw, gamma) - phi0)


def test_terminal_potential_is_zero() -> None:
    env = PotentialShaping(gym.make("GridGames/Sokoban-v0", levels=ONE_PUSH), "distance", 0.9)
    env.reset(seed=0)
    _, r, terminated, _, info = env.step(4 + 2)
    assert terminated
    assert info["shaping"] == pytest.approx(0.9 * 0.0 - (-1.0))
    assert r == pytest.approx(info["raw_reward"] + 1.0)


def test_ordering_of_two_policies_is_kept() -> None:
    """The shorter solution beats the detour with and without shaping."""
    gamma = 0.95
    base = gym.make("GridGames/Sokoban-v0", levels=TWO_PUSH)
    shaped_env = PotentialShaping(gym.make("GridGames/Sokoban-v0", levels=TWO_PUSH), "boxes", gamma)
    for env in (base, shaped_env):
        _, fast, _ = run(env, "lLL", gamma)
        _, slow, _ = run(env, "udlLL", gamma)
        assert shaped_return(fast, gamma) > shaped_return(slow, gamma)


def test_potential_lookup() -> None:
    assert "distance" in potential_names("GridGames/Sokoban-v0")
    with pytest.raises(ValueError, match="no potential 'nope'"):
        get_potential("GridGames/Sokoban-v0", "nope")
    with pytest.raises(ValueError, match="gamma must be in"):
        PotentialShaping(gym.make("GridGames/Sokoban-v0"), "distance", gamma=2.0)


SHAPED = [
    ("GridGames/Knight-v0", "distance", {"level_pool": 30, "energy_slack": 1.5}),
    ("GridGames/Knight-v0", "distance", {"rows": 5, "cols": 5, "energy_slack": 2.0}),
    ("GridGames/Sokoban-v0", "distance", {"level_pool": 30, "max_episode_steps": 30}),
    ("GridGames/Sokoban-v0", "boxes", {"rows": 7, "cols": 7, "num_boxes": 2}),
    ("GridGames/Sokoban-v0", "matching", {"level_pool": 30, "max_episode_steps": 20}),
    ("GridGames/Pikachu-Small-v0", "mobility", {}),
    ("GridGames/Lines98-Small-v0", "lines", {"max_episode_steps": 15}),
]


@pytest.mark.parametrize("mode", ["NextStep", "Disabled"])
@pytest.mark.parametrize("env_id, name, kwargs", SHAPED, ids=lambda x: str(x)[:22])
def test_batched_shaping_gives_the_single_envs_rewards(
    env_id: str, name: str, kwargs: dict, mode: str
) -> None:
    """Shaping a native batch (array potentials, or each env's game_state otherwise) gives
    what PotentialShaping gives on N single envs with the same seeds and actions."""
    n, gamma = 5, 0.97
    vec = VectorPotentialShaping(
        gym.make_vec(env_id, n, vectorization_mode="vector_entry_point",
                     autoreset_mode=mode, **kwargs),
        name, gamma,
    )  # fmt: skip
    assert (vec.batched is not None) == (name in ("distance", "boxes"))
    singles = [PotentialShaping(gym.make(env_id, **kwargs), name, gamma) for _ in range(n)]
    vec.reset(seed=3)
    for i, env in enumerate(singles):
        env.reset(seed=3 + i)
    rng = np.random.default_rng(1)
    pending, shaped = [False] * n, 0
    for _ in range(40):
        mask = vec.env.unwrapped.action_masks()
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        _, rewards, terminated, truncated, info = vec.step(actions)
        for i, env in enumerate(singles):
            if pending[i] and mode == "NextStep":
                env.reset()
                r = 0.0
            else:
                _, r, *_ = env.step(int(actions[i]))
            assert rewards[i] == r, (i, rewards[i], r)
            shaped += info["shaping"][i] != 0
        pending = list(terminated | truncated)
        if mode == "Disabled" and any(pending):
            vec.reset(options={"reset_mask": terminated | truncated})
            for i in np.flatnonzero(terminated | truncated):
                singles[i].reset()
            pending = [False] * n
    assert shaped > 0


def test_batched_shaping_refuses_same_step_autoreset() -> None:
    vec = gym.make_vec("GridGames/Knight-v0", 2, vectorization_mode="vector_entry_point",
                       autoreset_mode="SameStep")  # fmt: skip
    with pytest.raises(ValueError, match="NextStep"):
        VectorPotentialShaping(vec, "distance")


def test_every_named_potential_resolves_and_reads_a_state() -> None:
    import grid_envs
    from grid_envs.wrappers import BATCHED_POTENTIALS

    for env_id in grid_envs.ENVS:
        env = gym.make(env_id)
        env.reset(seed=0)
        for name in potential_names(env_id):
            assert np.isfinite(get_potential(env_id, name)(env.unwrapped.game_state()))
    for table in BATCHED_POTENTIALS.values():
        for name in table:
            assert name in potential_names("GridGames/Sokoban-v0") + potential_names(
                "GridGames/Knight-v0"
            )
