"""The algorithms as teachers: demonstrations, then DAgger rounds, each round's states
gathered by :mod:`agents.train.labels` and the policy cloned again on all of them by
:mod:`agents.train.cloning`; :func:`teach` runs the rounds, and hands each one's result
to its caller to keep.

``grid-games train ENV --teacher NAME`` runs all of it (:func:`agents.train.sb3.train`),
then PPO fine-tunes with :class:`agents.train.cloning.CloningCallback` keeping the clone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agents.train.cloning import Labels, Symmetry, clone
from agents.train.labels import (
    MAX_ROUNDS,
    ROUND_SEEDS,
    TEACHER_SEED,
    LabelStats,
    check_teaching,
    label_states,
    no_tick,
    side_by_side,
)


@dataclass
class TeachResult:
    labels: Labels | None  # None only after a warm round alone (its labels are not kept)
    rounds: list[dict[str, Any]]  # per round: states, moved by, win rate, agreement, accuracy


def teach(
    model: Any, env_id: str, teacher: str, states: int, rounds: int = 3, seed: int = 0,
    env_kwargs: dict[str, Any] | None = None, epochs: int = 4, batch_size: int = 64,
    gamma: float = 0.99, log: Any = None, lr: float | None = 3e-3,
    symmetries: list[Symmetry] | None = None, workers: int = 1, warm: str | None = None,
    warm_states: int = 0, so_far: TeachResult | None = None,
    on_round: Callable[[TeachResult], None] | None = None, progress: bool = False,
) -> TeachResult:  # fmt: skip
    """Behaviour cloning, then DAgger: ``states`` labelled states in all, split over
    ``rounds`` rounds. Round 0 is the teacher's own play; in every later round the learner
    moves (its greedy legal action) and the teacher labels the states it reaches; after each
    round the model is cloned again on everything gathered so far (through random
    ``symmetries`` of its states where there are some,
    :func:`~agents.train.cloning.clone`). ``workers`` processes label each round
    (:func:`~agents.train.labels.label_states`).

    With a ``warm`` teacher (a faster baseline), the model is first cloned on
    ``warm_states`` states of that agent's own play (round "warm"), and every one of the
    ``rounds`` is then a DAgger round: the learner moves from the start, and the teacher's
    slow labels go to the states the learner reaches. The warm labels are not kept: the
    later clones fit the teacher alone.

    ``on_round`` is called with the teaching so far after every round (to keep it); given
    back as ``so_far``, with ``model`` as it was then, the teaching goes on from the next
    round and ends as it would have without the stop. With ``progress``, a bar on stderr
    follows each round: its states labelled, then the states each cloning pass fits."""
    check_teaching(env_id, teacher, states, rounds, warm, warm_states)
    labels = so_far.labels if so_far is not None else None
    history = list(so_far.rounds) if so_far is not None else []
    finished = {line["round"] for line in history}
    for step in planned_rounds(teacher, states, rounds, seed, warm, warm_states):
        if step.name in finished:
            continue
        start = time.perf_counter()
        fitted = step.states + (len(labels) if labels is not None and step.kept else 0)
        title = "warm round" if isinstance(step.name, str) else (
            f"teaching round {step.name + 1}/{rounds}")  # fmt: skip
        with round_bar(progress, title, step.states + epochs * fitted) as tick:
            new, stats = label_states(
                env_id, step.teacher, step.states, seed=step.seed, env_kwargs=env_kwargs,
                learner=model if step.learner_moves else None,
                beta=0.0 if step.learner_moves else 1.0, gamma=gamma, workers=workers,
                n_envs=side_by_side(step.states), tick=tick,
            )  # fmt: skip
            data = new if labels is None or not step.kept else labels.extend(new)
            labels = data if step.kept else labels
            acc = clone(model, data, epochs, batch_size, step.fit_seed, lr=lr,
                        symmetries=symmetries, tick=tick)  # fmt: skip
        history.append(step.line(len(new), len(data), stats, acc, start))
        if log is not None:
            log(history[-1])
        if on_round is not None:
            on_round(TeachResult(labels, history))
    return TeachResult(labels, history)


@dataclass(frozen=True)
class Round:
    """One round of :func:`teach` as planned: its ``name`` (its number, or ``"warm"``), the
    ``teacher`` that labels it, its ``states``, the first ``seed`` of its episodes and the
    seed of the cloning after it, whether the learner moves (else the teacher does) and
    whether its labels are ``kept`` for the later rounds (a warm round's are not)."""

    name: int | str
    teacher: str
    states: int
    seed: int
    fit_seed: int
    learner_moves: bool
    kept: bool

    def line(
        self, states: int, total: int, stats: LabelStats, accuracy: float, start: float
    ) -> dict[str, Any]:
        """The round's line in ``teacher/rounds.json``."""
        moved_by = "learner" if self.learner_moves else "teacher" if self.kept else self.teacher
        return {
            "round": self.name, "moved_by": moved_by, "states": states, "total_states": total,
            "episodes": stats.episodes, "win_rate": round(stats.win_rate, 4),
            "agreement": round(stats.agreement, 4), "accuracy": round(accuracy, 4),
            "seconds": round(time.perf_counter() - start, 1),
        }  # fmt: skip


def planned_rounds(
    teacher: str, states: int, rounds: int, seed: int, warm: str | None, warm_states: int
) -> list[Round]:
    """:func:`teach`'s rounds: the warm one where there is a ``warm`` teacher (its
    episodes seeded past the last possible round's), then ``rounds`` of the teacher's,
    ``states // rounds`` states each; the teacher moves in the first unless a warm round
    came before it."""
    per_round = max(1, states // rounds)
    warmed = [Round("warm", warm, warm_states, seed + TEACHER_SEED + MAX_ROUNDS * ROUND_SEEDS,
                    seed + MAX_ROUNDS, False, False)] if warm is not None else []  # fmt: skip
    return warmed + [
        Round(r, teacher, per_round, seed + TEACHER_SEED + r * ROUND_SEEDS, seed + r,
              r > 0 or warm is not None, True)
        for r in range(rounds)
    ]  # fmt: skip


@contextmanager
def round_bar(show: bool, what: str, total: int) -> Iterator[Callable[[int], Any]]:
    """A progress bar on stderr for one teaching round (tqdm, the train extra's), handing
    out its ``update``: labelled states, then the states each cloning pass fits, count
    towards ``total``. It is left off the screen once the round ends (the round's line says
    what it did); without ``show``, or without tqdm, nothing is drawn."""
    if not show:
        yield no_tick
        return
    try:
        from tqdm import tqdm
    except ImportError:
        yield no_tick
        return
    with tqdm(total=total, desc=what, unit="state", leave=False, dynamic_ncols=True) as bar:
        yield bar.update
