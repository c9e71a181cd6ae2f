"""Golden trajectories: the games stay the same through any change of layout.

For every registered id, masked random play on fixed seeds (a single env, then the native
batch of 4) is hashed: observations, rewards, ends, infos and masks at every step. The
baselines' actions on fixed seeds are hashed too. The hashes live in
``tests/golden.json``; a change that alters a game fails here and names the id.

A deliberate change of the rules regenerates the file and says so in its commit:

    python -m tests.test_golden --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import grid_envs

GOLDEN = Path(__file__).with_name("golden.json")
SINGLE_STEPS, BATCH_STEPS, NUM_ENVS = 300, 100, 4
# a small pool where the registered one is slow to fill; the rules are the same
LIGHT: dict[str, dict[str, Any]] = {
    "GridGames/Sokoban-v0": {"level_pool": 30},
    "GridGames/SokobanPush-v0": {"level_pool": 30},
    "GridGames/Knight-Large-v0": {"level_pool": 10},
}
# (env id, agent, its settings, steps): every baseline once, on boards where it is quick;
# time budgets far above what these boards need, so no answer depends on the clock
AGENTS: list[tuple[str, str, dict[str, Any], int]] = [
    ("GridGames/Sokoban-Small-v0", "random", {}, 120),
    ("GridGames/Sokoban-Small-v0", "solver", {"max_seconds": 60.0}, 120),
    ("GridGames/SokobanPush-v0", "solver", {"max_seconds": 60.0}, 40),
    ("GridGames/Minesweeper-v0", "solver", {}, 150),
    ("GridGames/Knight-v0", "dijkstra", {}, 150),
    ("GridGames/Pikachu-Small-v0", "greedy", {}, 60),
    ("GridGames/Pikachu-Small-v0", "planner", {"max_seconds": 60.0}, 60),
    ("GridGames/Lines98-Small-v0", "greedy", {}, 60),
    ("GridGames/Lines98-Small-v0", "lookahead", {"max_seconds": 60.0}, 15),
]


class Digest:
    """A sha256 over a stream of values, each written with its type, dtype and shape."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def add(self, value: Any) -> None:
        if isinstance(value, dict):
            for key in sorted(value):
                self.h.update(f"<{key}>".encode())
                self.add(value[key])
        elif isinstance(value, (list, tuple)):
            self.h.update(f"[{len(value)}".encode())
            for item in value:
                self.add(item)
        elif isinstance(value, np.ndarray) and value.dtype == object:
            self.add(value.tolist())
        elif isinstance(value, np.ndarray):
            self.h.update(f"{value.dtype}{value.shape}".encode())
            self.h.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, (float, np.floating)):
            self.h.update(float(value).hex().encode())
        else:
            self.h.update(f"{type(value).__name__}:{value!r}".encode())

    def hexdigest(self) -> str:
        return self.h.hexdigest()[:16]


def random_play_single(env_id: str) -> str:
    env = gym.make(env_id, **LIGHT.get(env_id, {}))
    rng = np.random.default_rng(11)
    digest = Digest()
    obs, info = env.reset(seed=7)
    digest.add((obs, info))
    for _ in range(SINGLE_STEPS):
        mask = env.unwrapped.action_masks()
        digest.add(mask)
        action = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = env.step(action)
        digest.add((action, obs, reward, terminated, truncated, info))
        if terminated or truncated:
            obs, info = env.reset()
            digest.add((obs, info))
    env.close()
    return digest.hexdigest()


def random_play_batched(env_id: str) -> str:
    mode = "vector_entry_point" if gym.spec(env_id).vector_entry_point else "sync"
    envs = gym.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode=mode, **LIGHT.get(env_id, {}))
    rng = np.random.default_rng(13)
    digest = Digest()
    obs, info = envs.reset(seed=5)
    digest.add((obs, info))
    for _ in range(BATCH_STEPS):
        masks = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        obs, rewards, terminated, truncated, info = envs.step(actions)
        digest.add((actions, obs, rewards, terminated, truncated, info))
    envs.close()
    return digest.hexdigest()


def agent_play(env_id: str, name: str, kwargs: dict[str, Any], steps: int) -> str:
    from agents import make_agent

    env = gym.make(env_id, **LIGHT.get(env_id, {}))
    agent = make_agent(name, env, seed=3, **kwargs)
    digest = Digest()
    obs, _ = env.reset(seed=21)
    for _ in range(steps):
        action, _ = agent.predict(obs)
        obs, reward, terminated, truncated, _ = env.step(int(action))
        digest.add((int(action), reward, terminated))
        if terminated or truncated:
            agent.reset()
            obs, _ = env.reset()
    env.close()
    return digest.hexdigest()


def compute(key: str) -> str:
    kind, env_id, *rest = key.split(" ")
    if kind == "single":
        return random_play_single(env_id)
    if kind == "batched":
        return random_play_batched(env_id)
    name = rest[0]
    for game, agent, kwargs, steps in AGENTS:
        if (game, agent) == (env_id, name):
            return agent_play(env_id, name, kwargs, steps)
    raise KeyError(key)


def golden_keys() -> list[str]:
    """What the golden file records: every registered id (the games' specs), single and
    batched, and every baseline of :data:`AGENTS`."""
    ids = sorted(grid_envs.ENVS)
    return (
        [f"single {i}" for i in ids]
        + [f"batched {i}" for i in ids]
        + [f"agent {env_id} {name}" for env_id, name, _, _ in AGENTS]
    )


KEYS = golden_keys()


@pytest.mark.parametrize("key", KEYS)
def test_the_games_play_as_recorded(key: str) -> None:
    recorded = json.loads(GOLDEN.read_text())
    assert key in recorded, f"no golden hash for {key!r}: run python -m tests.test_golden --write"
    assert compute(key) == recorded[key], f"{key} no longer plays as recorded"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.test_golden --write")
    GOLDEN.write_text(json.dumps({key: compute(key) for key in KEYS}, indent=1) + "\n")
    print(f"wrote {len(KEYS)} hashes to {GOLDEN}")


# the games, single and batched, as the compiled rules play them and as their Python source
# does without numba (the Knight's, whose levels run Dijkstra in Python for half a minute
# and more, were checked so by hand)
UNCOMPILED = [
    f"{kind} GridGames/{name}"
    for name in ("Lines98-Small-v0", "Pikachu-Small-v0", "Minesweeper-v0", "Sokoban-Small-v0")
    for kind in ("single", "batched")
]


def test_the_rules_play_the_same_games_without_numba() -> None:
    """``NUMBA_DISABLE_JIT=1`` runs the compiled rules as the Python they are written in
    (to step through them in a debugger): the same games, hash for hash. Python's integer
    and bool arithmetic differs from the compiled code's (an int8 times an int overflows;
    True + True is True), which the rules spell out where it matters."""
    import os
    import subprocess

    code = (
        "import json, sys\nfrom tests.test_golden import GOLDEN, compute\n"
        "golden = json.loads(GOLDEN.read_text())\n"
        "print(json.dumps({k: compute(k) == golden[k] for k in sys.argv[1:]}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *UNCOMPILED], cwd=Path(__file__).parents[1],
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"}, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    same = json.loads(done.stdout.strip().splitlines()[-1])
    assert same == dict.fromkeys(UNCOMPILED, True)
