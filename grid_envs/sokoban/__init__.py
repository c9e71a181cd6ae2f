"""Sokoban: push search's game (source article: sokoban-push-search.txt)."""

from typing import TYPE_CHECKING

from grid_envs.core.spec import lazy_exports

if TYPE_CHECKING:
    from grid_envs.sokoban.env import SokobanEnv, load_levels
    from grid_envs.sokoban.generator import GeneratedLevel, SokobanGenerator
    from grid_envs.sokoban.levels import (
        BoxobanDirectory,
        parse_xsb,
        read_collection,
        save_collection,
        write_xsb,
    )
    from grid_envs.sokoban.state import Level, SokobanState

# the names below load their modules on first use: ``import grid_envs`` reads this
# package's spec only
__getattr__ = lazy_exports(
    __name__,
    {
        "BoxobanDirectory": "levels",
        "GeneratedLevel": "generator",
        "Level": "state",
        "SokobanEnv": "env",
        "SokobanGenerator": "generator",
        "SokobanState": "state",
        "load_levels": "env",
        "parse_xsb": "levels",
        "read_collection": "levels",
        "save_collection": "levels",
        "write_xsb": "levels",
    },
)

__all__ = [
    "BoxobanDirectory",
    "GeneratedLevel",
    "Level",
    "SokobanEnv",
    "SokobanGenerator",
    "SokobanState",
    "load_levels",
    "parse_xsb",
    "read_collection",
    "save_collection",
    "write_xsb",
]
