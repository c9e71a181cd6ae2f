"""The Knight's rules, written once: the single env calls them with numbers, the batched env
with arrays of one number per env (numpy broadcasting does the rest).

A move enters the next cell through an open side and costs :func:`entry_cost` energy; an
item there is picked up; the game is won at the exit and lost as soon as the energy left is
below the cheapest cost from the knight's cell (:func:`outcome`). The knight starts with
:func:`start_energy`; :func:`outcome` also gives a move's reward. The observation's
planes are named here (:data:`SIDE_PLANES` and the rest); :func:`draw_planes` draws a
batch's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from grid_envs.knight.state import (
    ACTION_BITS,
    DOWN_BIT,
    LEFT_BIT,
    RIGHT_BIT,
    UP_BIT,
    KnightLevel,
)

# the observation planes
SIDE_PLANES = slice(0, 4)  # 1 where the cell opens up, right, down, left (URDL order)
KNIGHT_PLANE, EXIT_PLANE, MONSTER_PLANE, ITEM_PLANE, ENERGY_PLANE = 4, 5, 6, 7, 8
N_PLANES = 9
ACTION_SIDE_PLANES = (0, 2, 3, 1)  # actions up, down, left, right -> their side's plane
MAX_ENERGY_SHOWN = 255  # the energy plane is uint8

# a cell's URDL number -> the actions whose side it opens (0 up, 1 down, 2 left, 3 right)
MASKS = np.array([[bool(bits & b) for b in ACTION_BITS] for bits in range(16)])
# (side in URDL order, a cell's URDL number) -> 1 if that side is open, as uint8
SIDES = np.array(
    [[int(bool(bits & b)) for bits in range(16)] for b in (UP_BIT, RIGHT_BIT, DOWN_BIT, LEFT_BIT)],
    dtype=np.uint8,
)


@dataclass(frozen=True)
class Rewards:
    """What a move pays (the env's reward settings, :class:`grid_envs.knight.env.KnightEnv`):
    ``step_reward`` always, ``item_reward`` for an item, ``win_reward`` at the exit,
    ``loss_reward`` when the exit can no longer be reached."""

    step_reward: float
    item_reward: float
    win_reward: float
    loss_reward: float


# Each rule takes plain numbers (one env) or arrays with one entry per env (a batch), and
# is written in arithmetic both understand, so one env pays no numpy call for it.


def entry_cost(monster: Any, monster_cost: Any) -> Any:
    """The energy it costs to enter a cell: ``monster_cost`` with a monster, else 1."""
    return 1 + (monster_cost - 1) * monster


def level_costs(level: KnightLevel) -> np.ndarray:
    """(rows, cols) int32: the energy it costs to enter each cell of ``level``."""
    return entry_cost(level.monsters, level.monster_cost).astype(np.int32)


def start_energy(cheapest: Any, slack: float) -> Any:
    """The energy a knight starts with: the cheapest route's cost times ``slack``, rounded
    up (the small margin keeps ``cheapest * 1.0`` from rounding up to one more)."""
    return -((1e-9 - cheapest * slack) // 1)


def outcome(
    settings: Rewards, found_item: Any, at_exit: Any, energy: Any, cheapest_from_here: Any
) -> tuple[Any, Any, Any]:
    """(reward, won, lost) after a move: won at the exit; lost elsewhere when the energy
    left is below the cheapest cost from the knight's cell to the exit. The reward adds
    its terms in this order, so one env and a batch add the same floats."""
    lost = (energy < cheapest_from_here) & (at_exit == 0)
    reward = (
        settings.step_reward
        + found_item * settings.item_reward
        + at_exit * settings.win_reward
        + lost * settings.loss_reward
    )
    return reward, at_exit, lost


def energy_shown(energy: Any) -> Any:
    """The energy plane's value: the energy left, clipped to 0..255 (uint8)."""
    if isinstance(energy, int):
        return min(max(energy, 0), MAX_ENERGY_SHOWN)
    return np.minimum(np.maximum(energy, 0), MAX_ENERGY_SHOWN)  # np.clip: slower


def draw_planes(
    planes: np.ndarray,
    cells: np.ndarray,
    knight: np.ndarray,
    exit_: np.ndarray,
    monsters: np.ndarray,
    items: np.ndarray,
    energy: np.ndarray,
) -> None:
    """Draw a batch's observation planes from scratch into ``planes`` (k, 9, R, C):
    ``cells``, ``monsters`` and ``items`` are (k, rows, cols) with rows <= R and cols <= C,
    drawn in the top-left corner (the rest reads as closed cells); ``knight`` and ``exit_``
    (k, 2); ``energy`` (k,). The single env draws one board the same way without the
    batch's index arrays (:meth:`KnightEnv._planes`)."""
    k = np.arange(len(planes))
    rows, cols = cells.shape[1:]
    planes[:] = 0
    planes[:, SIDE_PLANES, :rows, :cols] = SIDES[:, cells].swapaxes(0, 1)
    planes[k, KNIGHT_PLANE, knight[:, 0], knight[:, 1]] = 1
    planes[k, EXIT_PLANE, exit_[:, 0], exit_[:, 1]] = 1
    planes[:, MONSTER_PLANE, :rows, :cols] = monsters
    planes[:, ITEM_PLANE, :rows, :cols] = items
    planes[:, ENERGY_PLANE] = energy_shown(energy)[:, None, None]
