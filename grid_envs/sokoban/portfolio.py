"""How a solve's searches share the machine, and what a solve answers.

The plan (which searches a mode runs, from which packing order) is the solver's
(:mod:`grid_envs.sokoban.solver`); here is how its searches take turns: on one thread in
turns of :data:`_SLICE` states (the near-greedy and the feature searches
:data:`BOLD_SLICES` of them, a compiled search :data:`COMPILED_SLICES` times as many), or
dealt out to several threads (:func:`thread_of`), each taking turns among its own, while the
calling thread reports progress. A :class:`Race` holds what the threads share: the first
answer, or the limit that ended the solve, stands. A solve answers a :class:`SolveResult`
and reports a :class:`SolveProgress` every few seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grid_envs.core.machine import gib, resident_bytes
from grid_envs.sokoban.compiled import CompiledSearch, MemoryLimit

_SLICE = 64  # states one search expands before the next one takes a turn
# The near-greedy search and the feature search take BOLD_SLICES slices a turn, the A*-like
# search one: it finishes few levels first, and those early. The near-greedy search cracks
# a level early or not at all (docs/sokoban-solver.md): after EARLY_SECONDS it stops, and
# where feature searches run the A*-like search stops too.
EARLY_SECONDS = 10.0
GREEDY_WEIGHT = 2.0  # searches weighted above this are the near-greedy ones
BOLD_SLICES = 2
COMPILED_SLICES = 2  # a compiled search's turn: as many states as 2 Python turns


@dataclass(frozen=True)
class SolveResult:
    """What a solve answers: how it ended (and why, where it gave up), the solution in LURD
    where it found one, and what it cost in states and seconds."""

    status: str  # "solved", "unsolvable" or "gave_up"
    solution: str  # LURD: lower case moves, upper case pushes ("" unless solved)
    pushes: int
    moves: int
    nodes: int  # states expanded
    generated: int  # states generated
    seconds: float
    mode: str
    reason: str = ""  # why the search gave up, when it did

    @property
    def solved(self) -> bool:
        return self.status == "solved"

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / max(self.seconds, 1e-9)


@dataclass(frozen=True)
class SolveProgress:
    """Where a long solve stands, as :meth:`Solver.solve` reports it every few seconds."""

    seconds: float
    expanded: int  # states expanded so far, by every search
    generated: int
    best_bound: int  # the least push bound of any state expanded: how near the search came
    memory: int  # bytes the process holds
    # the most goals any state the feature searches expanded had filled in the packing
    # order, and the level's goals; None where no feature search runs (``optimal``)
    packed: int | None = None
    goals: int = 0

    @property
    def per_second(self) -> float:
        return self.expanded / max(self.seconds, 1e-9)

    def line(self) -> str:
        """One line of it, as ``grid-games solve`` prints it."""
        packed = "" if self.packed is None else f"  packed {self.packed}/{self.goals} goals"
        return (
            f"{self.seconds:6.0f} s  {self.expanded:>12,} states  {self.per_second:>9,.0f}/s"
            f"  best bound {self.best_bound:>4} pushes{packed}  memory {gib(self.memory)}"
        )


def memory_reason(memory: int) -> str:
    """Why a solve gave up at the memory bound ``memory``, as its result says."""
    return f"memory limit ({gib(memory)} for the search's tables)"


def progress_of(searches: list, seconds: float, goals: int) -> SolveProgress:
    """Where the ``searches`` of a solve stand after ``seconds`` (``goals``: the level's)."""
    features = [x.best_packed for x in searches if x.feature > 0]
    return SolveProgress(
        seconds,
        sum(x.expanded for x in searches),
        sum(x.generated for x in searches),
        min(x.best_bound for x in searches),
        resident_bytes(),
        max(features) if features else None,
        goals,
    )


def thread_of(features: list[bool], threads: int) -> list[int]:
    """The thread each search of a portfolio runs on (``features``: whether each is a
    feature search). The feature searches run the whole solve and are dealt round the
    threads in turn; the weighted ones stop after :data:`EARLY_SECONDS` where feature
    searches run, and share the last thread, so that the first feature searches have a
    core each from the start. Without feature searches every search is dealt round; with
    one thread (or one search), all run on thread 0."""
    n = min(threads, len(features))
    fs = [k for k, f in enumerate(features) if f]
    thread = [0] * len(features)
    for turn, k in enumerate(fs):
        thread[k] = turn % n
    for turn, k in enumerate(k for k, f in enumerate(features) if not f):
        thread[k] = n - 1 if fs else turn % n
    return thread


class Race:
    """What the threads of one solve share: its searches, its limits and how it ended
    (the first outcome stands; the others stop after their turn)."""

    def __init__(
        self, searches: list[Any], start: float, deadline: float, node_limit: int | None
    ) -> None:
        self.searches, self.start, self.deadline = searches, start, deadline
        self.node_limit = node_limit
        self.outcome: tuple[str, Any] | None = None
        self.done = threading.Event()
        self._lock = threading.Lock()

    def end(self, kind: str, search: Any = None) -> None:
        """End the solve: "solved" (by ``search``), "exhausted", or the limit that ended it."""
        with self._lock:
            if self.outcome is None:
                self.outcome = (kind, search)
                self.done.set()


def take_turns(group: list[Any], race: Race, tick: Callable[[], None] | None) -> None:
    """The searches of ``group`` take turns until the race ends (``tick`` after each turn),
    or every one of them has stopped for good. A compiled search whose arrays could not
    grow before the deadline ("full") sits out the time left; where all have, the group
    waits for the deadline, since another thread's searches may still finish."""
    # where feature searches run, every weighted search stops after EARLY_SECONDS
    features = any(search.feature > 0 for search in race.searches)
    full: list[Any] = []  # compiled searches whose arrays cannot grow before the deadline
    while not race.done.is_set():
        late = time.perf_counter() - race.start > EARLY_SECONDS
        running = False
        for search in group:
            greedy = search.feature == 0 and search.weight > GREEDY_WEIGHT
            if late and (greedy or (features and search.feature == 0)):
                search.release()  # it stops for good: its memory goes to the others
                continue
            if search in full:
                continue
            running = True
            share = _SLICE * (BOLD_SLICES if greedy or search.feature > 0 else 1)
            compiled = isinstance(search, CompiledSearch)
            if compiled:
                share *= COMPILED_SLICES
            if race.node_limit is not None:
                share = min(share, race.node_limit - sum(x.expanded for x in race.searches))
            if share <= 0:
                return race.end("node limit")
            try:  # a compiled search grows no arrays where the growth would outlast it
                outcome = search.run(share, race.deadline) if compiled else search.run(share)
            except MemoryLimit:
                return race.end("memory limit")
            if outcome == "full":
                full.append(search)
            elif outcome != "open":
                return race.end(outcome, search)
            if time.perf_counter() > race.deadline:
                return race.end("time limit")
            if race.done.is_set():
                return
            if tick is not None:
                tick()
        if not running:
            if full:  # the others of the solve may still finish in the time left
                race.done.wait(max(0.0, race.deadline - time.perf_counter()))
                return race.end("time limit")
            return


def in_threads(groups: list[list[Any]], race: Race, tick: Callable[[], None]) -> None:
    """Each group takes turns on a thread of its own while this one waits, calling
    ``tick`` (Ctrl-C reaches this thread: it ends the race, and the others stop after
    their turn); an error in a thread is raised here."""
    errors: list[BaseException] = []

    def work(group: list[Any]) -> None:
        try:
            take_turns(group, race, None)
        except BaseException as error:  # raised in the waiting thread
            errors.append(error)
            race.end("error")

    workers = [threading.Thread(target=work, args=(group,), daemon=True) for group in groups]
    for worker in workers:
        worker.start()
    try:
        while not race.done.wait(0.02):
            tick()
            if not any(worker.is_alive() for worker in workers):
                race.end("time limit")  # never: some search of a portfolio never stops
    finally:
        race.end("interrupted")  # nothing where it has ended; else Ctrl-C or the tick's error
        for worker in workers:
            worker.join()
    if errors:
        raise errors[0]
