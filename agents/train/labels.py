"""Labelled states gathered: the algorithms' moves in the states of their own games or of
the learner's (DAgger), each with the observation, the legal actions and the return.

Every baseline reads the game through ``game_state()``, so it can name its action in any
state, not only in the states of its own games. That makes it a teacher:
:func:`label_states` plays episodes on single envs side by side and records, in every
state met, the observation, the legal actions and the teacher's action. Who *moves* is
another matter: the teacher (``beta=1``, plain demonstrations), the learner (``beta=0``,
DAgger's states: the ones the learner's own mistakes lead to) or a mix. Fitting a policy
to them is :mod:`agents.train.cloning`; the rounds of both, :mod:`agents.train.teaching`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agents.registry import describe_agent, make_agent
from agents.train.cloning import Labels

TEACHER_SEED = 20_000  # round r's episodes seeded seed + this + r * ROUND_SEEDS + k
ROUND_SEEDS = 100_000
SIDE_BY_SIDE = 16  # the most episodes a teaching round plays at once (label_states' n_envs)
EPISODE_STATES = 50  # and no more than one per this many states asked for, so that a round
# of few states does not play 16 whole episodes (a Pikachu deal is hundreds of states)
MAX_ROUNDS = 9  # so that every round's seeds stay below agents.train.config.HELDOUT_SEED (the
# warm teacher's episodes take the slot after the last round's)


def check_teaching(
    env_id: str, teacher: str, states: int, rounds: int, warm: str | None = None,
    warm_states: int = 1,
) -> None:  # fmt: skip
    """Refuse teaching settings that cannot run: a teacher (or ``warm`` teacher) that does
    not play ``env_id``, no states, or rounds outside 1..MAX_ROUNDS."""
    for name, count, field_name in ((teacher, states, "teacher_states"),
                                    (warm, warm_states, "warm_states")):  # fmt: skip
        if name is None:
            continue
        describe_agent(name, env_id)  # the registry's error, naming the agents there are
        if count < 1:
            raise ValueError(f"{field_name} must be at least 1, got {count}")
    if not 1 <= rounds <= MAX_ROUNDS:
        raise ValueError(
            f"dagger_rounds must be from 1 to {MAX_ROUNDS} (their seeds stay below the "
            f"held-out evaluation's), got {rounds}"
        )


@dataclass
class LabelStats:
    """What the episodes that gave the labels reached, whoever moved."""

    episodes: int = 0
    wins: int = 0
    returns: list[float] = field(default_factory=list)
    agreement: float = 0.0  # share of states where the learner's action was the teacher's

    @property
    def win_rate(self) -> float:
        return self.wins / max(1, self.episodes)


def discounted_returns(rewards: list[float], gamma: float) -> list[float]:
    out, total = [], 0.0
    for r in reversed(rewards):
        total = r + gamma * total
        out.append(total)
    return out[::-1]


def side_by_side(states: int) -> int:
    """How many episodes a round of ``states`` labelled states plays at once."""
    return max(1, min(SIDE_BY_SIDE, states // EPISODE_STATES))


@dataclass
class _Episode:
    """One labelled episode in progress: its states, the teacher's labels, its rewards."""

    obs: np.ndarray
    teacher_moves: bool  # the teacher plays this episode (else the learner)
    observations: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    good: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)


class _Labeller:
    """:func:`label_states` on one process: ``n_envs`` episodes side by side, a new one
    started where one ends until enough states are labelled."""

    def __init__(
        self, env_id: str, teacher: str, seed: int, env_kwargs: dict[str, Any] | None,
        learner: Any, beta: float, n_envs: int, stride: int,
    ) -> None:  # fmt: skip
        self.envs = [gym.make(env_id, **(env_kwargs or {})) for _ in range(n_envs)]
        self.games: list[Any] = [env.unwrapped for env in self.envs]
        self.teachers = [make_agent(teacher, env, seed=seed + i) for i, env in enumerate(self.envs)]
        self.learner, self.beta, self.seed, self.stride = learner, beta, seed, stride
        self.rng = np.random.default_rng(seed)
        self.started = 0
        self.agreed = 0
        self.done: list[_Episode] = []
        self.stats = LabelStats()
        self.tick: Callable[[int], Any] = no_tick  # told of each state as it is labelled

    def start(self, i: int) -> _Episode:
        obs, _ = self.envs[i].reset(seed=self.seed + self.started * self.stride)
        self.started += 1
        self.teachers[i].reset()
        return _Episode(obs, bool(self.rng.random() < self.beta))

    def moves(self, live: list[_Episode], active: list[int]) -> tuple[np.ndarray, ...]:
        """The states of the ``active`` episodes: observations, masks, the teacher's
        actions, its equals, and the actions played."""
        from agents.train.batch import policy_actions
        from agents.train.models import algo_of

        masks = np.stack([self.games[i].action_masks() for i in active])
        observations = np.stack([live[i].obs for i in active])
        said = [self.teachers[i].label(self.games[i], live[i].obs) for i in active]
        labels = np.asarray([action for action, _ in said], dtype=np.int64)
        good = np.stack([g for _, g in said]) & masks  # the teacher's equals, legal ones
        good[np.arange(len(active)), labels] = True  # and its own action, whatever it is
        played = labels.copy()
        if self.learner is not None:
            mine = policy_actions(self.learner, algo_of(self.learner), observations, masks)
            self.agreed += int(np.sum(good[np.arange(len(active)), mine]))
            learner_moves = np.asarray([not live[i].teacher_moves for i in active], dtype=bool)
            played[learner_moves] = np.asarray(mine)[learner_moves]
        return observations, masks, labels, good, played

    def run(self, states: int) -> list[_Episode]:
        """Whole episodes holding at least ``states`` states between them."""
        n = len(self.envs)
        live = [self.start(i) for i in range(n)]
        active = list(range(n))
        labelled = 0
        while active:
            observations, masks, labels, good, played = self.moves(live, active)
            self.tick(len(active))
            still = []
            for j, i in enumerate(active):
                ep = live[i]
                ep.observations.append(observations[j])
                ep.masks.append(masks[j])
                ep.actions.append(int(labels[j]))
                ep.good.append(good[j])
                ep.obs, reward, terminated, truncated, info = self.envs[i].step(int(played[j]))
                ep.rewards.append(float(reward))
                if not (terminated or truncated):
                    still.append(i)
                    continue
                self.finish(ep, bool(info.get("is_success", False)))
                labelled += len(ep.actions)
                if labelled + sum(len(live[k].actions) for k in still) < states:
                    live[i] = self.start(i)
                    still.append(i)
            active = still
        for env in self.envs:
            env.close()
        return self.done

    def finish(self, ep: _Episode, won: bool) -> None:
        self.done.append(ep)
        self.stats.episodes += 1
        self.stats.wins += won
        self.stats.returns.append(sum(ep.rewards))


def label_states(
    env_id: str, teacher: str, states: int, *, seed: int = 0,
    env_kwargs: dict[str, Any] | None = None, learner: Any = None, beta: float = 1.0,
    n_envs: int = 16, gamma: float = 0.99, workers: int = 1, stride: int = 1,
    tick: Callable[[int], Any] | None = None,
) -> tuple[Labels, LabelStats]:  # fmt: skip
    """At least ``states`` labelled states from whole episodes on ``n_envs`` single envs;
    ``tick(n)`` is told of the states as they are labelled (a progress bar's ``update``).

    The k-th episode started is seeded ``seed + k * stride``. In each state the teacher
    names its action; the action played is the teacher's with probability ``beta``, else
    the ``learner``'s (an SB3 model; its greedy legal action), decided per episode. The
    critic's targets are the returns that followed, discounted by ``gamma``.

    With ``workers`` above 1, that many processes label a share each, worker ``w`` the
    episodes seeded ``seed + w + k * workers`` (:func:`_label_in_parallel`): a teacher that
    searches (Sokoban's fewest-moves table) labels ``workers`` times as fast on as many
    free cores. The labels are the same for the same ``workers``, whatever the machine.
    """
    if states < 1:
        raise ValueError(f"states must be at least 1, got {states}")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    if learner is None and beta < 1.0:
        raise ValueError("beta < 1 needs a learner to move")
    if workers < 1 or stride < 1:
        raise ValueError(f"workers and stride must be at least 1, got {workers} and {stride}")
    if workers > 1:  # the workers label apart: told once, when all are back
        found = _label_in_parallel(
            env_id, teacher, states, seed, env_kwargs, learner, beta, n_envs, gamma, workers
        )
        (tick or no_tick)(len(found[0]))
        return found
    labeller = _Labeller(env_id, teacher, seed, env_kwargs, learner, beta, n_envs, stride)
    labeller.tick = tick or no_tick
    episodes = labeller.run(states)
    stats = labeller.stats
    labelled = sum(len(e.actions) for e in episodes)
    stats.agreement = 1.0 if learner is None else labeller.agreed / max(1, labelled)
    labels = Labels(
        np.stack([o for e in episodes for o in e.observations]),
        np.stack([m for e in episodes for m in e.masks]).astype(bool),
        np.asarray([a for e in episodes for a in e.actions], dtype=np.int64),
        np.asarray([r for e in episodes for r in discounted_returns(e.rewards, gamma)],
                   dtype=np.float32),
        np.stack([g for e in episodes for g in e.good]),
    )  # fmt: skip
    return labels, stats


def _label_in_parallel(
    env_id: str, teacher: str, states: int, seed: int, env_kwargs: dict[str, Any] | None,
    learner: Any, beta: float, n_envs: int, gamma: float, workers: int,
) -> tuple[Labels, LabelStats]:  # fmt: skip
    """:func:`label_states` split over ``workers`` fresh processes (spawned: a forked torch
    can hang), one torch thread each; the learner goes to them as a saved zip. The parts
    come back in worker order, their statistics summed."""
    import multiprocessing
    import tempfile

    from agents.train.models import algo_of

    share = -(-states // workers)
    with tempfile.TemporaryDirectory(prefix="gridgames-labels-") as folder:
        saved = None
        if learner is not None:
            saved = (str(Path(folder) / "learner.zip"), algo_of(learner))
            learner.save(saved[0])
        jobs = [
            (env_id, teacher, share, seed + w, env_kwargs, saved, beta, max(1, n_envs // workers),
             gamma, workers)
            for w in range(workers)
        ]  # fmt: skip
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(_label_part, jobs)
    labels = parts[0][0]
    for part, _ in parts[1:]:
        labels = labels.extend(part)
    stats = LabelStats()
    agreed = 0.0
    for part, part_stats in parts:
        stats.episodes += part_stats.episodes
        stats.wins += part_stats.wins
        stats.returns += part_stats.returns
        agreed += part_stats.agreement * len(part)
    stats.agreement = agreed / len(labels) if learner is not None else 1.0
    return labels, stats


def _label_part(job: tuple[Any, ...]) -> tuple[Labels, LabelStats]:
    """One worker's share of :func:`_label_in_parallel` (a top-level function, so that a
    spawned process can run it)."""
    env_id, teacher, states, seed, env_kwargs, saved, beta, n_envs, gamma, stride = job
    torch.set_num_threads(1)
    learner = None
    if saved is not None:
        from agents.train.models import algo_class

        learner = algo_class(saved[1]).load(saved[0], device="cpu")
    return label_states(
        env_id, teacher, states, seed=seed, env_kwargs=env_kwargs, learner=learner, beta=beta,
        n_envs=n_envs, gamma=gamma, stride=stride,
    )  # fmt: skip


def no_tick(n: int) -> None:
    """Told nothing: no progress bar."""
