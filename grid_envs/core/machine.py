"""What this machine can hold and run: the memory free to allocate and the cores this
process may use. Sizes a user asks for (a batch, a rollout, a network, workers) are
checked against them before anything is allocated or started, so that a size the machine
cannot hold is refused in one line naming the estimate, instead of ending in a
``MemoryError`` (or the machine swapping) halfway through."""

from __future__ import annotations

import os

#: the share of the memory available now that one allocation the package estimates may take
SHARE = 0.5


def available_bytes() -> int:
    """The memory available to allocate now: Linux's ``MemAvailable`` (free memory and the
    caches it can drop), else the physical memory, else a large number (no check)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def resident_bytes() -> int:
    """The memory this process holds now (its resident set), 0 where the system does not
    say (Linux's ``/proc/self/statm``)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def usable_cores() -> int:
    """The cores this process may run on (its affinity, which a container or ``taskset``
    narrows), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def gib(size: float) -> str:
    """``size`` bytes in words: ``1.5 GiB``, ``12 MiB``."""
    return f"{size / 2**30:,.1f} GiB" if size >= 2**30 else f"{size / 2**20:,.0f} MiB"


def check_fits(what: str, size: float, advice: str = "") -> None:
    """Refuse, in one ``ValueError``, an allocation of about ``size`` bytes that would take
    more than :data:`SHARE` of the memory available: ``what`` names it, ``advice`` says what
    to make smaller."""
    room = available_bytes() * SHARE
    if size > room:
        more = f"; {advice}" if advice else ""
        raise ValueError(
            f"{what} would take about {gib(size)}, more than the {gib(room)} this machine has "
            f"to spare (half of what is available now){more}"
        )


def capped_workers(asked: int, flag: str, spare: int = 0) -> tuple[int, str | None]:
    """``asked`` worker processes, at most the usable cores less ``spare`` (at least 1),
    and the note that says so where it capped them (None where it did not)."""
    most = max(1, usable_cores() - spare)
    if asked <= most:
        return asked, None
    return most, (
        f"{flag} {asked}: this process may use {usable_cores()} cores, so {most} "
        f"{'runs' if most == 1 else 'run'} instead (more would only take turns)"
    )
