"""The push search, compiled with numba: the solver's searches at machine speed.

:class:`~grid_envs.sokoban.solver.Solver` keeps the plan (which searches run and in what
turns, the packing order); these modules run each search, weighted best-first
(``weight * h + g``; weight 1 is A*) or in feature space after FESS, expanding the same
states in the same order as the solver's pure-Python searches (``engine="python"``): the
moves are made in the same order, the matching bound found by the same algorithm with the
same ties, the same freeze test, PI-corral rule, corral deadlock search and table of
two-box deadlocks prune, and the queues break ties alike (tested state for state).

* :mod:`.matching`: the matching lower bound and its repair after a move;
* :mod:`.pruning`: the freeze test, the player's area, PI-corrals;
* :mod:`.pairs`: the room's table of two-box deadlocks, worked out once a room;
* :mod:`.fences`: corral deadlocks, a search of a corral's fence alone;
* :mod:`.features`: FESS's features, its cells, and the push paths of its advice;
* :mod:`.loop`: the compiled loop that expands states;
* :mod:`.search`: :class:`CompiledSearch`, the arrays the loop runs on, grown within a
  memory bound.

Everything here trusts its inputs: the solver builds them from a level the gate accepted.
"""

from grid_envs.sokoban.compiled.search import (
    CompiledSearch,
    Features,
    MemoryLimit,
    Room,
    warm_up,
)

__all__ = ["CompiledSearch", "Features", "MemoryLimit", "Room", "warm_up"]
