"""Cloning: fitting a policy to labelled states (:mod:`agents.train.labels` gathers them).

* :class:`Labels`: the data set, states with the teacher's action, the legal actions, the
  return that followed and, where the teacher named them, its equals.
* :func:`board_symmetries`, :func:`mirrored`, :func:`minibatch`: the board's mirror images
  and quarter turns, and the minibatches cloning takes through a random one of them.
* :func:`clone` fits a policy (the same SB3 network PPO trains) to the labels:
  cross-entropy over the legal actions only, and the critic to the discounted returns. A
  teacher whose choice is one of several equals (:meth:`agents.base.Agent.label`: tied
  scores, any sure cell, any shortest walk) is matched by any of them.
* :class:`CloningCallback`: while PPO fine-tunes the cloned policy, a few cloning steps
  after each rollout with a weight that decays to zero, so PPO's first noisy updates do not
  undo what was cloned before its critic has caught up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback

from agents.nets.common import logits_and_values
from grid_envs.core.grid import mirror_board


@dataclass
class Labels:
    """States with the teacher's action: observations (n, ...), legal actions (n, A),
    the teacher's actions (n,), the discounted return that followed each state (n,) and,
    where the teacher named them, every action it rates as good as its own (n, A; None:
    its own alone, as in a recorded dataset)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    good: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)

    def targets(self, index: np.ndarray | slice) -> np.ndarray:
        """(k, A) bool: the actions cloning counts as the teacher's in the states ``index``."""
        if self.good is not None:
            return self.good[index]
        actions = self.actions[index]
        out = np.zeros((len(actions), self.masks.shape[1]), dtype=bool)
        out[np.arange(len(actions)), actions] = True
        return out

    def extend(self, other: Labels) -> Labels:
        mine, theirs = self.arrays(), other.arrays()
        if len(mine) != len(theirs):  # one side names its equals, the other does not
            mine, theirs = self.with_good().arrays(), other.with_good().arrays()
        return Labels(*(np.concatenate([a, b]) for a, b in zip(mine, theirs, strict=True)))

    def with_good(self) -> Labels:
        """The same labels with :attr:`good` filled in."""
        return Labels(
            self.observations, self.masks, self.actions, self.returns, self.targets(slice(None))
        )

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays in field order (``good`` where there is one), as saved in
        ``teacher/labels.npz``."""
        base = (self.observations, self.masks, self.actions, self.returns)
        return base if self.good is None else (*base, self.good)

    @cached_property
    def return_scale(self) -> float:
        """The returns' mean square (at least 1): the unit of the critic's cloning loss, so
        that its error weighs as much as the actor's where returns run to hundreds of
        points (Lines98) as where they are 1."""
        return max(1.0, float(np.mean(self.returns**2)))


# A game's board symmetries, declared beside its baselines (the ``symmetries`` of its
# ``AgentsSpec`` in agents/games/<game>.py): for a board of (rows, cols) whose rows are
# flipped, then its columns, then it is transposed, the (A,) index of the action each action
# becomes
ActionMap = Callable[[tuple[int, int], bool, bool, bool], np.ndarray]
# one symmetry: flip rows, flip columns, transpose, and the action map's answer for them
Symmetry = tuple[bool, bool, bool, np.ndarray]


def board_symmetries(shape: tuple[int, ...], actions: ActionMap) -> list[Symmetry]:
    """The mirror images and quarter turns of a board of ``shape`` (..., rows, cols), the
    identity first: 8 on a square board, 4 (flips only) on another."""
    board = (int(shape[-2]), int(shape[-1]))
    square = board[0] == board[1]
    return [
        (rows, cols, transpose, actions(board, rows, cols, transpose))
        for transpose in ((False, True) if square else (False,))
        for rows in (False, True)
        for cols in (False, True)
    ]


def mirrored(labels: Labels, index: np.ndarray, symmetry: Symmetry) -> Labels:
    """The states ``index`` of ``labels`` seen through ``symmetry``: the planes flipped
    and transposed (their last two axes are the board), the actions and masks mapped
    with them. Cloning on random symmetries of its states learns a rule once for every
    orientation of the board."""
    flip_rows, flip_cols, transpose, to = symmetry
    planes = labels.masks.shape[1] // len(to)  # a map of the cells serves every plane of
    if planes > 1:  # cell actions (Minesweeper's reveals, then its flags)
        to = np.concatenate([to + k * len(to) for k in range(planes)])
    obs = mirror_board(labels.observations[index], flip_rows, flip_cols, transpose)
    back = np.argsort(to)  # the action that becomes each action
    view = Labels(
        np.ascontiguousarray(obs), labels.masks[index][:, back], to[labels.actions[index]],
        labels.returns[index], labels.targets(index)[:, back],
    )  # fmt: skip
    view.return_scale = labels.return_scale  # the critic's unit stays the whole set's
    return view


def minibatch(
    labels: Labels, index: np.ndarray, symmetries: list[Symmetry] | None, rng: Any
) -> tuple[Labels, np.ndarray]:
    """The minibatch ``index`` as cloning takes it: through a random one of
    ``symmetries`` where there are some."""
    if not symmetries:
        return labels, index
    part = mirrored(labels, index, symmetries[rng.integers(len(symmetries))])
    return part, np.arange(len(index))


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
