"""What a recording holds, and the recorder that fills it while an evaluation plays."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import Agent, Thought
from grid_envs.core.base_env import GridEnv

#: the suffixes a recording is written as, and what each is
FORMATS = {".gif": "an animated GIF", ".mp4": "an MP4 video", ".html": "an HTML replay"}


@dataclass
class RecordedStep:
    """One move: the action, its words and cells in the position it was played from, the
    reward, the return so far, and what the agent weighed (its ``moves`` named too)."""

    action: int
    text: str
    cells: list[tuple[int, int]]
    reward: float
    total: float
    illegal: bool
    thought: Thought
    move_texts: list[str] = field(default_factory=list)  # the words of thought.moves
    move_cells: list[list[tuple[int, int]]] = field(default_factory=list)


@dataclass
class RecordedEpisode:
    """An episode: its seed, ``len(steps) + 1`` frames (the start, then one a move), the
    moves, and how it ended."""

    seed: int
    frames: list[np.ndarray]
    steps: list[RecordedStep] = field(default_factory=list)
    won: bool = False
    truncated: bool = False

    @property
    def total(self) -> float:
        return self.steps[-1].total if self.steps else 0.0


@dataclass
class Recording:
    """Recorded episodes of one agent on one env, and how its frames map to the board."""

    env_id: str
    agent: str
    env_kwargs: dict[str, Any]
    board: tuple[int, int]  # the board's (rows, cols) of cells
    offset: tuple[int, int]  # where the board's cell (0, 0) lies in a frame, in cells
    tile: int  # pixels a cell
    fps: float
    episodes: list[RecordedEpisode] = field(default_factory=list)


class Recorder:
    """Keeps the first ``episodes`` episodes an evaluation plays (:func:`agents.evaluate`
    calls :meth:`describe` once, then :meth:`begin`, :meth:`before`, :meth:`after` and
    :meth:`end` for each episode). It reads the env through its public hooks (``frame``,
    ``action_text``, ``action_cells``) and the agent through :meth:`Agent.thoughts`, none
    of which changes what is played. ``fps``: the moves a second a video shows."""

    def __init__(self, episodes: int = 1, fps: float = 4.0) -> None:
        from grid_envs.core import checks

        self.wanted = checks.integer("episodes to record", episodes, 1)
        self.fps = checks.real("fps", fps)
        if not 0 < self.fps <= 60:
            raise ValueError(f"fps must be above 0 and at most 60, got {fps}")
        self.recording: Recording | None = None
        self._agent: str = "agent"
        self._env_kwargs: dict[str, Any] = {}
        self._episode: RecordedEpisode | None = None
        self._pending: tuple[Any, ...] | None = None

    def describe(self, agent: str, env_kwargs: dict[str, Any]) -> None:
        """The agent's name and the env's settings, as the recording names them."""
        self._agent, self._env_kwargs = agent, dict(env_kwargs)

    def begin(self, env: Any, seed: int) -> bool:
        """An episode starts (``env`` has just been reset with ``seed``): whether it is
        recorded (the first ``episodes`` are)."""
        base: GridEnv = env.unwrapped
        if self.recording is None:
            spec = getattr(env, "spec", None) or base.spec
            self.recording = Recording(
                env_id=spec.id if spec is not None else type(base).__name__,
                agent=self._agent, env_kwargs=self._env_kwargs, board=base.obs_shape,
                offset=base.frame_offset, tile=base.tile_size, fps=self.fps,
            )  # fmt: skip
        if len(self.recording.episodes) >= self.wanted:
            return False
        self._episode = RecordedEpisode(seed=seed, frames=[base.frame()])
        return True

    def before(self, env: Any, player: Any, observation: np.ndarray, action: int) -> None:
        """The agent has chosen ``action`` on ``observation``; the move is not played yet."""
        if self._episode is None:
            return
        base: GridEnv = env.unwrapped
        thought = player.thoughts(base, observation) if isinstance(player, Agent) else Thought()
        legal = bool(base.action_masks()[action])
        moves = [a for a, _ in thought.moves]
        self._pending = (
            action, base.action_text(action), base.action_cells(action) if legal else [],
            not legal, thought, [base.action_text(a) for a in moves],
            [base.action_cells(a) for a in moves],
        )  # fmt: skip

    def after(self, env: Any, reward: float) -> None:
        """The move is played: its reward, and the frame it leaves."""
        if self._episode is None or self._pending is None:
            return
        action, text, cells, illegal, thought, texts, move_cells = self._pending
        total = self._episode.total + float(reward)
        self._episode.steps.append(
            RecordedStep(
                action, text, cells, float(reward), total, illegal, thought, texts, move_cells
            )
        )
        self._episode.frames.append(env.unwrapped.frame())
        self._pending = None

    def end(self, won: bool, truncated: bool) -> None:
        """The episode is over."""
        if self._episode is None:
            return
        assert self.recording is not None
        self._episode.won, self._episode.truncated = bool(won), bool(truncated)
        self.recording.episodes.append(self._episode)
        self._episode = None


def finite_or_none(x: float | None) -> float | None:
    """``x`` where it is a finite number, else None (JSON has no NaN)."""
    return None if x is None or not math.isfinite(x) else float(x)


def scale_of(frame: np.ndarray) -> int:
    """A whole factor that brings a small board near 480 pixels (the boards are pixel art)."""
    return max(1, 480 // max(frame.shape[:2]))
