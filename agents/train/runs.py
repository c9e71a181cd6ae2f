"""Run folders: what a training run leaves on disk, and the rules for going on with one.

A run folder (``grid-games train ENV --out DIR``; SB3 or RLlib) holds::

    config.json         the settings that define the run; a rerun must match them
    settings.json       all settings, steps done, seconds, "interrupted" after Ctrl-C
    model.zip           the final (or interrupted) model
    checkpoints/        model_<steps>_steps.zip, the latest of which a rerun resumes from
    eval/, best/        evaluations during training and the best model they saw
    monitor/, tb/       episode logs and TensorBoard logs
    teacher/            labels, DAgger rounds and the cloned policy of a taught run

These functions read and check such folders; they import no learning library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np


def latest_checkpoint(folder: Path) -> Path | None:
    found = [(checkpoint_steps(p), p) for p in folder.glob("model_*_steps.zip")]
    return max(found)[1] if found else None


def checkpoint_steps(path: Path) -> int:
    """The timesteps in a checkpoint's name (``model_<steps>_steps.zip``)."""
    m = re.match(r"model_(\d+)_steps", path.stem)
    return int(m.group(1)) if m else 0


@dataclass
class TrainResult:
    model_path: Path
    settings_path: Path
    timesteps: int
    seconds: float  # PPO's wall seconds over every session of the run
    resumed_from: str | None
    curve: list[tuple[int, float, float]]  # (timesteps, mean eval return, eval win rate)
    already_done: bool = False  # the folder held a finished run of these steps: not retrained
    seconds_before: float = 0.0  # that run's training seconds
    teacher_seconds: float = 0.0  # the teaching's wall seconds, every round of every session
    threads: int = 0  # the torch threads it trained on (0: not known, a run of an old version)
    bf16: bool = False  # whether its network computed in bfloat16

    @property
    def wall_seconds(self) -> float:
        """The run's wall seconds over every session, teaching included."""
        return (self.seconds_before if self.already_done else self.seconds) + self.teacher_seconds

    @property
    def arithmetic(self) -> str:
        """What the run computed in, as a report says it: "2 torch threads, bf16"."""
        threads = f"{self.threads} torch thread{'s' * (self.threads != 1)}"
        return f"{threads}, {'bf16' if self.bf16 else 'fp32'}"

    def best(self) -> tuple[Path, int | None]:
        """The model the run's evaluations during training rated best
        (``best/best_model.zip``, their first highest mean return, on validation seeds apart
        from the held-out ones) and the step it was saved at; the final model where there
        is none."""
        path = Path(self.model_path).parent / "best" / "best_model.zip"
        if not path.exists() or not self.curve:
            return Path(self.model_path), None
        returns = [mean for _, mean, _ in self.curve]
        return path, self.curve[returns.index(max(returns))][0]


class Interrupted(KeyboardInterrupt):
    """Training stopped by Ctrl-C; the model so far (and, for PPO, a checkpoint) saved.
    ``steps`` counts ``unit`` (PPO's steps, expert iteration's finished rounds)."""

    def __init__(
        self, steps: int, model_path: Path, unit: str = "step", checkpoint: bool = True
    ) -> None:
        beside = " and a checkpoint beside it" if checkpoint else ""
        done = f"{steps:,} {unit}{'s' * (steps != 1)}"
        super().__init__(
            f"interrupted after {done}: the model so far is in {model_path}{beside}; run the "
            f"same command again to go on"
        )
        self.steps, self.model_path = steps, model_path


@contextmanager
def run_lock(out: Path) -> Iterator[None]:
    """Hold ``out``'s run for this process: a second ``train`` or ``iterate`` into the
    same folder at the same time is refused with one line instead of mixing its files
    with this one's. The lock is an advisory ``flock`` on a file beside the folder
    (``.<name>.lock``), released when the run ends, however it ends."""
    import fcntl

    out.parent.mkdir(parents=True, exist_ok=True)
    path = out.parent / f".{out.name}.lock"
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ValueError(
                f"{out} is in use by another run (its lock {path} is held); wait for it to "
                f"end or choose another --out"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_json(path: Path, kind: type = dict) -> Any:
    """A run folder's JSON file (settings, config, rounds, curve), which must parse to a
    ``kind``: a file edited into nonsense is refused in one line that names it, rather
    than ignored (a rerun would otherwise train over the run it cannot read)."""
    try:
        value = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) else f"not JSON: {error}"
        raise ValueError(
            f"{path} cannot be read ({reason}); restore the file or delete the run folder"
        ) from None
    if not isinstance(value, kind):
        raise ValueError(
            f"{path} holds a JSON {type(value).__name__}, not the {kind.__name__} a run "
            f"folder writes there; restore the file or delete the run folder"
        )
    return value


def check_model_file(path: Path) -> None:
    """A saved model (an SB3 ``.zip``) must be a whole zip archive: one cut short by a
    full disk or a killed copy is named as damaged, not taken for a finished run."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (OSError, zipfile.BadZipFile):
        bad = "its index"
    if bad is not None:
        raise ValueError(
            f"{path} is damaged (not a whole zip archive: {bad} does not read back); "
            f"delete it to train on from the latest checkpoint (or from the start), or delete "
            f"the run folder"
        )


def check_run_folder(out: Path, backend: str = "sb3") -> None:
    """The run folder must be a folder, or not exist yet, and hold no run of the other
    backend (``"sb3"`` or ``"rllib"``; an RLlib run's config names its learner threads)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file; a run folder is needed")
    path = out / "config.json"
    if path.exists():
        theirs = "rllib" if "learner_threads" in read_json(path) else "sb3"
        if theirs != backend:
            raise ValueError(
                f"{out} holds a run of the {theirs} backend; choose another --out for the "
                f"{backend} backend"
            )


def saved_steps(out: Path, model: str = "model.zip") -> int:
    """Timesteps of the finished model in ``out`` (0 when there is none, or when the run
    was interrupted: it goes on from its checkpoint). ``model``: what the run saves, SB3's
    ``model.zip`` (checked whole) or an RLlib run's policy folder."""
    path = out / "settings.json"
    saved = out / model
    if not saved.exists() or not path.exists():
        return 0
    settings = read_json(path)
    steps = settings.get("timesteps_done", 0)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(
            f"{path}: timesteps_done must be a whole number of steps, got {steps!r}; "
            f"restore the file or delete the run folder"
        )
    if settings.get("interrupted"):
        return 0
    if saved.is_file():
        check_model_file(saved)
    return steps


def finished_result(out: Path, steps: int) -> TrainResult:
    """The result of a run folder that already holds a finished model."""
    settings = read_json(out / "settings.json")
    return TrainResult(
        out / "model.zip", out / "settings.json", steps, 0.0, None, read_curve(out),
        already_done=True, seconds_before=float(settings.get("seconds", 0.0)),
        teacher_seconds=float(settings.get("teacher_seconds", 0.0)),
        threads=int(settings.get("torch_threads", 0)), bf16=bool(settings.get("bf16", False)),
    )  # fmt: skip


RUN_KEYS = (
    "env_id", "algo", "env_kwargs", "shaping", "shaping_scale", "shaping_at_loss",
    "potential_input", "policy", "features_dim", "net_width", "net_depth", "teacher",
    "warm_teacher", "seed",
)  # fmt: skip
# what a run folder saved before a key existed meant
BEFORE_KEYS = {"policy": "cnn", "teacher": None, "net_width": None, "net_depth": None,
               "warm_teacher": None, "shaping_scale": 1.0, "shaping_at_loss": "zero",
               "potential_input": None}  # fmt: skip


def check_same_run(
    config: Any,
    out: Path,
    keys: tuple[str, ...] = RUN_KEYS,
    kind: str = "a run",
    write: bool = True,
) -> None:
    """A rerun resumes only the run that its folder holds; anything else is refused.

    ``config`` is a dataclass (SB3's or RLlib's); ``keys`` are the fields that must match.
    A new folder gets ``config.json`` (unless ``write`` is False).
    """
    path = out / "config.json"
    mine = {k: v for k, v in asdict(config).items() if k in keys}
    if path.exists():
        saved = {**BEFORE_KEYS, **read_json(path)}
        theirs = {k: v for k, v in saved.items() if k in keys}
        if theirs != mine:
            diff = {k: (theirs.get(k), mine.get(k)) for k in keys if theirs.get(k) != mine.get(k)}
            raise ValueError(
                f"{out} holds {kind} with other settings {diff} (theirs, yours); "
                f"choose another --out or delete the folder"
            )
    elif write:
        path.write_text(json.dumps(asdict(config), indent=2))


def read_arrays(
    path: Path, names: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, np.ndarray]:
    """The arrays ``names`` (and those of ``optional`` it holds) of a run folder's ``.npz``
    file, read whole: a file cut short, edited or missing one of them is named as damaged in
    one line, rather than read as a run's data or raised as a zip library's error."""
    import zipfile

    try:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {name: saved[name] for name in names}
            arrays |= {name: saved[name] for name in optional if name in saved.files}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(
            f"{path} is damaged ({type(error).__name__}: {error}); delete it, or the run "
            f"folder, to start that part again"
        ) from None
    return arrays


def read_curve(out: Path) -> list[tuple[int, float, float]]:
    """(timesteps, mean return, success rate) of each evaluation, from eval/evaluations.npz."""
    path = Path(out) / "eval" / "evaluations.npz"
    if not path.exists():
        return []
    data = read_arrays(path, ("timesteps", "results"), ("successes",))
    steps, results = data["timesteps"], data["results"]
    successes = data.get("successes", np.zeros_like(results))
    return [
        (int(t), float(r.mean()), float(np.mean(s)) if len(s) else 0.0)
        for t, r, s in zip(steps, results, successes, strict=True)
    ]


def settings_of(path: str | Path) -> dict[str, Any]:
    """The ``settings.json`` of the run a model file belongs to: beside it (``model.zip``),
    or one folder up (``best/best_model.zip``, ``checkpoints/model_N_steps.zip``)."""
    folder = Path(path).parent
    for candidate in (folder / "settings.json", folder.parent / "settings.json"):
        if candidate.is_file():
            settings: dict[str, Any] = read_json(candidate)
            return settings
    raise ValueError(f"{path}: no settings.json beside it or in its run folder")
