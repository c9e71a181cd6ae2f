"""Recordings: any agent's episodes as a GIF, an MP4 or an HTML replay, with what the agent
weighed; recording never changes what is played; the command line's --record."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from agents import evaluate, list_agents, make_agent
from agents.base import Thought
from agents.evaluation import load_policy, load_search
from agents.pretrained import model_path
from agents.watch import Recorder, write_recording
from agents.watch.replay import replay_data
from grid_games import cli

# a small board of every game, where every agent's episodes are short
BOARDS: dict[str, dict[str, Any]] = {
    "GridGames/Sokoban-Small-v0": {},
    "GridGames/SokobanPush-v0": {"level_pool": 30},
    "GridGames/Minesweeper-v0": {"rows": 6, "cols": 6, "mines": 5},
    "GridGames/Knight-v0": {},
    "GridGames/Lines98-Small-v0": {"time_limit": 25},
    "GridGames/Pikachu-Small-v0": {},
}
# agents with a clock play on a budget far above what these boards need, so that what they
# play does not depend on the machine's load
UNHURRIED = {"Sokoban solver": {"max_seconds": 60.0}, "Pikachu planner": {"max_seconds": 60.0},
             "Lines98 lookahead": {"max_seconds": 60.0, "candidates": 4, "replies": 2}}  # fmt: skip
PAIRS = [(env_id, name) for env_id in BOARDS for name in list_agents(env_id)]


def played(env_id: str, agent: Any, record: Recorder | None, episodes: int = 2) -> Any:
    return evaluate(env_id, agent, episodes=episodes, seed=3, env_kwargs=BOARDS.get(env_id, {}),
                    record=record)  # fmt: skip


@pytest.mark.parametrize(("env_id", "name"), PAIRS)
def test_recording_any_agent_keeps_its_play_and_its_moves(env_id: str, name: str) -> None:
    """The same episodes with a recorder as without; the recording holds the first
    episode: a frame a move plus the first, each move's words, cells and reward, and the
    return the evaluation counted."""

    def agent() -> Any:
        game = env_id.split("/")[1].split("-")[0].removesuffix("Push")
        return make_agent(name, gym.make(env_id, **BOARDS[env_id]), seed=3,
                          **UNHURRIED.get(f"{game} {name}", {}))  # fmt: skip

    plain = played(env_id, agent(), None)
    recorder = Recorder(episodes=1)
    watched = played(env_id, agent(), recorder)
    assert (watched.returns, watched.lengths) == (plain.returns, plain.lengths)
    recording = recorder.recording
    assert recording is not None and len(recording.episodes) == 1
    episode = recording.episodes[0]
    assert episode.seed == 3 and len(episode.steps) == plain.lengths[0]
    assert len(episode.frames) == len(episode.steps) + 1
    assert episode.total == pytest.approx(plain.returns[0])
    assert all(not step.illegal and step.text and step.cells for step in episode.steps)
    for step in episode.steps:
        assert len(step.move_texts) == len(step.thought.moves) == len(step.move_cells)
    env = gym.make(env_id, render_mode="rgb_array", **BOARDS[env_id])
    env.reset(seed=3)
    assert np.array_equal(episode.frames[0], env.render())
    env.step(episode.steps[0].action)
    assert np.array_equal(episode.frames[1], env.render())


def _network(env_id: str, search: bool = False, **settings: Any) -> Any:
    path = str(model_path(env_id))
    agent, _ = load_search(path, env_id, **settings) if search else load_policy(path, env_id)
    return agent


def _thoughts(env_id: str, agent: Any, episodes: int = 1) -> list[Thought]:
    recorder = Recorder(episodes)
    played(env_id, agent, recorder, episodes)
    assert recorder.recording is not None
    return [s.thought for e in recorder.recording.episodes for s in e.steps]


def test_a_network_shows_its_likeliest_moves_and_its_value() -> None:
    thoughts = _thoughts("GridGames/Knight-v0", _network("GridGames/Knight-v0"))
    for th in thoughts:
        probs = [p for _, p in th.moves]
        assert th.weight == "probability" and th.value is not None and np.isfinite(th.value)
        assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-9


def test_a_search_shows_what_it_spent_and_weighed() -> None:
    agent = _network("GridGames/Knight-v0", search=True, simulations=4, variant="gumbel")
    thoughts = _thoughts("GridGames/Knight-v0", agent)
    searched = [th for th in thoughts if "simulations" in th.facts]
    assert searched and all(th.weight == "improved policy" for th in searched)
    assert all(th.moves and th.value is not None for th in searched)
    assert max(th.facts["simulations"] for th in searched) >= 4  # a tree was searched
    agent = _network("GridGames/Pikachu-v0", search=True, simulations=64, variant="exact")
    first = _thoughts("GridGames/Pikachu-v0", agent)[0]
    assert first.weight == "network's prior" and first.facts["nodes"] >= 1
    assert first.facts["solver"] in ("cleared", "unsolvable", "gave_up")
    lines = "GridGames/Lines98-v0"  # ordered: the look-ahead's judgements of its candidates
    for replies, weight in ((0, "the board it leaves, judged"), (2, "its best reply, judged")):
        agent = _network(lines, search=True, simulations=3, replies=replies)
        recorder = Recorder()
        evaluate(lines, agent, episodes=1, seed=3, env_kwargs={"time_limit": 4}, record=recorder)
        assert recorder.recording is not None
        thoughts = [s.thought for s in recorder.recording.episodes[0].steps]
        assert all(th.facts["candidates judged"] == 3 for th in thoughts)
        for th in thoughts:  # with replies: the candidates whose replies it weighed
            assert len(th.moves) == (th.facts["replies weighed"] or 3)
        assert {th.weight for th in thoughts} <= {weight, "the board it leaves, judged"}
        assert any(th.weight == weight for th in thoughts)


def test_the_minesweeper_solver_shows_its_mine_probabilities() -> None:
    env_id = "GridGames/Minesweeper-v0"
    thoughts = _thoughts(env_id, make_agent("solver", gym.make(env_id, **BOARDS[env_id])))
    first = thoughts[0]
    assert first.heat_name == "mine probability" and first.heat is not None
    assert np.allclose(first.heat, 5 / 36)  # nothing seen: the mines over the cells
    later = [th.heat for th in thoughts[1:] if th.heat is not None]
    assert later and all(np.isnan(h).any() for h in later)  # revealed cells: no figure
    assert all(np.nanmin(h) >= 0 and np.nanmax(h) <= 1 for h in later)
    # in the last cells it names its chance of winning with best play
    thoughts = _thoughts(env_id, make_agent("solver", gym.make(env_id, **BOARDS[env_id])), 6)
    odds = [th.facts["wins with best play"] for th in thoughts if "wins with best play" in th.facts]
    assert odds and all(0 < p <= 1 for p in odds)


def test_the_algorithms_show_their_plans() -> None:
    env = gym.make("GridGames/Knight-v0")
    knight = _thoughts("GridGames/Knight-v0", make_agent("dijkstra", env))
    env.reset(seed=3)
    s = env.unwrapped.game_state()
    assert knight[0].path[0] == s.knight and knight[0].path[-1] == s.level.exit
    assert knight[0].facts["cheapest route left"] == knight[0].facts["energy"]
    sokoban = "GridGames/Sokoban-Small-v0"
    plan = _thoughts(sokoban, make_agent("solver", gym.make(sokoban), max_seconds=60.0))
    assert [th.facts["pushes left"] for th in plan][-1] == 0
    assert plan[0].facts["pushes left"] >= plan[-2].facts["pushes left"]
    assert re.fullmatch(r"[lurdLURD]+", plan[0].facts["plan after this move"].rstrip("…"))
    fewest = _thoughts(sokoban, make_agent("optimal", gym.make(sokoban)))
    assert [th.facts["fewest moves to solve"] for th in fewest] == list(range(len(fewest), 0, -1))


@pytest.mark.parametrize("suffix", [".gif", ".mp4", ".html"])
def test_a_recording_is_written_as_its_suffix_says(tmp_path: Path, suffix: str) -> None:
    """Two episodes: the GIF has a frame a move plus each episode's first, the MP4 decodes
    to as many frames, the HTML holds the recording as its data."""
    import imageio.v3 as iio

    recorder = Recorder(episodes=2)
    played("GridGames/Sokoban-Small-v0", "random", recorder, episodes=3)
    recording = recorder.recording
    assert recording is not None
    frames = sum(len(e.frames) for e in recording.episodes)
    path = write_recording(recording, tmp_path / f"two{suffix}")
    if suffix == ".html":
        text = path.read_text()
        data = json.loads(re.search(r'id="replay-data"[^>]*>(.*?)</script>', text, re.S)[1])
        assert data == json.loads(json.dumps(replay_data(recording)))
        assert "http://" not in text and "https://" not in text  # nothing fetched
    elif suffix == ".gif":
        assert iio.improps(path, index=None).shape[0] == frames
    else:
        import imageio_ffmpeg

        assert imageio_ffmpeg.count_frames_and_secs(str(path))[0] == frames
    with pytest.raises(ValueError, match="exists already"):
        write_recording(recording, path)
    write_recording(recording, path, force=True)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no partial file left


def test_every_id_records_with_gymnasiums_record_video(tmp_path: Path) -> None:
    from gymnasium.wrappers import RecordVideo

    from tests.conftest import ENV_IDS

    light = {"GridGames/Sokoban-v0": {"level_pool": 30}, "GridGames/SokobanPush-v0":
             {"level_pool": 30}, "GridGames/Knight-Large-v0": {"level_pool": 10}}  # fmt: skip
    for env_id in ENV_IDS:
        folder = tmp_path / env_id.split("/")[1]
        env = gym.make(env_id, render_mode="rgb_array", max_episode_steps=6,
                       **light.get(env_id, {}))  # fmt: skip
        env = RecordVideo(env, str(folder), episode_trigger=lambda _: True, disable_logger=True)
        _, info = env.reset(seed=0)
        done = False
        while not done:
            first = int(np.flatnonzero(info["action_mask"])[0])
            _, _, terminated, truncated, info = env.step(first)
            done = terminated or truncated
        env.close()
        assert [p.suffix for p in folder.iterdir()] == [".mp4"], env_id


def test_eval_records_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ms.html"
    argv = ["eval", "Minesweeper-v0", "--agent", "solver", "--episodes", "3", "--set", "rows=5",
            "--set", "cols=5", "--set", "mines=3", "--no-progress"]  # fmt: skip
    assert cli.main([*argv, "--record", str(path), "--record-episodes", "2"]) == 0
    assert f"recorded 2 episodes: {path}" in capsys.readouterr().err
    assert len(replay_data_of(path)["episodes"]) == 2
    refused = {
        "--record-episodes: options of --record": ["--record-episodes", "1"],
        "exists already": ["--record", str(path)],
        "the suffix says the format": ["--record", str(tmp_path / "ms.avi")],
        "does not exist": ["--record", str(tmp_path / "nowhere" / "ms.gif")],
        "only 3 episodes are played": ["--record", str(tmp_path / "b.gif"),
                                       "--record-episodes", "4"],
        "--force: options of --record": ["--force"],
    }  # fmt: skip
    for message, more in refused.items():
        assert cli.main([*argv, *more]) == 2, message
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ms.html"]


def replay_data_of(path: Path) -> dict[str, Any]:
    """The recording an HTML replay holds."""
    text = path.read_text()
    found = re.search(r'id="replay-data"[^>]*>(.*?)</script>', text, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found[1])
    return data


@pytest.mark.pretrained
def test_the_shipped_sokoban_search_records_as_gif_mp4_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command the docs show, in all three formats: each file opens and holds the
    episode played (the MP4 and the GIF a frame a move plus the first)."""
    import imageio.v3 as iio
    import imageio_ffmpeg

    argv = ["eval", "Sokoban-v0", "--agent", "search", "--model", "pretrained",
            "--episodes", "1", "--no-progress", "--json"]  # fmt: skip
    moves = []
    for suffix in (".html", ".gif", ".mp4"):
        path = tmp_path / f"out{suffix}"
        assert cli.main([*argv, "--record", str(path)]) == 0
        moves.append(json.loads(capsys.readouterr().out)["mean_length"])
        if suffix == ".html":
            steps = replay_data_of(path)["episodes"][0]["steps"]
            assert len(steps) == moves[-1] and steps[0]["thought"]["facts"]
        elif suffix == ".gif":
            assert iio.improps(path, index=None).shape[0] == moves[-1] + 1
        else:
            assert imageio_ffmpeg.count_frames_and_secs(str(path))[0] == moves[-1] + 1
    assert len(set(moves)) == 1  # the same episode each time
