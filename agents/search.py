"""Tree search guided by a trained network over the env's exact rules.

A trained actor-critic gives the *prior* (its logits over the legal actions) and the
*value* of the positions a search reaches; the game itself gives everything else: a copy
of the env steps every move the search tries, so transitions, masks, rewards and the ends
of episodes are the rules' own, exact. This is the search of AlphaZero and MuZero with a
perfect model, and the expert of expert iteration (:mod:`agents.expert`).

**The search sees what the player sees.** Each simulation starts from a *world* that
:meth:`~grid_envs.core.GridEnv.sample_world` draws with the search's own generator: the
game in view, its hidden parts drawn from the player's belief (Minesweeper's mines, every
layout that fits the numbers alike) and a new random generator for the chance events to
come (Lines98's spawns, a reshuffle). The real env's hidden state and generator are never
read. The tree is closed-loop: a move's outcomes are told apart by the observation they
lead to, so every node is a position the player could see, with one prior and one mask.

**Three ways to choose.** ``variant="gumbel"`` (the default) is Gumbel MuZero's
(Danihelka et al. 2022), made for few simulations: at the root, the ``max_considered``
actions with the largest Gumbel-perturbed logits are tried and halved round by round
(sequential halving) on their values, and the survivor is played; inside the tree each
step goes to the action whose visits lag most behind the improved policy
``softmax(logits + sigma(q))``. A round tries each surviving root action once, and those
leaves are evaluated in one network call. ``variant="puct"`` is AlphaZero's rule
(``q + c * prior * sqrt(N) / (1 + n)``), one simulation at a time, the most visited root
action played. ``variant="levin"`` (deterministic games only) is Levin tree search
(Orseau et al. 2018): best-first over whole lines, in the order of their length over the
prior the network gives them, each position met once, until one wins; it plays that line
out. Its ``simulations`` are network evaluations, 16 positions a call. ``variant="lds"``
is limited discrepancy search in the prior's order. ``variant="exact"`` hands the position
to the game's own exact solver (where a game has one: ``EXACT_SEARCH`` beside its
baselines), the network's logits ordering the choices it tries and ``simulations`` its node
budget: it clears, proves the position lost, or runs out, and the agent plays the line,
the prior's move on a lost position, or the prior's move and a new search next move.
``variant="ordered"`` hands the position to the game's own search (``ORDERED_SEARCH``
beside its baselines, which returns its move and what it weighed for it, a
:class:`~agents.base.Thought`; Lines98: the look-ahead), with the ``simulations`` legal moves the
network's logits rank first as its candidates, in that order, in place of the game's own
choice of candidates, and ``replies`` its depth where given (Lines98: the replies weighed
after each candidate; 0 judges each candidate's own board alone); it has no clock, so a
seed gives the same moves on any machine.

**Values.** A simulation's value is the rewards along its path, discounted by the
model's ``gamma``, plus the network's value of the position it stops at; an episode that
ends on the way (won, lost, or out of steps) adds nothing after. With
``leaf_value="algorithm"`` the game's own judgement of the position stands for the
network's value (``LEAF_VALUE`` beside its baselines; Lines98: the look-ahead's), and the
network gives the prior alone. Values are rescaled to [0, 1] per node (Gumbel) or over
the tree (PUCT), so the games' reward scales do not matter.

**Winning lines.** Where the game is :attr:`~grid_envs.core.GridEnv.deterministic`
(Sokoban, the Knight, Pikachu-v0), a simulation that wins has found a whole winning line:
the agent keeps it and plays it out, checking each position against the one the line
expects. The subtree of the action played is kept for the next move in every game.

Same seed, same moves: the agent's generator (seeded by :meth:`Agent.seed`) draws every
Gumbel sample and every world.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from agents.base import Agent, Thought
from grid_envs.core.base_env import GridEnv

VARIANTS = ("gumbel", "puct", "levin", "lds", "exact", "ordered")
LEAF_VALUES = ("network", "algorithm")
Evaluation = tuple[np.ndarray, np.ndarray]  # logits (b, A) and values (b,)


class Evaluator(Protocol):
    """What guides a search: ``(observations (b, ...), masks (b, A) bool)`` to
    ``(logits (b, A), values (b,))``; the logits of illegal actions are ignored."""

    gamma: float

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Evaluation: ...


class ModelEvaluator:
    """A stable-baselines3 actor-critic (PPO or MaskablePPO) as prior and value, one
    forward pass a batch of positions."""

    def __init__(self, model: Any) -> None:
        from agents.policy import algo_of

        if algo_of(model) == "dqn":
            raise ValueError("a search needs a policy and a value: a PPO or MaskablePPO model")
        self.model = model
        self.gamma = float(model.gamma)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Evaluation:
        import torch

        from agents.networks import logits_and_values

        policy = self.model.policy
        with torch.inference_mode():
            obs, _ = policy.obs_to_tensor(observations)
            logits, values = logits_and_values(policy, obs)
        return logits.float().cpu().numpy(), values.float().cpu().numpy()


class UniformEvaluator:
    """Every legal action alike and every position worth ``value``: the search on its
    own, with exact rewards (for tests and as a baseline)."""

    def __init__(self, gamma: float = 0.99, value: float = 0.0) -> None:
        self.gamma, self.value = gamma, value

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Evaluation:
        return np.zeros(masks.shape, dtype=np.float32), np.full(len(masks), self.value, np.float32)


@dataclass
class SearchConfig:
    """How a search runs (see the module doc)."""

    simulations: int = 32  # simulations a move (0: the network's most likely action)
    variant: str = "gumbel"  # or "puct", "ordered"; "levin", "lds", "exact" (deterministic)
    max_considered: int = 16  # Gumbel: root actions tried at most
    gumbel_scale: float = 1.0  # Gumbel: the noise on the root's logits (0: none)
    c_visit: float = 50.0  # Gumbel: sigma(q) = (c_visit + most visits) * c_scale * q
    c_scale: float = 0.1
    c_puct: float = 1.25  # PUCT's exploration weight
    keep_lines: bool = True  # deterministic games: play out a winning line once found
    leaf_value: str = "network"  # or "algorithm": the game's own judgement (LEAF_VALUE)
    replies: int | None = None  # ordered: the game's search's replies (None: its own; 0: none)

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        if self.leaf_value not in LEAF_VALUES:
            raise ValueError(f"leaf_value must be one of {LEAF_VALUES}, got {self.leaf_value!r}")
        if not isinstance(self.simulations, int) or self.simulations < 0:
            raise ValueError(f"simulations must be a whole number >= 0, got {self.simulations!r}")
        if not isinstance(self.max_considered, int) or self.max_considered < 1:
            raise ValueError(f"max_considered must be at least 1, got {self.max_considered!r}")
        if self.replies is not None:
            if self.variant != "ordered":
                raise ValueError(f"replies is a setting of the ordered search, not {self.variant}")
            if not isinstance(self.replies, int) or self.replies < 0:
                raise ValueError(f"replies must be a whole number >= 0, got {self.replies!r}")


class Node:
    """A position of the tree: its legal actions, prior logits and network value, and per
    action the visits, the sum of values and the positions it led to (by observation).

    The visits and sums are Python lists: a simulation updates one entry of each node on
    its path, and most nodes have a few actions, where lists beat arrays many times over.
    """

    __slots__ = ("actions", "children", "favourite", "logits", "n", "p", "terminal",
                 "value", "visits", "w")  # fmt: skip

    def __init__(self) -> None:
        self.terminal = False
        self.value = 0.0
        self.visits = 0
        self.actions = np.zeros(0, dtype=np.int64)  # (k,) legal actions
        self.logits = np.zeros(0)  # (k,) prior logits
        self.p = np.zeros(0)  # (k,) prior probabilities
        self.n: list[float] = []  # (k,) visits
        self.w: list[float] = []  # (k,) summed values
        self.children: list[dict[bytes, Node]] = []
        self.favourite = 0  # the prior's most likely action (an index of ``actions``)

    @property
    def expanded(self) -> bool:
        return self.terminal or len(self.actions) > 0

    def expand(self, mask: np.ndarray, logits: np.ndarray, value: float) -> None:
        self.actions = np.flatnonzero(mask)
        self.logits = logits[self.actions].astype(np.float64)
        self.p = _softmax(self.logits)
        self.favourite = int(np.argmax(self.logits)) if len(self.actions) else 0
        self.value = float(value)
        k = len(self.actions)
        self.n, self.w = [0.0] * k, [0.0] * k
        self.children = [{} for _ in range(k)]

    def q(self) -> np.ndarray:
        """(k,) mean values of the visited actions (0 where unvisited)."""
        n, w = np.asarray(self.n), np.asarray(self.w)
        return np.divide(w, n, out=np.zeros_like(w), where=n > 0)

    def completed_q(self) -> np.ndarray:
        """Gumbel MuZero's completed values: the visited actions' mean values, and for the
        others ``v_mix``, the node's value mixed with what its visited actions found."""
        n, q = np.asarray(self.n), self.q()
        seen = n > 0
        v_mix = self.value
        if self.visits:
            p = self.p[seen]
            mixed = float(p @ q[seen]) / max(float(p.sum()), 1e-12)
            v_mix = (self.value + self.visits * mixed) / (1 + self.visits)
        return np.where(seen, q, v_mix)


@dataclass
class SearchResult:
    """A search's answer: the action to play, the improved policy over the legal actions
    (the target expert iteration learns from), the root's value, and what it cost."""

    action: int
    actions: np.ndarray  # (k,) the legal actions
    policy: np.ndarray  # (k,) the improved policy over them
    value: float
    simulations: int
    evaluations: int = 0
    from_line: bool = False  # played from a winning line found earlier
    extra: dict[str, Any] = field(default_factory=dict)


_FEW = 24  # nodes with at most this many actions are selected over lists, not arrays
_BATCH = 16  # positions a best-first search sends through the network together


def _softmax(x: np.ndarray) -> np.ndarray:
    if not len(x):
        return x
    e = np.exp(x - x.max())
    return e / e.sum()


def _rescaled(q: np.ndarray) -> np.ndarray:
    low, high = q.min(), q.max()
    return (q - low) / max(high - low, 1e-8)


class Search:
    """A search over one env's copy (see the module doc); :meth:`run` plays one move."""

    def __init__(self, evaluator: Evaluator, config: SearchConfig, rng: np.random.Generator):
        self.evaluator, self.config, self.rng = evaluator, config, rng
        self.gamma = float(evaluator.gamma)
        self.sim: GridEnv | None = None
        self.source: GridEnv | None = None
        self.judge: LeafValue | None = None  # the game's judgement, for leaf_value="algorithm"
        self.root_key = b""
        self.evaluations = 0
        self.forget()
        self._low, self._high = math.inf, -math.inf  # PUCT's value range over the tree

    def forget(self) -> None:
        """Drop the tree, any winning line and what was learnt of positions (a new
        episode)."""
        self.next_roots: dict[bytes, Node] = {}
        self.line: list[tuple[int, bytes]] = []  # a winning line: (action, observation before)
        # a best-first search to go on: the move played, the position it leads to, the frontier
        self._levin_tree: tuple[int, bytes, list[Any]] | None = None
        self._ranked: dict[bytes, list[int]] = {}  # lds: each position's moves, best first
        self._lost_next = b""  # exact: the position the last move leads to, proved lost

    # --------------------------------------------------------------- a move
    def run(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """Search from ``env``'s position (as the player sees it) and choose a move."""
        if self.source is not env:  # the copy the simulations step
            self.sim, self.source = copy.deepcopy(env), env
            self.judge = leaf_value(env) if self.config.leaf_value == "algorithm" else None
        key = observation.tobytes()
        keep_lines = env.deterministic and self.config.keep_lines
        if keep_lines and self.line and self.line[0][1] == key:
            action = self.line.pop(0)[0]
            self._advance(None, action)
            return SearchResult(action, np.array([action]), np.ones(1), 0.0, 0, from_line=True)
        self.line = []
        if self.config.variant == "levin":
            return self._levin(env, observation)
        if self.config.variant == "lds":
            return self._discrepancies(env, observation)
        if self.config.variant == "exact":
            return self._exact(env, observation)
        if self.config.variant == "ordered":
            return self._ordered(env, observation)
        world = env.sample_world(self.rng) if env.deterministic else None
        root = self.next_roots.get(key)
        self.evaluations = 0
        if root is None or not root.expanded:
            root = Node()
            mask = env.action_masks()
            logits, values = self._evaluate([observation], [mask])
            root.expand(mask, logits[0], values[0])
        self.root_key = key
        self._low, self._high = math.inf, -math.inf
        worlds = (lambda: world) if world is not None else (lambda: env.sample_world(self.rng))
        simulations = self.config.simulations
        if len(root.actions) == 1 or simulations == 0:
            index = 0 if len(root.actions) == 1 else int(np.argmax(root.logits))
            used = 0
        elif self.config.variant == "gumbel":
            index, used = self._gumbel_root(root, worlds, keep_lines)
        else:
            index, used = self._puct_root(root, worlds, keep_lines)
        action = int(root.actions[index])
        if self.line:  # a simulation won: its line is sure, whatever the values say
            action = self.line.pop(0)[0]
        result = SearchResult(
            action, root.actions.copy(), self._improved(root), float(root.value), used,
            self.evaluations,
        )  # fmt: skip
        self._advance(root, action)
        return result

    # ------------------------------------------------------------ best first
    def _levin(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """Levin tree search (Orseau et al. 2018) for a winning line: positions are expanded
        in the order of ``log(depth + 1) - log(prior of the path)``, the product of the
        network's probabilities along the moves that reach them, each new position once
        (by what it shows). Up to ``_BATCH`` positions go through the network together; a
        position's children are scored by its own policy. The first win ends the search and
        its line is played out. Without one after ``simulations`` evaluations, the move
        leads towards the expanded position the network values most, and the next move's
        search goes on from the positions this one left under it."""
        import heapq

        _need_deterministic(env)
        sim = self.sim
        assert sim is not None
        self.evaluations = 0
        key = observation.tobytes()
        frontier, seen = self._levin_kept(key)
        root_logits, _ = self._evaluate([observation], [env.action_masks()])
        legal = np.flatnonzero(env.action_masks())
        root_log_p = root_logits[0][legal] - np.logaddexp.reduce(root_logits[0][legal])
        if not frontier:
            seen = {key}
            frontier = [(0.0, 0, (env.sample_world(self.rng), observation, [], 0.0))]
        count = len(frontier)
        best_value, best_line = -math.inf, [int(legal[int(np.argmax(root_log_p))])]
        while frontier and self.evaluations < self.config.simulations and not self.line:
            room = min(_BATCH, len(frontier), self.config.simulations - self.evaluations)
            batch = [heapq.heappop(frontier)[2] for _ in range(room)]
            masks = [b[0].mask for b in batch]
            logits, values = self._evaluate([b[1] for b in batch], masks)
            for (snap, _, line, log_prior), row, value, mask in zip(
                batch, logits, values, masks, strict=True
            ):
                moves = np.flatnonzero(mask)
                log_p = row[moves] - np.logaddexp.reduce(row[moves])
                if line and value > best_value:
                    best_value, best_line = float(value), line
                for action, lp in zip(moves.tolist(), log_p.tolist(), strict=True):
                    sim.restore(snap)
                    obs, _, terminated, truncated, info = sim.step(action)
                    if info["is_success"]:
                        self.line = [(a, b"") for a in [*line, action]]
                        break
                    child_key = obs.tobytes()
                    if terminated or truncated or child_key in seen:
                        continue
                    seen.add(child_key)
                    child = (sim.snapshot(), obs, [*line, action], log_prior + lp)
                    heapq.heappush(frontier, (math.log(len(line) + 2) - child[3], count, child))
                    count += 1
                if self.line:
                    break
        line = [a for a, _ in self.line] or best_line
        action = line[0]
        self._levin_tree = None
        if self.line:
            self.line = self._checked_line(env, line)[1:]
        else:  # go on next move from the positions under the move played
            sim.restore(env.sample_world(self.rng))
            self._levin_tree = (action, sim.step(action)[0].tobytes(), frontier)
        # what expert iteration learns: a winning line's move, else the prior as it was
        policy = (legal == action).astype(np.float64) if self.line else np.exp(root_log_p)
        return SearchResult(action, legal, policy, 0.0, self.evaluations, self.evaluations)

    def _levin_kept(self, key: bytes) -> tuple[list[tuple[float, int, Any]], set[bytes]]:
        """The frontier of the last move's search under the move it played, re-rooted at
        the position in view (``key``), and the positions it holds; empty where there is
        none, or the position is not the one that move led to."""
        import heapq

        kept, self._levin_tree = self._levin_tree, None
        if kept is None or kept[1] != key:
            return [], set()
        played, _, frontier = kept
        heap: list[tuple[float, int, Any]] = []
        seen = {key}
        for _, _, (snap, obs, line, log_prior) in frontier:
            if len(line) > 1 and line[0] == played:  # the log-prior of ``played``, common to
                # all of them, stays in: the order is the same
                seen.add(obs.tobytes())
                entry = (snap, obs, line[1:], log_prior)
                heap.append((math.log(len(line)) - log_prior, len(heap), entry))
        heapq.heapify(heap)
        return heap, seen

    def _discrepancies(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """Limited discrepancy search (Harvey and Ginsberg 1995) for a winning line: depth
        first, each position's moves in the order of the network's prior (the
        ``max_considered`` best), in rounds that allow 0, 1, 2, ... steps off the prior's
        choice along a line, each off-choice by how far down the order it goes. A prior
        wrong once anywhere is put right in the first rounds, where plain depth-first
        search would first try everything below the mistake. Positions met again in a
        round are skipped; each position's order is computed once an episode. The first
        win ends the search and its line is played out; without one after expanding
        ``simulations`` positions (each a network evaluation the first time), the move
        leads along the longest line met."""
        _need_deterministic(env)
        sim = self.sim
        assert sim is not None
        self.evaluations = 0
        start, key = env.sample_world(self.rng), observation.tobytes()
        longest: list[int] = []
        found: list[int] = []
        k, cut, expanded = 0, True, 0  # the round's discrepancies; whether it cut a line

        def ranked(snap: Any, obs: np.ndarray, at: bytes) -> list[int]:
            if at not in self._ranked:
                logits, _ = self._evaluate([obs], [snap.mask])
                legal = np.flatnonzero(snap.mask)
                order = np.argsort(-logits[0][legal], kind="stable")
                self._ranked[at] = legal[order][: self.config.max_considered].tolist()
            return self._ranked[at]

        def visit(snap: Any, obs: np.ndarray, at: bytes, k: int, line: list[int],
                  met: set[bytes]) -> bool:  # fmt: skip
            nonlocal longest, cut, expanded
            if expanded >= self.config.simulations:
                return False
            expanded += 1
            for i, action in enumerate(ranked(snap, obs, at)):
                if i > k:
                    cut = True
                    break
                sim.restore(snap)
                after, _, terminated, truncated, info = sim.step(action)
                if info["is_success"]:
                    found.extend([*line, action])
                    return True
                child = after.tobytes()
                if terminated or truncated or child in met:
                    continue
                met.add(child)
                if len(line) + 1 > len(longest):
                    longest = [*line, action]
                if visit(sim.snapshot(), after, child, k - i, [*line, action], met):
                    return True
            return False

        while cut and not found and expanded < self.config.simulations:
            cut = False  # an exhausted round that cut nothing has tried every line
            visit(start, observation, key, k, [], {key})
            k += 1
        legal = np.flatnonzero(env.action_masks())
        line = found or longest or ranked(start, observation, key)[:1]
        action = line[0]
        if found:  # what expert iteration learns: the winning line's move ...
            self.line = self._checked_line(env, line)[1:]
            policy = (legal == action).astype(np.float64)
        else:  # ... else the prior as it stands: nothing learnt from a search that failed
            logits, _ = self._evaluate([observation], [env.action_masks()])
            policy = _softmax(logits[0][legal].astype(np.float64))
        return SearchResult(action, legal, policy, 0.0, expanded, self.evaluations)

    def _exact(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """The game's exact solver from the position in view (restored into the copy from
        the player's world), its choices ordered by the network's logits, with
        ``simulations`` nodes (see the module doc). A line it finds is replayed on the copy
        and must win before it is played; a position it proves lost is lost after any move,
        so the rest of the episode follows the prior without searching again."""
        _need_deterministic(env)
        solve = exact_solver(env)
        sim = self.sim
        assert sim is not None
        self.evaluations = 0
        legal = np.flatnonzero(env.action_masks())
        logits, _ = self._evaluate([observation], [env.action_masks()])
        policy = prior = _softmax(logits[0][legal].astype(np.float64))
        action = int(legal[int(np.argmax(policy))])
        nodes = 0
        sim.restore(env.sample_world(self.rng))
        if observation.tobytes() != self._lost_next:
            self._lost_next = b""
            status, line, nodes = solve(sim, logits[0], self.config.simulations)
            if status == "cleared":
                checked = self._checked_line(env, line)
                if not sim.won:
                    raise RuntimeError(f"the exact solver's line does not win: {line}")
                action, self.line = line[0], checked[1:]
                policy = (legal == action).astype(np.float64)
            if status != "unsolvable":
                return SearchResult(action, legal, policy, 0.0, nodes, self.evaluations,
                                    extra={"status": status, "prior": prior})  # fmt: skip
        self._lost_next = sim.step(action)[0].tobytes()  # proved lost: so is the next one
        return SearchResult(action, legal, policy, 0.0, nodes, self.evaluations,
                            extra={"status": "unsolvable", "prior": prior})  # fmt: skip

    def _ordered(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """The game's own search from the position in view (restored into the copy from
        the player's world), its ``simulations`` candidate moves the ones the network's
        logits rank first (see the module doc); what expert iteration learns is its move."""
        search = _game_hook(env, "ORDERED_SEARCH", "search a prior can propose moves to "
                            "(ordered: Lines98's look-ahead); use gumbel or puct")  # fmt: skip
        sim = self.sim
        assert sim is not None
        self.evaluations = 0
        mask = env.action_masks()
        legal = np.flatnonzero(mask)
        logits, _ = self._evaluate([observation], [mask])
        prior = _softmax(logits[0][legal].astype(np.float64))
        extra: dict[str, Any] = {"prior": prior}
        if self.config.simulations == 0:
            action = int(legal[int(np.argmax(logits[0][legal]))])
        else:
            sim.restore(env.sample_world(self.rng))
            action, extra["weighed"] = search(sim, logits[0], self.config.simulations, self.rng,
                                              self.config.replies)  # fmt: skip
        policy = (legal == action).astype(np.float64)
        return SearchResult(action, legal, policy, 0.0, self.config.simulations, self.evaluations,
                            extra=extra)  # fmt: skip

    def _checked_line(self, env: GridEnv, line: list[int]) -> list[tuple[int, bytes]]:
        """A winning line with the observation each of its moves is played on (replayed on
        the copy from the position in view)."""
        sim = self.sim
        assert sim is not None
        sim.restore(env.sample_world(self.rng))
        out = []
        obs = env.observe()
        for action in line:
            out.append((action, obs.tobytes()))
            obs = sim.step(action)[0]
        return out

    def _advance(self, root: Node | None, action: int) -> None:
        """Keep the subtree of ``action``: the next move's root is the position it led to,
        found by the observation the next move starts from."""
        self.next_roots = {}
        if root is not None and len(root.actions):
            index = np.flatnonzero(root.actions == action)
            if len(index):
                self.next_roots = root.children[int(index[0])]

    def _improved(self, root: Node) -> np.ndarray:
        """The policy a search improves on the prior: Gumbel MuZero's
        ``softmax(logits + sigma(completed q))``, or PUCT's visit shares."""
        if self.config.variant == "puct" and root.visits:
            return np.asarray(root.n) / root.visits
        return _softmax(root.logits + self._sigma(root, root.completed_q()))

    def _sigma(self, node: Node, q: np.ndarray) -> np.ndarray:
        """Gumbel MuZero's monotone transform of values rescaled to [0, 1]."""
        c = self.config
        return (c.c_visit + max(node.n, default=0.0)) * c.c_scale * _rescaled(q)

    # ---------------------------------------------------------------- Gumbel
    def _gumbel_root(self, root: Node, worlds: Any, keep_lines: bool) -> tuple[int, int]:
        c = self.config
        k = len(root.actions)
        m = min(c.max_considered, k, c.simulations)
        gumbel = self.rng.gumbel(size=k) * c.gumbel_scale
        base = gumbel + root.logits
        remaining = list(np.argsort(-base, kind="stable")[:m])
        phases = max(1, math.ceil(math.log2(m))) if m > 1 else 1
        used = 0
        for phase in range(phases):
            per = max(1, c.simulations // (phases * len(remaining)))
            if phase == phases - 1:
                per = max(per, (c.simulations - used) // len(remaining))
            for _ in range(per):
                self._simulate_batch(root, remaining, worlds, keep_lines)
                used += len(remaining)
                if self.line:  # a win is found: nothing left to learn
                    return int(remaining[0]), used
            if len(remaining) > 1:
                score = base + self._sigma(root, root.completed_q())
                remaining.sort(key=lambda i: -score[i])
                remaining = remaining[: max(1, len(remaining) // 2)]
        score = base + self._sigma(root, root.completed_q())
        return int(max(remaining, key=lambda i: score[i])), used

    def _select_gumbel(self, node: Node) -> int:
        """The action whose visits lag most behind the improved policy
        ``softmax(logits + sigma(completed q))``. This runs at every step of every
        simulation, so it is written out over lists where a node has few actions."""
        if not node.visits:  # every value completed alike: the prior's favourite
            return node.favourite
        if len(node.n) > _FEW:
            improved = _softmax(node.logits + self._sigma(node, node.completed_q()))
            return int(np.argmax(improved - np.asarray(node.n) / (1 + node.visits)))
        n, w, total = node.n, node.w, node.visits
        seen_p = seen_pq = 0.0
        for ni, wi, pi in zip(n, w, node.p.tolist(), strict=True):
            if ni:
                seen_p += pi
                seen_pq += pi * wi / ni
        v_mix = (node.value + total * seen_pq / max(seen_p, 1e-12)) / (1 + total)
        completed = [wi / ni if ni else v_mix for ni, wi in zip(n, w, strict=True)]
        low, high = min(completed), max(completed)
        c = self.config
        scale = (c.c_visit + max(n)) * c.c_scale / max(high - low, 1e-8)
        logits = node.logits.tolist()
        z = [li + (ci - low) * scale for li, ci in zip(logits, completed, strict=True)]
        top = max(z)
        e = [math.exp(zi - top) for zi in z]
        norm = sum(e)
        lag = [ei / norm - ni / (1 + total) for ei, ni in zip(e, n, strict=True)]
        return lag.index(max(lag))

    # ------------------------------------------------------------------ PUCT
    def _puct_root(self, root: Node, worlds: Any, keep_lines: bool) -> tuple[int, int]:
        used = 0
        while used < self.config.simulations and not self.line:
            self._simulate_batch(root, [self._select_puct(root)], worlds, keep_lines)
            used += 1
        best = np.lexsort((root.q(), np.asarray(root.n)))[-1]
        return int(best), used

    def _select_puct(self, node: Node) -> int:
        n = np.asarray(node.n)
        q = np.zeros(len(n))
        if self._high > self._low:  # unvisited actions count as the worst seen
            q = np.where(n > 0, (node.q() - self._low) / (self._high - self._low), 0.0)
        u = self.config.c_puct * node.p * math.sqrt(node.visits + 1) / (1 + n)
        return int(np.argmax(q + u))

    # ------------------------------------------------------------ simulations
    def _simulate_batch(self, root: Node, first: list[int], worlds: Any, keep_lines: bool) -> None:
        """One simulation down each root action index of ``first``; the new leaves are
        evaluated together."""
        sim = self.sim
        assert sim is not None
        pending: list[tuple[list[tuple[Node, int, float]], Node, np.ndarray, np.ndarray]] = []
        finished: list[tuple[list[tuple[Node, int, float]], float]] = []
        for index in first:
            sim.restore(worlds())
            node, i = root, index
            path: list[tuple[Node, int, float]] = []
            actions: list[int] = []
            while True:
                action = int(node.actions[i])
                obs, reward, terminated, truncated, _ = sim.step(action)
                actions.append(action)
                path.append((node, i, float(reward)))
                key = obs.tobytes()
                child = node.children[i].get(key)
                if child is None:
                    child = node.children[i][key] = Node()
                if terminated or truncated:
                    child.terminal = True
                    if keep_lines and sim.won and not self.line:
                        self._keep_line(path, actions)
                    finished.append((path, 0.0))
                    break
                if not child.expanded:
                    pending.append((path, child, obs, sim.action_masks()))
                    break
                node = child
                i = self._select_gumbel(node) if self.config.variant == "gumbel" else (
                    self._select_puct(node))  # fmt: skip
        if pending:
            logits, values = self._evaluate([p[2] for p in pending], [p[3] for p in pending])
            for (path, child, _, mask), row, value in zip(pending, logits, values, strict=True):
                if not child.expanded:  # two simulations of a batch may meet the same leaf
                    child.expand(mask, row, value)
                finished.append((path, float(child.value)))
        for path, value in finished:
            self._backup(path, value)

    def _keep_line(self, path: list[tuple[Node, int, float]], actions: list[int]) -> None:
        """Remember a winning line: each action with the observation it is played on (a
        deterministic game: each action has one outcome)."""
        after = [next(iter(node.children[i])) for node, i, _ in path]
        self.line = list(zip(actions, [self.root_key, *after[:-1]], strict=True))

    def _backup(self, path: list[tuple[Node, int, float]], value: float) -> None:
        g = value
        for node, i, reward in reversed(path):
            g = reward + self.gamma * g
            node.n[i] += 1
            node.w[i] += g
            node.visits += 1
            if self.config.variant == "puct":
                q = node.w[i] / node.n[i]
                self._low, self._high = min(self._low, q), max(self._high, q)

    def _evaluate(self, observations: list[np.ndarray], masks: list[np.ndarray]):
        self.evaluations += len(observations)
        stacked = np.stack(observations)
        logits, values = self.evaluator(stacked, np.stack(masks))
        if self.judge is not None:
            values = self.judge(self.source, stacked)
        return logits, values


def _need_deterministic(env: GridEnv) -> None:
    if not env.deterministic:
        raise ValueError(
            "the levin, lds and exact searches plan whole lines: they need a deterministic "
            "game (Sokoban, the Knight, Pikachu-v0); use gumbel or puct"
        )


ExactSolver = Any  # (env, logits (A,), node budget) -> (status, actions, nodes)


def exact_solver(env: GridEnv) -> ExactSolver:
    """The game's exact solver that a prior can order (``EXACT_SEARCH`` beside its
    baselines, agents/<game>.py): ``(env, logits, nodes)`` to the status ("cleared",
    "unsolvable" or "gave_up"), the winning actions, and the nodes used."""
    return _game_hook(env, "EXACT_SEARCH", "exact solver a prior can order (the exact "
                      "search: Pikachu); use levin, lds, gumbel or puct")  # fmt: skip


LeafValue = Any  # (env, observations (b, ...)) -> values (b,), in the game's rewards


def leaf_value(env: GridEnv) -> LeafValue:
    """The game's own judgement of positions as a search's leaf value (``LEAF_VALUE``
    beside its baselines, agents/<game>.py), for ``leaf_value="algorithm"``."""
    missing = ("judgement of positions to stand for the value head (leaf_value='algorithm': "
               "Lines98); use leaf_value='network'")  # fmt: skip
    return _game_hook(env, "LEAF_VALUE", missing)


def _game_hook(env: GridEnv, name: str, missing: str) -> Any:
    """What the env's game declares as ``name`` beside its baselines (agents/<game>.py),
    found by the game's module (``grid_envs.<game>.env``, for a subclass defined elsewhere
    too); a clear error naming the env and the ``missing`` thing where it declares none."""
    from agents import GAME_MODULES

    games = (c.__module__.split(".") for c in type(env).__mro__)
    game = next((m[1] for m in games if m[0] == "grid_envs" and len(m) > 2), "")
    found = getattr(GAME_MODULES.get(game), name, None)
    if found is None:
        raise ValueError(f"{type(env).__name__} has no {missing}")
    return found


def search_defaults(env_id: str) -> dict[str, Any]:
    """The search a game plays by default (``SEARCH`` beside its baselines,
    agents/<game>.py: the variant and the simulations a move), by env id pattern."""
    import fnmatch

    from agents import GAME_MODULES

    for game in GAME_MODULES.values():
        for pattern, settings in getattr(game, "SEARCH", {}).items():
            if fnmatch.fnmatchcase(env_id, pattern):
                return dict(settings)
    return {}


class SearchAgent(Agent):
    """A search guided by a network, as an agent (see the module doc): one
    :class:`Search` per env it plays, each with its tree and winning line.

    ``evaluator`` gives the prior and the value (:class:`ModelEvaluator` for a trained
    model; :meth:`load` reads one from a file); ``config`` or its fields as keywords say
    how the search runs (:class:`SearchConfig`)."""

    name = "search"

    def __init__(
        self, evaluator: Evaluator, env: Any = None, seed: int | None = None,
        config: SearchConfig | None = None, **settings: Any,
    ) -> None:  # fmt: skip
        self.evaluator = evaluator
        self.model: Any = None  # the SB3 model behind the evaluator, where there is one
        self.config = config if config is not None else SearchConfig(**settings)
        self._searches: dict[int, Search] = {}
        self._results: dict[int, SearchResult] = {}  # per env: its last move's answer
        super().__init__(env, seed)

    @classmethod
    def load(
        cls, path: str | Path, env: Any = None, seed: int | None = None, **settings: Any
    ) -> SearchAgent:
        """The search over a saved PPO or MaskablePPO model (``model.zip`` of a run), with
        its game's :func:`search_defaults` for the settings not given."""
        from agents.policy import PolicyAgent
        from agents.runs import settings_of

        policy = PolicyAgent.load(path)
        given = {k: v for k, v in settings.items() if v is not None}
        settings = {**search_defaults(str(settings_of(path).get("env_id", ""))), **given}
        agent = cls(ModelEvaluator(policy.model), env, seed, **settings)
        agent.model = policy.model
        depth = "" if agent.config.replies is None else f"r{agent.config.replies}"
        agent.name = f"search{agent.config.simulations}{depth}:{policy.name.partition(':')[2]}"
        return agent

    @property
    def spaces(self) -> tuple[Any, Any] | None:
        """The spaces of the model behind the search (None for other evaluators)."""
        model = self.model
        return None if model is None else (model.observation_space, model.action_space)

    def reset(self) -> None:
        for search in self._searches.values():
            search.forget()

    def search(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """Search ``env``'s position and return the whole answer (:class:`SearchResult`)."""
        found = self._searches.get(id(env))
        if found is None:
            found = self._searches[id(env)] = Search(self.evaluator, self.config, self.rng)
        found.rng = self.rng  # seed() replaces the agent's generator
        result = self._results[id(env)] = found.run(env, np.asarray(observation))
        return result

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        return self.search(env, observation).action

    def thoughts(self, env: GridEnv, observation: np.ndarray) -> Thought:
        """What the search made of its last move: the moves its improved policy (gumbel),
        its visits (puct) or the network's prior (exact, ordered) weighs most, the root's
        value, and what it spent (simulations, nodes or candidates, network evaluations);
        or that it plays out a winning line found earlier."""
        result = self._results.get(id(env))
        if result is None:
            return super().thoughts(env, observation)
        if result.from_line:
            left = len(self._searches[id(env)].line)
            return Thought(facts={"plays": "a winning line found earlier", "moves left": left})
        variant = self.config.variant
        facts: dict[str, Any] = {"network evaluations": result.evaluations}
        weighed = result.extra.get("weighed")
        if weighed is not None:  # the game's own search says what it weighed
            return Thought(weighed.moves, weighed.weight, weighed.value, weighed.facts | facts)
        prior = result.extra.get("prior")
        weights, weight = (prior, "network's prior") if prior is not None else (
            result.policy, {"puct": "visit share", "gumbel": "improved policy"}.get(
                variant, "search's choice"))  # fmt: skip
        spent = {"exact": "nodes", "ordered": "candidates"}.get(variant, "simulations")
        facts = {spent: result.simulations, **facts}
        if "status" in result.extra:
            facts["solver"] = result.extra["status"]
        value = result.value if variant in ("gumbel", "puct") else None
        return Thought(Thought.best(result.actions, weights), weight, value, facts)
