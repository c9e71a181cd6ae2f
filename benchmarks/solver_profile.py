"""Where the compiled push search's time goes: solve levels under Linux ``perf`` with the
compiled functions named.

    perf record -F 999 -o solver.perf python benchmarks/solver_profile.py \
        ../shared/levels/xsokoban_90.xsb --levels 20,30 --seconds 10
    python benchmarks/solver_profile.py --report solver.perf

``perf`` sees numba's machine code as anonymous ``[JIT]`` addresses. This script compiles
the search in its own process (into a fresh numba cache, about 45 s: code loaded from the
cache keeps no list of its functions), solves the levels, and then writes perf's map of
just-in-time code, ``/tmp/perf-PID.map``: each compiled function's address, size and
Python name (a helper compiled into its caller's code is named once per caller's copy).
``--report`` then sums ``perf report``'s samples by function over the compiled code alone,
the share of each among the search's samples, largest first.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def perf_map_entries() -> list[tuple[int, int, str]]:
    """(address, size, name) of every function numba compiled in this process, for the
    grid_envs modules loaded: the name is the Python function's where one is known."""
    from numba.core.registry import CPUDispatcher

    # each dispatcher once, though a module that imports it holds it too
    dispatchers = {
        id(value): value
        for module_name, module in list(sys.modules.items())
        if module_name.startswith("grid_envs")
        for value in vars(module).values()
        if isinstance(value, CPUDispatcher)
    }
    libraries, names = [], {}
    for dispatcher in dispatchers.values():
        function = dispatcher.py_func  # named where it is defined, not where imported
        overloads: dict[Any, Any] = dispatcher.overloads
        for result in overloads.values():
            names[result.fndesc.mangled_name] = f"{function.__module__}.{function.__name__}"
            libraries.append(result.library)
    addresses: dict[int, str] = {}
    for library in libraries:
        final = getattr(library, "_final_module", None)  # the linked LLVM module
        for llvm_function in final.functions if final is not None else ():
            if llvm_function.is_declaration:
                continue
            address = library.get_pointer_to_function(llvm_function.name)
            if address:
                addresses[address] = names.get(llvm_function.name, llvm_function.name)
    ordered = sorted(addresses.items())
    # sizes are not listed: a function is taken to run to the next one's start (1 MiB at most)
    ends = [start for start, _ in ordered[1:]] + [ordered[-1][0] + 4096] if ordered else []
    return [
        (start, min(end - start, 1 << 20), name)
        for (start, name), end in zip(ordered, ends, strict=True)
    ]


def write_perf_map() -> Path:
    """Write ``/tmp/perf-PID.map`` for this process; returns its path."""
    entries = perf_map_entries()
    if not entries:
        raise SystemExit(
            "no compiled functions found: the search must be compiled in this process "
            "(numba loaded it from a cache, or its internals changed)"
        )
    path = Path(f"/tmp/perf-{os.getpid()}.map")
    path.write_text("".join(f"{a:x} {size:x} {name}\n" for a, size, name in entries))
    return path


def compiled_shares(perf_report: str) -> dict[str, float]:
    """The percentages of ``perf report --sort dso,symbol`` summed by function, for the
    compiled code's lines alone (``12.3%  [JIT] tid 123  [.] name``)."""
    shares: dict[str, float] = defaultdict(float)
    for line in perf_report.splitlines():
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "[JIT]":
            shares[parts[5]] += float(parts[0].rstrip("%"))
    return dict(shares)


def report(data: str) -> None:
    """Print the compiled code's samples in ``data`` summed by function."""
    try:
        out = subprocess.run(
            ["perf", "report", "-i", data, "--no-children", "--sort", "dso,symbol",
             "--stdio", "-q"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    except OSError as error:
        raise SystemExit(f"cannot run perf: {error}") from None
    except subprocess.CalledProcessError as error:
        why = (error.stderr or "").strip().splitlines() or [f"exit status {error.returncode}"]
        raise SystemExit(f"perf report failed on {data}: {why[-1]}") from None
    shares = compiled_shares(out)
    total = sum(shares.values())
    if total == 0:
        raise SystemExit(f"no compiled code's samples in {data}")
    print(f"{total:.1f}% of the samples in compiled code; by function, of those:")
    for name, share in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"{100 * share / total:6.1f}%  {name}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", nargs="?")
    parser.add_argument("--levels", default="1")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--report", metavar="PERF_DATA", help="summarise a recorded profile")
    args = parser.parse_args(argv)
    if args.report:
        report(args.report)
        return
    if args.collection is None:
        parser.error("give a collection to solve, or --report PERF_DATA")
    # before numba is imported: compile here, into a cache of this run's own, removed after
    with tempfile.TemporaryDirectory(prefix="solver-profile-") as cache:
        os.environ["NUMBA_CACHE_DIR"] = cache
        from solve_collection import level_indices, read_levels

        from grid_envs.sokoban.solver import solve

        levels = read_levels(args.collection)
        for index in level_indices(args.levels, len(levels)):
            result = solve(levels[index], max_seconds=args.seconds)
            states, seconds = result.nodes, result.seconds
            print(f"level {index + 1}: {result.status}, {states:,} states, {seconds:.1f} s")
        print(f"perf map: {write_perf_map()}")


if __name__ == "__main__":
    main()
