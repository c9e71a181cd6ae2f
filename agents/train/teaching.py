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
    check_teaching(env_id, teacher, states, rounds)
    per_round = max(1, states // rounds)
    labels = so_far.labels if so_far is not None else None
    history = list(so_far.rounds) if so_far is not None else []
    done = sum(line["round"] != "warm" for line in history)
    if warm is not None and not any(line["round"] == "warm" for line in history):
        warmed = _warm_round(model, env_id, warm, warm_states, seed, env_kwargs, epochs,
                             batch_size, gamma, lr, symmetries, workers, progress)  # fmt: skip
        history.append(warmed)
        if log is not None:
            log(history[-1])
        if on_round is not None:
            on_round(TeachResult(labels, history))
    for r in range(done, rounds):
        start = time.perf_counter()
        learner = None if r == 0 and warm is None else model
        so_far_states = (0 if labels is None else len(labels)) + per_round
        with round_bar(progress, f"teaching round {r + 1}/{rounds}",
                       per_round + epochs * so_far_states) as tick:  # fmt: skip
            new, stats = label_states(
                env_id, teacher, per_round, seed=seed + TEACHER_SEED + r * ROUND_SEEDS,
                env_kwargs=env_kwargs, learner=learner, beta=1.0 if learner is None else 0.0,
                gamma=gamma, workers=workers, n_envs=side_by_side(per_round), tick=tick,
            )  # fmt: skip
            labels = new if labels is None else labels.extend(new)
            acc = clone(model, labels, epochs, batch_size, seed + r, lr=lr,
                        symmetries=symmetries, tick=tick)  # fmt: skip
        moved_by = "teacher" if learner is None else "learner"
        history.append(_round(r, moved_by, new, len(labels), stats, acc, start))
        if log is not None:
            log(history[-1])
        if on_round is not None:
            on_round(TeachResult(labels, history))
    return TeachResult(labels, history)


def _warm_round(
    model: Any, env_id: str, warm: str, states: int, seed: int, env_kwargs: dict[str, Any] | None,
    epochs: int, batch_size: int, gamma: float, lr: float | None,
    symmetries: list[Symmetry] | None, workers: int, progress: bool,
) -> dict[str, Any]:  # fmt: skip
    """:func:`teach`'s warm round: ``model`` cloned on ``states`` states of the ``warm``
    teacher's own play; the round's line."""
    check_teaching(env_id, warm, states, 1)
    start = time.perf_counter()
    with round_bar(progress, "warm round", states * (1 + epochs)) as tick:
        new, stats = label_states(
            env_id, warm, states, seed=seed + TEACHER_SEED + MAX_ROUNDS * ROUND_SEEDS,
            env_kwargs=env_kwargs, gamma=gamma, workers=workers, n_envs=side_by_side(states),
            tick=tick,
        )  # fmt: skip
        acc = clone(model, new, epochs, batch_size, seed + MAX_ROUNDS, lr=lr,
                    symmetries=symmetries, tick=tick)  # fmt: skip
    return _round("warm", warm, new, len(new), stats, acc, start)


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


def _round(
    name: int | str, moved_by: str, new: Labels, total: int, stats: LabelStats, acc: float,
    start: float,
) -> dict[str, Any]:  # fmt: skip
    """A teaching round's line in ``teacher/rounds.json``."""
    return {
        "round": name, "moved_by": moved_by, "states": len(new), "total_states": total,
        "episodes": stats.episodes, "win_rate": round(stats.win_rate, 4),
        "agreement": round(stats.agreement, 4), "accuracy": round(acc, 4),
        "seconds": round(time.perf_counter() - start, 1),
    }  # fmt: skip
