"""A Minesweeper solver that sees only what a player sees: numbers, hidden cells, mine total.

1. *Sure moves*: a number whose mines are all found makes its other hidden neighbours safe;
   one that needs all of them makes them mines (single-cell rule); when one number's hidden
   neighbours are a subset of another's, the difference holds the difference of their
   counts (subset rule). Repeated until nothing changes.
2. *Exact probabilities* when no sure move is left: the hidden cells next to numbers (the
   frontier) split into independent components; each component's consistent mine
   placements are enumerated by backtracking and tallied by their number of mines; a
   placement using ``k`` mines is weighted by ``C(u, M - k)``, the ways to put the other
   mines in the ``u`` unconstrained cells. This gives every hidden cell's exact chance of
   holding a mine under a uniform prior (huge components fall back to a local estimate).
3. A guess looks one reveal ahead: of the few safest cells (:data:`LOOKAHEAD`, those
   within :data:`TOLERANCE` of the safest, and any other of those a number in view lies
   :data:`REACH` cells straight from), the one with the best chance of being safe
   *and* leading on, that is of showing a number that lets the rules prove another cell
   safe, or a zero (the probability of progress, as the strongest published solvers weigh
   their guesses, not only of safety). Among equals, the cell likeliest to open new ground.
4. When few layouts are left (:mod:`grid_envs.minesweeper.endgame`), the guess is searched
   to the end of the game instead: the cell that wins most often with best play after it.
5. Before any other guess, an unavoidable one is taken (a *50/50*, as David Hill's solver
   does): two cells that share one mine and that every number, shown or still hidden,
   touches alike, so that no reveal can ever tell them apart. The game cannot be won
   without that coin flip; taken first, the number it shows informs the guesses after it.
   So is a *pseudo-50/50*, a cell safe or one side of such a flip
   (:mod:`grid_envs.minesweeper.fifties`).
6. A part of the frontier that nothing else in view touches, whose layouts all hold as
   many mines, is a game of its own: it is searched to its end alone, as the end game
   searches the whole board (David Hill's solver does so with an *isolated edge*).

The first click goes where the rule makes it best: a corner under ``safe`` (the likeliest
cell to be a zero, which opens a region); under ``zero``, which opens a region wherever it
falls, the cell two in from a corner along both axes, three on boards of
:data:`WIDE_BOARD` cells or more (its opening touches no wall on two sides, so it is larger,
and more of the board is solved before the first guess).
"""

from __future__ import annotations

from math import comb

import numpy as np

from grid_envs.core.grid import DIRECTIONS, flat_neighbour_table, flat_offset_table
from grid_envs.minesweeper import endgame, fifties
from grid_envs.minesweeper.endgame import HIDDEN
from grid_envs.minesweeper.placements import (
    MAX_LISTED,
    Listing,
    ViewParts,
    Walk,
    combined,
    generators_for,
    walk_part,
)

# how :meth:`MinesweeperSolver.act` chose its last move (its ``last_choice``): the first
# click, a cell proved safe, the end game's search, an unavoidable 50/50, a pseudo-50/50,
# a part searched alone, or the rule of thumb's guess
CHOICES = ("opening", "sure", "end game", "50/50", "pseudo-50/50", "isolated part", "rule of thumb")
# a guess looks one reveal ahead at this many of the safest cells (0: the safest, with the
# tie-break below), among those within TOLERANCE of the safest one's chance of a mine
LOOKAHEAD = 4
# ... and at every other safest cell this many cells straight from a number in view (up,
# down, left or right): its own number can then meet that one's, so it may lead on where the
# safest cells chosen for their odds of a zero, often far from any number, cannot
REACH = 2
TOLERANCE = 0.0
ZERO_OPENING = 2  # under ``zero`` the first click is at (k, k)
WIDE_BOARD = 400  # ... and at (k + 1, k + 1) on boards of this many cells or more (expert)


class MinesweeperSolver:
    """Decides the next cell from the player's view.

    Args:
        rows, cols, mines: the board, as the player knows it.
        first_click: the rule in force, which decides the opening move.
        max_component: frontier components larger than this are estimated, not enumerated.
        max_nodes: backtracking steps allowed per component before estimating instead.
    """

    def __init__(
        self,
        rows: int,
        cols: int,
        mines: int,
        first_click: str = "safe",
        max_component: int = 60,
        max_nodes: int = 400_000,
        lookahead: int | None = None,
        tolerance: float | None = None,
        end_game: bool = True,
        pseudo: bool = True,
        isolated: bool = True,
        reach: bool = True,
    ) -> None:
        self.rows, self.cols, self.mines = rows, cols, mines
        self.first_click = first_click
        self.lookahead = LOOKAHEAD if lookahead is None else lookahead
        self.tolerance = TOLERANCE if tolerance is None else tolerance
        self.max_component = max_component
        self.max_nodes = max_nodes
        self.end_game = end_game
        self.pseudo = pseudo  # False: no pseudo-50/50 is looked for (to measure what it wins)
        self.isolated = isolated  # False: no part is searched alone (:meth:`isolated_part`)
        self.reach = reach  # False: the look-ahead weighs the LOOKAHEAD safest cells alone
        self.neighbours = list(flat_neighbour_table((rows, cols), 8))
        self.size = rows * cols
        straight = tuple((dr * REACH, dc * REACH) for dr, dc in DIRECTIONS)
        # the cells REACH away straight up, down, left and right
        self.reach_of = flat_offset_table((rows, cols), straight)
        self.patterns = fifties.board_patterns(rows, cols)  # laid out once a board
        self.reset()

    def reset(self) -> None:
        self.known_mines: set[int] = set()
        self.queue: list[int] = []  # cells proved safe, still to reveal
        self.last_probabilities: dict[int, float] = {}
        # the chance of winning with best play, from the last guess searched to the end
        self.win_chance: float | None = None
        self.layouts: int | None = None  # how many layouts fit the last view reckoned
        self.last_choice: str | None = None  # how the last move was chosen (:data:`CHOICES`)
        self.parts = ViewParts([], 0, self.mines)

    # ---------------------------------------------------------------- api
    def opening(self) -> int:
        if self.first_click == "zero" and self.rows >= 3 and self.cols >= 3:
            # (k, k), nearer the corner on boards too small for it (docs/games/minesweeper.md
            # has what each choice won)
            k = ZERO_OPENING + (self.rows * self.cols >= WIDE_BOARD)
            k = min(k, (self.rows - 1) // 2, (self.cols - 1) // 2)
            return k * self.cols + k
        return 0  # a corner: three neighbours, the best odds of a zero

    def act(self, view: np.ndarray) -> int:
        """The flat index of the cell to reveal. ``view``: -1 hidden, 0-8 revealed numbers.
        ``last_choice`` then says which of its rules chose it (:data:`CHOICES`)."""
        flat = view.ravel().tolist()
        hidden = [i for i, v in enumerate(flat) if v == HIDDEN]
        if len(hidden) == self.size:
            self.reset()
            self.last_choice = "opening"
            return self.opening()
        self.last_choice = "sure"
        while self.queue:
            cell = self.queue.pop()
            if flat[cell] == HIDDEN:
                return cell
        safe, mines = self.deduce(flat)
        self.known_mines |= mines
        if safe:
            self.queue = sorted(safe, reverse=True)
            return self.queue.pop()
        probs = self.probabilities(flat)
        self.last_probabilities = probs
        for cell, p in probs.items():
            if p >= 1.0:
                self.known_mines.add(cell)
        safest = min(probs.values())
        if safest <= 0.0:
            self.queue = sorted((c for c, p in probs.items() if p <= 0.0), reverse=True)
            return self.queue.pop()
        if self.end_game and self.layouts is not None and self.layouts <= endgame.MAX_PLACEMENTS:
            found = endgame.best_cell(self, flat)
            if found is not None:
                self.win_chance = found[1]
                self.last_choice = "end game"
                return found[0]
        pair, self.last_choice = self.fifty_fifty(flat, probs), "50/50"
        if pair is None and self.pseudo:
            pair, self.last_choice = self.pseudo_fifty_fifty(flat, probs), "pseudo-50/50"
        if pair is not None:
            return pair
        if self.end_game and self.isolated:
            found = self.isolated_part(flat)
            if found is not None:  # its chance is the part's, not the game's
                self.last_choice = "isolated part"
                return found[0]
        self.last_choice = "rule of thumb"
        return self._tie_break(flat, probs, safest)

    # ------------------------------------------------------- constraints
    def constraints(self, flat: list[int]) -> list[tuple[frozenset[int], int]]:
        """(hidden cells not known to be mines, mines still needed) per useful number."""
        out = []
        known = self.known_mines
        for i, v in enumerate(flat):
            if v <= 0:
                continue
            unknown = []
            need = v
            for j in self.neighbours[i]:
                if flat[j] == HIDDEN:
                    if j in known:
                        need -= 1
                    else:
                        unknown.append(j)
            if unknown:
                out.append((frozenset(unknown), need))
        return out

    def deduce(self, flat: list[int]) -> tuple[set[int], set[int]]:
        """Cells proved safe and proved mines by the single-cell and subset rules."""
        safe: set[int] = set()
        mines: set[int] = set()
        constraints = set(self.constraints(flat))
        changed = True
        while changed:
            changed = False
            reduced = set()
            for cells, need in constraints:
                cells_left = cells - safe - mines
                need -= len(cells & mines)
                if not cells_left:
                    continue
                if need == 0:
                    safe |= cells_left
                    changed = True
                elif need == len(cells_left):
                    mines |= cells_left
                    changed = True
                else:
                    reduced.add((frozenset(cells_left), need))
            constraints = reduced
            if changed:
                continue
            by_cell: dict[int, list[tuple[frozenset[int], int]]] = {}
            for con in constraints:
                for c in con[0]:
                    by_cell.setdefault(c, []).append(con)
            for a_cells, a_need in constraints:
                partners = {b for c in a_cells for b in by_cell[c]}
                for b_cells, b_need in partners:
                    if len(b_cells) <= len(a_cells) or not a_cells < b_cells:
                        continue
                    rest, rest_need = b_cells - a_cells, b_need - a_need
                    if rest_need == 0 and not rest <= safe:
                        safe |= rest
                        changed = True
                    elif rest_need == len(rest) and not rest <= mines:
                        mines |= rest
                        changed = True
        return safe, mines

    # ------------------------------------------------------ probabilities
    def probabilities(self, flat: list[int]) -> dict[int, float]:
        """Exact chance of a mine for every hidden cell not known to be one."""
        constraints, unknown, free = self.split(flat)
        left = self.mines - len(self.known_mines)
        comps = self.components(constraints)
        dists: list[dict[int, int]] = []
        tallies: list[dict[int, dict[int, int]]] = []
        estimated: dict[int, float] = {}
        self.parts = ViewParts(comps, len(free), left)
        for index, (cells, cons) in enumerate(comps):
            result = self._enumerate(cells, cons)
            self.parts.counts[index] = None if result is None else result[0]
            if result is None:  # too big: a local estimate, the cells count as unconstrained
                for c in cells:
                    estimated[c] = max(need / len(cs) for cs, need in cons if c in cs)
                continue
            dists.append(result[0])
            tallies.append(result[1])
        u = len(free) + len(estimated)
        total_poly = combined(dists)
        weight_total = sum(
            cnt * comb(u, left - k) for k, cnt in total_poly.items() if 0 <= left - k <= u
        )
        # the layouts that fit the view, where every part was listed (the end game's size)
        self.layouts = None if estimated or not weight_total else weight_total
        probs: dict[int, float] = {}
        if weight_total == 0:  # inconsistent view (should not happen): fall back to density
            return {i: left / max(1, len(unknown)) for i in unknown}
        for idx, tally in enumerate(tallies):
            rest = combined(dists[:idx] + dists[idx + 1 :])
            for k, per_cell in tally.items():
                w = sum(
                    cnt * comb(u, left - k - k2)
                    for k2, cnt in rest.items()
                    if 0 <= left - k - k2 <= u
                )
                if not w:
                    continue
                for cell, n_mine in per_cell.items():
                    probs[cell] = probs.get(cell, 0) + n_mine * w
            for cell in {c for per in tally.values() for c in per}:
                probs[cell] = probs.get(cell, 0) / weight_total
        for cells, _ in comps:  # cells never a mine in any placement
            for c in cells:
                if c not in probs and c not in estimated:
                    probs[c] = 0.0
        if u:
            expected_free = sum(
                cnt * comb(u, left - k) * (left - k)
                for k, cnt in total_poly.items()
                if 0 <= left - k <= u
            )
            p_free = expected_free / (weight_total * u)
            for c in free:
                probs[c] = p_free
            for c, p in estimated.items():
                probs[c] = p
        return probs

    def split(
        self, flat: list[int]
    ) -> tuple[list[tuple[frozenset[int], int]], list[int], list[int]]:
        """The numbers' constraints on hidden cells, the hidden cells not proved mines, and
        those of them next to no number (unconstrained)."""
        known = self.known_mines
        constraints = [c for c in self.constraints(flat) if c[0]]
        unknown = [i for i, v in enumerate(flat) if v == HIDDEN and i not in known]
        frontier = set().union(*(c[0] for c in constraints)) if constraints else set()
        return constraints, unknown, [i for i in unknown if i not in frontier]

    def components(
        self, constraints: list[tuple[frozenset[int], int]]
    ) -> list[tuple[list[int], list[tuple[frozenset[int], int]]]]:
        """The constraints' independent parts: (cells, constraints) for each group of
        hidden cells that constraints link, directly or through one another."""
        parent: dict[int, int] = {}

        def find(x: int) -> int:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for cells, _ in constraints:
            first = next(iter(cells))
            for c in cells:
                parent[find(c)] = find(first)
        groups: dict[int, tuple[list[int], list[tuple[frozenset[int], int]]]] = {}
        for cells, need in constraints:
            root = find(next(iter(cells)))
            groups.setdefault(root, ([], []))[1].append((cells, need))
        for c in list(parent):
            groups[find(c)][0].append(c)
        return list(groups.values())

    def _enumerate(
        self, cells: list[int], cons: list[tuple[frozenset[int], int]], per_cell: bool = True
    ) -> tuple[dict[int, int], dict[int, dict[int, int]]] | None:
        """Consistent placements by mine count: (count per k, per-cell mine tallies per k;
        left empty without ``per_cell``, where only the counts are wanted)."""
        if len(cells) > self.max_component:
            return None
        walked = self.walk(cells, cons, per_cell=per_cell)
        if walked is None:
            return None
        counts = {k: int(c) for k, c in enumerate(walked.counts.tolist()) if c}
        tally: dict[int, dict[int, int]] = {}
        if per_cell:
            for k in counts:
                row = walked.tally[k].tolist()
                tally[k] = {c: t for c, t in zip(walked.order, row, strict=True) if t}
        return counts, tally

    def walk(
        self,
        cells: list[int],
        cons: list[tuple[frozenset[int], int]],
        most: int = -1,
        rng: np.random.Generator | None = None,
        per_cell: bool = False,
    ) -> Walk | None:
        """The mine placements of ``cells`` that meet the constraints ``cons`` (cells,
        mines needed), by backtracking (:func:`~grid_envs.minesweeper.placements.walk_part`):
        all of them counted, or the first ``most``, which it keeps. With ``rng`` each cell
        tries its two values in a random order. None where the walk ran out of
        ``max_nodes`` steps."""
        # order cells so that constraints close early: walk the constraints in turn
        order: list[int] = []
        seen: set[int] = set()
        for cs, _ in sorted(cons, key=lambda c: len(c[0])):
            for c in sorted(cs):
                if c not in seen:
                    seen.add(c)
                    order.append(c)
        pos = {c: i for i, c in enumerate(order)}
        touching: list[list[int]] = [[] for _ in order]
        for k, (cs, _) in enumerate(cons):
            for c in cs:
                touching[pos[c]].append(k)
        touch_start = np.cumsum([0] + [len(t) for t in touching], dtype=np.int64)
        touch = np.array([k for t in touching for k in t], dtype=np.int64)
        need = np.array([n for _, n in cons], dtype=np.int64)
        size = np.array([len(cs) for cs, _ in cons], dtype=np.int64)
        ok, found, counts, tally, leaves = walk_part(
            touch_start, touch, need, size, self.max_nodes, most, per_cell,
            generators_for(rng),
        )  # fmt: skip
        if not ok:
            return None
        return Walk(order, found, counts, tally, leaves[:found])

    # ----------------------------------------------------------- choice
    def _clear(self, flat: list[int], probs: dict[int, float], cell: int) -> float:
        """The chance that none of a cell's hidden neighbours is a mine (it opens ground)."""
        clear = 1.0
        for j in self.neighbours[cell]:
            if flat[j] == HIDDEN:
                clear *= 1.0 - probs.get(j, 1.0)
        return clear

    def _tie_break(self, flat: list[int], probs: dict[int, float], safest: float) -> int:
        """Among the safest cells, the one likeliest to open new ground; with
        ``lookahead``, among the safest few (and, with ``reach``, the safest cells
        :data:`REACH` from a number) the one likeliest to be safe *and* to lead on
        (:meth:`_progress`)."""
        if self.lookahead:
            near = [c for c, p in probs.items() if p <= safest + self.tolerance + 1e-9]
            if len(near) > 1:
                near.sort(key=lambda c: (probs[c], -self._clear(flat, probs, c), c))
                looked = near[: self.lookahead]
                if self.reach:  # ... and those a number's reveal may meet (:data:`REACH`)
                    looked += [
                        c for c in near[self.lookahead :]
                        if any(flat[j] != HIDDEN for j in self.reach_of[c])
                    ]  # fmt: skip
                scored = [
                    ((1.0 - probs[c]) * self._progress(flat, probs, c), -probs[c], -c)
                    for c in looked
                ]
                return -max(scored)[2]
        near = [c for c, p in probs.items() if p <= safest + 1e-9]
        if len(near) == 1:
            return near[0]
        best, best_score = near[0], -1.0
        for c in near:
            clear = self._clear(flat, probs, c)
            if clear > best_score or (clear == best_score and c < best):
                best, best_score = c, clear
        return best

    def fifty_fifty(self, flat: list[int], probs: dict[int, float]) -> int | None:
        """A cell of an unavoidable 50/50, or None (:func:`.fifties.unavoidable`)."""
        return fifties.unavoidable(self, flat, probs)

    def pseudo_fifty_fifty(self, flat: list[int], probs: dict[int, float]) -> int | None:
        """A cell that is safe or one side of a coin flip no reveal can settle, or None
        (:func:`.fifties.pseudo`)."""
        return fifties.pseudo(self, flat, probs)

    def layouts_with(
        self, flat: list[int], mines: set[int], safe: set[int], cache: ViewParts | None = None
    ) -> int | None:
        """How many mine layouts fit the view with the hidden cells ``mines`` holding mines
        and ``safe`` none, besides the mines proved; None where a part of the frontier is
        too large to list. ``cache`` (the view's :attr:`parts`) keeps the parts, their
        counts and their lists between calls on one view: a part that holds a cell of
        ``mines`` or ``safe`` is counted from its list, or where it has too many placements
        to list, walked again with those cells fixed."""
        if cache is None:
            constraints, _, free = self.split(flat)
            cache = ViewParts(
                self.components(constraints), len(free), self.mines - len(self.known_mines)
            )
        left = cache.left - len(mines)
        forced = mines | safe
        u = cache.free - len(forced)  # the forced cells in parts are added back below
        dists: list[dict[int, int] | None] = []
        for index, (cells, cons) in enumerate(cache.parts):
            touched = forced.intersection(cells)
            u += len(touched)  # they leave their part's count, not the free cells
            if not touched:
                if index not in cache.counts:
                    cache.counts[index] = self._placements(cells, cons)
                dists.append(cache.counts[index])
                continue
            listing = self._listing(index, cache)
            if listing is not None:
                dists.append(listing.counts(mines & touched, safe & touched))
                continue
            reduced = []
            for cs, need in cons:
                need -= len(cs & mines)
                rest = cs - forced
                if need < 0 or need > len(rest):
                    return 0
                if rest:
                    reduced.append((rest, need))
            for part_cells, part_cons in self.components(reduced):
                dists.append(self._placements(part_cells, part_cons))
        counted = [d for d in dists if d is not None]
        if len(counted) < len(dists):
            return None
        return sum(
            cnt * comb(u, left - k) for k, cnt in combined(counted).items() if 0 <= left - k <= u
        )

    def _listing(self, index: int, cache: ViewParts) -> Listing | None:
        """Part ``index``'s placements, listed once a view; None where it has more than
        :data:`MAX_LISTED` (or was too large to count)."""
        if index not in cache.listed:
            counts = cache.counts.get(index)
            found = sum(counts.values()) if counts is not None else MAX_LISTED + 1
            walked = None
            if found <= MAX_LISTED:
                walked = self.walk(*cache.parts[index], most=found)
            cache.listed[index] = None if walked is None else Listing(walked)
        return cache.listed[index]

    def _placements(
        self, cells: list[int], cons: list[tuple[frozenset[int], int]]
    ) -> dict[int, int] | None:
        """A part's consistent placements by their number of mines (None: too many)."""
        result = self._enumerate(cells, cons, per_cell=False)
        return None if result is None else result[0]

    def isolated_part(self, flat: list[int]) -> tuple[int, float] | None:
        """The best cell of a part of the frontier searched to its end alone, and its chance
        of clearing the part, or None. A part whose cells have no hidden neighbour outside
        it but proved mines, and whose placements all hold as many mines, is a game of its
        own: no reveal elsewhere tells anything about it, nor it about the rest, so its
        guesses must come some time and the best play of it can be searched now, over its
        few placements (each equally likely), where the whole view has too many."""
        known = self.known_mines
        for index, (cells, cons) in enumerate(self.parts.parts):
            counts = self.parts.counts.get(index)
            if counts is None or len(counts) != 1:
                continue
            if not 2 <= sum(counts.values()) <= endgame.MAX_PLACEMENTS:
                continue
            inside = set(cells)
            if any(
                flat[j] == HIDDEN and j not in known and j not in inside
                for c in cells
                for j in self.neighbours[c]
            ):
                continue
            found = endgame.best_in_part(self, cells, cons)
            if found is not None:
                return found
        return None

    def _progress(self, flat: list[int], probs: dict[int, float], cell: int) -> float:
        """The chance, if ``cell`` is safe, that its number lets the rules prove a cell safe
        or opens ground (a zero): the number's distribution taken from its hidden
        neighbours' chances as if they were independent."""
        known = self.known_mines
        hidden = [j for j in self.neighbours[cell] if flat[j] == HIDDEN]
        base = sum(1 for j in hidden if j in known)
        counts = [1.0]  # the chance of each number of mines among the unknown neighbours
        for j in hidden:
            if j in known:
                continue
            p = probs.get(j, 0.0)
            grown = [0.0] * (len(counts) + 1)
            for m, q in enumerate(counts):
                grown[m] += q * (1.0 - p)
                grown[m + 1] += q * p
            counts = grown
        progress = 0.0
        for m, q in enumerate(counts):
            if q < 1e-3:
                continue
            if base + m == 0:
                progress += q
                continue
            seen = list(flat)
            seen[cell] = base + m
            safe, _ = self.deduce(seen)
            if safe - {cell}:
                progress += q
        return progress
