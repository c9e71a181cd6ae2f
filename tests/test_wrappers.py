"""Potential-based shaping: phi(terminal) = 0 and the policy ordering is kept."""

from __future__ import annotations

import gymnasium as gym
import pytest

from grid_envs.sokoban import rules
from grid_envs.wrappers import PotentialShaping, get_potential, potential_names, shaped_return
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
