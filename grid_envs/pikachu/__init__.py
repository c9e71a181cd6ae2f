"""Pikachu (Onet): join equal tiles by a path of at most three segments (source article:
pikachu-path-check) until the board is clear."""

from grid_envs.pikachu.env import PikachuEnv
from grid_envs.pikachu.state import PikachuState

__all__ = ["PikachuEnv", "PikachuState"]
