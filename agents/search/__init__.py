"""Tree search guided by a trained network over the env's exact rules, and expert
iteration, which learns from it.

* :mod:`agents.search.config`: the evaluator (a network's prior and value), the settings
  and the answer;
* :mod:`agents.search.tree`: the shared engine and the tree searches (Gumbel MuZero's,
  PUCT); :mod:`agents.search.lines`: whole-line searches (Levin, limited discrepancy);
  :mod:`agents.search.game`: the game's own exact solver or search, in the network's
  order; each variant a :class:`~agents.search.tree.Search` subclass, named in
  :data:`agents.search.agent.SEARCHES`, where a new variant goes;
* :mod:`agents.search.hooks`: what a search takes from the game's declaration;
* :mod:`agents.search.agent`: :class:`SearchAgent`; :mod:`agents.search.expert`: expert
  iteration.
"""

from agents.search.agent import SEARCHES, SearchAgent
from agents.search.config import (
    LEAF_VALUES,
    VARIANTS,
    Evaluator,
    ModelEvaluator,
    SearchConfig,
    SearchResult,
    UniformEvaluator,
)
from agents.search.hooks import search_defaults

__all__ = [
    "LEAF_VALUES",
    "SEARCHES",
    "VARIANTS",
    "Evaluator",
    "ModelEvaluator",
    "SearchAgent",
    "SearchConfig",
    "SearchResult",
    "UniformEvaluator",
    "search_defaults",
]
