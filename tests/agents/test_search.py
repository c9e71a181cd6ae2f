"""The search agent: legal moves, same seed same moves, no peeking at what is hidden, and a
search on its own (uniform prior) that finds what a brute-force check finds."""

from __future__ import annotations

import copy
import zlib
from functools import cache
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from agents import evaluate
from agents.search import SearchAgent, SearchConfig, UniformEvaluator
from grid_envs.minesweeper import rules as mine_rules
from grid_envs.minesweeper.belief import MineBelief
from grid_envs.pikachu import rules as pikachu_rules
from tests.conftest import CORNER, make_level_env

# one small board of each game, and the settings that keep a test quick
BOARDS: dict[str, dict[str, Any]] = {
    "GridGames/Sokoban-Small-v0": {},
    "GridGames/Minesweeper-v0": {"rows": 5, "cols": 5, "mines": 4},
    "GridGames/Knight-v0": {"rows": 5, "cols": 5},
    "GridGames/Pikachu-Small-v0": {},
    "GridGames/Pikachu-Shuffle-v0": {"rows": 4, "cols": 4, "kinds": 4},
    "GridGames/Lines98-Small-v0": {},
}


def play(env_id: str, kwargs: dict[str, Any], seed: int, steps: int, **settings: Any) -> list[int]:
    """The actions a uniform-prior search plays from reset(seed); every one legal."""
    env = gym.make(env_id, **kwargs)
    obs, info = env.reset(seed=seed)
    agent = SearchAgent(UniformEvaluator(), env, seed=seed, **settings)
    played = []
    for _ in range(steps):
        action = int(agent.predict(obs)[0])
        assert info["action_mask"][action], f"{env_id}: the search chose a masked action"
        played.append(action)
        obs, _, terminated, truncated, info = env.step(action)
        assert not info["illegal_action"]
        if terminated or truncated:
            break
    return played


DETERMINISTIC = [i for i, kw in BOARDS.items() if gym.make(i, **kw).unwrapped.deterministic]


@pytest.mark.parametrize(
    ("env_id", "variant"),
    [(i, v) for i in sorted(BOARDS) for v in ("gumbel", "puct")]
    + [(i, v) for i in DETERMINISTIC for v in ("levin", "lds")]
    + [("GridGames/Pikachu-v0", "exact"), ("GridGames/Lines98-Small-v0", "ordered")],
)
def test_search_plays_legal_moves_and_same_seed_same_moves(env_id: str, variant: str) -> None:
    kwargs = BOARDS.get(env_id, {})
    first = play(env_id, kwargs, 3, 12, simulations=6, variant=variant)
    again = play(env_id, kwargs, 3, 12, simulations=6, variant=variant)
    assert first and first == again


def test_levin_search_needs_a_deterministic_game() -> None:
    env = gym.make("GridGames/Lines98-Small-v0")
    env.reset(seed=0)
    for variant in ("levin", "lds", "exact"):
        agent = SearchAgent(UniformEvaluator(), env, seed=0, variant=variant)
        with pytest.raises(ValueError, match="deterministic game"):
            agent.act(env.unwrapped, env.unwrapped.observe())


@pytest.mark.parametrize(
    ("settings", "refusal"),
    [({"variant": "exact"}, "KnightEnv has no exact solver"),
     ({"variant": "ordered"}, "KnightEnv has no search a prior can propose moves to"),
     ({"leaf_value": "algorithm"}, "KnightEnv has no judgement of positions")],
)  # fmt: skip
def test_a_search_needs_a_game_that_declares_what_it_asks_for(
    settings: dict[str, str], refusal: str
) -> None:
    env = gym.make("GridGames/Knight-v0", rows=5, cols=5)
    env.reset(seed=0)
    agent = SearchAgent(UniformEvaluator(), env, seed=0, **settings)
    with pytest.raises(ValueError, match=refusal):
        agent.act(env.unwrapped, env.unwrapped.observe())


def test_the_exact_search_finds_its_game_for_a_subclass_defined_elsewhere() -> None:
    from grid_envs.pikachu.env import PikachuEnv

    class MyPikachu(PikachuEnv):  # defined in the tests, not in grid_envs
        pass

    env = MyPikachu(rows=4, cols=4, kinds=4, on_stuck="end")
    obs, _ = env.reset(seed=0)
    agent = SearchAgent(UniformEvaluator(), env, seed=0, variant="exact", simulations=100)
    assert env.action_masks()[agent.act(env, obs)]


def test_levin_search_solves_a_level_and_goes_on_from_its_last_search() -> None:
    """Each move's budget too small to finish alone: the searches go on from one another
    (the frontier under the move played) until a line wins, then it is played out."""
    env = make_level_env(CORNER, time_limit=60)
    obs, _ = env.reset(seed=0)
    agent = SearchAgent(UniformEvaluator(), env, seed=0, simulations=80, variant="levin")
    searched, done = [], False
    while not done:
        result = agent.search(env.unwrapped, obs)
        searched.append(result.simulations)
        obs, _, terminated, truncated, info = env.step(result.action)
        done = terminated or truncated
    assert info["is_success"]
    assert searched[0] == 80 and searched[-1] == 0  # the end of the line needs no search
    assert sum(1 for n in searched if n) >= 2


def test_the_search_leaves_the_env_it_plays_untouched() -> None:
    env = gym.make("GridGames/Lines98-Small-v0")
    env.reset(seed=5)
    before = env.unwrapped.snapshot()
    SearchAgent(UniformEvaluator(), env, seed=0, simulations=16).act(
        env.unwrapped, env.unwrapped.observe()
    )
    after = env.unwrapped.snapshot()
    assert after.rng_state == before.rng_state and after.steps == before.steps
    assert np.array_equal(after.game.board, before.game.board)
    assert after.game.announced == before.game.announced


class HashedValues(UniformEvaluator):
    """A uniform prior and a value that is an arbitrary function of the observation, so
    that a search's choice hangs on exactly which positions its simulations reach."""

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Any:
        logits, _ = super().__call__(observations, masks)
        values = [zlib.crc32(o.tobytes()) / 2**32 for o in observations]
        return logits, np.asarray(values, dtype=np.float32)


def searched_move(env: Any, seed: int, simulations: int = 24) -> int:
    agent = SearchAgent(HashedValues(), env, seed=seed, simulations=simulations)
    return agent.act(env, env.observe())


def test_lines98_search_never_reads_the_spawns_to_come() -> None:
    """Two envs show the same board and announced balls, but their generators would draw
    different spawns: the same search seed gives the same move in both, and the searches
    do differ by seed (so the futures they draw do matter)."""
    a = gym.make("GridGames/Lines98-Small-v0").unwrapped
    a.reset(seed=11)
    for _ in range(4):  # a few moves in: announced balls on the board, spawns to come
        a.step(int(np.flatnonzero(a.action_masks())[0]))
    b = gym.make("GridGames/Lines98-Small-v0").unwrapped
    b.reset(seed=999)
    b.restore(a.snapshot())
    b.np_random = np.random.default_rng(12345)  # other draws to come, the same view
    assert np.array_equal(a.observe(), b.observe())
    assert a.np_random.random() != copy.deepcopy(b.np_random).random()
    moves_a = [searched_move(a, seed) for seed in range(4)]
    moves_b = [searched_move(b, seed) for seed in range(4)]
    assert moves_a == moves_b
    assert len(set(moves_a)) > 1


def test_minesweeper_search_never_reads_the_mines() -> None:
    """Two boards show the same numbers but hide the mines in different places: the same
    search seed gives the same move in both."""
    a = gym.make("GridGames/Minesweeper-v0", rows=6, cols=6, mines=6).unwrapped
    a.reset(seed=2)
    a.step(0)
    assert not a.episode_over
    s = a.state
    view = np.where(s.revealed, s.counts.astype(np.int16), -1)
    others = [MineBelief(view, 6).sample(np.random.default_rng(k)) for k in range(50)]
    other = next(m for m in others if not np.array_equal(m, s.mines))
    b = copy.deepcopy(a)
    b.state.mines = other
    b.state.counts = mine_rules.neighbour_counts(other)
    b.state.runs = b.state.zero_bits = None
    assert np.array_equal(a.observe(), b.observe())
    assert [searched_move(a, seed) for seed in range(4)] == [
        searched_move(b, seed) for seed in range(4)
    ]


def test_mine_belief_draws_every_fitting_layout_alike() -> None:
    """A revealed 1 with its 8 neighbours hidden and a column of free cells beside them,
    2 mines: one in the ring (8 ways) and one in the column (3 ways), each alike; a view
    no layout fits is refused."""
    view = -np.ones((3, 4), dtype=np.int64)
    view[1, 1] = 1
    belief = MineBelief(view, 2)
    rng = np.random.default_rng(0)
    draws = np.stack([belief.sample(rng) for _ in range(6000)])
    assert (draws.reshape(6000, -1).sum(axis=1) == 2).all() and not draws[:, 1, 1].any()
    assert (mine_rules.neighbour_counts(draws)[:, 1, 1] == 1).all()
    ring = draws[:, :, :3].mean(axis=0)
    ring[1, 1] = 1 / 8
    assert np.allclose(ring, 1 / 8, atol=0.02)
    assert np.allclose(draws[:, :, 3].mean(axis=0), 1 / 3, atol=0.03)
    with pytest.raises(ValueError, match="no mine layout"):
        MineBelief(view[:, :3], 2)  # every hidden cell touches the 1: two mines cannot fit


@pytest.mark.parametrize("seed", [1, 5, 6])  # deals the sure moves do not win outright
def test_mine_belief_matches_the_solvers_exact_chances(seed: int) -> None:
    """Mid-game views of real boards: how often the belief puts a mine on each hidden
    cell matches the solver's exact probabilities, and every layout shows the view."""
    from agents.games.minesweeper import view_from_observation
    from grid_envs.minesweeper.solver import MinesweeperSolver

    env = gym.make("GridGames/Minesweeper-v0").unwrapped
    env.reset(seed=seed)
    solver = MinesweeperSolver(9, 9, 10)
    env.step(0)
    while True:  # sure moves up to the first guess: a view worth believing
        view = view_from_observation(env.observe())
        safe, _ = solver.deduce(view.ravel().tolist())
        if not safe:
            break
        env.step(min(safe))
        assert not env.episode_over
    exact = solver.probabilities(view.ravel().tolist())
    belief = MineBelief(view, 10)
    rng = np.random.default_rng(seed)
    draws = np.stack([belief.sample(rng) for _ in range(4000)]).reshape(4000, -1)
    shown = mine_rules.neighbour_counts(draws.reshape(4000, 9, 9)).reshape(4000, -1)
    revealed = view.ravel() >= 0
    assert (shown[:, revealed] == view.ravel()[revealed]).all()
    for cell, p in exact.items():
        assert abs(draws[:, cell].mean() - p) < 0.035, (cell, p)


def brute_force_clears(board: np.ndarray) -> bool:
    """Whether some order of removals clears a Pikachu board (every order tried)."""

    @cache
    def clears(key: bytes) -> bool:
        b = np.frombuffer(key, dtype=np.int16).reshape(board.shape).copy()
        if not b.any():
            return True
        mask = pikachu_rules.legal_mask(b)
        for action in np.flatnonzero(mask):
            i, j = pikachu_rules.action_to_pair(int(action), b.size)
            after = b.copy().ravel()
            after[[i, j]] = 0
            if clears(after.tobytes()):
                return True
        return False

    return clears(board.astype(np.int16).tobytes())


PIKACHU_BOARD = [
    [1, 2, 3, 1],
    [4, 5, 2, 6],
    [6, 3, 5, 4],
    [2, 1, 4, 3],
    [5, 6, 1, 2],
    [3, 4, 6, 5],
]


@pytest.mark.parametrize(
    ("variant", "simulations"), [("gumbel", 200), ("lds", 300), ("exact", 100)]
)
def test_a_search_on_its_own_clears_a_board_brute_force_clears(
    variant: str, simulations: int
) -> None:
    board = np.array(PIKACHU_BOARD)
    assert brute_force_clears(board)
    env = gym.make("GridGames/Pikachu-Small-v0", levels=board, rows=6, cols=4, on_stuck="end")
    agent = SearchAgent(UniformEvaluator(), simulations=simulations, variant=variant)
    assert evaluate(env, agent, episodes=3, seed=0).win_rate == 1.0


class ExactPikachu(UniformEvaluator):
    """A uniform prior and the exact value: 1 where some order of removals clears the
    board in view, -1 where none does."""

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Any:
        logits, _ = super().__call__(observations, masks)
        boards = (observations * np.arange(1, observations.shape[1] + 1)[None, :, None, None]).sum(
            1
        )
        values = np.array([1.0 if brute_force_clears(b) else -1.0 for b in boards])
        return logits, values


def test_the_exact_search_plays_its_clear_and_stops_searching_a_lost_deal() -> None:
    """A clear is found at the first move and played out with no more search; on a deal
    the solver proves lost, the prior's moves follow without searching again."""
    from grid_envs.pikachu.rules import random_board

    def searched(board: np.ndarray) -> tuple[list[int], bool]:
        env = gym.make("GridGames/Pikachu-v0", levels=board)
        obs, _ = env.reset(seed=0)
        agent = SearchAgent(UniformEvaluator(), env, seed=0, variant="exact", simulations=500)
        nodes, done, info = [], False, {}
        while not done:
            result = agent.search(env.unwrapped, obs)
            nodes.append(result.simulations)
            obs, _, terminated, truncated, info = env.step(result.action)
            done = terminated or truncated
        return nodes, bool(info["is_success"])

    clearable = random_board(9, 16, 36, np.random.default_rng(1))  # benchmark deal 1
    nodes, won = searched(clearable)
    assert won and nodes[0] > 0 and not any(nodes[1:])
    lost = random_board(9, 16, 36, np.random.default_rng(4))  # proved lost at once
    nodes, won = searched(lost)
    assert not won and nodes[0] > 0 and not any(nodes[1:]) and len(nodes) > 1


def test_exact_values_lead_a_small_search_to_a_clear() -> None:
    board = np.array(PIKACHU_BOARD)
    env = gym.make("GridGames/Pikachu-Small-v0", levels=board, rows=6, cols=4, on_stuck="end")
    agent = SearchAgent(ExactPikachu(), simulations=4)
    assert evaluate(env, agent, episodes=2, seed=0).win_rate == 1.0


def brute_force_pushes(xsb: str, limit: int) -> int | None:
    """The fewest steps that solve a level, by breadth-first search over the env's own
    snapshots (None: not within ``limit``)."""
    env = make_level_env(xsb, time_limit=None).unwrapped
    env.reset(seed=0)
    frontier = [env.snapshot()]
    seen = {env.observe().tobytes()}
    for depth in range(1, limit + 1):
        nxt = []
        for snap in frontier:
            for action in np.flatnonzero(snap.mask):
                env.restore(snap)
                obs, _, terminated, _, info = env.step(int(action))
                if info["is_success"]:
                    return depth
                key = obs.tobytes()
                if not terminated and key not in seen:
                    seen.add(key)
                    nxt.append(env.snapshot())
        frontier = nxt
    return None


def test_a_search_on_its_own_solves_a_level_brute_force_solves() -> None:
    steps = brute_force_pushes(CORNER, 40)
    assert steps is not None
    env = make_level_env(CORNER, time_limit=60)
    agent = SearchAgent(UniformEvaluator(), simulations=300)
    result = evaluate(env, agent, episodes=2, seed=0)
    assert result.win_rate == 1.0
    assert min(result.lengths) >= steps


def test_a_winning_line_is_played_out() -> None:
    """Once a simulation wins a deterministic game, the moves after come from that line,
    with no search."""
    env = make_level_env(CORNER, time_limit=60)
    obs, _ = env.reset(seed=0)
    agent = SearchAgent(UniformEvaluator(), env, seed=0, simulations=300)
    lines = []
    done = False
    while not done:
        result = agent.search(env.unwrapped, obs)
        lines.append(result.from_line)
        obs, _, terminated, truncated, info = env.step(result.action)
        done = terminated or truncated
    assert info["is_success"] and lines[-1] and not lines[0]


def test_search_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="variant"):
        SearchConfig(variant="alphabeta")
    with pytest.raises(ValueError, match="simulations"):
        SearchConfig(simulations=-1)
    with pytest.raises(ValueError, match="max_considered"):
        SearchConfig(max_considered=0)
    with pytest.raises(ValueError, match="leaf_value"):
        SearchConfig(leaf_value="rollouts")


def lines98_midgame(seed: int, moves: int = 6) -> Any:
    """A Lines98-v0 env some legal moves in: balls of several colours, balls announced."""
    env = gym.make("GridGames/Lines98-v0").unwrapped
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    return env


def test_lines98_leaf_value_is_the_look_aheads_judgement_of_the_position_shown() -> None:
    from agents.games.lines98 import JUDGE_POINTS, LookaheadAgent, judged_values

    judge = LookaheadAgent()
    for seed in range(3):
        env = lines98_midgame(seed)
        state = env.game_state()
        assert state.announced and len(set(state.board[state.board > 0].tolist())) > 1
        expected = judge.judge(state, env.line_length, env.colours) / JUDGE_POINTS
        assert judged_values(env, env.observe()[None])[0] == pytest.approx(expected, rel=1e-6)
        # the search's values are the judgement's: the root's is the position in view's
        agent = SearchAgent(UniformEvaluator(), env, seed=0, simulations=8, leaf_value="algorithm")
        result = agent.search(env, env.observe())
        assert result.value == pytest.approx(expected, rel=1e-6)
        assert env.action_masks()[result.action]
    compact = gym.make("GridGames/Lines98-v0", observation_mode="compact").unwrapped
    compact.reset(seed=0)
    with pytest.raises(ValueError, match="reads the planes observation, not 'compact'"):
        judged_values(compact, compact.observe()[None])


@pytest.mark.parametrize(
    "settings",
    [{"simulations": 16, "leaf_value": "algorithm"}, {"simulations": 4, "variant": "ordered"}],
)
def test_lines98_search_on_the_judgement_never_reads_the_spawns_to_come(
    settings: dict[str, Any],
) -> None:
    a = lines98_midgame(11, moves=4)
    b = gym.make("GridGames/Lines98-v0").unwrapped
    b.reset(seed=999)
    b.restore(a.snapshot())
    b.np_random = np.random.default_rng(12345)  # other draws to come, the same view
    for seed in range(2):
        moves = [
            SearchAgent(UniformEvaluator(), e, seed=seed, **settings).act(e, e.observe())
            for e in (a, b)
        ]
        assert moves[0] == moves[1] and a.action_masks()[moves[0]]


class RankedMoves(UniformEvaluator):
    """Logits that rank the legal moves of one position in a given order."""

    def __init__(self, ranked: list[int]) -> None:
        super().__init__()
        self.ranked = ranked

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Any:
        logits, values = super().__call__(observations, masks)
        logits[:, self.ranked] = -np.arange(len(self.ranked), dtype=np.float32)
        logits[:, self.ranked] += len(self.ranked) + 1.0
        return logits, values


def test_the_ordered_search_is_the_look_ahead_with_the_priors_candidates() -> None:
    from agents.games.lines98 import JudgeAgent, LookaheadAgent, candidate_order, legal_moves
    from grid_envs.lines98 import rules

    for seed in range(3):
        env = lines98_midgame(seed, moves=8)
        moves, size = legal_moves(env), env.game_state().board.size
        actions = [rules.move_to_action(int(s), int(t), size) for s, t in moves]
        own = candidate_order(env.game_state(), moves, env.line_length, env.colours)
        # the prior ranks the moves as the look-ahead does: the look-ahead's own move
        looked = LookaheadAgent(env, seed=0, max_seconds=float("inf")).act(env, env.observe())
        prior = RankedMoves([actions[k] for k in own.tolist()])
        agent = SearchAgent(prior, env, seed=0, simulations=12, variant="ordered")
        assert agent.act(env, env.observe()) == looked
        # no replies: the judge's move, its first step alone on the same candidates
        judged = JudgeAgent(env, seed=0).act(env, env.observe())
        agent = SearchAgent(prior, env, seed=0, simulations=12, variant="ordered", replies=0)
        assert agent.act(env, env.observe()) == judged
        # one candidate: the prior's favourite, whatever the look-ahead would rank first
        favourite = actions[int(own[-1])]
        agent = SearchAgent(RankedMoves([favourite]), env, seed=0, simulations=1,
                            variant="ordered")  # fmt: skip
        assert agent.act(env, env.observe()) == favourite


@pytest.mark.parametrize(
    ("settings", "refusal"),
    [({"variant": "gumbel", "replies": 0}, "replies is a setting of the ordered search"),
     ({"variant": "ordered", "replies": -1}, "replies must be a whole number >= 0")],
)  # fmt: skip
def test_replies_are_the_ordered_searchs_own_setting(
    settings: dict[str, Any], refusal: str
) -> None:
    with pytest.raises(ValueError, match=refusal):
        SearchConfig(**settings)


def test_a_tiny_expert_iteration_saves_a_model_both_agents_play(tmp_path: Any) -> None:
    """Train a small model, improve it for two rounds of searched play, and play the
    result alone and as a search's guide; a rerun of the finished folder redoes nothing."""
    import json

    from agents.evaluation import load_policy, load_search
    from agents.search.expert import IterationConfig, iterate
    from agents.train.config import default_config
    from agents.train.sb3 import train

    env_id = "GridGames/Knight-v0"
    config = default_config(env_id, timesteps=512, n_envs=16, n_steps=32, eval_freq=10_000)
    config.env_kwargs = {"rows": 5, "cols": 5}
    start = train(config, tmp_path / "start", progress=False).model_path
    run = IterationConfig(env_id, str(start), simulations=4, rounds=2, episodes=3, epochs=1,
                          eval_episodes=4, threads=1)  # fmt: skip
    result = iterate(run, tmp_path / "iterated")
    assert [line["round"] for line in result.rounds] == [0, 1]
    assert result.rounds[1]["learned_on"] > result.rounds[1]["positions"] > 0
    assert (tmp_path / "iterated" / "rounds" / "round_1.zip").is_file()
    settings = json.loads((tmp_path / "iterated" / "settings.json").read_text())
    assert settings["env_kwargs"] == {"rows": 5, "cols": 5} and settings["rounds_done"] == 2
    for agent, board in (
        load_policy(str(result.model_path), env_id),
        load_search(str(result.model_path), env_id, simulations=4),
    ):
        assert board == {"rows": 5, "cols": 5}
        assert evaluate(env_id, agent, episodes=3, seed=1_000_000, env_kwargs=board).episodes == 3
    again = iterate(run, tmp_path / "iterated")
    assert again.already_done and len(again.rounds) == 2
    other = IterationConfig(env_id, str(start), simulations=8, rounds=2, episodes=3)
    with pytest.raises(ValueError, match="other settings"):
        iterate(other, tmp_path / "iterated")
