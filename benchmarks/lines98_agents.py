"""Lines98 baselines over seeded games: score, balls cleared and moves survived.

    python benchmarks/lines98_agents.py [--games 200] [--first 0]
                                        [--agents random greedy lookahead]
                                        [--jobs 2] [--max-moves 10000]
    python benchmarks/lines98_agents.py --screen [--games 120] [--cap 300]
                                        [--agents lookahead lookahead:replies=0]
    python benchmarks/lines98_agents.py --crisis [--positions 240] [--moves 100]
                                        [--agents lookahead lookahead:replies=0]

Game ``g`` is ``GridGames/Lines98-v0`` reset with seed ``g`` and the agent seeded with ``g``,
for ``g`` from ``--first``; a game ends when the board is full (or at ``--max-moves``,
counted and reported). A run can be split across machines (``--games 100 --first 100``)
and gives the same games. An agent is a registered name, optionally with keyword
arguments: ``lookahead:replies=0,futures=1``.

``--screen``: whole games vary so much (a few last thousands of moves, most a few hundred)
that telling two agents apart takes hundreds of them. This mode plays games 1000, 1001, ...
for at most ``--cap`` moves and prints the mean empty cells over moves 50 to ``cap - 1``
(0 once the board is full) with its standard error, and the games lost within the cap:
an agent that keeps the board roomier and loses fewer early games lasts longer.

``--crisis``: plays from the same crowded positions instead: games 100-139 played by
``lookahead:replies=0``, at moves 10, 30, 50, ... with 26 to 44 empty cells, kept as env
snapshots (random generator included); ``--positions`` of them drawn with
``default_rng(0)``. Each agent, seeded with the position's index, plays from each for
``--moves`` moves; printed: the share of positions where the board filled, the mean empty
cells at the end (0 where it filled) and ms a move.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from multiprocessing import Pool
from typing import Any

import gymnasium as gym
import numpy as np

import grid_envs  # noqa: F401
from agents import make_agent
from agents.base import Agent
from grid_envs.core.base_env import Snapshot


def agent_for(spec: str, env: gym.Env, seed: int) -> Agent:
    """``name`` or ``name:key=value,...`` (numbers) as a seeded agent bound to ``env``."""
    name, _, args = spec.partition(":")
    kwargs = {}
    for pair in filter(None, args.split(",")):
        key, _, value = pair.partition("=")
        kwargs[key] = float(value) if "." in value else int(value)
    return make_agent(name, env, seed=seed, **kwargs)


def play(job: tuple[str, int, int]) -> tuple[int, int, int, bool, float]:
    name, seed, max_moves = job
    env = gym.make("GridGames/Lines98-v0", time_limit=max_moves)
    agent = agent_for(name, env, seed)
    obs, info = env.reset(seed=seed)
    start = time.perf_counter()
    while True:
        obs, _, terminated, truncated, info = env.step(agent.predict(obs)[0])
        if terminated or truncated:
            break
    seconds = time.perf_counter() - start
    return info["score"], info["balls_cleared"], info["moves"], truncated, seconds


def crowded_positions(seed: int) -> list[Snapshot]:
    """Snapshots of game ``seed`` (``lookahead:replies=0``) at moves 10, 30, 50, ... with
    26 to 44 empty cells."""
    env = gym.make("GridGames/Lines98-v0", max_episode_steps=100_000)
    agent = agent_for("lookahead:replies=0", env, seed)
    obs, _ = env.reset(seed=seed)
    game: Any = env.unwrapped
    kept = []
    while True:
        s = game.game_state()
        if s.moves % 20 == 10 and 26 <= s.empty_cells <= 44:
            kept.append(game.snapshot())
        obs, _, terminated, truncated, _ = env.step(agent.predict(obs)[0])
        if terminated or truncated:
            return kept


def play_from(job: tuple[str, int, Snapshot, int]) -> tuple[bool, int, int, float]:
    """(board filled, empty cells at the end, moves played, seconds) from one position."""
    name, index, snapshot, moves = job
    env = gym.make("GridGames/Lines98-v0", max_episode_steps=100_000)
    env.reset(seed=0)
    game: Any = env.unwrapped
    game.restore(snapshot)
    agent = agent_for(name, env, index)
    obs, start = game.observe(), time.perf_counter()
    for played in range(1, moves + 1):
        obs, _, terminated, _, _ = env.step(agent.predict(obs)[0])
        if terminated:
            return True, 0, played, time.perf_counter() - start
    return False, game.game_state().empty_cells, moves, time.perf_counter() - start


def play_capped(job: tuple[str, int, int]) -> tuple[float, bool, int, float]:
    """(mean empty cells over moves 50 to ``cap - 1``, 0 once the board is full; lost
    within the cap; moves played; seconds) of game ``seed``."""
    name, seed, cap = job
    env = gym.make("GridGames/Lines98-v0", max_episode_steps=100_000)
    agent = agent_for(name, env, seed)
    obs, _ = env.reset(seed=seed)
    game: Any = env.unwrapped
    empty: list[int] = []
    start = time.perf_counter()
    terminated = False
    while len(empty) < cap and not terminated:
        empty.append(game.game_state().empty_cells)
        obs, _, terminated, _, _ = env.step(agent.predict(obs)[0])
    played = len(empty)
    empty += [0] * (cap - played)
    return float(np.mean(empty[50:])), terminated, played, time.perf_counter() - start


def screen(args: argparse.Namespace) -> None:
    print(f"games 1000-{999 + args.games}, at most {args.cap} moves each: mean empty cells "
          f"over moves 50-{args.cap - 1} (0 once full)")  # fmt: skip
    print("| agent | empty cells (mean +- s.e.) | lost within the cap | ms/move |")
    print("|---|---|---|---|")
    for name in args.agents:
        jobs = [(name, 1000 + g, args.cap) for g in range(args.games)]
        with Pool(args.jobs) as pool:
            rows = pool.map(play_capped, jobs, chunksize=1)
        empty, lost, played, seconds = (np.array(x) for x in zip(*rows, strict=True))
        print(
            f"| {name} | {empty.mean():.2f} +- {empty.std() / np.sqrt(len(empty)):.2f} "
            f"| {int(lost.sum())} of {len(lost)} | {1000 * seconds.sum() / played.sum():.1f} |",
            flush=True,
        )


def crisis(args: argparse.Namespace) -> None:
    with Pool(args.jobs) as pool:
        found = [p for ps in pool.map(crowded_positions, range(100, 140)) for p in ps]
    keep = np.sort(np.random.default_rng(0).permutation(len(found))[: args.positions])
    positions = [found[k] for k in keep]
    print(f"{len(positions)} of {len(found)} crowded positions (games 100-139), "
          f"{args.moves} moves from each")  # fmt: skip
    print("| agent | boards filled | empty cells at the end | ms/move |")
    print("|---|---|---|---|")
    for name in args.agents:
        jobs = [(name, k, p, args.moves) for k, p in enumerate(positions)]
        with Pool(args.jobs) as pool:
            rows = pool.map(play_from, jobs)
        filled, empty, played, seconds = (np.array(x) for x in zip(*rows, strict=True))
        print(
            f"| {name} | {filled.mean():.1%} ({int(filled.sum())}) | {empty.mean():.2f} "
            f"| {1000 * seconds.sum() / played.sum():.1f} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=None, help="200; 120 with --screen")
    parser.add_argument("--first", type=int, default=0, help="the first game's seed")
    parser.add_argument("--agents", nargs="+", default=["random", "greedy", "lookahead"])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-moves", type=int, default=10_000)
    parser.add_argument("--crisis", action="store_true", help="from crowded positions")
    parser.add_argument("--screen", action="store_true", help="short games, mean room")
    parser.add_argument("--cap", type=int, default=300, help="--screen: moves a game")
    parser.add_argument("--positions", type=int, default=240)
    parser.add_argument("--moves", type=int, default=100)
    args = parser.parse_args()
    if args.crisis:
        crisis(args)
        return
    if args.screen:
        args.games = args.games or 120
        screen(args)
        return
    args.games = args.games or 200
    means: dict[str, float] = {}
    last = args.first + args.games - 1
    print(f"games {args.first}-{last} of GridGames/Lines98-v0 (9x9, 7 colours, lines of 5)")
    print("| agent | score (mean, median) | balls cleared | moves survived (mean, median, max) "
          "| capped | ms/move |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name in args.agents:
        jobs = [(name, args.first + g, args.max_moves) for g in range(args.games)]
        with Pool(args.jobs) as pool:
            rows = []
            for game, row in enumerate(pool.imap(play, jobs), args.first):  # in order
                rows.append(row)
                print(f"{name} game {game}: score {row[0]}, {row[2]} moves", file=sys.stderr)
        score, balls, moves, capped, seconds = (np.array(x) for x in zip(*rows, strict=True))
        means[name] = float(score.mean())
        print(
            f"| {name} | {score.mean():.1f}, {statistics.median(score.tolist()):.0f} "
            f"| {balls.mean():.1f} | {moves.mean():.1f}, {statistics.median(moves.tolist()):.0f},"
            f" {moves.max()} | {int(capped.sum())} | {1000 * seconds.sum() / moves.sum():.2f} |",
            flush=True,
        )
    if "random" in means and means["random"] > 0:
        for name, value in means.items():
            if name != "random":
                print(f"{name}: {value / means['random']:.0f}x the random agent's mean score")


if __name__ == "__main__":
    main()
