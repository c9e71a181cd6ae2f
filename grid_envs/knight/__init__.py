"""The Knight: escape a URDL maze past monsters on an energy budget (source article:
the-knight-maze; union-find generation, Dijkstra's cheapest route)."""

from grid_envs.knight.env import KnightEnv
from grid_envs.knight.generator import KnightGenerator
from grid_envs.knight.state import KnightLevel, KnightState

__all__ = ["KnightEnv", "KnightGenerator", "KnightLevel", "KnightState"]
