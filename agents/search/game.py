"""Searches that hand the position to the game's own algorithm, the network's logits
ordering its choices: the game's exact solver (:class:`ExactSearch`) and its own search
over the candidates the network ranks first (:class:`OrderedSearch`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.search.config import SearchResult, softmax
from agents.search.hooks import exact_solver, game_hook, need_deterministic
from agents.search.tree import Search
from grid_envs.core.base_env import GridEnv


class ExactSearch(Search):
    """The game's exact solver, ``simulations`` its node budget (``variant="exact"``)."""

    weighs = "network's prior"
    spends = "nodes"

    def forget(self) -> None:
        super().forget()
        self._lost_next = b""  # the position the last move leads to, proved lost

    def _choose(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """The game's exact solver from the position in view (restored into the copy from
        the player's world), its choices ordered by the network's logits, with
        ``simulations`` nodes (see the module doc). A line it finds is replayed on the copy
        and must win before it is played; a position it proves lost is lost after any move,
        so the rest of the episode follows the prior without searching again."""
        need_deterministic(env)
        solve = exact_solver(env)
        sim = self.sim
        assert sim is not None
        self.evaluations = 0
        legal = np.flatnonzero(env.action_masks())
        logits, _ = self._evaluate([observation], [env.action_masks()])
        policy = prior = softmax(logits[0][legal].astype(np.float64))
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


class OrderedSearch(Search):
    """The game's own search over the network's first candidates (``variant="ordered"``)."""

    weighs = "network's prior"
    spends = "candidates"

    def _choose(self, env: GridEnv, observation: np.ndarray) -> SearchResult:
        """The game's own search from the position in view (restored into the copy from
        the player's world), its ``simulations`` candidate moves the ones the network's
        logits rank first (see the module doc); what expert iteration learns is its move."""
        search = game_hook(env, lambda d: d.ordered_search, "search a prior can propose moves to "
                            "(ordered: Lines98's look-ahead); use gumbel or puct")  # fmt: skip
        sim = self.sim
        assert sim is not None
        self.evaluations = 0
        mask = env.action_masks()
        legal = np.flatnonzero(mask)
        logits, _ = self._evaluate([observation], [mask])
        prior = softmax(logits[0][legal].astype(np.float64))
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
