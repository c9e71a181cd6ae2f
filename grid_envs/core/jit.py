"""Rules compiled once, for one env and for a whole batch.

A rule that a batch must run at array speed is written once, as a plain function over one
board in the subset of Python and numpy that numba compiles, and decorated with
:func:`compiled`. The single env calls it directly; the batched env calls it from a
compiled loop over its boards, so both run the same code at machine speed (as PufferLib's
envs have one ``c_step`` serve the whole batch).

Random draws stay exact: a compiled rule that draws takes a list of generators and an
index, the env's own ``numpy.random.Generator`` (a batch passes its envs' as a
:func:`generators` list, a single env its own as a kept one-item list, :func:`lone`: numba
unboxes a generator passed as an argument at every call), whose ``integers`` and
``permutation`` numba computes bit for bit as numpy does, from the same state. A rule
draws a bounded integer with :func:`below`, numpy's ``integers(0, bound)`` by the same
algorithm without the one-item array numba's ``integers`` makes at each call; rules that
need another of numpy's draws build it from these in the order numpy makes them (tested
against numpy).

A batch's compiled loop releases the GIL, so :func:`over_threads` splits a large batch's
rows over the cores (``GRIDGAMES_ENV_THREADS``, default: every core this process may use):
each row is one game, played by the same code whichever thread plays it, so the results
are the same for any number of threads (tested).

Compiled code is cached on disk (numba's ``cache=True``, beside the module or, where that
folder is read-only, in the user's cache): the first process that calls a rule compiles it
(a few seconds for a game, stated in docs/compiled.md), later ones load it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast, overload

import numba
import numpy as np
from numba.cpython.unsafe import numbers as _bits
from numba.extending import overload as compiled_as
from numba.np.random.generator_core import next_uint32
from numba.np.random.random_methods import bounded_lemire_uint64, buffered_bounded_lemire_uint32
from numba.typed import List

F = TypeVar("F", bound=Callable[..., Any])


def compiled(fn: F) -> F:
    """``fn`` compiled by numba (nopython, cached on disk, without the GIL)."""
    return cast(F, numba.njit(cache=True, nogil=True)(fn))


def inlined(fn: F) -> F:
    """:func:`compiled`, and inlined into the compiled functions that call it (numba's
    ``inline="always"``): for a small rule called in an inner loop, where the call would
    cost more than the rule. The inlined body may still count a reference to each array
    it is given, at every use (the Sokoban push paths' loops did): there, write the test
    out, or call an :func:`uncounted` function."""
    return cast(F, numba.njit(cache=True, nogil=True, inline="always")(fn))


def uncounted(fn: F) -> F:
    """:func:`compiled`, without numba's reference counting (``_nrt=False``): for a
    helper that creates no array and is called many times over with arrays, each call of
    which would otherwise count a reference to every array it is given, on entry and on
    return, with an atomic instruction each. Its arrays stay owned by its caller."""
    options: dict[str, Any] = {"_nrt": False}  # an option numba's stubs do not list
    return cast(F, numba.njit(cache=True, nogil=True, **options)(fn))


def leading_zeros(x: int) -> int:
    """The zero bits of a 64-bit integer above its highest set bit (64 for zero): one
    instruction in compiled code (numba's intrinsic, :func:`_leading_zeros`), Python's
    ``bit_length`` run without numba (``NUMBA_DISABLE_JIT=1``)."""
    return 64 - (int(x) & 0xFFFFFFFFFFFFFFFF).bit_length()


def trailing_zeros(x: int) -> int:
    """The zero bits of a 64-bit integer below its lowest set bit (64 for zero), as
    :func:`leading_zeros` is compiled and run."""
    x = int(x) & 0xFFFFFFFFFFFFFFFF
    return (x & -x).bit_length() - 1 if x else 64


_intrinsics: Any = _bits  # numba's own typing: not for mypy to read


@compiled_as(leading_zeros, inline="always")
def _leading_zeros(x):
    return lambda x: _intrinsics.leading_zeros(x)


@compiled_as(trailing_zeros, inline="always")
def _trailing_zeros(x):
    return lambda x: _intrinsics.trailing_zeros(x)


#: The rows of a one-row batch, ``(0,)``: a single env hands it to a batch's compiled loop
#: over rows (such as a game's planes) to run that loop on its own board.
FIRST_ROW = np.zeros(1, dtype=np.int64)


class Counter:
    """A game state's whole-number counter, held at ``index`` of its int64 ``counters``
    array (one row of the batch's, the layout the compiled rules write), read and written
    as a plain ``int``: ``score = Counter(SCORE, "Points so far.")`` in the state's class.
    """

    def __init__(self, index: int, doc: str | None = None) -> None:
        self.index, self.__doc__ = index, doc

    @overload
    def __get__(self, state: None, owner: type) -> Counter: ...
    @overload
    def __get__(self, state: object, owner: type) -> int: ...
    def __get__(self, state: Any, owner: type) -> Counter | int:
        return self if state is None else int(state.counters[self.index])

    def __set__(self, state: Any, value: int) -> None:
        state.counters[self.index] = value


THREADS_VARIABLE = "GRIDGAMES_ENV_THREADS"
MIN_ROWS = 256  # rows a thread takes at the least: below it, splitting costs more than it saves
_pools: dict[int, ThreadPoolExecutor] = {}


def env_threads() -> int:
    """Threads a batch's compiled loop may split its rows over: ``GRIDGAMES_ENV_THREADS``,
    else every core this process may use."""
    raw = os.environ.get(THREADS_VARIABLE)
    if raw is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    try:
        threads = int(raw)
    except ValueError:
        raise ValueError(f"{THREADS_VARIABLE} must be a whole number, got {raw!r}") from None
    if threads < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be at least 1, got {threads}")
    return threads


def over_threads(call: Callable[..., Any], idx: np.ndarray, *aligned: np.ndarray) -> Any:
    """``call(idx, *aligned)`` for a batch's rows ``idx`` (and arrays ``aligned`` with them,
    such as their actions), split over :func:`env_threads` threads where the batch is large
    enough, the pieces' outputs (an array, or a tuple of arrays, one entry a row) joined in
    order. ``call`` must release the GIL and touch only its own rows."""
    if len(idx) < 2 * MIN_ROWS:  # a single env's, or a small batch's: no split
        return call(idx, *aligned)
    threads = min(env_threads(), len(idx) // MIN_ROWS)
    if threads < 2:
        return call(idx, *aligned)
    pool = _pools.get(threads)
    if pool is None:
        pool = _pools[threads] = ThreadPoolExecutor(threads - 1, "gridgames-env")
    pieces = np.array_split(np.arange(len(idx)), threads)
    rest = [pool.submit(call, idx[p], *(a[p] for a in aligned)) for p in pieces[1:]]
    done = [call(idx[pieces[0]], *(a[pieces[0]] for a in aligned))]
    done += [future.result() for future in rest]
    if isinstance(done[0], tuple):
        return tuple(np.concatenate(parts) for parts in zip(*done, strict=True))
    return np.concatenate(done)


def generators(rngs: Iterable[np.random.Generator]) -> Any:
    """The generators as a list a compiled rule indexes; it holds the same objects, so
    draws made through it advance the envs' own streams."""
    typed = List()
    for rng in rngs:
        typed.append(rng)
    return typed


_lone: dict[int, tuple[np.random.Generator, Any]] = {}


def lone(rng: np.random.Generator) -> Any:
    """``rng`` as a one-item :func:`generators` list, kept for as long as the generator is
    in use: a single env hands its generator to compiled code this way. Numba unboxes a
    generator passed as an argument at every call (a cost of the order of a step), a list
    of them once, when the list is made; the list holds the same object, so its draws
    advance the env's own stream."""
    hit = _lone.get(id(rng))
    if hit is None or hit[0] is not rng:
        if len(_lone) >= 1024:  # generators come and go with envs: forget the old ones
            _lone.clear()
        hit = _lone[id(rng)] = (rng, generators([rng]))
    return hit[1]


def below(rng: Any, bound: int) -> int:
    """``rng.integers(0, bound)`` exactly (``bound`` at least 1). Without numba
    (``NUMBA_DISABLE_JIT=1``) numpy's own call; compiled (:func:`_below`), the draws numpy
    makes for it (Lemire's method on 32 bits for a bound up to 2**32, else on 64) through
    numba's translations of them (tested against numpy), without the one-item array that
    numba's ``integers`` allocates at every call."""
    return int(rng.integers(0, bound))


@compiled_as(below, inline="always")
def _below(rng, bound):  # unannotated: numba compares the two signatures
    def impl(rng, bound):
        span = bound - 1
        if span == 0:
            return 0
        if span < 0xFFFFFFFF:
            return int(np.int64(buffered_bounded_lemire_uint32(rng.bit_generator, span)))
        if span == 0xFFFFFFFF:
            return int(np.int64(next_uint32(rng.bit_generator)))
        return int(np.int64(bounded_lemire_uint64(rng.bit_generator, span)))

    return impl


@compiled
def choice_without_replacement(rng: Any, population: int, size: int) -> np.ndarray:
    """``rng.choice(population, size=size, replace=False)`` exactly, drawing the same
    numbers from ``rng``: numpy's Floyd sampling, then its shuffle of the sample (for
    populations up to 10,000, where numpy takes that path)."""
    out = np.empty(size, dtype=np.int64)
    for m, j in enumerate(range(population - size, population)):
        value = below(rng, j + 1)
        for t in range(m):
            if out[t] == value:
                value = j
                break
        out[m] = value
    for i in range(size - 1, 0, -1):
        k = below(rng, i + 1)
        out[i], out[k] = out[k], out[i]
    return out
