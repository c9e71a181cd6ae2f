"""A policy for Lines98 that scores a move as "lift this ball" plus "drop its colour there".

A flat dense head over Lines98's ``n * n`` moves (1,296 on 6x6) has to learn every pair on
its own, and MaskablePPO with one learns nothing in 100,000 steps. Here a small 'same'
CNN over the planes gives, for every cell, what taking its ball away is worth (one plane)
and what putting a ball of each colour on it is worth (a plane per colour); the logit of
the move ``source -> target`` is ``lift[source] + drop[colour(source), target]``, one
batched product over the ball planes. That is the greedy agent's own shape
(``grid_envs.lines98.heuristic.cell_gains``), so the policy can express it from the start
and learns which cells are worth what. The value comes from the same trunk, pooled.

Built for SB3's ``ActorCriticPolicy`` and sb3-contrib's ``MaskableActorCriticPolicy``
(PPO and MaskablePPO); importing this module imports torch.
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


class LiftDropExtractor(BaseFeaturesExtractor):
    """Planes ``(2C, rows, cols)`` (balls of each colour, then announced balls) to the move
    logits ``(n * n)`` followed by ``value_dim`` features for the critic."""

    def __init__(
        self, observation_space: gym.spaces.Box, width: int = 64, depth: int = 4,
        value_dim: int = 64,
    ) -> None:  # fmt: skip
        planes, rows, cols = observation_space.shape
        self.colours, self.cells = planes // 2, rows * cols
        super().__init__(observation_space, self.cells * self.cells + value_dim)
        layers: list[nn.Module] = []
        channels = planes
        for _ in range(depth):  # depth 3x3 layers see a line of 2 * depth + 1 cells
            layers += [nn.Conv2d(channels, width, 3, padding=1), nn.ReLU()]
            channels = width
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Conv2d(width, 1 + self.colours, 1)  # lift, then drop per colour
        self.value = nn.Sequential(nn.Linear(2 * width, value_dim), nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        obs = observations.float()
        hidden = self.trunk(obs)
        planes = self.head(hidden).flatten(2)  # (b, 1 + C, n)
        lift, drop = planes[:, 0], planes[:, 1:]
        balls = obs[:, : self.colours].flatten(2)  # (b, C, n) one-hot colour of each ball
        logits = lift.unsqueeze(2) + torch.einsum("bcs,bct->bst", balls, drop)
        pooled = torch.cat([hidden.mean(dim=(2, 3)), hidden.amax(dim=(2, 3))], dim=1)
        return torch.cat([logits.flatten(1), self.value(pooled)], dim=1)


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


class _LiftDropBuild:
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


class LiftDropPolicy(_LiftDropBuild, ActorCriticPolicy):  # type: ignore[misc]
    """PPO's policy with :class:`LiftDropExtractor`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", LiftDropExtractor)
        super().__init__(*args, **kwargs)


class MaskableLiftDropPolicy(_LiftDropBuild, MaskableActorCriticPolicy):  # type: ignore[misc]
    """MaskablePPO's policy with :class:`LiftDropExtractor`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", LiftDropExtractor)
        super().__init__(*args, **kwargs)
