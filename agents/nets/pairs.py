"""Policies for an action that is a pair of cells (Pikachu's removals), read off the board
as :mod:`agents.nets.board`'s are:

* :class:`PairLogitsExtractor` ("pairs", Pikachu's default): a pair of cells scores the
  product of the cells' keys plus each cell's worth, read off a CNN whose cells see the
  whole board.
* :class:`KindPairsExtractor` ("kind-pairs"): the same scores, off a trunk that sees where
  tiles stand and, for each tile, the tiles of its own kind, but not which kind it is.

Importing this module imports torch.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from agents.nets.board import pool_features, trunk
from agents.nets.common import mixed, plane_scale


def _upper(cells: int) -> torch.Tensor:
    """The flat (i, j) entries, i < j, of a cells x cells matrix, row by row as Pikachu's
    actions."""
    upper = torch.triu_indices(cells, cells, offset=1)
    return upper[0] * cells + upper[1]


def _pair_scores(out: torch.Tensor, keys: int, upper: torch.Tensor) -> torch.Tensor:
    """Each pair's logit ``k_i . k_j / sqrt(d) + w_i + w_j`` from ``out`` (b, keys + 1, n):
    every cell's key, then its worth; (b, pairs) in :func:`_upper`'s order."""
    key, worth = out[:, :keys], out[:, keys]  # (b, keys, n), (b, n)
    pairs = torch.bmm(key.transpose(1, 2), key) / keys**0.5  # (b, n, n)
    pairs = pairs + worth[:, :, None] + worth[:, None, :]
    return pairs.flatten(1)[:, upper]


class PairLogitsExtractor(BaseFeaturesExtractor):
    """Planes ``(P, rows, cols)`` to one logit per unordered pair of cells ``i < j``
    (Pikachu's actions, row by row of the upper triangle), then ``value_dim`` features.

    A 'same' CNN gives every cell a key ``k`` and a worth ``w``, after the board's pooled
    features are added back to every cell (so a cell's key sees the whole board); the pair
    scores ``k_i . k_j / sqrt(d) + w_i + w_j``, one batched product for all pairs, the same
    rule on every pair of cells. A dense head over Pikachu-v0's 10,296 pairs clones the
    planner's moves no better than chance; this one reads them off the board.
    """

    scale: torch.Tensor
    upper: torch.Tensor  # :func:`_upper`

    def __init__(
        self, observation_space: gym.spaces.Box, width: int = 32, depth: int = 4,
        keys: int = 16, value_dim: int = 64, bf16: bool = False,
    ) -> None:  # fmt: skip
        planes, rows, cols = observation_space.shape
        cells = rows * cols
        pairs = cells * (cells - 1) // 2
        super().__init__(observation_space, pairs + value_dim)
        self.register_buffer("scale", plane_scale(observation_space))
        self.register_buffer("upper", _upper(cells))
        self.trunk = trunk(planes, width, depth)
        self.board = nn.Linear(2 * width, width)  # the whole board, added back to each cell
        self.mix = nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(width, keys + 1, 1)  # each cell's key, then its worth
        self.value = nn.Sequential(nn.Linear(2 * width, value_dim), nn.ReLU())
        self.keys, self.bf16 = keys, bf16

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        with mixed(observations, self.bf16):
            hidden = self.trunk(observations.float() * self.scale)
            board = self.board(pool_features(hidden))[:, :, None, None]
            hidden = self.mix(hidden + board)
            out = self.head(hidden).flatten(2).float()  # (b, keys + 1, n)
            value = self.value(pool_features(hidden)).float()
        return torch.cat([_pair_scores(out, self.keys, self.upper), value], dim=1)


def _sight(occupied: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Which cells see each other along a row, and along a column: ``(b, R, C, C)`` and
    ``(b, C, R, R)``, 1 where no tile stands strictly between two different cells of one
    line (the straight segments Onet's paths are made of), divided by how many a cell
    sees. ``occupied``: (b, R, C) floats, 1 where a tile stands."""

    def along(lines: torch.Tensor) -> torch.Tensor:  # (b, L, n): the cells of each line
        n = lines.shape[-1]
        upto = torch.cumsum(lines, dim=-1)  # tiles up to each cell, it included
        before = upto - lines  # tiles strictly before each cell
        # between a < c: tiles before c less tiles up to a
        between = before[..., None, :] - upto[..., :, None]  # (b, L, a, c)
        low = torch.triu(torch.ones(n, n, device=lines.device), diagonal=1)
        seen = (between.abs() < 0.5).float() * low
        seen = seen + seen.transpose(-1, -2)
        return seen / seen.sum(dim=-1, keepdim=True).clamp(min=1)

    return along(occupied), along(occupied.transpose(1, 2))


class _KindBlock(nn.Module):
    """A residual step of :class:`KindPairsExtractor`: a cell hears its 3x3 neighbours, the
    cells it sees along its row and its column, and the tiles of its own kind."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(width, width, 3, padding=1)
        self.row, self.col, self.kin = (nn.Linear(width, width) for _ in range(3))

    def forward(
        self, hidden: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, kin: torch.Tensor
    ) -> torch.Tensor:
        b, width, height, length = hidden.shape
        out = self.conv(hidden)
        cells = hidden.permute(0, 2, 3, 1)  # (b, R, C, width)
        out = out + self.row(torch.einsum("brcd,brdw->brcw", rows, cells)).permute(0, 3, 1, 2)
        out = out + self.col(torch.einsum("bcrs,bscw->brcw", cols, cells)).permute(0, 3, 1, 2)
        heard = torch.bmm(kin, cells.reshape(b, height * length, width))
        out = out + self.kin(heard).transpose(1, 2).reshape(b, width, height, length)
        return hidden + torch.relu(out)


class KindPairsExtractor(BaseFeaturesExtractor):
    """Pikachu's one-hot kind planes to one logit per pair of cells, as
    :class:`PairLogitsExtractor`, from a trunk that cannot tell the kinds apart.

    The board gets the empty ring around it that Onet's paths may use. The trunk sees only
    which cells hold a tile; each block adds to a cell's features its 3x3 neighbours', the
    mean of those it sees along its row and its column (no tile between), and the mean of
    the other tiles of its kind. Renaming the kinds leaves the logits as they are, so a
    pattern learnt on one kind holds for all 36 (the ``pairs`` trunk's first convolution
    weighs every kind apart).
    """

    upper: torch.Tensor
    inner: torch.Tensor  # the board's cells among the ringed board's, row by row

    def __init__(
        self, observation_space: gym.spaces.Box, width: int = 32, depth: int = 4,
        keys: int = 16, value_dim: int = 64, bf16: bool = False,
    ) -> None:  # fmt: skip
        _, rows, cols = observation_space.shape
        cells = rows * cols
        super().__init__(observation_space, cells * (cells - 1) // 2 + value_dim)
        self.register_buffer("upper", _upper(cells))
        ringed = torch.arange((rows + 2) * (cols + 2)).reshape(rows + 2, cols + 2)
        self.register_buffer("inner", ringed[1:-1, 1:-1].flatten())
        self.stem = nn.Conv2d(3, width, 3, padding=1)  # occupied, the board, the ring
        self.blocks = nn.ModuleList(_KindBlock(width) for _ in range(depth))
        self.head = nn.Conv2d(width, keys + 1, 1)
        self.value = nn.Sequential(nn.Linear(2 * width, value_dim), nn.ReLU())
        self.keys, self.bf16 = keys, bf16

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        planes = nn.functional.pad(observations.float(), (1, 1, 1, 1))
        occupied = planes.sum(dim=1).clamp(max=1)  # (b, R, C)
        board = nn.functional.pad(torch.ones_like(occupied[:, 1:-1, 1:-1]), (1, 1, 1, 1))
        rows, cols = _sight(occupied)
        flat = planes.flatten(2)  # (b, kinds, N)
        kin = torch.bmm(flat.transpose(1, 2), flat)  # 1 between tiles of one kind
        kin = kin * (1 - torch.eye(kin.shape[-1], device=kin.device))
        kin = kin / kin.sum(dim=2, keepdim=True).clamp(min=1)
        with mixed(observations, self.bf16):
            hidden = torch.relu(self.stem(torch.stack([occupied, board, 1 - board], dim=1)))
            for block in self.blocks:
                hidden = block(hidden, *(m.to(hidden.dtype) for m in (rows, cols, kin)))
            out = self.head(hidden).flatten(2)[:, :, self.inner].float()  # (b, keys + 1, n)
            value = self.value(pool_features(hidden)).float()
        return torch.cat([_pair_scores(out, self.keys, self.upper), value], dim=1)
