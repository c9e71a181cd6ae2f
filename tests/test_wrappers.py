"""Potential-based shaping: phi(terminal) = 0 and the policy ordering is kept."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from grid_envs.sokoban import rules
from grid_envs.wrappers import (
    INPUT_BOUND,
    PotentialInput,
    PotentialShaping,
    VectorPotentialInput,
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


@pytest.mark.parametrize("scale", [0.1, 3.0])
def test_a_shaping_scale_multiplies_the_added_return(scale: float) -> None:
    """With coefficient ``scale`` the shaped return is the raw one minus ``scale * phi(s0)``."""
    gamma = 0.97
    env = PotentialShaping(
        gym.make("GridGames/Sokoban-v0", levels=TWO_PUSH), "distance", gamma, scale=scale
    )
    raw, shaped, phi0 = run(env, "udlLL", gamma)
    assert shaped_return(shaped, gamma) == pytest.approx(shaped_return(raw, gamma) - scale * phi0)
    for bad in (0.0, -1.0, float("nan"), True):
        with pytest.raises(ValueError, match="shaping scale must be a positive number"):
            PotentialShaping(gym.make("GridGames/Sokoban-v0"), "distance", scale=bad)


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

    for env_id in grid_envs.ENVS:
        env = gym.make(env_id)
        env.reset(seed=0)
        for name in potential_names(env_id):
            assert np.isfinite(get_potential(env_id, name)(env.unwrapped.game_state()))
    batched = {name for game in grid_envs.game_specs() for name, p in game.potentials.items()
               if p.batch is not None}  # fmt: skip
    assert batched == {"distance", "boxes"}


INPUTS = [
    ("GridGames/Knight-v0", "distance", {"energy_slack": 2.0}),
    ("GridGames/Knight-v0", "distance", {"rows": 5, "cols": 7, "obs_shape": (7, 9)}),
    ("GridGames/Sokoban-Small-v0", "matching", {}),
    ("GridGames/Pikachu-Small-v0", "mobility", {}),
    ("GridGames/Lines98-Small-v0", "lines", {"max_episode_steps": 15}),
]


@pytest.mark.parametrize("env_id, name, kwargs", INPUTS, ids=lambda x: str(x)[:22])
def test_the_input_plane_of_a_batch_is_the_single_envs(
    env_id: str, name: str, kwargs: dict
) -> None:
    """VectorPotentialInput's observations are PotentialInput's on N single envs with the
    same seeds and actions, through episode ends (the batch resets at the next step), and
    lie in the declared space; the game's planes are kept as they were."""
    n = 4
    vec = VectorPotentialInput(
        gym.make_vec(env_id, n, vectorization_mode="vector_entry_point", **kwargs), name
    )
    singles = [PotentialInput(gym.make(env_id, **kwargs), name) for _ in range(n)]
    obs, _ = vec.reset(seed=5)
    single = [env.reset(seed=5 + i)[0] for i, env in enumerate(singles)]
    rng, ended, episodes = np.random.default_rng(2), np.zeros(n, dtype=bool), 0
    for _ in range(60):
        assert vec.observation_space.contains(obs) and obs.dtype == np.float32
        np.testing.assert_array_equal(obs, np.stack(single))
        mask = vec.env.unwrapped.action_masks()
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        obs, _, terminated, truncated, _ = vec.step(actions)
        for i, env in enumerate(singles):
            single[i] = env.reset()[0] if ended[i] else env.step(int(actions[i]))[0]
        episodes += int(ended.sum())
        ended = terminated | truncated
    assert episodes > 0 or env_id.endswith("Sokoban-Small-v0")


def test_the_knights_input_plane_is_its_distance_field_scaled_by_the_start() -> None:
    """The Knight's plane holds phi with the knight on each cell over |phi(s0)|: -1 where
    he starts, 0 at the exit, each cell's cost to the exit relative to the start's; the
    padding beyond the maze is the bound's low end."""
    env = PotentialInput(gym.make("GridGames/Knight-v0", rows=5, cols=5, obs_shape=(6, 6)),
                         "distance")  # fmt: skip
    obs, _ = env.reset(seed=1)
    state = env.unwrapped.game_state()
    plane = obs[-1]
    assert plane[state.knight] == pytest.approx(-1.0)
    assert plane[state.level.exit] == 0.0
    assert (plane[5, :] == -INPUT_BOUND).all() and (plane[:, 5] == -INPUT_BOUND).all()
    phi0 = get_potential("GridGames/Knight-v0", "distance")(state)
    from grid_envs.knight.solver import exit_distances

    expected = np.clip(-exit_distances(state.level) / abs(phi0), -INPUT_BOUND, INPUT_BOUND)
    np.testing.assert_allclose(plane[:5, :5], expected, rtol=1e-6)


def test_the_input_plane_refuses_what_it_cannot_serve() -> None:
    with pytest.raises(ValueError, match="observation_mode='planes'"):
        PotentialInput(gym.make("GridGames/Knight-v0", observation_mode="compact"), "distance")
    with pytest.raises(ValueError, match="no potential 'nope'"):
        PotentialInput(gym.make("GridGames/Knight-v0"), "nope")
    vec = gym.make_vec("GridGames/Knight-v0", 2, vectorization_mode="vector_entry_point",
                       autoreset_mode="SameStep")  # fmt: skip
    with pytest.raises(ValueError, match="NextStep"):
        VectorPotentialInput(vec, "distance")


def test_a_critic_started_at_the_potential_gives_shapings_advantages() -> None:
    """Why a critic started at the potential is no third arm beside shaping: under GAE the
    advantages from raw rewards with the critic ``V + phi`` (phi = 0 at the end) equal those
    from shaped rewards with the critic ``V``, step for step (SB3's own rollout buffer)."""
    from stable_baselines3.common.buffers import RolloutBuffer

    rng = np.random.default_rng(0)
    steps, gamma, lam = 12, 0.97, 0.95
    phi = rng.normal(size=steps + 1)
    starts = np.zeros(steps + 1, dtype=bool)
    starts[[0, 5, 9]] = True  # episodes end before steps 5 and 9
    phi_next = np.where(starts[1:], 0.0, phi[1:])  # phi(terminal) = 0
    raw, values = rng.normal(size=steps), rng.normal(size=steps + 1)
    values[[4, 8]] = 0.0  # not read: those steps end an episode
    shaped = raw + gamma * phi_next - phi[:-1]
    advantages = []
    for rewards, critic in ((shaped, values), (raw, values + phi)):
        buffer = RolloutBuffer(steps, gym.spaces.Box(0, 1, (1,)), gym.spaces.Discrete(2),
                               gamma=gamma, gae_lambda=lam, n_envs=1)  # fmt: skip
        for t in range(steps):
            value = _tensor(critic[t : t + 1])
            buffer.add(np.zeros((1, 1)), np.zeros((1, 1)), rewards[t : t + 1],
                       starts[t : t + 1], value, _tensor(np.zeros(1)))  # fmt: skip
        last = critic[steps : steps + 1]
        buffer.compute_returns_and_advantage(_tensor(last), starts[steps : steps + 1])
        advantages.append(buffer.advantages.ravel().copy())
    np.testing.assert_allclose(advantages[0], advantages[1], atol=1e-5)


def _tensor(values: np.ndarray):
    import torch

    return torch.as_tensor(values, dtype=torch.float32)


@pytest.mark.parametrize("at_loss", ["zero", "kept"])
def test_a_lost_end_keeps_its_potential_only_when_asked(at_loss: str) -> None:
    """A Knight who runs out of energy: with ``at_loss="zero"`` the last step is paid
    ``-phi`` of where he stood (the shaped return is the raw one minus phi(s0)); with
    ``"kept"`` the end keeps its potential, and the return gains gamma^T phi(s_T) as at a
    time limit. Single and batched alike."""
    gamma, kwargs = 0.9, {"rows": 5, "cols": 5, "energy_slack": 1.0}
    env = PotentialShaping(gym.make("GridGames/Knight-v0", **kwargs), "distance", gamma,
                           at_loss=at_loss)  # fmt: skip
    vec = VectorPotentialShaping(gym.make_vec("GridGames/Knight-v0", 1,
                                              vectorization_mode="vector_entry_point", **kwargs),
                                 "distance", gamma, at_loss=at_loss)  # fmt: skip
    env.reset(seed=4)
    vec.reset(seed=4)
    phi = get_potential("GridGames/Knight-v0", "distance")
    phi0 = phi(env.unwrapped.game_state())
    raw, shaped, batched = [], [], []
    while True:  # away from the exit and back, until the energy runs out
        mask = env.unwrapped.action_masks()
        action = int(np.flatnonzero(mask)[len(raw) % mask.sum()])
        _, reward, terminated, truncated, info = env.step(action)
        batched.append(float(vec.step(np.array([action]))[1][0]))
        shaped.append(reward)
        raw.append(info["raw_reward"])
        if terminated or truncated:
            break
    assert terminated and not info["is_success"]
    end = phi(env.unwrapped.game_state()) if at_loss == "kept" else 0.0
    assert end < 0 or at_loss == "zero"
    gap = shaped_return(shaped, gamma) - shaped_return(raw, gamma)
    assert gap == pytest.approx(gamma ** len(raw) * end - phi0)
    np.testing.assert_allclose(batched, shaped)
    with pytest.raises(ValueError, match="at_loss must be one of"):
        PotentialShaping(gym.make("GridGames/Knight-v0"), "distance", at_loss="half")
