"""Argument checks shared by every env: one ``ValueError`` naming the argument, raised
before anything is allocated.

The limits on sizes are the documented ones:

* a board side is at most :data:`MAX_SIDE` cells (Lines98 and Pikachu, whose actions are
  cell pairs, at most :data:`MAX_PAIR_SIDE`);
* a level pool holds at most :data:`MAX_POOL` levels;
* a level file or string is at most :data:`MAX_LEVEL_TEXT` characters and
  :data:`MAX_LEVELS` levels;
* a batched env steps at most :data:`MAX_BATCH` envs.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import load_env_creator

#: The longest board side any env accepts (a 256 x 256 board has 65,536 cells).
MAX_SIDE = 256
#: The longest side where actions are pairs of cells (Lines98's n^2 moves, Pikachu's pairs).
MAX_PAIR_SIDE = 32
#: The most levels a level pool may hold.
MAX_POOL = 10_000_000
#: The most characters a level file or string may have (about 100 MB).
MAX_LEVEL_TEXT = 100_000_000
#: The most levels one level file or string may hold: each is parsed, checked and kept in
#: memory when the env is made (docs/limits.md gives the time and memory at this bound); a
#: larger collection goes in a folder of files (Boxoban's layout), which is read a file at a time.
MAX_LEVELS = 100_000
#: The most envs one batched env may step.
MAX_BATCH = 1_048_576


#: The largest integer a setting may hold: what a compiled rule's int64 holds.
MAX_INT = 2**63 - 1


def integer(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int, which must be an integer (not a bool, not a float) in
    ``[low, high]``, and within an int64 (:data:`MAX_INT`) whatever ``high`` says: the
    compiled rules hold every number in one."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not -MAX_INT <= int(value) <= MAX_INT:
        raise ValueError(f"{name} must be within an int64 (at most {MAX_INT:,}), got {value!r}")
    return int(_in_range(name, int(value), low, high))


def real(name: str, value: Any, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a float, which must be a finite number in ``[low, high]``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(_in_range(name, number, low, high))


def reals(**values: Any) -> dict[str, float]:
    """Each keyword's value as a finite float (:func:`real`), by name: an env's rewards."""
    return {name: real(name, value) for name, value in values.items()}


def flag(name: str, value: Any) -> bool:
    """``value``, which must be True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(name: str, value: Any, options: Iterable[Any]) -> Any:
    """``value``, which must be one of ``options``."""
    options = tuple(options)
    if not isinstance(value, str | None) or value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def instance(name: str, value: Any, kind: type) -> Any:
    """``value``, which must be a ``kind`` (a generator object, a level)."""
    if not isinstance(value, kind):
        raise ValueError(f"{name} must be a {kind.__name__}, got {value!r}")
    return value


def one_of_sources(**given: Any) -> None:
    """Refuse more than one of an env's level sources (``levels=``, ``generator=``): the
    env would play one and silently drop the other."""
    named = [name for name, value in given.items() if value is not None]
    if len(named) > 1:
        raise ValueError(
            f"{' and '.join(f'{n}=' for n in named)} cannot go together: an env plays the "
            f"levels it is given or generates them, not both"
        )


class NoLevelFound(RuntimeError):
    """A generator gave up: its settings admit no level within its attempts (the message
    says which settings to loosen). The CLI reports it in one line."""


def array(
    name: str, value: Any, shape: tuple[int, ...], dtype: Any,
    low: float | None = None, high: float | None = None,
) -> np.ndarray:  # fmt: skip
    """``value``, which must be a numpy array of exactly ``shape`` and ``dtype`` whose
    values lie in ``[low, high]``: what a compiled rule may index with, unchecked."""
    if not isinstance(value, np.ndarray):
        raise ValueError(f"{name} must be a numpy array, got {type(value).__name__}")
    if value.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {value.shape}")
    if value.dtype != np.dtype(dtype):
        raise ValueError(f"{name} must be {np.dtype(dtype)}, got {value.dtype}")
    if value.size and low is not None and value.min() < low:
        raise ValueError(f"{name} holds {value.min()}, below its least value {low}")
    if value.size and high is not None and value.max() > high:
        raise ValueError(f"{name} holds {value.max()}, above its largest value {high}")
    return value


def board_shape(name: str, part: str, value: Any) -> tuple[int, int]:
    """The (rows, cols) of the level ``name``'s board ``part`` (``value``), which must be a
    2-D numpy array of at most :data:`MAX_SIDE` a side; the level's other boards are then
    held to that shape."""
    if not isinstance(value, np.ndarray) or value.ndim != 2:
        raise ValueError(f"{name}'s {part} must be a 2-D numpy array")
    return shape(f"{name}'s shape", value.shape)


def cell(name: str, value: Any, shape: tuple[int, int]) -> tuple[int, int]:
    """``value``, a (row, col) pair of integers inside a ``shape`` board."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValueError(f"{name} must be a (row, col) pair, got {value!r}")
    return (integer(f"{name}'s row", value[0], 0, shape[0] - 1),
            integer(f"{name}'s column", value[1], 0, shape[1] - 1))  # fmt: skip


def side(name: str, value: Any, low: int = 1, high: int = MAX_SIDE) -> int:
    """A board side: an integer in ``[low, high]``."""
    return integer(name, value, low, high)


def shape(name: str, value: Any, high: int = MAX_SIDE) -> tuple[int, int]:
    """A (rows, cols) pair of sides."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValueError(f"{name} must be a (rows, cols) pair, got {value!r}")
    return side(f"{name}[0]", value[0], 1, high), side(f"{name}[1]", value[1], 1, high)


def time_limit(value: Any) -> int | None:
    """The episode's step limit: None (no limit) or a positive integer."""
    return None if value is None else integer("time_limit", value, 1)


def _in_range(name: str, value: float, low: float | None, high: float | None) -> float:
    if low is not None and high is not None and not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be at least {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high}, got {value!r}")
    return value


def read_text(path: str | Path, what: str) -> str:
    """The text of a level or map file, UTF-8 (a byte-order mark is dropped), checked: a
    folder, a missing file, a file over :data:`MAX_LEVEL_TEXT` or bytes that are not UTF-8
    each get their own message."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{what} {str(p)!r} is a folder, not a file")
    if not p.is_file():
        raise ValueError(f"{what} {str(p)!r} does not exist")
    size = p.stat().st_size
    if size > MAX_LEVEL_TEXT:
        raise ValueError(
            f"{what} {str(p)!r} has {size:,} bytes, more than the {MAX_LEVEL_TEXT:,} a level "
            f"file may have"
        )
    data = p.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ValueError(
            f"{what} {str(p)!r}, line {line}: not UTF-8 text (byte {data[e.start]:#04x})"
        ) from None


#: Settings renamed in the last minor version (the old name -> its name now), refused with
#: the new name for one minor version (CHANGELOG.md lists every rename): ``time_limit``
#: counts an episode's steps everywhere, so a limit of wall-clock seconds (a solver's, a
#: planner's, a training run's) is ``max_seconds``.
RENAMED = {"time_limit": "max_seconds"}


def not_renamed(names: Iterable[str], takes: frozenset[str]) -> None:
    """Refuse a setting's old name with a one-line ``TypeError`` naming the new one, where
    what is called ``takes`` the new name and not the old (other unknown names get Python's
    own error)."""
    for name in names:
        if name not in takes and RENAMED.get(name) in takes:
            raise TypeError(f"the setting {name}= is now called {RENAMED[name]}= (the same value)")


def env_kwargs(env_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs``, checked against the arguments the env of ``env_id`` takes: an unknown
    name gets a ``ValueError`` that lists the known ones (not ``make``'s ``TypeError``)."""
    creator: Any = gym.spec(env_id).entry_point
    if isinstance(creator, str):
        creator = load_env_creator(creator)
    return settings_of(env_id, creator, kwargs)


def settings_of(what: str, cls: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs``, checked against the keyword names ``cls`` takes: an unknown one gets a
    one-line ``ValueError`` naming ``what`` and listing the known ones."""
    known = init_names(cls)
    unknown = sorted(set(kwargs) - known)
    if unknown:
        new = RENAMED.get(unknown[0])
        raise ValueError(
            f"{what} takes no setting {unknown[0]!r}"
            + (f" (now {new!r})" if new in known else "")
            + f"; its settings: {', '.join(sorted(known - {'self'}))}"
        )
    return kwargs


@functools.cache
def init_names(cls: Any) -> frozenset[str]:
    """The keyword names a class's ``__init__`` takes, following ``**kwargs`` passed on
    to a parent's ``__init__``."""
    names: set[str] = set()
    for klass in getattr(cls, "__mro__", (cls,)):
        init = vars(klass).get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters.values()
        names |= {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return frozenset(names - {"self"})
