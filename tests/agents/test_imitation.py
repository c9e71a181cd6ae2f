"""The algorithms as teachers: labelled states, cloning, DAgger, teach-then-tune, Minari."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents import evaluate
from agents.train.build import new_model, training_env
from agents.train.cloning import accuracy, clone
from agents.train.config import TrainConfig
from agents.train.labels import label_states
from agents.train.models import PolicyAgent
from agents.train.plan import plan_run
from agents.train.sb3 import train
from agents.train.teaching import teach

KNIGHT = "GridGames/Knight-v0"


def fixed_maze() -> dict[str, object]:
    from grid_envs.knight.levels import sample_paths

    return {"levels": str(sample_paths()[0]), "energy_slack": 1.5}


def knight_model(kwargs: dict[str, object], seed: int = 0):
    config = TrainConfig(env_id=KNIGHT, env_kwargs=kwargs, n_envs=4, n_steps=32,
                         batch_size=64, features_dim=64, seed=seed)  # fmt: skip
    return new_model(plan := plan_run(config), training_env(plan), tensorboard_log=None)


def test_teacher_labels_are_legal_reproducible_and_win() -> None:
    labels, stats = label_states(KNIGHT, "dijkstra", 200, seed=3, n_envs=4)
    assert len(labels) >= 200 and stats.episodes >= 1
    assert stats.win_rate == 1.0  # the teacher moved: Dijkstra escapes every maze
    assert labels.masks[np.arange(len(labels)), labels.actions].all()
    again, _ = label_states(KNIGHT, "dijkstra", 200, seed=3, n_envs=4)
    assert np.array_equal(labels.observations, again.observations)
    assert np.array_equal(labels.actions, again.actions)
    assert labels.returns.shape == labels.actions.shape


def test_cloning_matches_the_teacher_on_most_states_it_saw() -> None:
    kwargs = fixed_maze()
    labels, _ = label_states(KNIGHT, "dijkstra", 600, seed=0, env_kwargs=kwargs, n_envs=4)
    model = knight_model(kwargs)
    before = accuracy(model, labels)
    after = clone(model, labels, epochs=15, batch_size=64)
    assert after >= 0.9 > before + 0.2


def test_dagger_labels_the_states_the_learner_reaches() -> None:
    kwargs = fixed_maze()
    teacher_labels, teacher_stats = label_states(KNIGHT, "dijkstra", 100, env_kwargs=kwargs)
    untrained = knight_model(kwargs)
    learner_labels, stats = label_states(
        KNIGHT, "dijkstra", 100, env_kwargs=kwargs, learner=untrained, beta=0.0
    )
    seen = {o.tobytes() for o in teacher_labels.observations}
    new_states = sum(o.tobytes() not in seen for o in learner_labels.observations)
    assert new_states > 0  # off the teacher's route
    assert stats.agreement < 1.0 and stats.win_rate < teacher_stats.win_rate
    # every label is still the teacher's action, legal where the learner took the game
    assert learner_labels.masks[np.arange(len(learner_labels)), learner_labels.actions].all()

    model = knight_model(kwargs, seed=1)
    result = teach(model, KNIGHT, "dijkstra", 300, rounds=3, env_kwargs=kwargs, epochs=2)
    assert [r["moved_by"] for r in result.rounds] == ["teacher", "learner", "learner"]
    totals = [r["total_states"] for r in result.rounds]
    assert totals[0] < totals[1] < totals[2] == len(result.labels)

    # a warm teacher's own play is cloned first; then the learner moves in every round,
    # and only the teacher's labels of its states are kept
    model = knight_model(kwargs, seed=2)
    result = teach(model, KNIGHT, "dijkstra", 200, rounds=2, env_kwargs=kwargs, epochs=2,
                   warm="dijkstra", warm_states=150)  # fmt: skip
    assert [(r["round"], r["moved_by"]) for r in result.rounds] == [
        ("warm", "dijkstra"), (0, "learner"), (1, "learner")]  # fmt: skip
    assert result.rounds[0]["states"] >= 150
    assert len(result.labels) == result.rounds[1]["states"] + result.rounds[2]["states"]
    assert result.rounds[1]["agreement"] < 1.0  # the learner moved, not the teacher


def test_workers_label_the_episodes_one_process_would_split_between_them() -> None:
    # worker w plays the episodes seeded seed + w, seed + w + 2, ...: the same labels as
    # two single-process calls with that stride, in worker order
    kwargs = fixed_maze()
    both, stats = label_states(KNIGHT, "dijkstra", 120, seed=7, n_envs=4, workers=2)
    parts = [label_states(KNIGHT, "dijkstra", 60, seed=7 + w, n_envs=2, stride=2) for w in (0, 1)]
    assert len(both) >= 120
    for got, want in zip(both.arrays(), parts[0][0].extend(parts[1][0]).arrays(), strict=True):
        assert np.array_equal(got, want)
    assert stats.episodes == sum(part.episodes for _, part in parts) and stats.win_rate == 1.0
    # the learner moves in the workers too (a saved copy of it), and they say how it agreed
    learner = knight_model(kwargs)
    labels, stats = label_states(KNIGHT, "dijkstra", 100, env_kwargs=kwargs, learner=learner,
                                 beta=0.0, n_envs=4, workers=2)  # fmt: skip
    assert len(labels) >= 100 and 0.0 <= stats.agreement < 1.0 and stats.win_rate < 1.0
    assert labels.masks[np.arange(len(labels)), labels.actions].all()
    with pytest.raises(ValueError, match="workers and stride must be at least 1"):
        label_states(KNIGHT, "dijkstra", 10, workers=0)


def test_cloning_takes_its_own_step_size_and_gives_ppo_its_own_back(tmp_path: Path) -> None:
    kwargs = fixed_maze()
    labels, _ = label_states(KNIGHT, "dijkstra", 64, env_kwargs=kwargs, n_envs=2)
    model = knight_model(kwargs)
    groups = model.policy.optimizer.param_groups
    before = [p.detach().clone() for p in model.policy.parameters()]
    clone(model, labels, epochs=1, batch_size=64, lr=0.5)  # a step size PPO never uses
    assert [g["lr"] for g in groups] == [3e-4] * len(groups)
    after = list(model.policy.parameters())
    moved = max(float((p - b).abs().max()) for p, b in zip(after, before, strict=True))
    assert moved > 0.1  # steps of 0.5, not 3e-4
    config = TrainConfig(env_id=KNIGHT, teacher="dijkstra", teacher_lr=0.0, timesteps=64)
    with pytest.raises(ValueError, match="teacher_lr must be above 0"):
        train(config, tmp_path / "run", progress=False)
    config = TrainConfig(env_id=KNIGHT, teacher="dijkstra", teacher_workers=0, timesteps=64)
    with pytest.raises(ValueError, match="teacher_workers must be at least 1"):
        train(config, tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_bad_teacher_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="no agent 'nobody'"):
        label_states(KNIGHT, "nobody", 10)
    with pytest.raises(ValueError, match="needs a learner"):
        label_states(KNIGHT, "dijkstra", 10, beta=0.5)
    with pytest.raises(ValueError, match="states must be"):
        label_states(KNIGHT, "dijkstra", 0)


def test_teach_then_tune_saves_a_model_that_loads_and_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kwargs = fixed_maze()
    config = TrainConfig(
        env_id=KNIGHT, env_kwargs=kwargs, timesteps=512, n_envs=4, n_steps=64, batch_size=64,
        features_dim=64, eval_freq=256, eval_episodes=4, checkpoint_freq=256,
        teacher="dijkstra", teacher_states=600, dagger_rounds=2,
    )  # fmt: skip
    result = train(config, tmp_path, progress=False)
    rounds = json.loads((tmp_path / "teacher" / "rounds.json").read_text())
    assert [r["moved_by"] for r in rounds] == ["teacher", "learner"]
    said = capsys.readouterr().err  # each round says how it went as it ends
    assert "teaching round 1/2, the teacher moving" in said
    assert "teaching round 2/2, the learner moving" in said and "agreed on" in said
    settings = json.loads(result.settings_path.read_text())
    assert settings["teacher"] == "dijkstra" and settings["teacher_seconds"] > 0
    for path in (result.model_path, tmp_path / "teacher" / "cloned.zip"):
        agent = PolicyAgent.load(path)
        played = evaluate(KNIGHT, agent, 4, 0, kwargs)
        assert played.episodes == 4  # legal moves only: an illegal one would raise
    # a teacher's run resumes from its labels, and refuses another teacher
    with pytest.raises(ValueError, match="teacher"):
        train(TrainConfig(**{**config.__dict__, "teacher": "random"}), tmp_path, progress=False)


def test_teacher_with_dqn_is_refused(tmp_path: Path) -> None:
    config = TrainConfig(env_id=KNIGHT, algo="dqn", timesteps=64, n_envs=1,
                         env_kwargs=fixed_maze(), teacher="dijkstra")  # fmt: skip
    with pytest.raises(ValueError, match="not DQN"):
        train(config, tmp_path, progress=False)


def test_demos_round_trip_through_minari(tmp_path: Path) -> None:
    from agents.train.demos import labels_from_dataset, load_demos, record_demos

    kwargs = {"rows": 5, "cols": 5}
    dataset = record_demos(KNIGHT, "dijkstra", 3, seed=7, out=tmp_path, env_kwargs=kwargs)
    loaded = load_demos(tmp_path / dataset.spec.dataset_id)
    assert loaded.total_episodes == 3
    env = loaded.recover_environment()
    assert env.spec.id == KNIGHT and env.spec.kwargs["rows"] == 5
    for k, episode in enumerate(loaded.iterate_episodes()):
        obs, _ = env.reset(seed=7 + k)
        assert np.array_equal(obs, episode.observations[0])
        masks = episode.infos["action_mask"]
        assert masks.shape == (len(episode.actions) + 1, 4)
        for t, action in enumerate(episode.actions):
            assert masks[t, action]
            obs, reward, *_ = env.step(int(action))
            assert np.array_equal(obs, episode.observations[t + 1])
            assert reward == pytest.approx(episode.rewards[t])
        assert episode.terminations[-1] and episode.infos["is_success"][-1]
    labels = labels_from_dataset(loaded)
    assert len(labels) == loaded.total_steps
    with pytest.raises(ValueError, match="exists already"):
        record_demos(KNIGHT, "dijkstra", 1, out=tmp_path, env_kwargs=kwargs)


def test_cli_demos_writes_a_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative --out, as the docs show it, is written where it says; a write that fails
    leaves no dataset behind, so the rerun is not refused as existing."""
    import minari

    from grid_games import cli

    monkeypatch.chdir(tmp_path)
    args = ["demos", "Minesweeper-v0", "--agent", "solver", "--episodes", "2", "--out",
            "demos", "--set", "rows=5", "--set", "cols=5", "--set", "mines=3"]  # fmt: skip

    def fails(**_: object) -> None:
        raise OSError("the disk is full")

    with monkeypatch.context() as patched:
        patched.setattr(minari, "create_dataset_from_buffers", fails)
        assert cli.main(args) == 2
    assert "the disk is full" in capsys.readouterr().err
    assert not list((tmp_path / "demos").rglob("*.hdf5"))
    assert not (tmp_path / "demos" / "gridgames" / "minesweeper-v0-solver-v0").exists()
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "2 episodes" in out and "gridgames/minesweeper-v0-solver-v0" in out
    folder = tmp_path / "demos" / "gridgames" / "minesweeper-v0-solver-v0"
    assert (folder / "data" / "main_data.hdf5").is_file()
    assert [p.name for p in (tmp_path / "demos").iterdir()] == ["gridgames"]  # nothing left over
    assert minari.MinariDataset(folder / "data").total_episodes == 2
    assert gym.make("GridGames/Minesweeper-v0")  # the registry is untouched


def test_maze_value_iteration_with_the_rules_costs_follows_a_cheapest_route() -> None:
    """With the cost the rules charge (1, or 3 into a monster's cell), the maze-vi network's
    greedy move is on a cheapest route to the exit in every state of Dijkstra's games."""
    import torch

    from agents.nets.board import MazeValueExtractor

    env = gym.make(KNIGHT)
    extractor = MazeValueExtractor(env.observation_space)
    with torch.no_grad():
        extractor.head.weight.zero_()
        extractor.head.weight[0, 2] = float(np.log(np.expm1(3.0)) - np.log(np.expm1(1.0)))
        extractor.head.bias.fill_(float(np.log(np.expm1(1.0))))  # softplus: 1, or 3
    labels, _ = label_states(KNIGHT, "dijkstra", 300, seed=5, n_envs=4)
    with torch.no_grad():
        logits = extractor(torch.as_tensor(labels.observations))[:, :4].numpy()
    moves = np.argmax(np.where(labels.masks, logits, -np.inf), axis=1)
    on_route = 0
    for obs, move in zip(labels.observations, moves, strict=True):
        r, c = np.argwhere(obs[4] == 1)[0]
        monsters, exit_ = obs[6] == 1, tuple(np.argwhere(obs[5] == 1)[0])
        dist = route_costs(obs[:4], monsters, exit_)
        dr, dc = ((-1, 0), (1, 0), (0, -1), (0, 1))[move]
        price = 3 if monsters[r + dr, c + dc] else 1
        on_route += price + dist[r + dr, c + dc] == dist[r, c]
    assert on_route == len(moves)


def test_maze_value_iteration_backpropagates_through_its_last_sweeps_only() -> None:
    """The sweeps run without a gradient change nothing forward, and the costs still get
    one: the full iteration and the truncated one give the same logits."""
    import torch

    from agents.nets.board import MazeValueExtractor

    env = gym.make("GridGames/Knight-Large-v0")
    obs = torch.as_tensor(np.stack([env.reset(seed=s)[0] for s in range(2)]))
    torch.manual_seed(0)
    full = MazeValueExtractor(env.observation_space, grad_iterations=10_000)
    short = MazeValueExtractor(env.observation_space, grad_iterations=8)
    short.load_state_dict(full.state_dict())
    assert short.iterations == 625
    out_full, out_short = full(obs), short(obs)
    assert torch.allclose(out_full, out_short)
    out_short[:, :4].sum().backward()
    assert short.head.weight.grad is not None and short.head.weight.grad.abs().sum() > 0


def route_costs(open_sides: np.ndarray, monsters: np.ndarray, exit_: tuple[int, int]):
    """Cheapest cost from each cell to the exit, by Dijkstra over the observation's planes
    (open up, right, down, left), written apart from the project's solver."""
    import heapq

    rows, cols = monsters.shape
    dist = np.full((rows, cols), np.inf)
    dist[exit_] = 0
    heap = [(0.0, exit_)]
    steps = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}
    while heap:
        d, (r, c) = heapq.heappop(heap)
        if d > dist[r, c]:
            continue
        price_here = 3 if monsters[r, c] else 1  # entering (r, c) from a neighbour
        for side, (dr, dc) in steps.items():
            if not open_sides[side, r, c]:
                continue
            v = (r + dr, c + dc)
            if d + price_here < dist[v]:
                dist[v] = d + price_here
                heapq.heappush(heap, (d + price_here, v))
    return dist


def test_reported_evaluations_use_seeds_no_training_episode_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every seed a taught run resets an env with (training envs, evaluations during
    training, the teacher's rounds) against the seeds compare reports on."""
    from agents import compare as compare_module
    from grid_envs.core.base_env import GridEnv
    from grid_envs.core.vector import GridVectorEnv

    used: set[int] = set()
    single_reset, batch_reset = GridEnv.reset, GridVectorEnv.reset

    def record_single(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        if seed is not None:
            used.add(int(seed))
        return single_reset(self, seed=seed, options=options)

    def record_batch(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        if isinstance(seed, int):
            used.update(range(seed, seed + self.num_envs))
        elif seed is not None:
            used.update(int(s) for s in seed if s is not None)
        return batch_reset(self, seed=seed, options=options)

    monkeypatch.setattr(GridEnv, "reset", record_single)
    monkeypatch.setattr(GridVectorEnv, "reset", record_batch)
    config = TrainConfig(
        env_id=KNIGHT, env_kwargs=fixed_maze(), timesteps=256, n_envs=4, n_steps=32,
        batch_size=64, features_dim=32, eval_freq=128, eval_episodes=4, checkpoint_freq=256,
        teacher="dijkstra", teacher_states=200, dagger_rounds=3,
    )  # fmt: skip
    train(config, tmp_path, progress=False)
    trained = set(used)
    used.clear()
    result = compare_module.run_compare(
        (KNIGHT,), episodes=50, out=tmp_path / "cmp", train_models=False,
        progress=False, log=lambda _: None,
    )  # fmt: skip
    assert result.rows and len(used) >= 50
    assert trained and not trained & used


def test_the_cloning_loss_keeps_working_while_ppo_trains() -> None:
    """The callback's cloning steps run between PPO's rollouts (collected under inference
    mode) and pull the policy towards the teacher: the same PPO run with them ends far
    closer to the teacher's moves than without."""
    from agents.train.cloning import CloningCallback

    kwargs = fixed_maze()
    labels, _ = label_states(KNIGHT, "dijkstra", 400, seed=0, env_kwargs=kwargs, n_envs=4)
    scores = []
    for coef in (0.0, 1.0):
        model = knight_model(kwargs, seed=3)
        callback = CloningCallback(labels, coef=coef, decay=10**6, steps=40, batch_size=64)
        model.learn(256, callback=callback)
        scores.append(accuracy(model, labels))
    assert scores[1] >= scores[0] + 0.2


def test_a_teacher_run_that_cannot_start_writes_nothing(tmp_path: Path) -> None:
    config = TrainConfig(env_id=KNIGHT, timesteps=64, n_envs=2, teacher="nobody")
    with pytest.raises(ValueError, match=r"no agent 'nobody'.*dijkstra"):
        train(config, tmp_path / "run", progress=False)
    with pytest.raises(ValueError, match="dagger_rounds"):
        train(TrainConfig(env_id=KNIGHT, teacher="dijkstra", dagger_rounds=0), tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_stopped_teaching_goes_on_from_its_last_finished_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each round's labels, clone and line are kept as it ends; a rerun after a stop in the
    third round goes on from the second and ends with the labels and clone of a run that
    never stopped."""
    import agents.train.teaching as teaching

    config = TrainConfig(
        env_id=KNIGHT, env_kwargs=fixed_maze(), timesteps=256, n_envs=4, n_steps=64,
        batch_size=64, features_dim=64, eval_freq=256, eval_episodes=2, teacher="dijkstra",
        teacher_states=450, dagger_rounds=3, threads=1,
    )  # fmt: skip
    train(config, tmp_path / "whole", progress=False)
    keep = teaching._keep_teaching

    def stop_after_two(folder: Path, model: Any, so_far: Any) -> None:
        keep(folder, model, so_far)
        if len(so_far.rounds) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(teaching, "_keep_teaching", stop_after_two)
    with pytest.raises(KeyboardInterrupt, match="while teaching, after 2 finished rounds"):
        train(config, tmp_path / "stopped", progress=False)
    kept = json.loads((tmp_path / "stopped" / "teacher" / "rounds.json").read_text())
    assert [r["round"] for r in kept] == [0, 1]
    monkeypatch.setattr(teaching, "_keep_teaching", keep)
    train(config, tmp_path / "stopped", progress=False)
    rounds = json.loads((tmp_path / "stopped" / "teacher" / "rounds.json").read_text())
    assert [r["round"] for r in rounds] == [0, 1, 2] and rounds[:2] == kept
    whole, stopped = (np.load(tmp_path / run / "teacher" / "labels.npz")
                      for run in ("whole", "stopped"))  # fmt: skip
    assert all(np.array_equal(whole[k], stopped[k]) for k in whole.files)
    params = [PolicyAgent.load(tmp_path / run / "teacher" / "cloned.zip").model.policy.state_dict()
              for run in ("whole", "stopped")]  # fmt: skip
    assert all(torch.equal(params[0][k], params[1][k]) for k in params[0])
    # the time the rerun reports holds the rounds the stopped session taught
    settings = json.loads((tmp_path / "stopped" / "settings.json").read_text())
    assert settings["teacher_seconds"] == pytest.approx(sum(r["seconds"] for r in rounds), abs=0.2)


def test_a_run_that_goes_on_reports_the_time_of_every_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """More steps asked of a finished taught run: its teaching seconds are kept and its PPO
    seconds add up, in settings.json and in what train prints."""
    from grid_games import cli

    argv = ["train", "Knight-v0", "--set", "rows=5", "--set", "cols=5", "--teacher",
            "dijkstra", "--teacher-states", "300", "--dagger-rounds", "2", "--n-envs", "4",
            "--n-steps", "32", "--eval-freq", "128", "--threads", "1", "--no-progress",
            "--out", str(tmp_path / "run")]  # fmt: skip
    assert cli.main([*argv, "--timesteps", "128"]) == 0
    first = json.loads((tmp_path / "run" / "settings.json").read_text())
    out = capsys.readouterr().out
    taught, ppo = first["teacher_seconds"], first["seconds"]
    assert taught > 0 and f": teaching {taught:.0f} s, PPO {ppo:.0f} s" in out
    assert cli.main([*argv, "--timesteps", "256"]) == 0
    again = json.loads((tmp_path / "run" / "settings.json").read_text())
    assert again["teacher_seconds"] == taught
    assert ppo < again["seconds"] <= ppo + again["session_seconds"] + 0.1
    assert f"teaching {taught:.0f} s" in capsys.readouterr().out


def test_each_teaching_round_shows_a_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    """With ``progress``, a bar follows each round's labelling and cloning on stderr;
    without it nothing is drawn."""
    from agents.train.teaching import teach

    kwargs = fixed_maze()
    teach(knight_model(kwargs), KNIGHT, "dijkstra", 200, rounds=2, env_kwargs=kwargs,
          epochs=1, progress=True)  # fmt: skip
    err = capsys.readouterr().err
    assert "teaching round 1/2" in err and "teaching round 2/2" in err and "state" in err
    teach(knight_model(kwargs), KNIGHT, "dijkstra", 200, rounds=2, env_kwargs=kwargs, epochs=1)
    assert "teaching round" not in capsys.readouterr().err


def test_cloning_that_diverges_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from grid_games import cli

    argv = ["train", "Knight-v0", "--teacher", "dijkstra", "--teacher-states", "200",
            "--teacher-lr", "1e30", "--timesteps", "64", "--out", str(tmp_path / "run"),
            "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "cloning diverged at step size 1e+30" in err and len(err.strip().splitlines()) == 1


def test_an_interrupted_iteration_counts_its_rounds() -> None:
    from agents.train.runs import Interrupted

    said = str(Interrupted(1, Path("m.zip"), "finished round", checkpoint=False))
    assert said.startswith("interrupted after 1 finished round: the model so far is in m.zip;")
    assert "checkpoint" not in said
    assert "after 2,048 steps" in str(Interrupted(2048, Path("m.zip")))
