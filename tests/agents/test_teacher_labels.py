"""Cloning from teachers that name every action as good as their own (``Agent.label``;
each game's labels are tested with its baselines, tests/agents/games): any of them
matches, and the board's symmetries map states, actions and labels onto the rules."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.games.lines98 import mirrored_moves
from agents.games.sokoban import mirrored_actions
from agents.train.build import new_model, training_env
from agents.train.cloning import Labels, accuracy, board_symmetries, clone, cloning_loss, mirrored
from agents.train.config import TrainConfig, default_config
from agents.train.labels import label_states
from agents.train.plan import plan_run
from grid_envs.sokoban import rules


def test_cloning_is_matched_by_any_of_the_equally_good_actions() -> None:
    env_id, kwargs = "GridGames/Minesweeper-v0", {"rows": 6, "cols": 6, "mines": 4}
    labels, _ = label_states(env_id, "solver", 200, seed=1, env_kwargs=kwargs, n_envs=4)
    assert labels.good is not None and labels.good[np.arange(len(labels)), labels.actions].all()
    config = TrainConfig(
        env_id=env_id, env_kwargs=kwargs, n_envs=2, n_steps=16, batch_size=32, seed=0
    )
    model = new_model(plan := plan_run(config), training_env(plan), tensorboard_log=None)
    index = np.arange(len(labels))
    with torch.no_grad():
        every_legal = Labels(*labels.arrays()[:4], labels.masks.copy())
        assert float(cloning_loss(model.policy, every_legal, index, value_coef=0)) < 1e-4
        own = Labels(*labels.arrays()[:4])
        sets_loss = float(cloning_loss(model.policy, labels, index, value_coef=0))
        own_loss = float(cloning_loss(model.policy, own, index, value_coef=0))
    several = labels.good.sum(axis=1) > 1
    assert several.any() and sets_loss < own_loss
    assert accuracy(model, labels) >= accuracy(model, own)
    merged = own.extend(labels)  # a recorded dataset's labels with a teacher's sets
    assert merged.good is not None and len(merged) == 2 * len(labels)
    assert np.array_equal(merged.good[: len(labels)], own.targets(slice(None)))


def mirror(board: np.ndarray, symmetry) -> np.ndarray:
    flip_rows, flip_cols, transpose, _ = symmetry
    board = board[::-1] if flip_rows else board
    board = board[:, ::-1] if flip_cols else board
    return np.ascontiguousarray(board.T if transpose else board)


def mirror_cell(cell: tuple[int, int], shape: tuple[int, int], symmetry) -> tuple[int, ...]:
    at = np.zeros(shape, dtype=bool)
    at[cell] = True
    return tuple(int(x) for x in np.argwhere(mirror(at, symmetry))[0])


def test_sokoban_symmetries_map_states_actions_and_labels_onto_the_rules() -> None:
    labels, _ = label_states("GridGames/Sokoban-Small-v0", "optimal", 60, seed=2, n_envs=2)
    env = gym.make("GridGames/Sokoban-Small-v0")
    env.reset(seed=5)
    state = env.unwrapped.game_state()
    symmetries = board_symmetries(labels.observations.shape, mirrored_actions)
    assert len(symmetries) == 8 and not any(symmetries[0][:3])
    seen = set()
    for symmetry in symmetries:
        turned = copy.deepcopy(state)
        turned.floor, turned.goals = mirror(state.floor, symmetry), mirror(state.goals, symmetry)
        turned.boxes = mirror(state.boxes, symmetry)
        turned.player = mirror_cell(state.player, state.floor.shape, symmetry)
        to = symmetry[3]
        assert np.array_equal(rules.legal_mask(turned)[to], rules.legal_mask(state))
        for action in np.flatnonzero(rules.legal_mask(state)):  # the same move, turned
            after, turned_after = copy.deepcopy(state), copy.deepcopy(turned)
            rules.apply_action(after, int(action))
            rules.apply_action(turned_after, int(to[action]))
            assert np.array_equal(mirror(after.boxes, symmetry), turned_after.boxes)
            assert turned_after.player == mirror_cell(after.player, after.floor.shape, symmetry)
        view = mirrored(labels, np.arange(len(labels)), symmetry)
        for k in range(len(labels)):  # the observation turned as the board, the labels with it
            assert np.array_equal(
                view.observations[k],
                np.stack([mirror(plane, symmetry) for plane in labels.observations[k]]),
            )
        assert np.array_equal(view.masks[:, to], labels.masks)
        assert np.array_equal(view.targets(slice(None))[:, to], labels.targets(slice(None)))
        assert view.masks[np.arange(len(view)), view.actions].all()
        seen.add(view.observations.tobytes())
    assert len(seen) == 8  # eight different views of the same states


def test_cloning_through_the_symmetries_learns_the_mirror_images_too() -> None:
    env_id = "GridGames/Sokoban-Small-v0"
    labels, _ = label_states(env_id, "optimal", 300, seed=1, n_envs=4)
    symmetries = board_symmetries(labels.observations.shape, mirrored_actions)
    index = np.arange(len(labels))
    turned = [mirrored(labels, index, s) for s in symmetries[1:]]
    config = default_config(env_id, n_envs=2, n_steps=16, batch_size=32, vec_env="dummy")
    losses = []
    for views in (None, symmetries):
        model = new_model(plan := plan_run(config), training_env(plan), tensorboard_log=None)
        clone(model, labels, epochs=20, batch_size=32, lr=3e-3, symmetries=views)
        with torch.no_grad():  # the cloning loss on the states seen in other orientations
            losses.append(np.mean([float(cloning_loss(model.policy, view, index, value_coef=0))
                                   for view in turned]))  # fmt: skip
    plain, through = losses  # plain cloning learns these states in one orientation only
    assert through < 0.5 * plain, losses


def test_lines98_symmetries_map_boards_moves_and_lines_onto_the_rules() -> None:
    from grid_envs.lines98 import rules as lines

    env = gym.make("GridGames/Lines98-v0")
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(6):  # a few moves in: balls of several colours, some regions cut off
        obs, *_ = env.step(int(rng.choice(np.flatnonzero(env.unwrapped.action_masks()))))
    board = env.unwrapped.game_state().board
    symmetries = board_symmetries(obs.shape, mirrored_moves)
    assert len(symmetries) == 8
    for symmetry in symmetries:
        to = symmetry[3]
        turned = mirror(board, symmetry)
        assert np.array_equal(lines.legal_mask(turned)[to], lines.legal_mask(board))
        cells = mirror(np.arange(board.size).reshape(board.shape), symmetry).ravel()
        pairs = 0
        for cell in range(board.size):  # a line through a cell is a line through its image
            found = {tuple(sorted(line)) for line in lines.lines_through(board, cell, 2)}
            image = {tuple(sorted(int(np.flatnonzero(cells == c)[0]) for c in line))
                     for line in found}  # fmt: skip
            there = lines.lines_through(turned, int(np.flatnonzero(cells == cell)[0]), 2)
            assert image == {tuple(sorted(line)) for line in there}
            pairs += len(found)
        assert pairs > 0  # two balls of a colour side by side, along some axis


@pytest.mark.parametrize("flags", [False, True])
def test_minesweeper_labels_seen_through_a_symmetry_are_the_solver_s_own(flags: bool) -> None:
    """Every sure cell the solver names, mirrored with its board, is a cell the solver
    proves safe on the mirrored board; with flags on, the map covers the flag actions too."""
    from agents.games.minesweeper import AGENTS, view_from_observation
    from grid_envs.minesweeper.solver import MinesweeperSolver

    env_id = "GridGames/Minesweeper-v0"
    kwargs = {"rows": 6, "cols": 6, "mines": 4, "allow_flags": flags}
    labels, _ = label_states(env_id, "solver", 120, seed=3, env_kwargs=kwargs, n_envs=4)
    cells = 36
    assert labels.masks.shape[1] == cells * (2 if flags else 1)
    symmetries = board_symmetries(labels.observations.shape[1:], AGENTS.symmetries[env_id])
    assert len(symmetries) == 8
    index = np.arange(len(labels))
    for symmetry in symmetries:
        view = mirrored(labels, index, symmetry)
        for obs, good, mask in zip(view.observations, view.targets(index), view.masks, strict=True):
            board = view_from_observation(obs)
            safe, _ = MinesweeperSolver(6, 6, 4).deduce(board.ravel().tolist())
            named = set(np.flatnonzero(good[:cells]).tolist())
            assert not (good & ~mask).any()
            if len(named) > 1:  # sure cells (a guess names one cell, itself a choice)
                assert named <= safe
