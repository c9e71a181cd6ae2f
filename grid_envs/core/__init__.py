"""What every game shares: grid helpers, the base env and the rendering kit."""

from grid_envs.core.base_env import GridEnv, Snapshot

__all__ = ["GridEnv", "Snapshot"]
