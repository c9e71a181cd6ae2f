"""The search as an agent: one search of the configured variant per env it plays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent, Thought
from agents.search.config import Evaluator, ModelEvaluator, SearchConfig, SearchResult
from agents.search.game import ExactSearch, OrderedSearch
from agents.search.hooks import search_defaults
from agents.search.lines import DiscrepancySearch, LevinSearch
from agents.search.tree import GumbelSearch, PuctSearch, Search
from grid_envs.core.base_env import GridEnv

#: Each variant's search (:data:`agents.search.config.VARIANTS` names them); a new variant
#: is a :class:`~agents.search.tree.Search` subclass in a module of its own, named here.
SEARCHES: dict[str, type[Search]] = {
    "gumbel": GumbelSearch,
    "puct": PuctSearch,
    "levin": LevinSearch,
    "lds": DiscrepancySearch,
    "exact": ExactSearch,
    "ordered": OrderedSearch,
}


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
        from agents.train.models import PolicyAgent
        from agents.train.runs import settings_of

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
            found = self._searches[id(env)] = SEARCHES[self.config.variant](
                self.evaluator, self.config, self.rng
            )
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
        search = self._searches[id(env)]
        facts: dict[str, Any] = {"network evaluations": result.evaluations}
        weighed = result.extra.get("weighed")
        if weighed is not None:  # the game's own search says what it weighed
            return Thought(weighed.moves, weighed.weight, weighed.value, weighed.facts | facts)
        prior = result.extra.get("prior")
        weights, weight = (prior, "network's prior") if prior is not None else (
            result.policy, search.weighs)  # fmt: skip
        facts = {search.spends: result.simulations, **facts}
        if "status" in result.extra:
            facts["solver"] = result.extra["status"]
        value = result.value if search.values_root else None
        return Thought(Thought.best(result.actions, weights), weight, value, facts)
