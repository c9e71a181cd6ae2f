"""Sokoban: push search's game (source article: sokoban-push-search.txt)."""

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
