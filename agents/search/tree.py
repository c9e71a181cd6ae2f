"""Tree search guided by a trained network over the env's exact rules.

A trained actor-critic gives the *prior* (its logits over the legal actions) and the
*value* of the positions a search reaches; the game itself gives everything else: a copy
of the env steps every move the search tries, so transitions, masks, rewards and the ends
of episodes are the rules' own, exact. This is the search of AlphaZero and MuZero with a
perfect model, and the expert of expert iteration (:mod:`agents.search.expert`).

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
from typing import Any

import numpy as np

from agents.search.config import Evaluator, SearchConfig, SearchResult, rescaled, softmax
from agents.search.hooks import LeafValue, leaf_value
from grid_envs.core.base_env import GridEnv

_FEW = 24  # nodes with at most this many actions are selected over lists, not arrays
_BATCH = 16  # positions a best-first search sends through the network together


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
        self.p = softmax(self.logits)
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


class Search:
    """A search over one env's copy (see the module doc); :meth:`run` plays one move. Each
    variant is a subclass (:data:`agents.search.agent.SEARCHES`) that fills in
    :meth:`_choose`; what it weighs and spends is named for the agent's thoughts."""

    #: what its policy weighs, what its budget counts, and whether it values the root
    weighs = "search's choice"
    spends = "simulations"
    values_root = False

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
        return self._choose(env, observation)

    def _choose(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        raise NotImplementedError

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

    def _evaluate(self, observations: list[np.ndarray], masks: list[np.ndarray]):
        self.evaluations += len(observations)
        stacked = np.stack(observations)
        logits, values = self.evaluator(stacked, np.stack(masks))
        if self.judge is not None:
            values = self.judge(self.source, stacked)
        return logits, values


class TreeSearch(Search):
    """Simulations down a tree kept between moves (Gumbel MuZero's or AlphaZero's): the
    root's rule (:meth:`_root`) and the rule inside the tree (:meth:`_select`) are the
    variant's."""

    values_root = True

    def _choose(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """Simulations from the position in view, one tree kept between moves."""
        key = observation.tobytes()
        keep_lines = env.deterministic and self.config.keep_lines
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
        else:
            index, used = self._root(root, worlds, keep_lines)
        action = int(root.actions[index])
        if self.line:  # a simulation won: its line is sure, whatever the values say
            action = self.line.pop(0)[0]
        result = SearchResult(
            action, root.actions.copy(), self._improved(root), float(root.value), used,
            self.evaluations,
        )  # fmt: skip
        self._advance(root, action)
        return result

    def _improved(self, root: Node) -> np.ndarray:
        """The policy a search improves on the prior: Gumbel MuZero's
        ``softmax(logits + sigma(completed q))``, or PUCT's visit shares."""
        return softmax(root.logits + self._sigma(root, root.completed_q()))

    def _sigma(self, node: Node, q: np.ndarray) -> np.ndarray:
        """Gumbel MuZero's monotone transform of values rescaled to [0, 1]."""
        c = self.config
        return (c.c_visit + max(node.n, default=0.0)) * c.c_scale * rescaled(q)

    def _root(self, root: Node, worlds: Any, keep_lines: bool) -> tuple[int, int]:
        """The root action index chosen, and the simulations spent."""
        raise NotImplementedError

    def _select(self, node: Node) -> int:
        """The action index a simulation takes at ``node`` inside the tree."""
        raise NotImplementedError

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
                i = self._select(node)
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


class GumbelSearch(TreeSearch):
    """Gumbel MuZero's search (see the module doc)."""

    weighs = "improved policy"

    def _root(self, root: Node, worlds: Any, keep_lines: bool) -> tuple[int, int]:
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

    def _select(self, node: Node) -> int:
        """The action whose visits lag most behind the improved policy
        ``softmax(logits + sigma(completed q))``. This runs at every step of every
        simulation, so it is written out over lists where a node has few actions."""
        if not node.visits:  # every value completed alike: the prior's favourite
            return node.favourite
        if len(node.n) > _FEW:
            improved = softmax(node.logits + self._sigma(node, node.completed_q()))
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


class PuctSearch(TreeSearch):
    """AlphaZero's PUCT rule, one simulation at a time (see the module doc)."""

    weighs = "visit share"

    def _root(self, root: Node, worlds: Any, keep_lines: bool) -> tuple[int, int]:
        used = 0
        while used < self.config.simulations and not self.line:
            self._simulate_batch(root, [self._select(root)], worlds, keep_lines)
            used += 1
        best = np.lexsort((root.q(), np.asarray(root.n)))[-1]
        return int(best), used

    def _select(self, node: Node) -> int:
        n = np.asarray(node.n)
        q = np.zeros(len(n))
        if self._high > self._low:  # unvisited actions count as the worst seen
            q = np.where(n > 0, (node.q() - self._low) / (self._high - self._low), 0.0)
        u = self.config.c_puct * node.p * math.sqrt(node.visits + 1) / (1 + n)
        return int(np.argmax(q + u))

    def _improved(self, root: Node) -> np.ndarray:
        """PUCT's visit shares (the prior's improvement once the root is visited)."""
        return np.asarray(root.n) / root.visits if root.visits else super()._improved(root)

    def _backup(self, path: list[tuple[Node, int, float]], value: float) -> None:
        super()._backup(path, value)
        for node, i, _ in path:  # the values' range over the tree, for the rescaling
            q = node.w[i] / node.n[i]
            self._low, self._high = min(self._low, q), max(self._high, q)
