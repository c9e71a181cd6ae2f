"""Procedural Sokoban levels, solvable by construction.

1. *Room*: a random walk carves floor out of a walled rectangle, stamping small patterns
   (as gym-sokoban does), so the room is connected and has corridors and open areas.
2. *Reverse play*: boxes start on the goals and the player *pulls* them away. Every pull is
   the exact reverse of a push, so reading the reverse game backwards gives a solution: the
   generator returns it in LURD as a certificate, and the tests replay it through the env.
3. The position along the reverse game that scores best (boxes off goals times how far
   they travelled) becomes the level, and the player is dropped on a random reachable cell.

All randomness comes from the ``numpy.random.Generator`` passed to :meth:`generate`, drawn in
fixed blocks, so the same seed gives the same level. The hot loops are plain Python on flat
indices, with a bounded number of retries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grid_envs.core import checks
from grid_envs.sokoban.rules import LURD
from grid_envs.sokoban.state import Level

# Patterns stamped by the carving walk, as offsets around its position (each holds the centre,
# so the carved floor stays connected).
_PATTERNS = (
    ((0, -1), (0, 0), (0, 1)),
    ((-1, 0), (0, 0), (1, 0)),
    ((0, -1), (0, 0), (1, 0)),
    ((0, -1), (0, 0), (1, -1), (1, 0)),
    ((0, 0), (0, 1), (1, 0)),
)


@dataclass(frozen=True)
class GeneratedLevel:
    level: Level
    solution: str  # a LURD solution found by construction (not necessarily the shortest)
    pushes: int  # pushes in that solution: an upper bound on the optimal push count
    optimal_pushes: int | None = None  # proved by the solver when min_pushes is asked for


class _Stream:
    """Uniform numbers drawn from a numpy Generator in blocks (fast and reproducible)."""

    def __init__(self, rng: np.random.Generator, block: int = 1024) -> None:
        self._rng, self._block = rng, block
        self._buf: list[float] = []
        self._i = 0

    def uniform(self) -> float:
        if self._i >= len(self._buf):
            self._buf = self._rng.random(self._block).tolist()
            self._i = 0
        self._i += 1
        return self._buf[self._i - 1]

    def below(self, n: int) -> int:
        return min(int(self.uniform() * n), n - 1)


class SokobanGenerator:
    """Random solvable levels of a given size and number of boxes.

    Args:
        rows, cols: the room's size, outer walls included (at least 5x5).
        num_boxes: boxes (and goals) per level.
        pulls: reverse pulls per reverse game; more pulls give harder levels on average.
            Defaults to ``8 * num_boxes + rows + cols``.
        floor_fraction: share of the inner rectangle carved into floor.
        plays_per_room: reverse games played per room; the best scoring one is kept.
        min_pushes: keep only levels whose optimal solution (proved by the solver's
            optimal mode) needs at least this many pushes; 0 skips the check.
        max_attempts: rooms tried before giving up with ``checks.NoLevelFound`` (a
            ``RuntimeError``).
    """

    def __init__(
        self,
        rows: int = 10,
        cols: int = 10,
        num_boxes: int = 4,
        pulls: int | None = None,
        floor_fraction: float = 0.55,
        plays_per_room: int = 3,
        min_pushes: int = 0,
        max_attempts: int = 100,
    ) -> None:
        rows, cols = checks.side("rows", rows, 5), checks.side("cols", cols, 5)
        interior = (rows - 2) * (cols - 2)
        num_boxes = checks.integer("num_boxes", num_boxes, 1, interior // 4)
        self.rows, self.cols, self.num_boxes = rows, cols, num_boxes
        self.pulls = (
            checks.integer("pulls", pulls, 1) if pulls is not None
            else 8 * num_boxes + rows + cols
        )  # fmt: skip
        self.floor_fraction = checks.real("floor_fraction", floor_fraction, 0.2, 1.0)
        self.plays_per_room = checks.integer("plays_per_room", plays_per_room, 1)
        self.min_pushes = checks.integer("min_pushes", min_pushes, 0)
        self.max_attempts = checks.integer("max_attempts", max_attempts, 1)
        n = rows * cols
        self._offsets = (-cols, cols, -1, 1)
        self._rc = [divmod(i, cols) for i in range(n)]

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def settings(self) -> tuple[int | float, ...]:
        """Everything that decides which level a random stream gives."""
        return (self.rows, self.cols, self.num_boxes, self.pulls, self.floor_fraction,
                self.plays_per_room, self.min_pushes, self.max_attempts)  # fmt: skip

    def generate(self, rng: np.random.Generator) -> GeneratedLevel:
        stream = _Stream(rng)
        for _ in range(self.max_attempts):
            floor = self._carve(stream)
            result = self._reverse_play(floor, stream)
            if result is None:
                continue
            if not self.min_pushes:
                return result
            if result.pushes < self.min_pushes:
                continue  # the certificate is an upper bound: already too easy
            from grid_envs.sokoban.solver import solve  # the solver builds on this module's kin

            proof = solve(result.level, mode="optimal", max_seconds=None, node_limit=20_000)
            if proof.solved and proof.pushes >= self.min_pushes:
                return GeneratedLevel(result.level, result.solution, result.pushes, proof.pushes)
        raise checks.NoLevelFound(
            f"no level with {self.num_boxes} boxes"
            + (f" and at least {self.min_pushes} pushes" if self.min_pushes else "")
            + f" found in {self.max_attempts} rooms of {self.rows}x{self.cols}; "
            "use fewer boxes, a larger room or a smaller min_pushes"
        )

    # ----------------------------------------------------------------- room
    def _carve(self, s: _Stream) -> list[bool]:
        rows, cols = self.rows, self.cols
        floor = [False] * (rows * cols)
        r, c = 1 + s.below(rows - 2), 1 + s.below(cols - 2)
        d = s.below(4)
        target = int(self.floor_fraction * (rows - 2) * (cols - 2))
        carved = 0
        for _ in range(20 * (rows + cols)):
            if carved >= target:
                break
            if s.uniform() < 0.35:
                d = s.below(4)
            dr, dc = ((-1, 0), (1, 0), (0, -1), (0, 1))[d]
            r = min(max(r + dr, 1), rows - 2)
            c = min(max(c + dc, 1), cols - 2)
            for pr, pc in _PATTERNS[s.below(len(_PATTERNS))]:
                rr, cc = r + pr, c + pc
                if 0 < rr < rows - 1 and 0 < cc < cols - 1 and not floor[rr * cols + cc]:
                    floor[rr * cols + cc] = True
                    carved += 1
        return floor

    # --------------------------------------------------------- reverse play
    def _adjacency(self, floor: list[bool]) -> list[tuple[tuple[int, int], ...]]:
        """For each floor cell, its floor neighbours as (cell, direction) pairs."""
        offsets = self._offsets
        return [
            tuple((i + offsets[d], d) for d in range(4) if f and floor[i + offsets[d]])
            for i, f in enumerate(floor)
        ]

    def _bfs(
        self, adj: list[tuple[tuple[int, int], ...]], box: list[bool], start: int
    ) -> list[int]:
        """Parent direction of each reached cell (-2 unreached, -1 start)."""
        parent = [-2] * len(adj)
        parent[start] = -1
        frontier = [start]
        while frontier:
            nxt = []
            for i in frontier:
                for j, d in adj[i]:
                    if parent[j] == -2 and not box[j]:
                        parent[j] = d
                        nxt.append(j)
            frontier = nxt
        return parent

    def _walk(self, parent: list[int], target: int) -> list[int]:
        """Directions of the walk from the BFS start to ``target``."""
        dirs = []
        i = target
        while parent[i] >= 0:
            d = parent[i]
            dirs.append(d)
            i -= self._offsets[d]
        return dirs[::-1]

    def _reverse_play(self, floor: list[bool], s: _Stream) -> GeneratedLevel | None:
        """The best of ``plays_per_room`` reverse games in this room, or None."""
        cells = [i for i, f in enumerate(floor) if f]
        if len(cells) < 2 * self.num_boxes + 2:
            return None
        size = len(floor)
        adj = self._adjacency(floor)
        pullable = [  # goal cells a box can be pulled off
            i
            for i in cells
            if any(
                0 <= i + 2 * o < size and floor[i + o] and floor[i + 2 * o] for o in self._offsets
            )
        ]
        if len(pullable) < self.num_boxes:
            return None
        best: tuple[int, list[int], list[tuple[int, bool]], list[int], int] | None = None
        for _ in range(self.plays_per_room):
            goals: list[int] = []
            while len(goals) < self.num_boxes:
                g = pullable[s.below(len(pullable))]
                if g not in goals:
                    goals.append(g)
            rest = [i for i in cells if i not in goals]
            play = self._one_game(floor, adj, goals, rest[s.below(len(rest))], s)
            if play[0] > 0 and (best is None or play[0] > best[0]):
                best = (play[0], goals, *play[1:])
        if best is None:
            return None
        _, goals, moves, final_pos, final_player = best
        box = [False] * size
        for b in final_pos:
            box[b] = True
        parent = self._bfs(adj, box, final_player)
        reach = [i for i, p in enumerate(parent) if p != -2]
        start = reach[s.below(len(reach))]
        moves = moves + [(w, False) for w in self._walk(parent, start)]
        return self._finish(floor, goals, final_pos, start, moves)

    def _one_game(
        self,
        floor: list[bool],
        adj: list[tuple[tuple[int, int], ...]],
        goals: list[int],
        player: int,
        s: _Stream,
    ) -> tuple[int, list[tuple[int, bool]], list[int], int]:
        """Pull boxes away from ``goals``; return the best position seen along the way.

        The result is (score, reverse moves up to that position, box cells, player cell),
        where a reverse move is (direction, was a pull).
        """
        offsets = self._offsets
        box = [False] * len(floor)
        for g in goals:
            box[g] = True
        pos = list(goals)  # pos[k]: where box k is now; it started on goals[k]
        goal_set = set(goals)
        moves: list[tuple[int, bool]] = []
        best: tuple[int, int, list[int], int] = (0, 0, list(pos), player)
        last: tuple[int, int] | None = None  # (box, direction) of the previous pull
        # Score: boxes off goals x distance travelled from their goals x (box switches + 1);
        # switching between boxes makes a level harder than pushing one box far.
        off = travel = switches = 0
        for _ in range(self.pulls):
            parent = self._bfs(adj, box, player)
            options = []
            for k, b in enumerate(pos):
                for d in range(4):
                    p = b + offsets[d]
                    q = p + offsets[d]
                    if parent[p] != -2 and floor[q] and not box[q]:
                        if last is not None and last[0] == k and last[1] == d ^ 1:
                            continue  # pulling it straight back undoes the last pull
                        options.append((k, d))
            if not options:
                break
            if last in options and s.uniform() < 0.5:
                k, d = last
            else:
                k, d = options[s.below(len(options))]
            if last is not None and k != last[0]:
                switches += 1
            b = pos[k]
            p = b + offsets[d]
            moves.extend((w, False) for w in self._walk(parent, p))
            moves.append((d, True))
            box[b], box[p] = False, True
            pos[k], player, last = p, p + offsets[d], (k, d)
            off += (b in goal_set) - (p in goal_set)
            travel += self._dist(p, goals[k]) - self._dist(b, goals[k])
            score = off * travel * (switches + 1)
            if score > best[0]:
                best = (score, len(moves), list(pos), player)
        score, n_moves, final_pos, final_player = best
        return score, moves[:n_moves], final_pos, final_player

    def _dist(self, a: int, b: int) -> int:
        (ra, ca), (rb, cb) = self._rc[a], self._rc[b]
        return abs(ra - rb) + abs(ca - cb)

    def _finish(
        self, floor: list[bool], goals: list[int], boxes: list[int], player: int,
        reverse_moves: list[tuple[int, bool]],
    ) -> GeneratedLevel:  # fmt: skip
        shape = (self.rows, self.cols)
        floor_a = np.array(floor, dtype=bool).reshape(shape)
        goals_a = np.zeros(self.rows * self.cols, dtype=bool)
        goals_a[goals] = True
        boxes_a = np.zeros(self.rows * self.cols, dtype=bool)
        boxes_a[boxes] = True
        # Forward solution: the reverse game read backwards, each step in the other direction.
        forward = [(d ^ 1, pull) for d, pull in reversed(reverse_moves)]
        forward = forward[: self._solved_after(forward, set(boxes), set(goals), player)]
        solution = "".join(LURD[d].upper() if push else LURD[d] for d, push in forward)
        level = Level(
            walls=~floor_a,
            floor=floor_a,
            goals=goals_a.reshape(shape),
            boxes=boxes_a.reshape(shape),
            player=self._rc[player],
        )
        return GeneratedLevel(level, solution, sum(1 for _, push in forward if push))

    def _solved_after(
        self, forward: list[tuple[int, bool]], boxes: set[int], goals: set[int], player: int
    ) -> int:
        """Length of the shortest prefix that covers every goal.

        Boxes are interchangeable, so the forward game can cover all goals before the
        reverse game's first pull is undone; the env ends the episode there.
        """
        for i, (d, push) in enumerate(forward):
            player += self._offsets[d]
            if push:
                boxes.discard(player)
                boxes.add(player + self._offsets[d])
                if boxes == goals:
                    return i + 1
        return len(forward)
