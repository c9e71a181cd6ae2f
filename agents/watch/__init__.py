"""Watch an agent play: its episodes recorded (the frames the game draws, each move with its
reward, and what the agent weighed for it) and written as a GIF, an MP4 or an HTML replay.

    grid-games eval Sokoban-v0 --agent search --model pretrained --record sokoban.html

:class:`Recorder` is handed to :func:`agents.evaluate` (``record=``), which plays as it
always does and lets the recorder watch the first episodes; :func:`write_recording` writes
them, the format chosen by the file's suffix (:data:`FORMATS`). The GIF and the MP4 are made
with imageio (and imageio-ffmpeg's own ffmpeg): the ``video`` extra. The HTML replay is one
file that opens in any browser with nothing fetched: the board, the move, its reward, and
beside them what the agent thought (:class:`agents.base.Thought`).
"""

from agents.watch.record import FORMATS, RecordedEpisode, RecordedStep, Recorder, Recording
from agents.watch.write import check_target, write_recording

__all__ = [
    "FORMATS",
    "RecordedEpisode",
    "RecordedStep",
    "Recorder",
    "Recording",
    "check_target",
    "write_recording",
]
