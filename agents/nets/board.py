"""Policies whose action logits are read off the board, not learned pair by pair.

SB3's policies put a dense layer between the features and the logits, so every action
learns on its own. Where an action *is* a cell (or a pair of cells), a 'same' CNN can give
its logit directly, the same way on every cell:

* :class:`CellLogitsExtractor` ("cells", Minesweeper's default): one logit plane per
  action plane, so action ``plane * n + cell`` (reveal, and flag with ``allow_flags``) is
  that plane's output on that cell.
* :class:`LiftDropExtractor` ("lift-drop", Lines98's default): a plane giving what taking
  a cell's ball away is worth and one per colour giving what putting a ball of that colour
  there is worth; the move ``source -> target`` scores ``lift[source] + drop[colour of
  source, target]``, one batched product over the ball planes. That is the greedy agent's
  own shape (``grid_envs.lines98.heuristic.cell_gains``). A dense head over Lines98's
  1,296 moves (6x6) learns nothing; this one does.
* :class:`ColourLinesExtractor` ("colour-lines"): the same lift and drop planes, off one
  trunk run once per colour, that reads the cells of every window of five along the
  board's four line directions, so renaming the colours leaves the logits as they are.
* :class:`PlayerLogitsExtractor` ("player", Sokoban's default): the move and push
  logits read at the player's cell off a dilated residual CNN that covers the room.
* The pair networks of Pikachu (an action a pair of cells): :mod:`agents.nets.pairs`.
* :class:`MazeValueExtractor` ("maze-vi", the Knight's default): value iteration over the
  maze's open sides.

Each extractor returns the logits followed by ``value_dim`` features pooled from the same
trunk for the critic. :class:`LogitsPolicy` (PPO) and :class:`MaskableLogitsPolicy`
(MaskablePPO) take the logits as they are. Importing this module imports torch.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from agents.nets.common import mixed, plane_scale
from grid_envs.knight import rules as knight


def trunk(planes: int, width: int, depth: int) -> nn.Sequential:
    """``depth`` 3x3 'same' convolutions: a cell sees ``depth`` cells around it."""
    layers: list[nn.Module] = []
    channels = planes
    for _ in range(depth):
        layers += [nn.Conv2d(channels, width, 3, padding=1), nn.ReLU()]
        channels = width
    return nn.Sequential(*layers)


def pool_features(hidden: torch.Tensor) -> torch.Tensor:
    return torch.cat([hidden.mean(dim=(2, 3)), hidden.amax(dim=(2, 3))], dim=1)


class CellLogitsExtractor(BaseFeaturesExtractor):
    """Planes ``(P, rows, cols)`` to ``actions`` logits, one plane of them per
    ``rows * cols`` actions, followed by ``value_dim`` features for the critic."""

    scale: torch.Tensor  # brings each plane to [0, 1] by its own bound

    def __init__(
        self, observation_space: gym.spaces.Box, actions: int, width: int = 64,
        depth: int = 4, value_dim: int = 64, bf16: bool = False,
    ) -> None:  # fmt: skip
        planes, rows, cols = observation_space.shape
        if actions % (rows * cols):
            raise ValueError(f"{actions} actions are not whole planes of {rows}x{cols} cells")
        super().__init__(observation_space, actions + value_dim)
        self.register_buffer("scale", plane_scale(observation_space))
        self.trunk = trunk(planes, width, depth)
        self.head = nn.Conv2d(width, actions // (rows * cols), 1)
        self.value = nn.Sequential(nn.Linear(2 * width, value_dim), nn.ReLU())
        self.bf16 = bf16

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        with mixed(observations, self.bf16):
            hidden = self.trunk(observations.float() * self.scale)
            out = torch.cat(
                [self.head(hidden).flatten(1), self.value(pool_features(hidden))], dim=1
            )
        return out.float()


def _move_logits(balls: torch.Tensor, lift: torch.Tensor, drop: torch.Tensor) -> torch.Tensor:
    """Lines98's move logits ``(b, n * n)``: ``source -> target`` scores ``lift[source] +
    drop[colour of source, target]``. ``balls``: (b, C, n) one-hot colour of each ball;
    ``lift``: (b, n); ``drop``: (b, C, n)."""
    return (lift.unsqueeze(2) + torch.einsum("bcs,bct->bst", balls, drop)).flatten(1)


class LiftDropExtractor(BaseFeaturesExtractor):
    """Planes ``(2C, rows, cols)`` (balls of each colour, then announced balls) to the move
    logits ``(n * n)`` followed by ``value_dim`` features for the critic."""

    def __init__(
        self, observation_space: gym.spaces.Box, width: int = 64, depth: int = 4,
        value_dim: int = 64, bf16: bool = False,
    ) -> None:  # fmt: skip
        planes, rows, cols = observation_space.shape
        self.colours, self.cells = planes // 2, rows * cols
        super().__init__(observation_space, self.cells * self.cells + value_dim)
        self.trunk = trunk(planes, width, depth)
        self.head = nn.Conv2d(width, 1 + self.colours, 1)  # lift, then drop per colour
        self.value = nn.Sequential(nn.Linear(2 * width, value_dim), nn.ReLU())
        self.bf16 = bf16

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        with mixed(observations, self.bf16):
            hidden = self.trunk(observations.float())
            planes = self.head(hidden).flatten(2).float()  # (b, 1 + C, n)
            value = self.value(pool_features(hidden)).float()
        balls = observations.float()[:, : self.colours].flatten(2)  # (b, C, n) one-hot
        return torch.cat([_move_logits(balls, planes[:, 0], planes[:, 1:]), value], dim=1)


class _LineBlock(nn.Module):
    """A residual step of :class:`ColourLinesExtractor`. Each window of ``span`` cells that
    fits on the board along a row, a column or either diagonal reads its cells in order,
    with the same weights in all four directions; each cell then hears the mean of what the
    windows through it send back to its place in them, plus its 3x3 neighbours and the mean
    over the colours. (Convolutions over one line of the kernel: a diagonal is the
    kernel's diagonal.)"""

    share: torch.Tensor  # (1, 1, R, C): 1 / how many windows pass through each cell

    def __init__(self, width: int, span: int, colours: int, rows: int, cols: int) -> None:
        super().__init__()
        self.read = nn.Parameter(torch.empty(width, width, span))
        self.send = nn.Parameter(torch.empty(width, width, span))
        for weight in (self.read, self.send):
            nn.init.kaiming_uniform_(weight, a=5**0.5)
        self.bias = nn.Parameter(torch.zeros(width))
        self.conv = nn.Conv2d(width, width, 3, padding=1)
        self.mix = nn.Conv2d(width, width, 1, bias=False)
        ones = torch.ones(1, 1, rows, cols)
        through = torch.stack([nn.functional.conv_transpose2d(
            nn.functional.conv2d(ones, kernel).sign(), kernel)
            for kernel in self.kernels(torch.ones(1, 1, span))]).sum(dim=0)  # fmt: skip
        self.register_buffer("share", 1 / through.clamp(min=1))
        self.colours = colours

    @staticmethod
    def kernels(weight: torch.Tensor) -> list[torch.Tensor]:
        """A (out, in, span) line kernel laid along a row, a column and both diagonals."""
        diagonal = torch.diag_embed(weight)
        return [weight.unsqueeze(2), weight.unsqueeze(3), diagonal, diagonal.flip(3)]

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:  # (b * colours, width, R, C)
        out = self.conv(hidden)
        sends = self.kernels(self.send.to(hidden.dtype))
        for read, send in zip(self.kernels(self.read.to(hidden.dtype)), sends, strict=True):
            windows = torch.relu(nn.functional.conv2d(hidden, read, self.bias.to(hidden.dtype)))
            out = out + nn.functional.conv_transpose2d(windows, send.transpose(0, 1)) * self.share
        n = hidden.shape[0]
        mean = hidden.unflatten(0, (n // self.colours, self.colours)).mean(dim=1)
        out = out + self.mix(mean).repeat_interleave(self.colours, dim=0)
        return hidden + torch.relu(out)


class ColourLinesExtractor(BaseFeaturesExtractor):
    """Lines98's planes to the move logits of :class:`LiftDropExtractor`, from one trunk
    run once per colour, that sees the board through that colour's eyes: its balls, its
    announced balls, the other colours' balls and announced balls, the empty cells and the
    board. Each block adds to a cell what the windows of ``span`` cells through it hold in
    the four directions of the lines (:class:`_LineBlock`), as the greedy agent's *lines in
    the making* do, with its 3x3 neighbours and the mean over the colours.

    The colour's run gives two planes: what putting a ball of that colour on each cell is
    worth (``drop``), and what taking that colour's ball away is (``lift``, read where a
    ball of that colour stands). Renaming the colours leaves the logits as they are, so a
    pattern learnt for one colour holds for all.
    """

    def __init__(
        self, observation_space: gym.spaces.Box, width: int = 16, depth: int = 2,
        span: int = 5, value_dim: int = 64, bf16: bool = False,
    ) -> None:  # fmt: skip
        planes, rows, cols = observation_space.shape
        self.colours, self.cells = planes // 2, rows * cols
        super().__init__(observation_space, self.cells * self.cells + value_dim)
        span = min(span, rows, cols)
        self.stem = nn.Conv2d(6, width, 1)
        self.blocks = nn.ModuleList(
            _LineBlock(width, span, self.colours, rows, cols) for _ in range(depth)
        )
        self.head = nn.Conv2d(width, 2, 1)  # lift, drop
        self.value = nn.Sequential(nn.Linear(2 * width, value_dim), nn.ReLU())
        self.bf16 = bf16

    def views(self, observations: torch.Tensor) -> torch.Tensor:
        """(b * colours, 6, R, C): each colour's view of the board, colour by colour."""
        obs = observations.float()
        balls, announced = obs[:, : self.colours], obs[:, self.colours :]
        others = balls.sum(dim=1, keepdim=True) - balls
        coming = announced.sum(dim=1, keepdim=True) - announced
        empty = (1 - balls.sum(dim=1, keepdim=True)).expand_as(balls)
        board = torch.ones_like(balls)
        return torch.stack([balls, announced, others, coming, empty, board], dim=2).flatten(0, 1)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        b = observations.shape[0]
        with mixed(observations, self.bf16):
            hidden = self.stem(self.views(observations))
            for block in self.blocks:
                hidden = block(hidden)
            planes = self.head(hidden).float().unflatten(0, (b, self.colours)).flatten(3)
            pooled = pool_features(hidden).unflatten(0, (b, self.colours)).mean(dim=1)
            value = self.value(pooled).float()
        balls = observations.float()[:, : self.colours].flatten(2)  # (b, C, n)
        lift = (planes[:, :, 0] * balls).sum(dim=1)  # (b, n): the ball's own colour's run
        return torch.cat([_move_logits(balls, lift, planes[:, :, 1]), value], dim=1)


class _Dilated(nn.Module):
    """Residual 3x3 'same' convolutions with dilations 1, 2, 4, 8, then 1, 2, 4, 8 again:
    after 4 blocks a cell sees 15 cells each way (a 10x10 room whole), and each further
    cycle of 4 passes what every cell holds across the room once more."""

    def __init__(self, planes: int, width: int, depth: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(planes, width, 3, padding=1), nn.ReLU())
        self.blocks = nn.ModuleList(
            nn.Conv2d(width, width, 3, padding=2 ** (k % 4), dilation=2 ** (k % 4))
            for k in range(depth)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.stem(x)
        for block in self.blocks:
            hidden = hidden + torch.relu(block(hidden))
        return hidden


class PlayerLogitsExtractor(BaseFeaturesExtractor):
    """Planes to ``actions`` logits read at the player's cell, then ``value_dim`` features.

    Sokoban's actions are moves and pushes *from the player's cell*: a residual CNN with
    dilated convolutions (:class:`_Dilated`, covering the board) gives every cell one logit
    per action, and the logits are the ones at the cell the player stands on (planes
    ``player_planes``). Whether a push helps depends on the box's goal and path, anywhere in
    the room; the dilations bring the whole room to every cell.
    """

    scale: torch.Tensor

    def __init__(
        self, observation_space: gym.spaces.Box, actions: int, player_planes: tuple[int, ...],
        width: int = 32, depth: int = 4, value_dim: int = 64, bf16: bool = False,
    ) -> None:  # fmt: skip
        planes, _, _ = observation_space.shape
        super().__init__(observation_space, actions + value_dim)
        self.register_buffer("scale", plane_scale(observation_space))
        self.player_planes = list(player_planes)
        self.trunk = _Dilated(planes, width, depth)
        self.head = nn.Conv2d(width, actions, 1)
        self.value = nn.Sequential(nn.Linear(3 * width, value_dim), nn.ReLU())
        self.bf16 = bf16

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        planes = observations.float() * self.scale
        here = planes[:, self.player_planes].sum(dim=1, keepdim=True)  # (b, 1, rows, cols)
        with mixed(observations, self.bf16):
            hidden = self.trunk(planes)
            logits = self.head(hidden).float()
            at_player = (hidden.float() * here).sum(dim=(2, 3))
            value = self.value(torch.cat([pool_features(hidden).float(), at_player], dim=1)).float()
        return torch.cat([(logits * here).sum(dim=(2, 3)), value], dim=1)


class MazeValueExtractor(BaseFeaturesExtractor):
    """The Knight's planes to its 4 move logits by value iteration over the maze, in the
    spirit of Value Iteration Networks (Tamar et al. 2016), then ``value_dim`` features.

    A 1x1 convolution gives each cell a cost to enter (positive, learned from what the cell
    holds, planes 4-7: the rules charge 1, or the monster's cost); from the exit (plane 5)
    the values
    ``V(u) = max over open sides a of V(next_a(u)) - cost(next_a(u))`` are iterated
    ``iterations`` times (default rows * cols, enough for any route), the maze's open sides
    (planes 0-3) gating each move; the gradient flows through the last ``grad_iterations``
    sweeps only (the earlier ones run without it), which keeps a 25x25 maze's 625 sweeps
    within memory (the values have settled by then, so a cost gets its gradient from the
    cells up to that many steps along the route from the knight). The logit of move ``a``
    is ``beta * Q_a`` at the knight's cell (plane 4), ``beta`` learned: with the right
    costs the greedy move follows a cheapest route, as the Dijkstra agent does. A 'same'
    CNN's pooled planes, the value at the knight and the energy left feed the critic. The
    iteration runs in float32.
    """

    far = 1e4  # a value no route reaches
    gate_planes = knight.ACTION_SIDE_PLANES  # the side plane each action needs open
    content_planes = (knight.KNIGHT_PLANE, knight.EXIT_PLANE, knight.MONSTER_PLANE,
                      knight.ITEM_PLANE)  # fmt: skip

    scale: torch.Tensor

    def __init__(
        self, observation_space: gym.spaces.Box, iterations: int | None = None, width: int = 32,
        value_dim: int = 64, bf16: bool = False, grad_iterations: int = 64,
    ) -> None:  # fmt: skip
        planes, rows, cols = observation_space.shape
        if planes != knight.N_PLANES:
            raise ValueError(f"maze-vi reads the Knight's {knight.N_PLANES} planes, got {planes}")
        super().__init__(observation_space, 4 + value_dim)
        self.register_buffer("scale", plane_scale(observation_space))
        self.iterations = iterations or rows * cols
        self.grad_iterations = grad_iterations
        self.head = nn.Conv2d(len(self.content_planes), 1, 1)  # the cost of entering a cell
        self.beta = nn.Parameter(torch.tensor(2.0))
        self.trunk = trunk(planes, width, 2)
        self.value = nn.Sequential(nn.Linear(2 * width + 2, value_dim), nn.ReLU())
        self.bf16 = bf16

    @classmethod
    def iterate(
        cls, value: torch.Tensor, start: torch.Tensor, gates: torch.Tensor, entry: torch.Tensor
    ) -> torch.Tensor:
        """One sweep of value iteration: the best open move's value, the exit held at 0."""
        moves = torch.where(gates, cls.shifted(value) + entry, -cls.far)
        return torch.maximum(start, moves.amax(dim=1)).clamp(min=-cls.far)

    @classmethod
    def shifted(cls, grid: torch.Tensor) -> torch.Tensor:
        """(b, 4, rows, cols): each cell's neighbour up, down, left, right (``far``, off
        the board)."""
        pad = nn.functional.pad(grid, (1, 1, 1, 1), value=-cls.far)
        return torch.stack(
            [pad[:, :-2, 1:-1], pad[:, 2:, 1:-1], pad[:, 1:-1, :-2], pad[:, 1:-1, 2:]], dim=1
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        planes = observations.float() * self.scale
        gates = planes[:, list(self.gate_planes)] > 0.5  # (b, 4, rows, cols)
        content = planes[:, list(self.content_planes)]
        cost = nn.functional.softplus(self.head(content)[:, 0]) + 1e-3  # (b, rows, cols)
        entry = self.shifted(-cost)  # minus the cost of the cell each move enters
        start = (planes[:, knight.EXIT_PLANE] - 1.0) * self.far  # 0 at the exit, far elsewhere
        value = start
        with torch.no_grad():  # memory: the gradient runs through the last iterations only
            for _ in range(max(0, self.iterations - self.grad_iterations)):
                value = self.iterate(value, start, gates, entry)
        for _ in range(min(self.iterations, self.grad_iterations)):
            value = self.iterate(value, start, gates, entry)
        moves = torch.where(gates, self.shifted(value) + entry, -self.far)
        here = planes[:, knight.KNIGHT_PLANE, None]  # (b, 1, rows, cols), one-hot
        logits = self.beta * (moves * here).sum(dim=(2, 3))
        at_knight = (value[:, None] * here).sum(dim=(2, 3))
        energy = (observations[:, knight.ENERGY_PLANE, None].float() * here).sum(dim=(2, 3))
        with mixed(observations, self.bf16):
            pooled = pool_features(self.trunk(planes)).float()
        critic = torch.cat([pooled, at_knight.clamp(min=-100) / 10, energy / 10], dim=1)
        return torch.cat([logits, self.value(critic)], dim=1)


class _Split(nn.Module):
    """The actor takes the logits as they are; the critic a small MLP on the rest."""

    def __init__(self, logits: int, features: int, hidden: int = 64) -> None:
        super().__init__()
        self.logits = logits
        self.latent_dim_pi, self.latent_dim_vf = logits, hidden
        self.critic = nn.Sequential(nn.Linear(features - logits, hidden), nn.Tanh())

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, : self.logits]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.critic(features[:, self.logits :])


class _LogitsBuild:
    """The ``_build`` both policies share: no dense action layer (the extractor's logits
    are the action logits), the head's output scaled down at first as SB3 does its own."""

    action_space: gym.spaces.Discrete
    features_dim: int

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = _Split(int(self.action_space.n), self.features_dim)

    def _build(self, lr_schedule: Any) -> None:
        me: Any = self
        me._build_mlp_extractor()
        me.action_net = nn.Identity()
        me.value_net = nn.Linear(me.mlp_extractor.latent_dim_vf, 1)
        if me.ortho_init:
            for module, gain in (
                (me.features_extractor, np.sqrt(2)), (me.mlp_extractor, np.sqrt(2)),
                (me.value_net, 1.0), (me.features_extractor.head, 0.01),
            ):  # fmt: skip
                module.apply(partial(me.init_weights, gain=gain))
        me.optimizer = me.optimizer_class(me.parameters(), lr=lr_schedule(1), **me.optimizer_kwargs)


class LogitsPolicy(_LogitsBuild, ActorCriticPolicy):  # type: ignore[misc]
    """PPO's policy, given one of the extractors above as ``features_extractor_class``."""


class MaskableLogitsPolicy(_LogitsBuild, MaskableActorCriticPolicy):  # type: ignore[misc]
    """MaskablePPO's policy, given one of the extractors above."""
