"""The networks that read the actions off the board (agents.nets.board and
agents.nets.pairs): each reads its logits where the rules put them, and trains, saves,
loads and plays."""

from __future__ import annotations

import copy
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from agents.train.config import default_config
from agents.train.models import PolicyAgent
from agents.train.plan import policy_of
from agents.train.sb3 import train


def plays_legally(agent: PolicyAgent, env_id: str, moves: int, **kwargs) -> None:
    env = gym.make(env_id, **kwargs)
    obs, _ = env.reset(seed=0)
    for _ in range(moves):
        action = agent.act(env.unwrapped, obs)
        assert env.unwrapped.action_masks()[action]
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break


def test_lift_drop_logits_are_lift_plus_drop_of_the_moved_colour() -> None:
    import torch

    from agents.nets.board import LiftDropExtractor

    env = gym.make("GridGames/Lines98-Small-v0")
    obs, _ = env.reset(seed=1)
    net = LiftDropExtractor(env.observation_space, width=8, depth=2, value_dim=4)
    batch = torch.as_tensor(np.stack([obs, obs[::-1].copy()]))
    with torch.no_grad():
        out = net(batch)
        planes = net.head(net.trunk(batch.float())).flatten(2).numpy()
    n = 36
    assert out.shape == (2, n * n + 4)
    logits = out[:, : n * n].numpy().reshape(2, n, n)
    for b in range(2):
        colours = batch[b, :3].flatten(1).numpy()  # (C, n) one-hot balls
        for source in range(n):
            drop = (colours[:, source, None] * planes[b, 1:]).sum(axis=0)
            np.testing.assert_allclose(logits[b, source], planes[b, 0, source] + drop, atol=1e-5)


def test_colour_lines_logits_ignore_the_colours_names_and_read_the_lines(
    tmp_path: Path,
) -> None:
    """Renaming the colours leaves every logit as it is; a block's cell hears the cells on
    its four lines up to four away and its 3x3 neighbours, nothing else; the logits are
    lift plus drop of the moved ball's colour; the policy trains, loads and plays legally."""
    import torch

    from agents.nets.board import ColourLinesExtractor

    env = gym.make("GridGames/Lines98-v0")
    obs, _ = env.reset(seed=1)
    net = ColourLinesExtractor(env.observation_space, width=8, depth=2, value_dim=4)
    order = [3, 0, 6, 1, 5, 2, 4]
    renamed = np.concatenate([obs[:7][order], obs[7:][order]])
    with torch.no_grad():
        out, again = net(torch.as_tensor(np.stack([obs, renamed])))
    assert out.shape == (81 * 81 + 4,)
    assert torch.allclose(out, again, atol=1e-4)
    block = net.blocks[0]  # how many windows of 5 pass through a corner, an edge, the centre
    assert [round(1 / float(block.share[0, 0, r, c])) for r, c in ((0, 0), (0, 4), (4, 4))] == [
        3, 8, 20]  # fmt: skip
    block = copy.deepcopy(block)  # every ReLU open, so that what is heard is the wiring alone
    with torch.no_grad():
        block.bias.fill_(100.0)
        block.conv.bias.fill_(1000.0)
    hidden = torch.rand(1, 8, 9, 9, generator=torch.Generator().manual_seed(0)).requires_grad_()
    block(torch.cat([hidden] * 7)).sum(dim=0)[:, 4, 4].abs().sum().backward()
    heard = (hidden.grad[0].abs().sum(dim=0) > 0).numpy()
    lines = np.zeros((9, 9), dtype=bool)
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for k in range(-4, 5):
            lines[4 + dr * k, 4 + dc * k] = True
    lines[3:6, 3:6] = True
    assert (heard == lines).all()
    with torch.no_grad():
        views = net.views(torch.as_tensor(obs[None]))
        hidden = net.stem(views)
        for each in net.blocks:
            hidden = each(hidden)
        planes = net.head(hidden).flatten(2).numpy()  # (colours, 2, n)
    logits = out[: 81 * 81].numpy().reshape(81, 81)
    for source in np.flatnonzero(obs[:7].any(axis=0)):
        colour = int(obs[:7].reshape(7, 81)[:, source].argmax())
        np.testing.assert_allclose(
            logits[source], planes[colour, 0, source] + planes[colour, 1], atol=1e-4
        )
    config = default_config(
        "GridGames/Lines98-Small-v0", policy="colour-lines", timesteps=256, n_envs=1,
        n_steps=128, batch_size=64, eval_freq=10_000, checkpoint_freq=10_000,
    )  # fmt: skip
    agent = PolicyAgent.load(train(config, tmp_path, progress=False).model_path)
    plays_legally(agent, "GridGames/Lines98-Small-v0", 20)


def test_cell_logits_follow_the_action_numbering() -> None:
    """Action ``plane * n + r * cols + c`` is the head's plane ``plane`` at (r, c)."""
    import torch

    from agents.nets.board import CellLogitsExtractor

    env = gym.make("GridGames/Minesweeper-v0", rows=4, cols=5, mines=3, allow_flags=True)
    obs, _ = env.reset(seed=0)
    env.step(7)
    obs = env.unwrapped.observe()
    net = CellLogitsExtractor(env.observation_space, int(env.action_space.n), width=8, depth=2)
    with torch.no_grad():
        out = net(torch.as_tensor(obs[None]))
        planes = net.head(net.trunk(torch.as_tensor(obs[None]).float() * net.scale))[0]
    assert out.shape == (1, 2 * 20 + 64)
    for action in (0, 7, 19, 20, 33, 39):
        plane, cell = divmod(action, 20)
        assert out[0, action] == planes[plane, cell // 5, cell % 5]
    with pytest.raises(ValueError, match="not whole planes"):
        CellLogitsExtractor(env.observation_space, 30)


def test_pair_logits_follow_the_action_numbering_and_the_pair_rule() -> None:
    """Action ``pair_to_action(i, j)`` scores ``k_i . k_j / sqrt(d) + w_i + w_j``, the
    same for ``(i, j)`` and ``(j, i)``; the pairs policy trains and plays legal pairs."""
    import torch

    from agents.nets.pairs import PairLogitsExtractor
    from grid_envs.pikachu.rules import pair_to_action

    env = gym.make("GridGames/Pikachu-v0", rows=4, cols=4, kinds=4)
    obs, _ = env.reset(seed=0)
    net = PairLogitsExtractor(env.observation_space, width=8, depth=2, keys=4)
    x = torch.as_tensor(obs[None])
    with torch.no_grad():
        out = net(x)[0]
        hidden = net.trunk(x.float() * net.scale)
        hidden = net.mix(
            hidden
            + net.board(torch.cat([hidden.mean(dim=(2, 3)), hidden.amax(dim=(2, 3))], dim=1))[
                :, :, None, None
            ]
        )
        head = net.head(hidden)[0].flatten(1)  # (keys + 1, 16)
    assert out.shape == (120 + 64,)
    for i, j in ((0, 1), (0, 15), (3, 12), (14, 15)):
        want = head[:4, i] @ head[:4, j] / 2 + head[4, i] + head[4, j]
        assert torch.isclose(out[pair_to_action(i, j, 16)], want, atol=1e-5)
        assert pair_to_action(i, j, 16) == pair_to_action(j, i, 16)


def test_kind_pairs_logits_ignore_the_kinds_names_and_see_along_lines(tmp_path: Path) -> None:
    """Renaming the kinds leaves every logit as it is (the trunk sees where tiles stand and
    which share a kind, not which kind); two cells of a line see each other exactly when
    no tile stands between them; the policy trains, saves, loads and plays legal pairs."""
    import torch

    from agents.nets.pairs import KindPairsExtractor, _sight

    env = gym.make("GridGames/Pikachu-v0", rows=4, cols=4, kinds=4)
    obs, _ = env.reset(seed=0)
    net = KindPairsExtractor(env.observation_space, width=8, depth=2, keys=4)
    renamed = obs[[2, 0, 3, 1]]
    with torch.no_grad():
        out, again = net(torch.as_tensor(np.stack([obs, renamed])))
    assert out.shape == (120 + 64,)
    assert torch.allclose(out, again, atol=1e-5)
    grid = obs.argmax(axis=0) + obs.any(axis=0)  # kinds 1.., 0 empty
    a, b = (int(c) for c in np.flatnonzero(grid.ravel() == 1)[:1].tolist()
            + np.flatnonzero(grid.ravel() == 2)[:1].tolist())  # fmt: skip
    swapped = obs.reshape(4, 16).copy()  # tiles of two kinds trade places: the logits change
    swapped[:, [a, b]] = swapped[:, [b, a]]
    swapped = swapped.reshape(obs.shape)
    with torch.no_grad():
        assert not torch.allclose(net(torch.as_tensor(swapped[None]))[0], out, atol=1e-5)
    row = torch.tensor([[[0.0, 1, 0, 0, 1, 0]]])
    sees = (_sight(row)[0][0, 0] > 0).int().tolist()
    assert sees[0] == [0, 1, 0, 0, 0, 0]  # the first tile stops the view
    assert sees[1] == [1, 0, 1, 1, 1, 0]
    assert sees[2] == [0, 1, 0, 1, 1, 0]
    config = default_config(
        "GridGames/Pikachu-v0", policy="kind-pairs", timesteps=256, n_envs=2, n_steps=64,
        batch_size=64, env_kwargs={"rows": 4, "cols": 4, "kinds": 4}, eval_freq=10_000,
        checkpoint_freq=10_000,
    )  # fmt: skip
    agent = PolicyAgent.load(train(config, tmp_path, progress=False).model_path)
    plays_legally(agent, "GridGames/Pikachu-v0", 8, rows=4, cols=4, kinds=4)


def test_player_logits_are_read_at_the_players_cell() -> None:
    """The 8 logits are the head's output at the player's cell, off a trunk whose last
    dilation covers the room; only Sokoban's planes and moves are accepted."""
    import torch

    from agents.nets.board import PlayerLogitsExtractor
    from grid_envs.sokoban.state import PLAYER, PLAYER_ON_GOAL

    env = gym.make("GridGames/Sokoban-v0")
    obs, _ = env.reset(seed=0)
    net = PlayerLogitsExtractor(env.observation_space, 8, (PLAYER, PLAYER_ON_GOAL), width=8)
    x = torch.as_tensor(obs[None])
    with torch.no_grad():
        out = net(x)[0]
        head = net.head(net.trunk(x.float() * net.scale))[0]  # (8, rows, cols)
    r, c = np.argwhere(obs[PLAYER] + obs[PLAYER_ON_GOAL])[0]
    assert out.shape == (8 + 64,) and torch.allclose(out[:8], head[:, r, c], atol=1e-5)
    assert net.trunk.blocks[-1].dilation == (8, 8)  # 15 cells each way: the whole 10x10 room
    with pytest.raises(ValueError, match="the player policy reads Sokoban's planes"):
        policy_of(default_config("GridGames/Knight-v0", policy="player"), 4)


def test_the_network_size_is_a_setting() -> None:
    """``net_width`` and ``net_depth`` reach the extractor; the player trunk's dilations
    cycle 1, 2, 4, 8 past four blocks; a policy without a depth refuses one."""
    from agents.nets.board import PlayerLogitsExtractor

    config = default_config("GridGames/Sokoban-v0", net_width=16, net_depth=6)
    _, kwargs = policy_of(config, 8)
    net = PlayerLogitsExtractor(gym.make(config.env_id).observation_space,
                                **kwargs["features_extractor_kwargs"])  # fmt: skip
    assert [b.dilation[0] for b in net.trunk.blocks] == [1, 2, 4, 8, 1, 2]
    assert {b.out_channels for b in net.trunk.blocks} == {16}
    # Sokoban-v0's 8 blocks go with its player policy; another policy comes at its own size
    cnn = default_config("GridGames/Sokoban-v0", policy="cnn")
    assert (cnn.net_width, cnn.net_depth) == (None, None)
    assert "depth" not in policy_of(cnn, 8)[1]["features_extractor_kwargs"]
    assert default_config("GridGames/Sokoban-v0", policy="player").net_depth == 8
    knight = "GridGames/Knight-v0"
    _, kwargs = policy_of(default_config(knight, policy="cnn", net_width=8), 4)
    assert kwargs["features_extractor_kwargs"]["width"] == 8
    with pytest.raises(ValueError, match="the cnn policy has no depth"):
        policy_of(default_config(knight, policy="cnn", net_depth=3), 4)
    with pytest.raises(ValueError, match="net_width must be a whole number of at least 1"):
        policy_of(default_config(knight, net_width=0), 4)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "policy"),
    [("GridGames/Pikachu-v0", {"rows": 4, "cols": 4, "kinds": 4}, "pairs"),
     ("GridGames/Sokoban-Small-v0", {}, "player")],
)  # fmt: skip
def test_the_pairs_and_player_policies_are_defaults_that_train_and_play_legally(
    env_id: str, kwargs: dict, policy: str, tmp_path: Path
) -> None:
    config = default_config(
        env_id, timesteps=256, n_envs=2, n_steps=64, batch_size=64, env_kwargs=kwargs,
        eval_freq=10_000, checkpoint_freq=10_000,
    )  # fmt: skip
    assert config.policy == policy
    agent = PolicyAgent.load(train(config, tmp_path, progress=False).model_path)
    assert type(agent.model.policy).__name__.endswith("LogitsPolicy")
    plays_legally(agent, env_id, 8, **kwargs)


@pytest.mark.parametrize("algo", ["maskable-ppo", "ppo"])
def test_the_lift_drop_policy_trains_saves_loads_and_plays_legally(
    algo: str, tmp_path: Path
) -> None:
    config = default_config(
        "GridGames/Lines98-Small-v0", algo=algo, timesteps=256, n_envs=1, n_steps=128,
        batch_size=64, eval_freq=10_000, checkpoint_freq=10_000,
    )  # fmt: skip
    assert config.policy == "lift-drop"
    result = train(config, tmp_path, progress=False)
    agent = PolicyAgent.load(result.model_path)
    assert type(agent.model.policy).__name__.endswith("LogitsPolicy")
    plays_legally(agent, "GridGames/Lines98-Small-v0", 20)


def test_the_lift_drop_policy_is_refused_for_dqn_and_unknown_policies_by_name(
    tmp_path: Path,
) -> None:
    config = default_config("GridGames/Lines98-Small-v0", algo="dqn", timesteps=64)
    with pytest.raises(ValueError, match="the lift-drop policy is an actor-critic"):
        train(config, tmp_path / "dqn", progress=False)
    config = default_config("GridGames/Lines98-Small-v0", policy="mlp", timesteps=64)
    with pytest.raises(ValueError, match="policy must be one of"):
        train(config, tmp_path / "mlp", progress=False)
