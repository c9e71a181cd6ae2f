"""The HTML replay in a real browser: headless Chromium (Debian's ``chromium``) opens a
recording of each game, is stepped with the keys, and what the page shows (the move, its
reward, the return, the next move, what the agent weighed and what is drawn over the
board) is read back and compared with the recorded episode.

Marked ``browser``. Without a Chromium the tests are skipped, unless
``GRIDGAMES_REQUIRE_BROWSER`` is set, as ``.ci/run`` sets it once it has installed one.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from agents import evaluate, make_agent
from agents.evaluation import load_policy, load_search
from agents.pretrained import model_path
from agents.watch import Recorder, write_recording
from agents.watch.replay import replay_data

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("CHROMIUM") or next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)
# the flags a root user's headless Chromium needs on a machine with no network
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        if os.environ.get("GRIDGAMES_REQUIRE_BROWSER"):
            pytest.fail("no Chromium found, and GRIDGAMES_REQUIRE_BROWSER is set")
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


def _network(env_id: str, search: bool = False, **settings: Any) -> Any:
    path = str(model_path(env_id))
    agent, _ = load_search(path, env_id, **settings) if search else load_policy(path, env_id)
    return agent


def _baseline(name: str, env_id: str, **kwargs: Any) -> Any:
    return lambda: make_agent(name, gym.make(env_id), seed=0, **kwargs)


# every game; a network alone, searches and algorithms among them; each the board it plays
CASES: dict[str, tuple[str, Any, dict[str, Any]]] = {
    "sokoban-search": ("GridGames/Sokoban-v0",
                       lambda: _network("GridGames/Sokoban-v0", search=True), {}),
    "minesweeper-solver": ("GridGames/Minesweeper-v0",
                           _baseline("solver", "GridGames/Minesweeper-v0"), {}),
    "knight-network": ("GridGames/Knight-v0", lambda: _network("GridGames/Knight-v0"), {}),
    "knight-dijkstra": ("GridGames/Knight-v0", _baseline("dijkstra", "GridGames/Knight-v0"), {}),
    "lines98-search": ("GridGames/Lines98-v0",
                       lambda: _network("GridGames/Lines98-v0", search=True, simulations=4,
                                        replies=0), {"time_limit": 12}),
    "pikachu-planner": ("GridGames/Pikachu-Small-v0",
                        _baseline("planner", "GridGames/Pikachu-Small-v0", max_seconds=60.0), {}),
}  # fmt: skip


def _recorded(tmp_path: Path, case: str) -> tuple[Path, dict[str, Any]]:
    env_id, agent, board = CASES[case]
    recorder = Recorder(episodes=2)
    evaluate(env_id, agent(), episodes=2, seed=0, env_kwargs=board, record=recorder)
    assert recorder.recording is not None
    path = write_recording(recorder.recording, tmp_path / f"{case}.html")
    return path, replay_data(recorder.recording)


def _shown(page: Any) -> dict[str, Any]:
    """What the page shows now."""
    text = page.text_content
    rows = page.eval_on_selector_all(
        "#thought tr", "rows => rows.map(r => [r.cells[0].textContent, r.cells[2].textContent])"
    )
    return {
        "move": text("#move"), "last": text("#last-move"), "next": text("#next-move"),
        "reward": page.get_attribute("#last-reward", "data-value"),
        "return": float(page.get_attribute("#return", "data-value")),
        "rows": rows, "overlay": text("#overlay-text"),
        "facts": page.eval_on_selector_all("#facts dt", "ds => ds.map(d => d.textContent)"),
        "frame": page.get_attribute("#board", "src"),
        "thinking": page.is_visible("#thinking"),
    }  # fmt: skip


def _expect(shown: dict[str, Any], episode: dict[str, Any], t: int) -> None:
    """The page at position ``t`` of ``episode`` shows what the recording holds."""
    steps = episode["steps"]
    n = len(steps)
    assert shown["move"] == f"{t} / {n}"
    assert shown["frame"] == episode["frames"][t]
    if t:
        last = steps[t - 1]
        assert shown["last"] == last["text"]
        assert float(shown["reward"]) == pytest.approx(last["reward"])
        assert shown["return"] == pytest.approx(last["total"])
        assert (
            "last move at " + " ".join(f"({r}, {c})" for r, c in last["cells"]) in shown["overlay"]
        )
    else:
        assert shown["last"] == "none yet" and shown["return"] == 0
    if t == n:
        assert shown["next"] == "the episode is over" and not shown["thinking"]
        return
    step = steps[t]
    thought = step["thought"]
    assert shown["next"] == step["text"]
    assert [text for text, _ in shown["rows"]] == [text for text, _, _ in thought["moves"]]
    for (_, weight_text), (_, weight, _) in zip(shown["rows"], thought["moves"], strict=True):
        assert float(weight_text) == pytest.approx(weight, abs=1e-3 if abs(weight) < 1000 else 1)
    assert shown["facts"] == [name for name, _ in thought["facts"]]
    assert "next move at " + " ".join(f"({r}, {c})" for r, c in step["cells"]) in shown["overlay"]
    if thought["heat"] is not None:
        cells = sum(p is not None for row in thought["heat"] for p in row)
        assert f"{thought['heat_name']} on {cells} cells" in shown["overlay"]
    if len(thought["path"]) > 1:
        assert f"planned route of {len(thought['path'])} cells" in shown["overlay"]


@pytest.mark.parametrize("case", list(CASES))
def test_a_replay_steps_with_the_keys_and_shows_the_recorded_episode(
    browser: Any, tmp_path: Path, case: str
) -> None:
    path, data = _recorded(tmp_path, case)
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on(
        "request",
        lambda r: None if r.url.startswith(("file:", "data:")) else problems.append(r.url),
    )
    page.goto(path.as_uri())
    episode = data["episodes"][0]
    n = len(episode["steps"])
    assert page.text_content("#title") == f"{data['agent']} on {data['env']}"
    _expect(_shown(page), episode, 0)
    for t in range(1, min(n, 4) + 1):  # right arrow: one move on
        page.keyboard.press("ArrowRight")
        _expect(_shown(page), episode, t)
    page.keyboard.press("ArrowLeft")
    _expect(_shown(page), episode, min(n, 4) - 1)
    page.keyboard.press("End")
    _expect(_shown(page), episode, n)
    page.keyboard.press("ArrowRight")  # past the end: stays
    _expect(_shown(page), episode, n)
    page.keyboard.press("Home")
    _expect(_shown(page), episode, 0)
    page.keyboard.press(" ")  # plays on its own, then pauses
    page.wait_for_function("document.getElementById('move').textContent.split(' / ')[0] > 1")
    page.keyboard.press(" ")
    t = int(page.text_content("#move").split(" / ")[0])
    page.wait_for_timeout(600)
    _expect(_shown(page), episode, t)  # paused: still there
    page.keyboard.press("PageDown")  # the second episode
    _expect(_shown(page), data["episodes"][1], 0)
    page.keyboard.press("ArrowRight")
    _expect(_shown(page), data["episodes"][1], 1)
    assert not problems, problems
    page.close()
