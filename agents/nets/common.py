"""The networks for small boards, and the torch helpers every learner shares.

* :func:`small_grid_cnn`: 3x3 convolutions with padding keep every board cell (SB3's
  NatureCNN needs 36x36 images and strides a 9x9 board away), then one dense layer.
* :func:`plane_scale`: each observation plane divided by its top value (the Knight's
  energy plane reaches 255), so every input is in [0, 1].
* bf16 autocast where the hardware does it (:func:`bf16_native`, :func:`mixed`), with
  fp32 weights.

Importing this module does not import torch; the functions do, with a clear message
when the ``train`` extra is missing (:func:`require`).
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym
import numpy as np


def require(module: str, extra: str, what: str) -> Any:
    """Import an optional dependency, or say which extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            f'{what} needs the {extra} extra: pip install "grid-games[{extra}]"'
        ) from exc


def load_torch() -> Any:
    return require("torch", "train", "training")


THREADS_VARIABLE = "GRIDGAMES_TORCH_THREADS"


def set_threads(threads: int | None, default: int | None = None) -> int:
    """Set torch's threads; the number set. None: the environment variable
    ``GRIDGAMES_TORCH_THREADS`` if set (for several trainings side by side), else
    ``default``, else every core this process may use. More threads than those cores are
    refused: they only wait on each other (64 threads on 2 cores made 64 PPO steps take
    over a minute, and 100,000 crashed torch).

    On 2 cores one process with 2 threads trains a small CNN faster than with 1
    (docs/training-batch.md); more threads than free cores, or two torch processes at once,
    slow it down many times over. Playing a model one position at a time gains nothing from threads,
    so the commands that play (eval, the search) default to one."""
    import os

    torch = load_torch()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = max(1, cores or 1)
    if threads is None and os.environ.get(THREADS_VARIABLE):
        try:
            threads = int(os.environ[THREADS_VARIABLE])
        except ValueError:
            raise ValueError(
                f"{THREADS_VARIABLE} must be a whole number, got {os.environ[THREADS_VARIABLE]!r}"
            ) from None
    n = int(threads) if threads is not None else (default or cores)
    if not 1 <= n <= cores:
        raise ValueError(
            f"threads must be from 1 to the {cores} cores this process may use, got {n} "
            f"(more threads than cores only wait on each other)"
        )
    torch.set_num_threads(n)
    return n


def plane_scale(space: gym.spaces.Box) -> Any:
    """(1, channels, 1, 1) torch factors that bring each plane of ``space`` to [0, 1] by its
    own bound (the Knight's energy plane goes to 255, the others to 1)."""
    c = space.shape[0]
    top = np.asarray(space.high, dtype=np.float32).reshape(c, -1).max(axis=1)
    return load_torch().tensor(1.0 / np.maximum(top, 1.0)).view(1, c, 1, 1)


def grid_cnn_parts(space: gym.spaces.Box, features_dim: int, width: int = 32) -> tuple[Any, ...]:
    """The small-board CNN over ``(channels, rows, cols)`` planes, shared by SB3 and RLlib.

    Returns ``(scale, cnn, linear)``: the per-plane factor that brings each plane to [0, 1]
    by its own bound (the Knight's energy plane goes to 255), two 3x3 'same' convolutions
    (flattened), and the dense layer to ``features_dim``.
    """
    torch = load_torch()
    c, h, w = space.shape
    scale = plane_scale(space)
    cnn = torch.nn.Sequential(
        torch.nn.Conv2d(c, width, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(width, 2 * width, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
    )
    linear = torch.nn.Sequential(torch.nn.Linear(2 * width * h * w, features_dim), torch.nn.ReLU())
    return scale, cnn, linear


PRECISIONS = ("auto", "bf16", "fp32")


def bf16_native(device: str) -> bool:
    """Whether ``device`` ("cpu", "cuda", ...) computes bfloat16 in hardware (AVX512-BF16
    or AMX on a CPU, Ampere or later on a GPU)."""
    torch = load_torch()
    if device.startswith("cuda"):
        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    if device == "cpu":
        try:
            return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        except (AttributeError, RuntimeError):  # pragma: no cover - depends on the build
            return False
    return False


def mixed(tensor: Any, enabled: bool) -> Any:
    """Autocast to bfloat16 on ``tensor``'s device when ``enabled`` (weights stay float32;
    the extractors hand their outputs back as float32)."""
    return load_torch().autocast(tensor.device.type, dtype=load_torch().bfloat16, enabled=enabled)


def small_grid_cnn() -> type:
    """The feature extractor class (built lazily so importing agents needs no torch)."""
    load_torch()
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class SmallGridCNN(BaseFeaturesExtractor):
        """Two 3x3 'same' convolutions over (channels, rows, cols), then a dense layer."""

        def __init__(
            self, observation_space: gym.spaces.Box, features_dim: int = 128, width: int = 32,
            bf16: bool = False,
        ) -> None:  # fmt: skip
            super().__init__(observation_space, features_dim)
            scale, self.cnn, self.linear = grid_cnn_parts(observation_space, features_dim, width)
            self.register_buffer("scale", scale)
            self.bf16 = bf16

        def forward(self, observations: Any) -> Any:
            with mixed(observations, self.bf16):
                return self.linear(self.cnn(observations.float() * self.scale)).float()

    return SmallGridCNN


def logits_and_values(policy: Any, obs: Any) -> tuple[Any, Any]:
    """An actor-critic's action logits and values from one pass of its features extractor
    (``get_distribution`` and ``predict_values`` would run it once each)."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        latent_pi = policy.mlp_extractor.forward_actor(features[0])
        latent_vf = policy.mlp_extractor.forward_critic(features[1])
    return policy.action_net(latent_pi), policy.value_net(latent_vf).flatten()
