"""Searches for a whole winning line in a deterministic game, in the network's order:
Levin tree search (:class:`LevinSearch`) and limited discrepancy search
(:class:`DiscrepancySearch`). The first win ends a search and its line is played out."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.search.config import SearchResult, softmax
from agents.search.hooks import need_deterministic
from agents.search.tree import _BATCH, Search
from grid_envs.core.base_env import GridEnv


class LevinSearch(Search):
    """Best-first over whole lines (``variant="levin"``)."""

    def forget(self) -> None:
        super().forget()
        # the search to go on: the move played, the position it leads to, the frontier
        self._levin_tree: tuple[int, bytes, list[Any]] | None = None

    def _choose(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """Levin tree search (Orseau et al. 2018) for a winning line: positions are expanded
        in the order of ``log(depth + 1) - log(prior of the path)``, the product of the
        network's probabilities along the moves that reach them, each new position once
        (by what it shows). Up to ``_BATCH`` positions go through the network together; a
        position's children are scored by its own policy. The first win ends the search and
        its line is played out. Without one after ``simulations`` evaluations, the move
        leads towards the expanded position the network values most, and the next move's
        search goes on from the positions this one left under it."""
        import heapq

        need_deterministic(env)
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


class DiscrepancySearch(Search):
    """Limited discrepancy search in the prior's order (``variant="lds"``)."""

    spends = "positions"

    def forget(self) -> None:
        super().forget()
        self._ranked: dict[bytes, list[int]] = {}  # each position's moves, best first

    def _choose(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
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
        need_deterministic(env)
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
            policy = softmax(logits[0][legal].astype(np.float64))
        return SearchResult(action, legal, policy, 0.0, expanded, self.evaluations)
