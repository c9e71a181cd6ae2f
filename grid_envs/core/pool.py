"""A pool of generated levels, so that a new episode costs a copy instead of a search.

Some generators are slow next to a batch of steps (a Sokoban level is plain Python, a
Knight maze needs its Dijkstra maps), while a batch of
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

A pool keeps arrays only, a few hundred bytes a level (no Python object per level), so that
pools of a hundred thousand levels and more stay small: a game subclasses
:class:`LevelPool` to keep, per level, what its envs copy at a reset (``_record``) and to
build the level object back from those arrays (``_level``). The arrays are allocated
zeroed, which the operating system backs with memory only as levels are written.

Shipped pools: generating a pool's levels one by one takes minutes (docs/speed.md), and a
batch of thousands of envs under random play draws most of them in its first minute. So the
package ships the registered ids' default pools, filled, in each game's ``pools/`` folder
(``<size>-<seed>-<digest of the generator's settings>.npz.xz``, a few MB each: a game keeps
only what it cannot derive quickly, ``_pack``, and rebuilds the rest in bulk with its
compiled rules, ``_unpack``). :meth:`LevelPool.shared` loads the file that matches its
settings, size and seed (a few tenths of a second); any other pool fills as above. The
levels are the ones the generator gives (the tests regenerate a sample of each shipped pool
and compare), so shipping changes no episode. ``python -m grid_envs.ship_pools
GridGames/Sokoban-v0 ...`` writes them again after a change to a generator.
"""

from __future__ import annotations

import hashlib
import io
import lzma
from importlib import resources
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from grid_envs.core import checks

T = TypeVar("T")

AUTO = "auto"  # an env's default level_pool: a pool of auto_size() levels when it generates


def auto_size(shape: tuple[int, int]) -> int:
    """The pool an env generating ``shape`` boards draws from by default: 100,000 levels
    for boards of up to 100 cells (Boxoban trains on 900,000 levels; a pool of 100,000
    holds a few tens of MB once full), 10,000 for larger ones."""
    return 100_000 if shape[0] * shape[1] <= 100 else 10_000


def pool_size(level_pool: Any, shape: tuple[int, int], generates: bool) -> int | None:
    """The pool an env uses: ``level_pool`` as given, or for ``"auto"`` the default size
    when the env generates its levels (none when it plays given levels)."""
    if isinstance(level_pool, str):
        if level_pool != AUTO:
            raise ValueError(f"level_pool must be a number of levels, 'auto' or None, "
                             f"got {level_pool!r}")  # fmt: skip
        return auto_size(shape) if generates else None
    if level_pool is None:
        return None
    return checks.integer("level_pool", level_pool, 1, checks.MAX_POOL)


class LevelPool(Generic[T]):
    """``size`` levels of ``generator`` (anything with ``generate(rng)`` and a ``settings``
    tuple that decides which level a random stream gives), level ``k`` seeded by
    ``(seed, k)``."""

    _shared: ClassVar[dict[tuple[Any, ...], Any]] = {}
    #: the package whose ``pools/`` folder may hold this game's shipped pools
    package: ClassVar[str | None] = None

    def __init__(self, generator: Any, size: int, seed: int = 0) -> None:
        size = checks.integer("level_pool", size, 1, checks.MAX_POOL)
        seed = checks.integer("pool_seed", seed, 0)
        self.generator, self.size, self.seed = generator, size, seed
        self.filled = np.zeros(self.size, dtype=bool)
        self.missing = self.size  # levels not generated yet

    @classmethod
    def shared(cls, generator: Any, size: int, seed: int = 0) -> Any:
        """The process-wide pool of this class for these generator settings, size and seed."""
        size = checks.integer("level_pool", size, 1, checks.MAX_POOL)
        seed = checks.integer("pool_seed", seed, 0)
        key = _identity(cls, generator, size, seed)
        if key not in LevelPool._shared:
            pool = cls(generator, size, seed)
            shipped = pool.shipped_file()
            if shipped is not None and shipped.is_file():
                pool.load(shipped.read_bytes())
            LevelPool._shared[key] = pool
        return LevelPool._shared[key]

    @classmethod
    def for_env(cls, generator: Any, level_pool: Any, seed: int) -> Any:
        """An env's pool: the shared pool of ``generator``'s levels that ``level_pool``
        asks for (a size, ``"auto"`` or None), or None where the env plays no pool."""
        seed = checks.integer("pool_seed", seed, 0)
        shape = generator.shape if generator is not None else (0, 0)
        size = pool_size(level_pool, shape, generates=generator is not None)
        if size is None:
            return None
        if generator is None:
            raise ValueError("level_pool pools generated levels: it cannot go with levels=")
        return cls.shared(generator, size, seed)

    @property
    def key(self) -> str:
        """What decides the pool's levels, as the text its shipped file records."""
        return repr(_identity(type(self), self.generator, self.size, self.seed))

    def shipped_file(self) -> Any:
        """Where the package would ship this pool, filled (a ``Traversable``; None for a
        game that ships none)."""
        if self.package is None:
            return None
        digest = hashlib.sha256(self.key.encode()).hexdigest()[:16]
        return resources.files(self.package) / "pools" / f"{self.size}-{self.seed}-{digest}.npz.xz"

    def save(self) -> bytes:
        """The filled pool as a shipped file's bytes (:meth:`load` reads them back)."""
        if self.missing:
            raise ValueError(f"{self.missing:,} of the pool's {self.size:,} levels are not "
                             "generated yet: fill() it first")  # fmt: skip
        buffer = io.BytesIO()
        arrays: dict[str, Any] = {"key": np.array(self.key), **self._pack()}
        np.savez(buffer, **arrays)
        return lzma.compress(buffer.getvalue(), preset=9)

    def load(self, data: bytes) -> None:
        """Fill the pool from a shipped file's bytes, written by :meth:`save` for a pool of
        the same settings, size and seed."""
        stored = np.load(io.BytesIO(lzma.decompress(data)))
        if str(stored["key"]) != self.key:
            raise ValueError(f"the file holds the pool {stored['key']!s}, not {self.key}")
        self._unpack({name: stored[name] for name in stored.files if name != "key"})
        self.filled[:] = True
        self.missing = 0

    def __len__(self) -> int:
        return self.size

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """A copied env shares its pool: level ``k`` is fixed by ``(seed, k)`` whoever
        generates it, so sharing changes no episode and copies no levels."""
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its settings: the process that loads it shares (or starts) the pool
        of those settings, which gives the same levels, so a pickled env stays small."""
        return (_shared_pool, (type(self), self.generator, self.size, self.seed))

    def __getitem__(self, k: int) -> T:
        """Level ``k`` (generated now if it was not yet), built from the pool's arrays."""
        if not 0 <= k < self.size:
            raise IndexError(f"level {k} is outside the pool of {self.size}")
        if not self.filled[k]:
            self._generate(k)
        return self._level(k)

    def draw(self, rng: np.random.Generator) -> int:
        """The pool index an episode plays, drawn with the env's generator: one uniform
        double scaled to the pool (a bias below size / 2**53; cheaper than ``integers``)."""
        return int(rng.random() * self.size)

    def fill(self, indices: Any = None, processes: int = 1) -> int:
        """Generate the missing levels among ``indices`` (all by default); returns how many.

        ``processes`` > 1 splits a large fill over that many worker processes (each level
        depends only on ``(seed, k)``, so the levels are the same)."""
        if not self.missing:
            return 0
        wanted = np.arange(self.size) if indices is None else np.asarray(indices, dtype=np.int64)
        missing = np.unique(wanted[~self.filled[wanted]])
        if processes > 1 and len(missing) >= 256 * processes:
            self._fill_in_processes(missing, processes)
        else:
            for k in missing.tolist():
                self._generate(k)
        return len(missing)

    def _arrays(self) -> dict[str, np.ndarray]:
        """The pool's per-level arrays (first axis: the levels)."""
        return {
            name: value for name, value in vars(self).items()
            if isinstance(value, np.ndarray) and name != "filled" and len(value) == self.size
        }  # fmt: skip

    def _fill_in_processes(self, missing: np.ndarray, processes: int) -> None:
        import multiprocessing

        # fresh worker processes: a fork of a process that holds other threads (torch's, a
        # test runner's) can inherit a lock held at the fork and hang in the compiled rules
        chunks = np.array_split(missing, processes * 4)
        jobs = [(type(self), self.generator, self.size, self.seed, chunk) for chunk in chunks]
        with multiprocessing.get_context("spawn").Pool(processes) as workers:
            for chunk, arrays in zip(chunks, workers.imap(_generate_chunk, jobs), strict=True):
                for name, values in arrays.items():
                    getattr(self, name)[chunk] = values
                self.filled[chunk] = True
        self.missing = int(self.size - self.filled.sum())

    def _generate(self, k: int) -> None:
        self._record(k, self.generator.generate(np.random.default_rng([self.seed, k])))
        self.filled[k] = True
        self.missing -= 1

    def _record(self, k: int, generated: Any) -> None:
        """Keep in the pool's arrays what the envs need of level ``k``, as the generator
        made it (games override)."""
        raise NotImplementedError

    def _level(self, k: int) -> T:
        """Level ``k`` built back from the pool's arrays (games override)."""
        raise NotImplementedError

    def _pack(self) -> dict[str, np.ndarray]:
        """What a shipped file keeps of the filled pool: by default every array (games
        keep less, what they cannot derive quickly)."""
        return self._arrays()

    def _unpack(self, stored: dict[str, np.ndarray]) -> None:
        """Set every array from what :meth:`_pack` kept."""
        for name, values in stored.items():
            getattr(self, name)[...] = values


def _identity(cls: Any, generator: Any, size: int, seed: int) -> tuple[Any, ...]:
    """What decides a pool's levels: its class, its generator's kind and settings, its
    size and its seed (the key of the shared pools and of the shipped files)."""
    return (cls.__name__, type(generator).__name__, generator.settings, size, seed)


def _shared_pool(cls: Any, generator: Any, size: int, seed: int) -> Any:
    """The pool a pickled pool stands for (:meth:`LevelPool.__reduce__`)."""
    return cls.shared(generator, size, seed)


def _generate_chunk(job: tuple[Any, ...]) -> dict[str, np.ndarray]:
    """A worker's share of a fill: the pool arrays of the levels ``chunk``."""
    cls, generator, size, seed, chunk = job
    pool = cls(generator, size, seed)
    for k in chunk.tolist():
        pool._generate(k)
    return {name: values[chunk] for name, values in pool._arrays().items()}
