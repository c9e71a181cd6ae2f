"""SokobanPush-v0: one action per push, the player walking by BFS."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from grid_envs.sokoban import rules
from grid_envs.sokoban.push_env import decode_push, push_action
from grid_envs.sokoban.state import cell_codes


def legal_pushes_by_rules(state: rules.SokobanState) -> set[tuple[tuple[int, int], int]]:
    """Every push reachable now, found by walking with the single-step rules."""
    region = rules.player_region(state)
    out = set()
    for r, c in np.argwhere(state.boxes & state.floor):
        for d, (dr, dc) in enumerate(rules.DIRECTIONS):
            behind, beyond = (r - dr, c - dc), (r + dr, c + dc)
            if region[behind] and state.floor[beyond] and not state.boxes[beyond]:
                out.add(((int(r), int(c)), d))
    return out


def test_mask_is_exactly_the_reachable_pushes() -> None:
    env = gym.make("GridGames/SokobanPush-v0")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    cols = env.unwrapped.obs_shape[1]
    for _ in range(300):
        expected = legal_pushes_by_rules(env.unwrapped.game_state())
        got = {decode_push(a, cols) for a in np.flatnonzero(info["action_mask"])}
        assert got == expected
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, _, terminated, truncated, info = env.step(a)
        # the codes the walk and the push change by fixed amounts are the state's codes
        codes = cell_codes(env.unwrapped.game_state(), env.unwrapped.obs_shape)
        assert (obs.argmax(axis=0) == codes).all()
        if terminated or truncated:
            _, info = env.reset()


def test_a_push_walks_then_pushes() -> None:
    level = "#######\n#     #\n# .$  #\n#    @#\n#######"
    env = gym.make("GridGames/SokobanPush-v0", levels=level)
    _, info = env.reset(seed=0)
    a = push_action((2, 3), 2, env.unwrapped.obs_shape[1])  # push the box left
    assert info["action_mask"][a] and info["action_mask"].sum() == 4  # the box is in the open
    _, reward, terminated, _, info = env.step(a)
    assert terminated and info["is_success"]
    assert info["pushes"] == 1 and info["moves"] == 3  # walked 2 cells, then pushed
    assert abs(reward - (-0.1 + 1 + 10)) < 1e-9


def test_push_helpers_round_trip() -> None:
    for cell, d in [((0, 0), 0), ((3, 7), 3), ((9, 9), 2)]:
        assert decode_push(push_action(cell, d, 10), 10) == (cell, d)
