"""A recording written as a GIF, an MP4 or an HTML replay, chosen by the file's suffix.

Each file is written beside its place and moved there whole, so a failed write leaves
nothing, and an existing file is kept unless the caller says to replace it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from agents.networks import require
from agents.watch.record import FORMATS, Recording

HOLD = 4  # a GIF shows an episode's last frame this many moves long


def check_target(path: str | Path, force: bool = False) -> Path:
    """``path`` checked before anything is played: a suffix of :data:`FORMATS`, a folder
    that exists, not an existing file unless ``force``, and the libraries its format needs
    installed; a one-line ``ValueError`` (or ``ImportError`` naming the extra) otherwise."""
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        known = ", ".join(f"{s} ({what})" for s, what in FORMATS.items())
        raise ValueError(f"--record {path}: the suffix says the format; one of {known}")
    if p.is_dir():
        raise ValueError(f"--record {path} is a folder; give a file name")
    if not p.parent.is_dir():
        raise ValueError(f"--record {path}: the folder {str(p.parent)!r} does not exist")
    if p.exists() and not force:
        raise ValueError(f"--record {path} exists already; choose another name or add --force")
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
    with _written(p) as partial:
        if suffix == ".html":
            from agents.watch.replay import html

            partial.write_text(html(recording), encoding="utf-8")
        elif suffix == ".gif":
            _gif(recording, partial)
        else:
            _mp4(recording, partial)
    return p


@contextmanager
def _written(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to write into, moved to ``path`` once written."""
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=path.suffix)
    os.close(handle)
    partial = Path(name)
    umask = os.umask(0)
    os.umask(umask)
    try:
        yield partial
        partial.chmod(0o666 & ~umask)  # a file as any other the user writes, not mkstemp's 0600
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def scale_of(frame: np.ndarray) -> int:
    """A whole factor that brings a small board near 480 pixels (the boards are pixel art)."""
    return max(1, 480 // max(frame.shape[:2]))


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
