"""Pikachu (Onet): join equal tiles by a path of at most three segments (source article:
pikachu-path-check) until the board is clear."""

from typing import TYPE_CHECKING

from grid_envs.core.spec import lazy_exports

if TYPE_CHECKING:
    from grid_envs.pikachu.env import PikachuEnv
    from grid_envs.pikachu.state import PikachuState

# the names below load their modules on first use: ``import grid_envs`` reads this
# package's spec only
__getattr__ = lazy_exports(
    __name__,
    {
        "PikachuEnv": "env",
        "PikachuState": "state",
    },
)

__all__ = ["PikachuEnv", "PikachuState"]
