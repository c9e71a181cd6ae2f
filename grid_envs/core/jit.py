"""Rules compiled once, for one env and for a whole batch.

A rule that a batch must run at array speed is written once, as a plain function over one
board in the subset of Python and numpy that numba compiles, and decorated with
:func:`compiled`. The single env calls it directly; the batched env calls it from a
compiled loop over its boards, so both run the same code at machine speed (as PufferLib's
envs have one ``c_step`` serve the whole batch).

Random draws stay exact: a compiled rule takes the env's own ``numpy.random.Generator``,
whose ``integers`` numba computes bit for bit as numpy does, from the same state (a batch
passes its envs' generators as a :func:`generators` list). Rules that need another of
numpy's draws build it from ``integers`` in the order numpy makes them (tested against
numpy).

Compiled code is cached on disk (numba's ``cache=True``, beside the module or, where that
folder is read-only, in the user's cache): the first process that calls a rule compiles it
(a few seconds for a game, stated in docs/speed.md), later ones load it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

import numba
import numpy as np
from numba.typed import List

F = TypeVar("F", bound=Callable[..., Any])


def compiled(fn: F) -> F:
    """``fn`` compiled by numba (nopython, cached on disk, without the GIL)."""
    return cast(F, numba.njit(cache=True, nogil=True)(fn))


def generators(rngs: Iterable[np.random.Generator]) -> Any:
    """The generators as a list a compiled rule indexes; it holds the same objects, so
    draws made through it advance the envs' own streams."""
    typed = List()
    for rng in rngs:
        typed.append(rng)
    return typed


@compiled
def choice_without_replacement(rng: Any, population: int, size: int) -> np.ndarray:
    """``rng.choice(population, size=size, replace=False)`` exactly, drawing the same
    numbers from ``rng``: numpy's Floyd sampling, then its shuffle of the sample (for
    populations up to 10,000, where numpy takes that path)."""
    out = np.empty(size, dtype=np.int64)
    for m, j in enumerate(range(population - size, population)):
        value = rng.integers(0, j + 1)
        for t in range(m):
            if out[t] == value:
                value = j
                break
        out[m] = value
    for i in range(size - 1, 0, -1):
        k = rng.integers(0, i + 1)
        out[i], out[k] = out[k], out[i]
    return out
