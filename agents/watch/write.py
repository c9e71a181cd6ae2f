"""A recording written as a GIF, an MP4 or an HTML replay, chosen by the file's suffix,
as the package writes every file (:mod:`grid_envs.core.files`): whole or not at all, and
an existing one kept unless the caller says to replace it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from agents.nets.common import require
from agents.watch.record import FORMATS, Recording, scale_of
from grid_envs.core import files

HOLD = 4  # a GIF shows an episode's last frame this many moves long


def check_target(path: str | Path, force: bool = False) -> Path:
    """``path`` checked before anything is played: a suffix of :data:`FORMATS`, a file the
    package may write (:func:`grid_envs.core.files.check_target`), and the libraries its
    format needs installed; a one-line ``ValueError`` (or ``ImportError`` naming the
    extra) otherwise."""
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        known = ", ".join(f"{s} ({what})" for s, what in FORMATS.items())
        raise ValueError(f"--record {path}: the suffix says the format; one of {known}")
    files.check_target(p, "--record", force)
    _libraries(p.suffix.lower())
    return p


def _libraries(suffix: str) -> None:
    require("PIL", "video", "an HTML replay")
    if suffix in (".gif", ".mp4"):
        require("imageio", "video", f"writing {FORMATS[suffix]}")
    if suffix == ".mp4":
        require("imageio_ffmpeg", "video", "writing an MP4 video")


def write_recording(recording: Recording, path: str | Path, force: bool = False) -> Path:
    """Write ``recording`` to ``path`` in the format its suffix names; the path."""
    p = check_target(path, force)
    if not recording.episodes:
        raise ValueError("the recording holds no episode")
    suffix = p.suffix.lower()
    with files.written(p) as partial:
        if suffix == ".html":
            from agents.watch.replay import html

            partial.write_text(html(recording), encoding="utf-8")
        elif suffix == ".gif":
            _gif(recording, partial)
        else:
            _mp4(recording, partial)
    return p


def video_frames(recording: Recording) -> Iterator[np.ndarray]:
    """Every episode's frames in turn, scaled by :func:`scale_of` and padded to even sides
    (what a video codec's 4:2:0 colour needs)."""
    first = recording.episodes[0].frames[0]
    k = scale_of(first)
    for episode in recording.episodes:
        for frame in episode.frames:
            big = np.kron(frame, np.ones((k, k, 1), dtype=np.uint8)) if k > 1 else frame
            h, w = big.shape[:2]
            yield np.pad(big, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")


def _gif(recording: Recording, path: Path) -> None:
    """One frame a move plus each episode's first; an episode's last frame is held longer.
    Identical consecutive frames (a move that changes nothing drawn) merge into one."""
    import imageio.v3 as iio

    move = 1000.0 / recording.fps
    durations = []
    for episode in recording.episodes:
        durations += [move] * (len(episode.frames) - 1) + [move * HOLD]
    iio.imwrite(path, list(video_frames(recording)), extension=".gif", duration=durations, loop=0)


def _mp4(recording: Recording, path: Path) -> None:
    """H.264 in an MP4, one video frame a move plus each episode's first, at the
    recording's moves a second."""
    import imageio.v2 as imageio

    writer: Any = imageio.get_writer(
        path, format="FFMPEG", mode="I", fps=recording.fps, codec="libx264",
        pixelformat="yuv420p", macro_block_size=1, output_params=["-crf", "18"],
    )  # fmt: skip
    try:
        for frame in video_frames(recording):
            writer.append_data(frame)
    finally:
        writer.close()
