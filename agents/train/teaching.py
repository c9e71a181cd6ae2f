"""The algorithms as teachers: behaviour cloning, DAgger, and cloning kept up while PPO
fine-tunes, over the labelled states of :mod:`agents.train.labels`.

* :func:`clone` fits a policy (the same SB3 network PPO trains) to those labels:
  cross-entropy over the legal actions only, and the critic to the discounted returns. A
  teacher whose choice is one of several equals (:meth:`agents.base.Agent.label`: tied
  scores, any sure cell, any shortest walk) is matched by any of them.
* :func:`teach`: demonstrations, then DAgger rounds, cloning on the growing data set.
* :class:`CloningCallback`: while PPO fine-tunes the cloned policy, a few cloning steps
  after each rollout with a weight that decays to zero, so PPO's first noisy updates do not
  undo what was cloned before its critic has caught up.

``grid-games train ENV --teacher NAME`` runs all of it (:func:`agents.train.sb3.train`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback

from agents.nets.common import logits_and_values
from agents.train.labels import (
    MAX_ROUNDS,
    ROUND_SEEDS,
    TEACHER_SEED,
    Labels,
    LabelStats,
    Symmetry,
    check_teaching,
    label_states,
    minibatch,
    no_tick,
    side_by_side,
)


def masked_log_probs(logits: Any, masks: Any) -> Any:
    """Log-probabilities over the legal actions only (illegal: -inf)."""
    return torch.log_softmax(logits.masked_fill(~masks, -1e9), dim=1)


def cloning_loss(policy: Any, labels: Labels, index: np.ndarray, value_coef: float = 0.5) -> Any:
    """Cross-entropy of the teacher's actions over the legal ones (minus the log of the
    probability the policy puts on all the actions the teacher rates best, where it names
    several), plus ``value_coef`` times the critic's squared error on the returns, for the
    states ``index``."""
    device = policy.device
    obs, _ = policy.obs_to_tensor(labels.observations[index])
    masks = torch.as_tensor(labels.masks[index], device=device)
    targets = torch.as_tensor(labels.targets(index), device=device)
    logits, values = logits_and_values(policy, obs)
    log_probs = masked_log_probs(logits, masks)
    loss = -torch.logsumexp(log_probs.masked_fill(~targets, -1e9), dim=1).mean()
    if value_coef:
        returns = torch.as_tensor(labels.returns[index], device=device)
        error = torch.nn.functional.mse_loss(values, returns) / labels.return_scale
        loss = loss + value_coef * error
    return loss


def cloning_step(
    policy: Any, labels: Labels, index: np.ndarray, weight: float = 1.0,
    value_coef: float = 0.5, max_grad_norm: float = 0.5,
) -> None:  # fmt: skip
    """One optimiser step of ``weight`` times the cloning loss on the states ``index``."""
    loss = weight * cloning_loss(policy, labels, index, value_coef)
    policy.optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    policy.optimizer.step()


def clone(
    model: Any, labels: Labels, epochs: int = 4, batch_size: int = 256, seed: int = 0,
    value_coef: float = 0.5, max_grad_norm: float = 0.5, lr: float | None = None,
    symmetries: list[Symmetry] | None = None, tick: Callable[[int], Any] | None = None,
) -> float:  # fmt: skip
    """Fit ``model``'s policy to ``labels`` with its own optimiser, at step size ``lr``
    (None: the model's own; PPO's is restored after); the share of the labelled states
    where its greedy legal action is the teacher's, after fitting. With ``symmetries``
    (:func:`board_symmetries`) each minibatch is seen through a random one of them.
    ``tick(n)`` is told of the states each minibatch fits."""
    policy = model.policy
    groups = policy.optimizer.param_groups
    kept = [group["lr"] for group in groups]
    if lr is not None:
        for group in groups:
            group["lr"] = lr
    policy.set_training_mode(True)
    rng = np.random.default_rng(seed)
    n = len(labels)
    try:
        for _ in range(epochs):
            order = rng.permutation(n)
            for start in range(0, n, batch_size):
                part, index = minibatch(labels, order[start : start + batch_size],
                                         symmetries, rng)  # fmt: skip
                cloning_step(policy, part, index, 1.0, value_coef, max_grad_norm)
                if tick is not None:
                    tick(len(index))
    finally:
        for group, value in zip(groups, kept, strict=True):
            group["lr"] = value
        policy.set_training_mode(False)
    if not all(bool(torch.isfinite(p).all()) for p in policy.parameters()):
        raise ValueError(
            f"cloning diverged at step size {lr if lr is not None else kept[0]}: the network's "
            f"weights are no longer numbers; give --teacher-lr a smaller one"
        )
    return accuracy(model, labels)


def accuracy(model: Any, labels: Labels, batch_size: int = 1024) -> float:
    """The share of ``labels``' states where the model's greedy legal action is the
    teacher's (or one the teacher rates as good)."""
    from agents.train.batch import policy_actions
    from agents.train.models import algo_of

    hits = 0
    for start in range(0, len(labels), batch_size):
        part = slice(start, start + batch_size)
        mine = policy_actions(model, algo_of(model), labels.observations[part], labels.masks[part])
        hits += int(np.sum(labels.targets(part)[np.arange(len(mine)), mine]))
    return hits / max(1, len(labels))


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
    ``symmetries`` of its states where there are some, :func:`clone`). ``workers``
    processes label each round (:func:`label_states`).

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


class CloningCallback(BaseCallback):
    """Keeps the cloned policy while PPO fine-tunes it: after each rollout, ``steps``
    cloning minibatches whose loss is scaled by a weight going linearly from ``coef`` to 0
    over the first ``decay`` timesteps (then nothing); each through a random one of
    ``symmetries`` where there are some."""

    def __init__(
        self, labels: Labels, coef: float = 1.0, decay: int = 100_000, steps: int = 4,
        batch_size: int = 256, seed: int = 0, symmetries: list[Symmetry] | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.labels, self.coef, self.decay = labels, coef, decay
        self.symmetries = symmetries
        self.steps, self.batch_size = steps, batch_size
        self.rng = np.random.default_rng(seed)

    def weight(self) -> float:
        return self.coef * max(0.0, 1.0 - self.num_timesteps / max(1, self.decay))

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        weight = self.weight()
        if weight <= 0:
            return
        policy = self.model.policy
        with torch.inference_mode(False), torch.enable_grad():  # rollouts run in inference mode
            policy.set_training_mode(True)
            for _ in range(self.steps):
                index = self.rng.integers(len(self.labels), size=self.batch_size)
                part, index = minibatch(self.labels, index, self.symmetries, self.rng)
                cloning_step(policy, part, index, weight)
            policy.set_training_mode(False)
        self.logger.record("teacher/cloning_weight", weight)
