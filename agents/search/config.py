"""What a search is given and what it answers: the evaluator that guides it (a network's
prior and value), its settings (:class:`SearchConfig`) and its answer
(:class:`SearchResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

VARIANTS = ("gumbel", "puct", "levin", "lds", "exact", "ordered")
LEAF_VALUES = ("network", "algorithm")
Evaluation = tuple[np.ndarray, np.ndarray]  # logits (b, A) and values (b,)


class Evaluator(Protocol):
    """What guides a search: ``(observations (b, ...), masks (b, A) bool)`` to
    ``(logits (b, A), values (b,))``; the logits of illegal actions are ignored."""

    gamma: float

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Evaluation: ...


class ModelEvaluator:
    """A stable-baselines3 actor-critic (PPO or MaskablePPO) as prior and value, one
    forward pass a batch of positions."""

    def __init__(self, model: Any) -> None:
        from agents.train.models import algo_of

        if algo_of(model) == "dqn":
            raise ValueError("a search needs a policy and a value: a PPO or MaskablePPO model")
        self.model = model
        self.gamma = float(model.gamma)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Evaluation:
        import torch

        from agents.nets.common import logits_and_values

        policy = self.model.policy
        with torch.inference_mode():
            obs, _ = policy.obs_to_tensor(observations)
            logits, values = logits_and_values(policy, obs)
        return logits.float().cpu().numpy(), values.float().cpu().numpy()


class UniformEvaluator:
    """Every legal action alike and every position worth ``value``: the search on its
    own, with exact rewards (for tests and as a baseline)."""

    def __init__(self, gamma: float = 0.99, value: float = 0.0) -> None:
        self.gamma, self.value = gamma, value

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> Evaluation:
        return np.zeros(masks.shape, dtype=np.float32), np.full(len(masks), self.value, np.float32)


@dataclass
class SearchConfig:
    """How a search runs (see the module doc)."""

    simulations: int = 32  # simulations a move (0: the network's most likely action)
    variant: str = "gumbel"  # or "puct", "ordered"; "levin", "lds", "exact" (deterministic)
    max_considered: int = 16  # Gumbel: root actions tried at most
    gumbel_scale: float = 1.0  # Gumbel: the noise on the root's logits (0: none)
    c_visit: float = 50.0  # Gumbel: sigma(q) = (c_visit + most visits) * c_scale * q
    c_scale: float = 0.1
    c_puct: float = 1.25  # PUCT's exploration weight
    keep_lines: bool = True  # deterministic games: play out a winning line once found
    leaf_value: str = "network"  # or "algorithm": the game's own judgement (LEAF_VALUE)
    replies: int | None = None  # ordered: the game's search's replies (None: its own; 0: none)

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        if self.leaf_value not in LEAF_VALUES:
            raise ValueError(f"leaf_value must be one of {LEAF_VALUES}, got {self.leaf_value!r}")
        if not isinstance(self.simulations, int) or self.simulations < 0:
            raise ValueError(f"simulations must be a whole number >= 0, got {self.simulations!r}")
        if not isinstance(self.max_considered, int) or self.max_considered < 1:
            raise ValueError(f"max_considered must be at least 1, got {self.max_considered!r}")
        if self.replies is not None:
            if self.variant != "ordered":
                raise ValueError(f"replies is a setting of the ordered search, not {self.variant}")
            if not isinstance(self.replies, int) or self.replies < 0:
                raise ValueError(f"replies must be a whole number >= 0, got {self.replies!r}")


@dataclass
class SearchResult:
    """A search's answer: the action to play, the improved policy over the legal actions
    (the target expert iteration learns from), the root's value, and what it cost."""

    action: int
    actions: np.ndarray  # (k,) the legal actions
    policy: np.ndarray  # (k,) the improved policy over them
    value: float
    simulations: int
    evaluations: int = 0
    from_line: bool = False  # played from a winning line found earlier
    extra: dict[str, Any] = field(default_factory=dict)


def softmax(x: np.ndarray) -> np.ndarray:
    if not len(x):
        return x
    e = np.exp(x - x.max())
    return e / e.sum()


def rescaled(q: np.ndarray) -> np.ndarray:
    low, high = q.min(), q.max()
    return (q - low) / max(high - low, 1e-8)
