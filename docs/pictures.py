"""Draw the pictures of the docs with the envs' own renderer: a strip of the five games
(``games.png``, also in the README) and an animated episode of each game's algorithm
(``<game>.gif``). Run it again after a change to the drawing::

    python docs/pictures.py [--out docs/assets]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym
import numpy as np

import agents
import grid_envs

# each animation shows the agent its game's spec names (picture_agent), this many steps at most
MAX_FRAMES = 80
HEIGHT = 216  # the strip's height in pixels
GAP = 8


def episode_frames(env_id: str, agent_name: str, seed: int = 0) -> list[np.ndarray]:
    """The rendered frames of one episode of ``agent_name`` on ``env_id`` (at most
    :data:`MAX_FRAMES`)."""
    env = gym.make(env_id, render_mode="rgb_array")
    agent = agents.make_agent(agent_name, env, seed=seed)
    obs, _ = env.reset(seed=seed)
    frames = [env.render()]
    done = False
    while not done and len(frames) < MAX_FRAMES:
        action, _ = agent.predict(obs)
        obs, _, terminated, truncated, _ = env.step(int(action))
        frames.append(env.render())
        done = terminated or truncated
    env.close()
    return frames


def _resized(frame: np.ndarray, height: int) -> np.ndarray:
    """Nearest-neighbour scaling to ``height`` rows (the boards are pixel art)."""
    rows = (np.arange(height) * frame.shape[0] / height).astype(int)
    width = round(frame.shape[1] * height / frame.shape[0])
    cols = (np.arange(width) * frame.shape[1] / width).astype(int)
    return frame[rows][:, cols]


def strip(frames: list[np.ndarray]) -> np.ndarray:
    """The frames side by side, scaled to one height, on a white background."""
    scaled = [_resized(f, HEIGHT) for f in frames]
    width = sum(f.shape[1] for f in scaled) + GAP * (len(scaled) - 1)
    out = np.full((HEIGHT, width, 3), 255, dtype=np.uint8)
    x = 0
    for f in scaled:
        out[:, x : x + f.shape[1]] = f
        x += f.shape[1] + GAP
    return out


def write(out: Path) -> list[Path]:
    """Write ``games.png`` and one GIF a game into ``out``; the paths written."""
    from PIL import Image

    out.mkdir(parents=True, exist_ok=True)
    written, middles = [], []
    for spec in grid_envs.game_specs():
        frames = episode_frames(spec.ids[0].id, spec.picture_agent)
        middles.append(frames[len(frames) // 2])
        images = [Image.fromarray(f) for f in frames]
        path = out / f"{spec.name}.gif"
        images[0].save(path, save_all=True, append_images=images[1:], duration=250, loop=0)
        written.append(path)
    path = out / "games.png"
    Image.fromarray(strip(middles)).save(path, optimize=True)
    return [path, *written]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(Path(__file__).parent / "assets"))
    for path in write(Path(parser.parse_args().out)):
        print(path, f"{path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
