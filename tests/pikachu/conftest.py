"""Shared helpers for the Pikachu tests."""

from __future__ import annotations

import numpy as np

from grid_envs.pikachu.paths import removable_pairs
from grid_envs.pikachu.solver import remove


def exhaustive(board: np.ndarray) -> bool:
    """Can the board be cleared? Plain search over every removal order (tiny boards)."""
    seen: set[bytes] = set()

    def go(b: np.ndarray) -> bool:
        if not b.any():
            return True
        key = b.tobytes()
        if key in seen:
            return False
        seen.add(key)
        return any(go(remove(b, m, "none")) for m in removable_pairs(b))

    return go(board)
