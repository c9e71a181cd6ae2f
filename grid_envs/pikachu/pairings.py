"""Who is removed with whom: a search over a board's pairings that learns nogoods (no gravity).

Without gravity a removal only frees cells. Once every kind's *pairing* (a perfect matching
of its tiles: 1 for two tiles, 3 for four, 15 for six, 105 for eight) is chosen, the order
of the removals no longer matters: removing partners that connect never hurts, so the board
clears exactly when doing that until nothing connects clears it. A board can be cleared
when some choice of pairings clears it, so this search picks one pairing per kind, a small
constraint problem, as a SAT solver would:

- A partial choice is judged by the relaxation that
  :class:`grid_envs.pikachu.solver.Relaxation` describes (a tile leaves once it connects to
  the cell of a tile it may still pair with); with every pairing chosen it is the game.
- When it fails, the tiles left, ``S``, are *locked*: on the board holding only ``S``, no
  tile of ``S`` connects to the cell of a partner it may pair with. Every choice that still
  leaves out all the pairs that would connect there (one tile in ``S``) keeps ``S`` locked,
  since more tiles only block more paths. So one of the pairings holding such a pair must be
  chosen: a *clause*, learned for the whole search. It is shortened by allowing its pairings
  back one at a time and rerunning the relaxation from the locked board alone (cheap), so
  that it names only what the lock needs.
- Clauses propagate: one with no pairing left possible is a dead end, and one whose possible
  pairings all belong to one kind restricts that kind to them.
- Branching takes the kind named most in recent clauses (VSIDS's activity), and a child's
  relaxation replays its parent's from the first round the new choice can change. Its
  pairings are tried earliest first (by when their pairs freed tiles in the relaxation),
  or, given a *prior* (a score per pair, such as a trained network's logits), best
  summed score first: the order changes how soon a clear is found, never the answer.

An exhausted search is a proof that the board cannot be cleared; every clause rests on the
locked-set argument above.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from grid_envs.pikachu.paths import connects_flat
from grid_envs.pikachu.rules import pairs_to_actions, tiles_by_kind
from grid_envs.pikachu.state import EMPTY

MAX_KIND = 8  # tiles of one kind, at most, for the pairings to be listed (105 for eight)
ACTIVITY_GROWTH = 1.05  # each clause weighs this much more than the one before


class OutOfBudget(Exception):
    """The search passed its deadline or node limit."""


def matchings(tiles: list[int]) -> list[list[tuple[int, int]]]:
    """Every way of pairing off ``tiles`` (an even count): pairs (t < u), in tile order."""
    if not tiles:
        return [[]]
    first, rest = tiles[0], tiles[1:]
    out = []
    for k, other in enumerate(rest):
        for tail in matchings(rest[:k] + rest[k + 1 :]):
            out.append([(min(first, other), max(first, other)), *tail])
    return out


def fits(board: np.ndarray) -> bool:
    """Whether every kind on ``board`` has at most ``MAX_KIND`` tiles."""
    counts = np.bincount(board.ravel()[board.ravel() != EMPTY].astype(np.int64))
    return not len(counts) or int(counts.max()) <= MAX_KIND


@dataclass
class _Run:
    """One run of the relaxation, kept round by round for the children to replay."""

    ok: bool  # every tile left
    board: np.ndarray  # (rows, cols) at the end: empty, or the locked tiles
    rounds: list[tuple[np.ndarray, np.ndarray]]  # per round: the board, the candidate pairs
    freed: np.ndarray  # (k, 3) int64: (pair, tile, round) for each tile a pair freed


class PairingSearch:
    """The search over one board's pairings (see the module doc).

    ``fixed`` partners and ``banned`` pairs (tiles no longer on ``board`` are ignored) are
    facts known before the search, such as the planner's probes find. ``prior``: a score
    for every pair of cells, in the env's action order (:func:`~grid_envs.pikachu.rules.
    pair_to_action`), that orders the pairings tried (see the module doc).
    """

    def __init__(
        self,
        board: np.ndarray,
        fixed: dict[int, int] | None = None,
        banned: frozenset[tuple[int, int]] = frozenset(),
        prior: np.ndarray | None = None,
    ) -> None:
        self.board = board
        index: dict[tuple[int, int], int] = {}
        incidence: list[tuple[int, int]] = []  # (pair, choice): the pair is in that pairing
        choice_kind: list[int] = []
        if not fits(board):
            raise ValueError(f"a kind has more than {MAX_KIND} tiles: too many pairings to list")
        kinds = tiles_by_kind(board)
        for k, tiles in enumerate(kinds.values()):
            for matching in matchings(tiles):
                for pair in matching:
                    incidence.append((index.setdefault(pair, len(index)), len(choice_kind)))
                choice_kind.append(k)
        self.pairs = np.array(list(index), dtype=np.int64).reshape(-1, 2)
        inc = np.array(incidence, dtype=np.int64).reshape(-1, 2)
        self.inc_pair, self.inc_choice = inc[:, 0], inc[:, 1]
        self.choice_kind = np.array(choice_kind, dtype=np.int64)
        self.choice_score: np.ndarray | None = None  # each pairing's summed prior
        if prior is not None:
            actions = pairs_to_actions(self.pairs[:, 0], self.pairs[:, 1], board.size)
            self.choice_score = np.bincount(
                self.inc_choice, weights=np.asarray(prior, np.float64)[actions][self.inc_pair],
                minlength=len(choice_kind),
            )  # fmt: skip
        self.n_kinds = len(kinds)
        self.pair_kind = np.zeros(len(self.pairs), dtype=np.int64)
        self.pair_kind[self.inc_pair] = self.choice_kind[self.inc_choice]
        self.possible = np.ones(len(choice_kind), dtype=bool)  # facts before the search
        for pair in banned:
            if pair in index:
                self.possible[self._holds(index[pair])] = False
        for t, u in (fixed or {}).items():
            if (t, u) in index:  # the kind's other pairings are out
                same = self.choice_kind == self.pair_kind[index[(t, u)]]
                self.possible[same & ~self._holds(index[(t, u)])] = False
        self.clauses: list[np.ndarray] = []  # each: the choices, one of which must be made
        self._seen: set[bytes] = set()
        self._packed: tuple[int, np.ndarray, np.ndarray] | None = None
        self.activity = np.zeros(self.n_kinds)
        self._bump = 1.0
        self.nodes = 0

    def _holds(self, pair: int) -> np.ndarray:
        """(choices,) bool: the pairings that hold ``pair``."""
        out = np.zeros(len(self.choice_kind), dtype=bool)
        out[self.inc_choice[self.inc_pair == pair]] = True
        return out

    def allowed(self, choices: np.ndarray) -> np.ndarray:
        """(pairs,) bool: the pairs some still-possible pairing holds."""
        return (
            np.bincount(self.inc_pair, weights=choices[self.inc_choice], minlength=len(self.pairs))
            > 0
        )

    # -- the relaxation ----------------------------------------------------------------

    def _connect(self, board: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Whether each pair ``idx`` connects on ``board``."""
        return connects_flat(board, self.pairs[idx, 0], self.pairs[idx, 1])

    def relax(
        self, choices: np.ndarray, parent: _Run | None = None, start: np.ndarray | None = None
    ) -> _Run:
        """The relaxation with these pairings possible: from the board, from a locked
        ``start`` board (not recorded), or replaying ``parent`` (whose choices include these)."""
        keep = self.allowed(choices)
        rounds: list[tuple[np.ndarray, np.ndarray]] = []
        freed = [np.zeros((0, 3), dtype=np.int64)]
        first = 0
        if parent is not None:
            first = self._diverges(parent, keep)
            if first < 0:
                return parent
            rounds = parent.rounds[:first]
            freed = [parent.freed[parent.freed[:, 2] < first]]
            board, cand = parent.rounds[first][0].copy(), parent.rounds[first][1]
            cand = cand[keep[cand]]
        else:
            board = (self.board if start is None else start).copy()
            cand = np.flatnonzero(keep)
        flat = board.reshape(-1)
        cand = cand[(flat[self.pairs[cand]] != EMPTY).any(axis=1)]
        step = first
        while (flat != EMPTY).any():
            if start is None:
                rounds.append((board.copy(), cand))
            ok = self._connect(board, cand)
            if not ok.any():
                return _Run(False, board, rounds, np.concatenate(freed))
            fired = cand[ok]
            for end in (0, 1):
                tiles = self.pairs[fired, end]
                here = flat[tiles] != EMPTY
                freed.append(np.stack([fired[here], tiles[here], np.full(here.sum(), step)], 1))
            flat[self.pairs[fired].ravel()] = EMPTY
            cand = cand[~ok]
            cand = cand[(flat[self.pairs[cand]] != EMPTY).any(axis=1)]
            step += 1
        return _Run(True, board, rounds, np.concatenate(freed))

    def _diverges(self, parent: _Run, keep: np.ndarray) -> int:
        """The first round of ``parent`` where a tile left only through pairs no longer
        allowed (-1: none, the run is the same)."""
        pair, tile, step = parent.freed.T
        still = np.bincount(tile[keep[pair]], minlength=self.board.size)
        lost = ~keep[pair] & (still[tile] == 0)
        return int(step[lost].min()) if lost.any() else -1

    # -- clauses -----------------------------------------------------------------------

    def _explain(self, choices: np.ndarray, locked: np.ndarray) -> np.ndarray:
        """The clause of a locked board: the pairings holding a left-out pair that would
        connect there, one end on the board (see the module doc)."""
        flat = locked.reshape(-1)
        out = np.flatnonzero(~self.allowed(choices) & (flat[self.pairs] != EMPTY).any(axis=1))
        hit = out[self._connect(locked, out)] if len(out) else out
        clause = np.unique(self.inc_choice[np.isin(self.inc_pair, hit)])
        return clause[self.possible[clause]]

    def _shorten(self, clause: np.ndarray, locked: np.ndarray) -> np.ndarray:
        """Allow each pairing of ``clause`` back in turn; keep it out only if the locked
        board then unlocks completely."""
        for choice in clause.tolist():
            if choice not in clause:
                continue
            trial = self.possible.copy()
            trial[clause[clause != choice]] = False
            run = self.relax(trial, start=locked)
            if not run.ok:
                locked = run.board
                clause = self._explain(trial, locked)
        return clause

    def _learn(self, choices: np.ndarray, run: _Run) -> None:
        clause = self._shorten(self._explain(choices, run.board), run.board)
        if clause.tobytes() in self._seen:
            return
        self._seen.add(clause.tobytes())
        self.clauses.append(clause)
        np.add.at(self.activity, self.choice_kind[clause], self._bump)
        self._bump *= ACTIVITY_GROWTH

    def _propagate(self, choices: np.ndarray) -> bool:
        """Apply the clauses to ``choices`` (in place) until nothing changes; False when one
        can no longer be met."""
        if not self.clauses:
            return True
        if self._packed is None or self._packed[0] != len(self.clauses):
            owner = np.repeat(np.arange(len(self.clauses)), [len(c) for c in self.clauses])
            self._packed = (len(self.clauses), np.concatenate(self.clauses), owner)
        n, lits, owner = self._packed
        kind = self.choice_kind[lits]
        while True:
            live = choices[lits]
            if (np.bincount(owner[live], minlength=n) == 0).any():
                return False
            lo = np.full(n, self.n_kinds)
            hi = np.full(n, -1)
            np.minimum.at(lo, owner[live], kind[live])
            np.maximum.at(hi, owner[live], kind[live])
            unit = lo == hi  # every possible pairing of the clause is one kind's
            if not unit.any():
                return True
            # a pairing of a restricted kind survives when every unit clause on it holds it
            needed = np.bincount(lo[unit], minlength=self.n_kinds)
            held = np.bincount(lits[live & unit[owner]], minlength=len(choices))
            survive = held >= needed[self.choice_kind]
            if not (choices & ~survive).any():
                return True
            choices &= survive

    # -- the search --------------------------------------------------------------------

    def _branch(
        self, run: _Run, choices: np.ndarray, open_kinds: np.ndarray, count: np.ndarray
    ) -> tuple[int, np.ndarray]:
        """The kind to decide and its pairings in the order to try.

        The kind most named in clauses; among equals, the one whose tiles left the relaxed
        board first, then the one with fewest pairings left. Its pairings go earliest
        first: by the last round one of their pairs first freed a tile; with a prior, best
        summed score first (earliest first among equals).
        """
        pair, _, step = run.freed.T
        fired = np.full(len(self.pairs), np.inf)  # the round each pair first freed a tile
        np.minimum.at(fired, pair, step)
        kind_first = np.full(self.n_kinds, np.inf)
        np.minimum.at(kind_first, self.pair_kind, fired)
        rank = np.lexsort((count[open_kinds], kind_first[open_kinds], -self.activity[open_kinds]))
        kind = int(open_kinds[rank[0]])
        options = np.flatnonzero(choices & (self.choice_kind == kind))
        latest = np.zeros(len(self.choice_kind))
        np.maximum.at(latest, self.inc_choice, fired[self.inc_pair])
        options = options[np.argsort(latest[options], kind="stable")]
        if self.choice_score is not None:
            options = options[np.argsort(-self.choice_score[options], kind="stable")]
        return kind, options

    def solve(
        self, deadline: float = float("inf"), node_limit: int | None = None
    ) -> list[tuple[int, int]] | None:
        """Removals that clear the board, or None when none can (a proof). Raises
        :class:`OutOfBudget` past ``deadline`` or ``node_limit`` nodes."""

        def search(choices: np.ndarray, parent: _Run | None) -> np.ndarray | None:
            self.nodes += 1
            if time.perf_counter() > deadline or (
                node_limit is not None and self.nodes > node_limit
            ):
                raise OutOfBudget
            if not self._propagate(choices):
                return None
            run = self.relax(choices, parent)
            if not run.ok:
                self._learn(choices, run)
                return None
            count = np.bincount(self.choice_kind[choices], minlength=self.n_kinds)
            open_kinds = np.flatnonzero(count > 1)
            if not len(open_kinds):
                # every pairing chosen, and the game clears: the partners, round by round
                # (a run replayed from a parent also names pairs since ruled out)
                pair, _, step = run.freed[self.allowed(choices)[run.freed[:, 0]]].T
                return np.unique(np.stack([step, pair], 1), axis=0)[:, 1]
            kind, options = self._branch(run, choices, open_kinds, count)
            for choice in options.tolist():
                child = choices & (self.choice_kind != kind)
                child[choice] = True
                found = search(child, run)
                if found is not None:
                    return found
                choices[choice] = False
                if not self._propagate(choices):
                    return None
            return None

        found = search(self.possible.copy(), None)
        if found is None:
            return None
        return [(int(i), int(j)) for i, j in self.pairs[found]]
