"""``grid-games bench``: how fast every game runs, next to FrozenLake measured in the same run.

Per game: single-env steps/s through ``gymnasium.make`` (a random legal action each step,
resets included, the action picked outside the timed call), resets/s, batched env-steps/s
through ``gymnasium.make_vec`` at each batch size (the native ``vector_entry_point`` when the
id has one, else Gymnasium's ``SyncVectorEnv``, and the mode used is reported), and the peak
memory Python allocated while the largest batch was made and stepped 20 times
(``tracemalloc``, numpy arrays included, traced apart from the timing). FrozenLake-v1's
random steps/s is the floor of Python overhead that the ratios are taken against, and
timings on a shared machine drift by up to two times within minutes: so every timed window
of a game's single env and of each batch comes right after a window of FrozenLake, and a
ratio is the median of the windows' own ratios (the report's reference is the median of
the FrozenLake windows beside each game's single env).

A native batch hands its masks out uncopied (``copy_masks=False``: the actions are drawn
from ``info["action_mask"]`` before the next step, as SB3's rollout reads them), as the
training path makes it; the copy a default batch makes each step is timed apart by
``benchmarks/step_profile.py --copy-masks``.

Each figure is the median of ``repeats`` timed windows of about ``seconds`` each; a batch
is first stepped ``WARM_UP_STEPS`` times untimed, since all its envs start together.

Settings: each game runs with its registered defaults (plus :data:`BENCH_KWARGS`, empty by
default), the same for the single and the batched env. Sokoban and the Knight draw their
generated levels from their default pool of 100,000 (``level_pool="auto"``, see
:mod:`grid_envs.core.pool`), which the package ships filled; a pool that does not ship (other
settings) generates a level the first time an episode draws it (which costs more than a batch
step), so before the timing the whole pool is made ready, split over every core, and
the seconds that took (loading the shipped file included) are reported as ``pool_fill_s``:
the figures are what a long training run sees once its pool is full.
"""

from __future__ import annotations

import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import grid_envs


def cpu_model() -> str:
    """The processor's model name as Linux gives it (``/proc/cpuinfo``), else as Python
    can: the machine a run's rates belong to, which benchmarks' records name."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def bench_envs() -> tuple[str, ...]:
    """The id of each game that ``grid-games bench`` times (its spec's ``bench_id``)."""
    return tuple(game.bench_id for game in grid_envs.game_specs())


BATCHES = (1, 64, 1024, 4096)
MIN_WINDOW = 0.01  # seconds: a shorter window may time no step at all
WARM_UP_STEPS = 20  # batched steps before the timing: the steady state is what training sees
BENCH_KWARGS: dict[str, dict[str, Any]] = {}


@dataclass
class GameFigures:
    env: str
    single_steps_per_s: float
    resets_per_s: float
    vector_mode: str  # "vector_entry_point" (native) or "sync" (Gymnasium's loop)
    batched_steps_per_s: dict[str, float] = field(default_factory=dict)  # batch -> env-steps/s
    peak_mb: float = 0.0  # Python allocations while the largest batch ran
    ratio_to_frozenlake: float = 0.0  # the single env's, median of paired windows
    batched_ratio_to_frozenlake: dict[str, float] = field(default_factory=dict)  # likewise
    kwargs: dict[str, Any] = field(default_factory=dict)  # settings beyond the registered
    pool_fill_s: float = 0.0  # generating the level pool before the timing
    pool_levels: int = 0  # levels in that pool
    frozenlake_steps_per_s: float = 0.0  # its windows beside the single env's (median)


Run = Callable[[float], tuple[int, float]]  # run(deadline): steps made, seconds they took


def _median_rate(window: float, repeats: int, run: Run) -> float:
    """Median of ``count / seconds`` over ``repeats`` calls of ``run(deadline)``, which
    returns how many steps it made and the seconds they took (the timed calls only)."""
    rates = []
    for _ in range(repeats):
        count, seconds = run(time.perf_counter() + window)
        rates.append(count / max(seconds, 1e-9))
    return statistics.median(rates)


def _paired_rates(
    window: float, repeats: int, run: Run, reference: Run | None
) -> tuple[float, ...]:  # fmt: skip
    """(median rate of ``run``, median rate of ``reference``, median of their ratios), each
    window of ``run`` timed right after one of ``reference``: the machine's drift between
    windows cancels out of the ratio. Without a reference: (median rate, NaN, NaN)."""
    if reference is None:
        return _median_rate(window, repeats, run), float("nan"), float("nan")
    rates, references = [], []
    for _ in range(repeats):
        count, seconds = reference(time.perf_counter() + window)
        references.append(count / max(seconds, 1e-9))
        count, seconds = run(time.perf_counter() + window)
        rates.append(count / max(seconds, 1e-9))
    ratios = [r / f for r, f in zip(rates, references, strict=True)]
    return statistics.median(rates), statistics.median(references), statistics.median(ratios)


def _frozenlake_run() -> Run:
    env = gym.make("FrozenLake-v1")
    env.reset(seed=0)
    env.action_space.seed(0)

    def run(deadline: float) -> tuple[int, float]:
        n, start = 0, time.perf_counter()
        while time.perf_counter() < deadline:
            for _ in range(200):
                _, _, terminated, truncated, _ = env.step(env.action_space.sample())
                if terminated or truncated:
                    env.reset()
            n += 200
        return n, time.perf_counter() - start

    return run


def frozenlake_steps_per_second(window: float = 1.0, repeats: int = 3) -> float:
    return _median_rate(window, repeats, _frozenlake_run())


def fill_pool(env_id: str, kwargs: dict[str, Any] | None = None) -> tuple[float, int]:
    """Make the level pool of ``env_id`` ready with its bench settings: loaded where the
    package ships it, else generated over every core;
    (seconds it took, levels in the pool), (0, 0) without a pool. Pools are shared in a
    process, so every later env finds it full."""
    import os

    start = time.perf_counter()
    env = gym.make(env_id, **(kwargs or {}))  # loads the pool if the package ships it
    pool = getattr(env.unwrapped, "pool", None)
    if pool is None:
        return 0.0, 0
    pool.fill(processes=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    return time.perf_counter() - start, len(pool)


def _single_run(env_id: str, kwargs: dict[str, Any] | None = None) -> Run:
    """Random legal actions, resets included; the action is picked outside the timing."""
    env = gym.make(env_id, **(kwargs or {}))
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)

    def run(deadline: float) -> tuple[int, float]:
        nonlocal info
        n, spent = 0, 0.0
        while time.perf_counter() < deadline:
            legal = np.flatnonzero(info["action_mask"])
            action = int(legal[rng.integers(len(legal))])
            tick = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                _, info = env.reset()
            spent += time.perf_counter() - tick
            n += 1
        return n, spent

    return run


def single_steps_per_second(
    env_id: str, window: float = 1.0, repeats: int = 3, kwargs: dict[str, Any] | None = None
) -> float:
    """Random legal actions, resets included; the action is picked outside the timing."""
    return _median_rate(window, repeats, _single_run(env_id, kwargs))


def resets_per_second(
    env_id: str, window: float = 1.0, repeats: int = 3, kwargs: dict[str, Any] | None = None
) -> float:
    env = gym.make(env_id, **(kwargs or {}))
    env.reset(seed=0)

    def run(deadline: float) -> tuple[int, float]:
        n, start = 0, time.perf_counter()
        while time.perf_counter() < deadline:
            env.reset()
            n += 1
        return n, time.perf_counter() - start

    return _median_rate(window, repeats, run)


def _vector_mode(env_id: str) -> str:
    return "vector_entry_point" if gym.spec(env_id).vector_entry_point else "sync"


def batched_steps_per_second(
    env_id: str,
    num_envs: int,
    window: float = 1.0,
    repeats: int = 3,
    kwargs: dict[str, Any] | None = None,
    memory: bool = True,
    reference: Run | None = None,
) -> tuple[float, ...]:
    """(env-steps/s, peak MB of Python allocations) for a batch of ``num_envs``, and with
    a ``reference`` run, the median ratio of windows each timed right after one of it.

    The memory is traced in a separate short run: ``tracemalloc`` slows every allocation,
    so it stays off while the steps are timed (``memory=False``: not traced, NaN)."""

    mode = _vector_mode(env_id)
    shared: dict[str, Any] = {"copy_masks": False} if mode == "vector_entry_point" else {}

    def make() -> Any:
        return gym.make_vec(
            env_id, num_envs=num_envs, vectorization_mode=mode, **shared, **(kwargs or {})
        )

    envs = make()
    _, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)

    def act(info: dict[str, Any]) -> np.ndarray:
        mask = np.asarray(info["action_mask"], dtype=bool)
        return np.argmax(rng.random(mask.shape, dtype=np.float32) * mask, axis=1)

    for _ in range(WARM_UP_STEPS):  # past the start, where every env begins at once
        _, _, _, _, info = envs.step(act(info))

    def run(deadline: float) -> tuple[int, float]:
        nonlocal info
        steps, spent = 0, 0.0
        while time.perf_counter() < deadline or steps == 0:
            actions = act(info)
            tick = time.perf_counter()
            _, _, _, _, info = envs.step(actions)
            spent += time.perf_counter() - tick
            steps += num_envs
        return steps, spent

    rate, _, ratio = _paired_rates(window, repeats, run, reference)
    envs.close()
    if not memory:
        return rate, float("nan"), ratio
    tracemalloc.start()
    envs = make()
    _, info = envs.reset(seed=0)
    for _ in range(20):
        _, _, _, _, info = envs.step(act(info))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    envs.close()
    return rate, peak / 2**20, ratio


def bench(
    envs: tuple[str, ...] | None = None,
    batches: tuple[int, ...] = BATCHES,
    window: float = 1.0,
    repeats: int = 3,
    log: Any = None,
    settings: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Every figure of the module doc, as a dict ready for JSON. ``settings``: per env id,
    keyword arguments beyond the registered ones (by default :data:`BENCH_KWARGS`); ``envs``:
    by default :func:`bench_envs`."""
    if not window >= MIN_WINDOW:
        raise ValueError(
            f"a timed window must last at least {MIN_WINDOW} s to count any step, got {window} s"
        )
    envs = bench_envs() if envs is None else envs
    settings = BENCH_KWARGS if settings is None else settings
    games, references = [], []
    for env_id in envs:
        if log:
            log(f"{env_id} ...")
        kwargs = settings.get(env_id, {})
        filled, levels = fill_pool(env_id, kwargs)
        frozen = _frozenlake_run()
        single, reference, ratio = _paired_rates(
            window, repeats, _single_run(env_id, kwargs), frozen
        )
        references.append(reference)
        figures = GameFigures(
            env=env_id,
            single_steps_per_s=single,
            resets_per_s=resets_per_second(env_id, window, repeats, kwargs),
            vector_mode=_vector_mode(env_id),
            ratio_to_frozenlake=ratio,
            kwargs=kwargs,
            pool_fill_s=filled,
            pool_levels=levels,
            frozenlake_steps_per_s=reference,
        )
        for b in batches:
            rate, peak, ratio = batched_steps_per_second(
                env_id, b, window, repeats, kwargs, reference=frozen
            )
            figures.batched_steps_per_s[str(b)] = rate
            figures.batched_ratio_to_frozenlake[str(b)] = ratio
            figures.peak_mb = peak
        games.append(figures)
    return {
        "machine": f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "grid_games": grid_envs.__version__,
        "frozenlake_steps_per_s": statistics.median(references) if references else 0.0,
        "games": [asdict(g) for g in games],
    }


def table(report: dict[str, Any]) -> str:
    batches = sorted({b for g in report["games"] for b in g["batched_steps_per_s"]}, key=int)
    head = " | ".join(f"batch {int(b):,}" for b in batches)
    settings = [
        f"{g['env'].split('/')[1]}: {g['kwargs'] or 'registered defaults'}"
        + (
            f", pool of {g.get('pool_levels', 0):,} levels generated in "
            f"{g['pool_fill_s']:.1f} s before the timing"
            if g.get("pool_fill_s")
            else ""
        )
        for g in report["games"]
        if g.get("kwargs") or g.get("pool_fill_s")
    ]
    lines = [
        f"FrozenLake-v1 (gymnasium.make, random actions): median "
        f"{report['frozenlake_steps_per_s']:,.0f} steps/s ({report['machine']}, {report['date']})",
        "",
        f"| env | steps/s (x FrozenLake, windows paired) | resets/s | vector | {head} | peak MB |",
        "|---|---|---|---|" + "---|" * len(batches) + "---|",
    ]
    for g in report["games"]:
        ratios = g.get("batched_ratio_to_frozenlake", {})
        cells = " | ".join(
            f"{g['batched_steps_per_s'][b]:,.0f}" + (f" ({ratios[b]:.2f}x)" if b in ratios else "")
            for b in batches
        )
        lines.append(
            f"| {g['env'].split('/')[1]} | {g['single_steps_per_s']:,.0f} "
            f"({g['ratio_to_frozenlake']:.2f}x; FrozenLake "
            f"{g.get('frozenlake_steps_per_s') or report['frozenlake_steps_per_s']:,.0f}) "
            f"| {g['resets_per_s']:,.0f} | {g['vector_mode']} "
            f"| {cells} | {g['peak_mb']:.0f} |"
        )
    if settings:
        lines += ["", "Settings and level pools: " + "; ".join(settings)]
    return "\n".join(lines)
