"""Adding a game: its declaration and its own code, nothing else.

A sixth game, a corridor to walk along, lives in this file only: its env, its
:class:`~grid_envs.core.spec.GameSpec`, its baseline and its
:class:`~agents.games.spec.AgentsSpec`. Registering the spec must be enough for it to appear
wherever the games are listed: Gymnasium's registry, ``grid-games list``, ``generate``,
``solve``, ``eval`` and ``bench``, the soak benchmark, the golden trajectories, the docs'
navigation, a page of its own and the pictures, and the agents that play every game.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import grid_envs
from agents.base import Agent
from agents.games.spec import AgentsSpec
from agents.registry import register_agent
from grid_envs.core import checks
from grid_envs.core.base_env import GridEnv
from grid_envs.core.spec import GameSpec, IdSpec, PotentialSpec

ROOT = Path(__file__).resolve().parents[1]
ID = "GridGames/Corridor-v0"


@dataclass(frozen=True)
class Rewards:
    step_reward: float
    win_reward: float


class CorridorEnv(GridEnv):
    """Walk right to the end of a corridor.

    ## Description
    One row of ``cols`` cells; the walker starts on the first, the exit is the last.

    ## Action Space
    ``Discrete(2)``: 0 left (legal off the first cell), 1 right.

    ## Observation Space
    Two planes: the walker and the exit.

    ## Rewards
    ``step_reward`` a step, ``win_reward`` at the exit.

    ## Starting State
    The walker on the first cell.

    ## Episode End
    Terminated at the exit; truncated at ``time_limit``.

    ## Information
    - ``position``: the walker's cell.

    ## Arguments
    ``rows`` (1), ``cols``, the rewards, ``observation_mode``, ``tile_size``, ``time_limit``.

    ## Version History
    - v0: a test's game.
    """

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        rows: int = 1,
        cols: int = 6,
        step_reward: float = -0.1,
        win_reward: float = 1.0,
        illegal_reward: float | None = None,
        observation_mode: str = "planes",
        tile_size: int = 24,
        time_limit: int | None = None,
    ) -> None:
        self.cols = checks.side("cols", cols, 2)
        super().__init__(n_actions=2, obs_shape=(checks.side("rows", rows, 1, 1), self.cols),
                         n_planes=2, render_mode=render_mode, observation_mode=observation_mode,
                         illegal_reward=illegal_reward, tile_size=tile_size,
                         time_limit=time_limit)  # fmt: skip
        self.rewards = Rewards(**checks.reals(step_reward=step_reward, win_reward=win_reward))
        self.position = 0

    def _new_episode(self, options: dict[str, Any]) -> None:
        self.position = 0

    def _legal_mask(self) -> np.ndarray:
        return np.array([self.position > 0, True])

    def _apply(self, action: int) -> tuple[float, bool, bool]:
        self.position += 1 if action else -1
        won = self.position == self.cols - 1
        return self.rewards.step_reward + won * self.rewards.win_reward, won, won

    def _planes(self) -> np.ndarray:
        planes = np.zeros((2, 1, self.cols), dtype=np.uint8)
        planes[0, 0, self.position] = planes[1, 0, -1] = 1
        return planes

    def _game_info(self) -> dict[str, Any]:
        return {"position": self.position}

    def _ansi(self) -> str:
        return "".join("@" if c == self.position else "." for c in range(self.cols - 1)) + "E"

    def _rgb(self) -> np.ndarray:
        return np.repeat(np.repeat(self._planes().transpose(1, 2, 0)[..., [0, 1, 0]] * 255,
                                   self.tile_size, 0), self.tile_size, 1)  # fmt: skip

    def _get_state(self) -> Any:
        return self.position

    def _set_state(self, state: Any) -> None:
        self.position = int(state)

    def _public_state(self) -> Any:
        return self.position


def write_corridor(path: str, rng: np.random.Generator, count: int | None,
                   settings: dict[str, Any]) -> str:  # fmt: skip
    """The game's level writer: a corridor of ``cols`` cells, drawn at random."""
    cols = int(settings.get("cols", rng.integers(3, 10)))
    Path(path).write_text("." * (cols - 1) + "E\n")
    return f"wrote {path}: a corridor of {cols}"


def solve_corridors(path: str, level: int | None, max_seconds: float, mode: str) -> Any:
    """The game's solver: walk right to the end, replayed through the env first."""
    cols = len(Path(path).read_text().strip())
    env = CorridorEnv(cols=cols)
    env.reset(seed=0)
    for _ in range(cols - 1):
        env.step(1)
    assert env.won
    yield {"level": 1, "title": path, "solved": True, "status": "solved",
           "solution": "r" * (cols - 1), "moves": cols - 1, "seconds": 0.0}  # fmt: skip


def steps_left(position: int) -> float:
    """The game's shaping potential: minus the steps to the exit (the state is the walker's
    cell)."""
    return -float(SPEC.ids[0].kwargs["cols"] - 1 - position)


class WalkerAgent(Agent):
    """The game's baseline: always right."""

    def act(self, env: GridEnv, observation: np.ndarray) -> int:
        return 1


register_agent("walker", WalkerAgent, (ID,), "walks right to the exit")

AGENTS = AgentsSpec(
    "corridor",
    training={ID: {"n_envs": 4, "timesteps": 256}},
    compare={ID: {"teacher": "walker", "teacher_states": 100}},
    search={ID: {"variant": "gumbel", "simulations": 4}},
)

SPEC = GameSpec(
    name="corridor",
    ids=(IdSpec(ID, f"{__name__}:CorridorEnv", 20, {"cols": 6}, "a corridor to walk along"),),
    id_pattern="GridGames/Corridor*",
    bench_id=ID,
    potentials={"distance": PotentialSpec(f"{__name__}:steps_left")},
    title="The Corridor",
    agents=f"{__name__}:AGENTS",
    writer=f"{__name__}:write_corridor",
    solver=f"{__name__}:solve_corridors",
)


@pytest.fixture
def corridor() -> Any:
    """The sixth game, registered for one test and forgotten after it."""
    games, specs = grid_envs.GAMES, list(grid_envs._SPECS)
    grid_envs.register_game(SPEC)
    yield SPEC
    grid_envs.GAMES = games
    grid_envs._SPECS[:] = specs
    grid_envs.ENVS.pop(ID)
    gym.registry.pop(ID)


def _module(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_sixth_game_appears_wherever_the_games_are_listed(
    corridor: GameSpec, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from grid_envs.bench import bench_envs
    from grid_games import cli

    # registered, and played by the agents that play every game
    assert grid_envs.GAMES[-1] == "corridor" and ID in grid_envs.ENVS
    env = gym.make(ID)
    _, info = env.reset(seed=0)
    assert info["position"] == 0 and env.step(1)[1] == pytest.approx(-0.1)
    assert cli.main(["list"]) == 0 and ID in capsys.readouterr().out
    assert cli.main(["eval", "Corridor-v0", "--agent", "random", "--episodes", "3",
                     "--no-progress"]) == 0  # fmt: skip
    # its declaration on the agents' side: its baseline, training defaults, compare row,
    # search and potential, read wherever the games' are
    from agents.compare import compare_envs
    from agents.games import declarations
    from agents.registry import list_agents
    from agents.search import search_defaults
    from agents.train.config import default_config
    from grid_envs.wrappers import PotentialShaping, potential_names

    assert declarations()["corridor"] is AGENTS and "walker" in list_agents(ID)
    assert default_config(ID).n_envs == 4 and compare_envs()[-1] == ID
    assert search_defaults(ID) == {"variant": "gumbel", "simulations": 4}
    assert potential_names(ID) == ["distance"]
    shaped = PotentialShaping(gym.make(ID), "distance", gamma=1.0)
    shaped.reset(seed=0)
    assert shaped.step(1)[1] == pytest.approx(-0.1 + 1.0)  # a step nearer the exit
    capsys.readouterr()
    assert cli.main(["eval", "Corridor-v0", "--agent", "walker", "--episodes", "2", "--json",
                     "--no-progress"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["win_rate"] == 1.0
    # the command line's game choices, the bench, the soak benchmark, the golden file
    assert cli.main(["generate", "corridor", "--out", str(tmp_path / "c.txt"),
                     "--set", "cols=5"]) == 0  # fmt: skip
    assert (tmp_path / "c.txt").read_text() == "....E\n"
    capsys.readouterr()
    assert cli.main(["solve", str(tmp_path / "c.txt"), "--game", "corridor", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["solution"] == "rrrr"
    assert bench_envs()[-1] == ID
    assert ID in _module(ROOT / "benchmarks" / "soak.py").soak_envs()
    sys.path.insert(0, str(ROOT))
    from tests.test_golden import golden_keys

    assert {f"single {ID}", f"batched {ID}"} <= set(golden_keys())
    # the docs: the navigation, a page made from the spec and the docstring, a picture
    sys.path.insert(0, str(ROOT / "docs"))
    hooks, pictures = _module(ROOT / "docs" / "hooks.py"), _module(ROOT / "docs" / "pictures.py")
    assert hooks.games_nav()[-1] == {"The Corridor": "games/corridor.md"}
    page = hooks.on_page_markdown(hooks.game_page(corridor))
    assert ID in page and "Walk right to the end of a corridor" in page and "`random`" in page
    monkeypatch.setattr(pictures, "episode_frames",
                        lambda env_id, agent: [np.zeros((8, 8, 3), np.uint8)] * 2)  # fmt: skip
    assert tmp_path / "pictures" / "corridor.gif" in pictures.write(tmp_path / "pictures")


def test_a_game_cannot_be_registered_twice(corridor: GameSpec) -> None:
    with pytest.raises(ValueError, match="a game named 'corridor' is registered already"):
        grid_envs.register_game(corridor)


def test_a_new_board_policy_is_one_registration() -> None:
    """A policy registered by name reaches the trainer and the command line's choices."""
    from agents import register_policy
    from agents.nets import registry as policies
    from agents.train.config import TrainConfig
    from agents.train.plan import policy_of
    from grid_games import cli

    register_policy("corridor-cells", "a logit per cell of the corridor",
                    "agents.nets.board:CellLogitsExtractor",
                    lambda env_id, actions: {"actions": actions})  # fmt: skip
    try:
        train = next(a for a in cli.build_parser()._actions if a.dest == "command")
        (policy,) = [a for a in train.choices["train"]._actions if a.dest == "policy"]
        assert "corridor-cells" in policy.choices and "of the corridor" in policy.help
        config = TrainConfig(env_id="GridGames/Minesweeper-v0", policy="corridor-cells")
        _, kwargs = policy_of(config, 81)
        assert kwargs["features_extractor_class"].__name__ == "CellLogitsExtractor"
        assert kwargs["features_extractor_kwargs"]["actions"] == 81
    finally:
        policies._POLICIES.pop("corridor-cells")
    with pytest.raises(ValueError, match="policy must be one of"):
        policy_of(TrainConfig(env_id="GridGames/Minesweeper-v0", policy="corridor-cells"), 81)
