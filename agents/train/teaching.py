"""The algorithms as teachers: demonstrations, then DAgger rounds, each round's states
gathered by :mod:`agents.train.labels` and the policy cloned again on all of them by
:mod:`agents.train.cloning`. :func:`teach` plans and runs the rounds (:class:`Round`),
handing each one's result to its caller as it ends; :func:`teach_run` runs them for a
training run and keeps them in its folder (``teacher/``), so that a stopped teaching goes
on from its last finished round.

``grid-games train ENV --teacher NAME`` runs all of it (:func:`agents.train.sb3.train`),
then PPO fine-tunes with :class:`agents.train.cloning.CloningCallback` keeping the clone.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.train.cloning import CloningCallback, Labels, Symmetry, clone
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
from agents.train.runs import read_arrays, read_json

if TYPE_CHECKING:
    from agents.train.plan import RunPlan


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


def teach_run(
    plan: RunPlan, model: Any, out: Path, fresh: bool, progress: bool = False
) -> tuple[float, Any]:
    """Clone the teacher into a fresh model (DAgger rounds; the labels kept in
    ``teacher/labels.npz``, the rounds in ``teacher/rounds.json``, the cloned policy in
    ``teacher/cloned.zip``, each round's as it ends, so that a stopped teaching goes on from
    its last finished round); on a resume of PPO, read the labels back. The seconds it took
    and the callback that keeps cloning while PPO fine-tunes. The seconds are the
    rounds' own, as ``rounds.json`` keeps them: those of an earlier session count too."""
    config, symmetries = plan.config, plan.symmetries
    folder = out / "teacher"
    kept = _kept_teaching(folder)
    if not fresh and kept is not None and kept.labels is not None:
        labels = kept.labels  # PPO goes on from its checkpoint: the labels alone
        rounds = kept.rounds
    else:
        if kept is not None:  # the model as the last finished round left it
            model.set_parameters(str(folder / "cloned.zip"), exact_match=True, device=model.device)
        folder.mkdir(exist_ok=True)
        try:
            result = teach(
                model, config.env_id, config.teacher or "", config.teacher_states,
                config.dagger_rounds, config.seed, config.env_kwargs, config.teacher_epochs,
                config.teacher_batch, config.gamma, log=_round_logger(config.dagger_rounds),
                lr=config.teacher_lr, symmetries=symmetries, workers=config.teacher_workers,
                warm=config.warm_teacher, warm_states=config.warm_states, so_far=kept,
                on_round=lambda so_far: _keep_teaching(folder, model, so_far),
                progress=progress,
            )  # fmt: skip
        except KeyboardInterrupt:
            finished = len(read_json(folder / "rounds.json", list)) if (
                folder / "rounds.json").exists() else 0  # fmt: skip
            raise KeyboardInterrupt(
                f"interrupted while teaching, after {finished} finished round"
                f"{'s' * (finished != 1)} (kept in {folder}); run the same command again to "
                f"go on from them"
            ) from None
        assert result.labels is not None
        labels, rounds = result.labels, result.rounds
    decay = config.cloning_decay if config.cloning_decay is not None else config.timesteps // 2
    cloning = CloningCallback(
        labels, config.cloning_coef, decay, seed=config.seed, symmetries=symmetries
    )
    return float(sum(line["seconds"] for line in rounds)), cloning


def _keep_teaching(folder: Path, model: Any, so_far: Any) -> None:
    """The teaching so far into ``folder``: labels and the cloned model first, each written
    whole before it replaces the last, then ``rounds.json``, which says what is there."""
    if so_far.labels is not None:
        np.savez_compressed(folder / "labels.tmp.npz", *so_far.labels.arrays())
        (folder / "labels.tmp.npz").replace(folder / "labels.npz")
    model.save(folder / "cloned.tmp.zip")
    (folder / "cloned.tmp.zip").replace(folder / "cloned.zip")
    (folder / "rounds.tmp.json").write_text(json.dumps(so_far.rounds, indent=2))
    (folder / "rounds.tmp.json").replace(folder / "rounds.json")


def _kept_teaching(folder: Path) -> Any:
    """The teaching ``folder`` holds (a ``TeachResult`` of its finished rounds), or None
    where it holds none, or files that do not agree (then teaching starts over)."""
    paths = [folder / name for name in ("rounds.json", "cloned.zip")]
    if not all(p.exists() for p in paths):
        return None
    rounds = read_json(folder / "rounds.json", list)
    taught = [line for line in rounds if line["round"] != "warm"]
    labels = None
    if (folder / "labels.npz").exists():
        names = tuple(f"arr_{i}" for i in range(len(Labels.__dataclass_fields__)))
        saved = read_arrays(folder / "labels.npz", names[:4], names[4:])
        labels = Labels(*saved.values())
    if taught and (labels is None or len(labels) != taught[-1]["total_states"]):
        return None
    return TeachResult(labels, rounds)


def _round_logger(rounds: int) -> Any:
    """What a teaching round reports as it ends: a line on stderr, so that a long teaching
    shows where it is."""

    def log(line: dict[str, Any]) -> None:
        name = line["round"] if line["round"] == "warm" else f"{line['round'] + 1}/{rounds}"
        agreed = f"agreed on {line['agreement']:.1%}, " if line["moved_by"] == "learner" else ""
        print(
            f"teaching round {name}, the {line['moved_by']} moving: {line['states']:,} states "
            f"({line['total_states']:,} in all), {line['win_rate']:.1%} of its episodes won, "
            f"{agreed}the clone fits {line['accuracy']:.1%} of the labels, "
            f"{line['seconds']:.0f} s",
            file=sys.stderr, flush=True,
        )  # fmt: skip

    return log
