"""The Knight: escape a URDL maze past monsters on an energy budget (source article:
the-knight-maze; union-find generation, Dijkstra's cheapest route)."""

from typing import TYPE_CHECKING

from grid_envs.core.spec import lazy_exports

if TYPE_CHECKING:
    from grid_envs.knight.env import KnightEnv
    from grid_envs.knight.generator import KnightGenerator
    from grid_envs.knight.state import KnightLevel, KnightState

# the names below load their modules on first use: ``import grid_envs`` reads this
# package's spec only
__getattr__ = lazy_exports(
    __name__,
    {
        "KnightEnv": "env",
        "KnightGenerator": "generator",
        "KnightLevel": "state",
        "KnightState": "state",
    },
)

__all__ = ["KnightEnv", "KnightGenerator", "KnightLevel", "KnightState"]
