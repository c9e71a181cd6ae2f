"""Rules written twice, pinned by property tests: random states, one env and the batch agree.

Where a batched env keeps a scalar fast path beside the single env's rule, the pair is
pinned here, one test per rule, on states hypothesis draws (rooms, mazes, minefields the
generators would not make: boxes against walls, frozen pairs, open mazes, dense mines).
Lines98's and Pikachu's rules have no pair: the single env and the batch call the same
compiled functions (``grid_envs/lines98/rules.py``, ``grid_envs/pikachu/rules.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.test_vector_envs import run_both

PROPERTY = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


@st.composite
def sokoban_rooms(draw: st.DrawFn) -> str:
    """An XSB room: walls round the edge and scattered inside, 1-3 boxes and as many goals
    anywhere on the floor (boxes on goals, against walls and beside each other included)."""
    rows, cols = draw(st.integers(5, 8)), draw(st.integers(5, 9))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inner = rng.random((rows, cols)) < draw(st.floats(0.0, 0.3))
    inner[[0, -1], :] = inner[:, [0, -1]] = True
    floor = np.argwhere(~inner)
    boxes = draw(st.integers(1, 3))
    assume(len(floor) >= boxes + 2)
    picks = rng.permutation(len(floor))
    box_cells = {tuple(floor[k]) for k in picks[:boxes]}
    player = tuple(floor[picks[boxes]])
    goal_cells = {tuple(floor[k]) for k in rng.choice(len(floor), boxes, replace=False)}
    text = []
    for r in range(rows):
        line = ""
        for c in range(cols):
            cell, box, goal = (r, c), (r, c) in box_cells, (r, c) in goal_cells
            if inner[r, c]:
                line += "#"
            elif cell == player:
                line += "+" if goal else "@"
            else:
                line += "*" if box and goal else "$" if box else "." if goal else " "
        text.append(line)
    return "\n".join(text)


# a random room is often one the env refuses (a box or goal out of reach), so many draws are
# filtered out by design: that health check would fail the test on an unlucky run
@settings(PROPERTY, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(room=sokoban_rooms(), seed=st.integers(0, 1000), terminate=st.booleans())
def test_sokoban_moves_pushes_masks_and_deadlocks(room: str, seed: int, terminate: bool) -> None:
    """``rules.legal_mask``, ``rules.apply_action`` and the deadlock tests against the
    batch's code tables, cell adds and array freeze test, step by step."""
    from grid_envs.sokoban import SokobanEnv

    try:  # a room the env refuses: a box or goal out of reach, none to push, no first move
        SokobanEnv(levels=room).reset(seed=0)
    except ValueError:
        assume(False)
    kwargs = {"levels": room, "terminate_on_deadlock": terminate, "max_episode_steps": 30}
    run_both("GridGames/Sokoban-v0", 2, 40, seed, **kwargs)


@PROPERTY
@given(
    shape=st.tuples(st.integers(1, 7), st.integers(2, 7)),
    loops=st.floats(0.0, 1.0),
    monsters=st.floats(0.0, 0.6),
    items=st.floats(0.0, 0.5),
    cost=st.integers(1, 9),
    slack=st.floats(1.0, 3.0),
    seed=st.integers(0, 1000),
)
def test_knight_moves_energy_and_masks(
    shape: tuple[int, int], loops: float, monsters: float, items: float, cost: int,
    slack: float, seed: int,
) -> None:  # fmt: skip
    """The single env's moves, energy, items and mask against the batch's arrays."""
    rows, cols = shape
    run_both("GridGames/Knight-v0", 3, 60, seed, rows=rows, cols=cols, loops=loops,
             monster_density=monsters, item_density=items, monster_cost=cost,
             energy_slack=slack, level_pool=None)  # fmt: skip


@PROPERTY
@given(
    shape=st.tuples(st.integers(2, 12), st.integers(2, 40)),
    density=st.floats(0.0, 0.5),
    first_click=st.sampled_from(["safe", "zero", "any"]),
    seed=st.integers(0, 1000),
)
def test_minesweeper_reveals_and_flood_fill(
    shape: tuple[int, int], density: float, first_click: str, seed: int
) -> None:
    """``rules.opened_by`` (one board's flood fill) against the batch's packed-row
    dilation, through whole games."""
    from grid_envs.minesweeper import rules

    rows, cols = shape
    mines = min(int(density * rows * cols), rules.max_mines(rows, cols, first_click))
    assume(mines >= 1)
    run_both("GridGames/Minesweeper-v0", 3, 40, seed, rows=rows, cols=cols, mines=mines,
             first_click=first_click)  # fmt: skip


@PROPERTY
@given(shape=st.tuples(st.integers(1, 16), st.integers(1, 64)), density=st.floats(0.0, 0.4),
       seed=st.integers(0, 2**32 - 1))  # fmt: skip
def test_minesweeper_flood_fill_of_one_board_and_a_batch(
    shape: tuple[int, int], density: float, seed: int
) -> None:
    """The flood fill alone, on every shape the packed rows take (one word a row and
    more), from a zero cell of each of 20 random minefields."""
    from grid_envs.minesweeper import rules
    from grid_envs.minesweeper.state import MinesweeperState

    rng = np.random.default_rng(seed)
    mines = rng.random((20, *shape)) < density
    counts = rules.neighbour_counts(mines)
    zero = (counts == 0) & ~mines
    ks = np.flatnonzero(zero.any(axis=(1, 2)))
    assume(len(ks))
    clicks = [np.argwhere(zero[k])[rng.integers(zero[k].sum())] for k in ks]
    packed = rules.PackedRows(shape[1])
    start = np.zeros((len(ks), shape[0]), dtype=packed.kind)
    for j, (r, c) in enumerate(clicks):
        start[j, r] = packed.one << packed.kind(c)
    batch = packed.unpack(packed.grow(start, packed.pack(zero[ks])))
    for j, k in enumerate(ks):
        state = MinesweeperState.empty(*shape, int(mines[k].sum()), "any")
        state.mines, state.counts, state.placed = mines[k], counts[k], True
        assert np.array_equal(batch[j], rules.opened_by(state, tuple(clicks[j])))


@pytest.mark.parametrize("game", ["lines98", "pikachu"])
def test_lines98_and_pikachu_have_one_source(game: str) -> None:
    """Their batches call the single env's compiled rules: no second copy to pin."""
    import importlib
    import inspect

    vector = inspect.getsource(importlib.import_module(f"grid_envs.{game}.vector"))
    assert "rules.play_batch(" in vector and "rules.masks_batch(" in vector
