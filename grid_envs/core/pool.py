"""A pool of generated levels, so that a new episode costs a copy instead of a search.

Some generators are slow next to a batch of steps (a 10x10 Sokoban level takes about 1 ms
of plain Python, a Knight maze with its Dijkstra maps about 0.3 ms), while a batch of
4,096 envs under random play starts hundreds of episodes a step. A pool of ``size`` levels
is drawn once and episodes pick from it.

Reproducibility: level ``k`` of the pool is ``generator.generate(default_rng([seed, k]))``,
its own random stream, so it is the same level whenever and in whatever order it is
generated (lazily when an episode first draws it, or in bulk with :meth:`LevelPool.fill`).
An env with ``level_pool=size`` picks level ``int(env.np_random.random() * size)`` at each
reset,
so the same env seed gives the same episodes, with the single env and the batched one alike.
Pools are shared inside a process (:meth:`LevelPool.shared`): N envs with the same settings
generate each level once.

A game subclasses :class:`LevelPool` to keep, per level, the arrays its batched env copies
at a reset (``_record``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

T = TypeVar("T")


class LevelPool(Generic[T]):
    """``size`` levels of ``generator`` (anything with ``generate(rng)`` and a ``settings``
    tuple that decides which level a random stream gives), level ``k`` seeded by
    ``(seed, k)``."""

    _shared: ClassVar[dict[tuple[Any, ...], Any]] = {}

    def __init__(self, generator: Any, size: int, seed: int = 0) -> None:
        if not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"level_pool must be a positive number of levels, got {size!r}")
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"pool_seed must be a non-negative integer, got {seed!r}")
        self.generator, self.size, self.seed = generator, int(size), int(seed)
        self.levels: list[T | None] = [None] * self.size
        self.filled = np.zeros(self.size, dtype=bool)
        self.missing = self.size  # levels not generated yet

    @classmethod
    def shared(cls, generator: Any, size: int, seed: int = 0) -> Any:
        """The process-wide pool of this class for these generator settings, size and seed."""
        key = (cls.__name__, type(generator).__name__, generator.settings, int(size), int(seed))
        if key not in LevelPool._shared:
            LevelPool._shared[key] = cls(generator, size, seed)
        return LevelPool._shared[key]

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, k: int) -> T:
        if not 0 <= k < self.size:
            raise IndexError(f"level {k} is outside the pool of {self.size}")
        if not self.filled[k]:
            self._generate(k)
        level = self.levels[k]
        assert level is not None
        return level

    def draw(self, rng: np.random.Generator) -> int:
        """The pool index an episode plays, drawn with the env's generator: one uniform
        double scaled to the pool (a bias below size / 2**53; cheaper than ``integers``)."""
        return int(rng.random() * self.size)

    def fill(self, indices: Any = None) -> int:
        """Generate the missing levels among ``indices`` (all by default); returns how many."""
        if not self.missing:
            return 0
        wanted = np.arange(self.size) if indices is None else np.asarray(indices, dtype=np.int64)
        missing = np.unique(wanted[~self.filled[wanted]])
        for k in missing.tolist():
            self._generate(k)
        return len(missing)

    def _generate(self, k: int) -> None:
        level = self.generator.generate(np.random.default_rng([self.seed, k]))
        self.levels[k] = level
        self._record(k, level)
        self.filled[k] = True
        self.missing -= 1

    def _record(self, k: int, level: T) -> None:
        """Keep what the batched env copies at a reset of level ``k`` (games override)."""
