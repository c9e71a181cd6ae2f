"""What a training run is: :class:`TrainConfig` and each game's defaults (read from its
declaration, :mod:`agents.games`). What a configuration means on this machine (the
network it builds, the batch, the memory it needs) is resolved once, by
:func:`agents.train.plan.plan_run`.

* :func:`training_defaults`: the settings ``grid-games train`` starts from for each id;
  :func:`compare_rows`: what ``grid-games compare`` teaches and trains for each game;
  :func:`symmetries_of`: the board symmetries cloning may use; each read from the games'
  declarations when asked, so a game registered later is read too.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from agents.games import declaration_of, declarations
from agents.nets.registry import policies_help, policy_names
from grid_envs.core import checks

VEC_ENVS = ("batched", "dummy")
# rollout and update sizes per kind of vec env, where a run does not set them: a batch
# collects cheaply, so its PPO takes a larger rollout in fewer epochs (Atari's PPO uses 4);
# the DummyVecEnv's are the settings that path always had
PATH_DEFAULTS: dict[str, dict[str, int]] = {
    "batched": {"n_envs": 64, "n_steps": 32, "batch_size": 512, "n_epochs": 4,
                "eval_episodes": 50},
    "dummy": {"n_envs": 4, "n_steps": 256, "batch_size": 256, "n_epochs": 10,
              "eval_episodes": 20},
}  # fmt: skip


def flag(
    group: str,
    help: str,
    *,
    default: Any,
    choices: Any = None,
    least: float | None = None,
    at_most: float | None = None,
    metavar: str | None = None,
    shown: str | None = None,
    extra: Any = None,
) -> Any:
    """A :class:`TrainConfig` field that ``grid-games train`` takes as ``--the-field-name``:
    its ``group`` in the help, one line of ``help``, and what the command line checks
    (``choices``, or a number at least ``least``, at most ``at_most``; by default a whole
    number at least 1, a number above 0). ``shown`` is the default as the help tells it
    where the field's own is not (the game's, the batch's); ``choices`` and ``extra`` may
    be functions, called when the parser is built (the registered policies and their
    help)."""
    return field(default=default, metadata={
        "group": group, "help": help, "choices": choices, "least": least, "at_most": at_most,
        "metavar": metavar, "shown": shown, "extra": extra,
    })  # fmt: skip


@dataclass
class TrainConfig:
    """Everything that defines a training run (saved as settings.json next to the model).

    The run:
        env_id: the registered id. algo: ``maskable-ppo``, ``ppo`` or ``dqn``.
        timesteps: PPO's (or DQN's) env steps. seed: the network's, the envs' and the
        teaching's. max_seconds: seconds of wall time for the run, teaching included; PPO
        stops there and the model so far is saved as the run's (a rerun goes on from it).

    The envs:
        vec_env: ``batched``, the native batched env where the id has one, else ``dummy``
        (single envs in SB3's DummyVecEnv). n_envs: envs stepped together. env_kwargs:
        settings beyond the registered ones. shaping: a potential's name (None: none);
        shaping_scale: its coefficient (the reward gains ``scale * (gamma * phi(s') -
        phi(s))``); shaping_at_loss: ``zero`` or ``kept``, the potential of a lost end
        (:mod:`grid_envs.wrappers`). potential_input: a potential given to the network as one more
        observation plane (:class:`grid_envs.wrappers.PotentialInput`), rewards untouched.

    The network:
        policy: a registered policy (``agents.nets.registry``; the board policies train with PPO
        only). features_dim: the ``cnn`` policy's features. net_width, net_depth: a board
        policy's channels and convolutions (None: the policy's own). precision: ``bf16``
        runs the layers in bfloat16 with float32 weights; ``auto`` does where the device
        computes it in hardware, else ``fp32``. threads: torch threads (None: every core
        this process may use). device: ``auto`` is CUDA where present, else the CPU.

    PPO:
        gamma, learning_rate, ent_coef as SB3 takes them; n_steps: the rollout per env;
        batch_size: the minibatch; n_epochs: the passes over each rollout.

    Evaluations and checkpoints:
        eval_freq: timesteps between evaluations (at least one of PPO's rollouts);
        eval_episodes: episodes an evaluation plays on the validation seeds.
        checkpoint_freq: timesteps between checkpoints (None: a 20th of the budget,
        between 1,000 and 100,000, so that the first comes early).

    Teaching by an algorithm (``agents.train.teaching``: cloning and DAgger before PPO):
        teacher: a baseline's name (``agents.registry.list_agents(env_id)``; None: no
        teaching). teacher_states: labelled states in all, over the rounds. dagger_rounds:
        round 0 the teacher plays, then the learner moves and the teacher labels.
        teacher_epochs: passes over the labelled states after each round. teacher_lr,
        teacher_batch: cloning's step size and minibatch (PPO keeps its own).
        teacher_workers: processes that label each round, one torch thread each.
        warm_teacher: a faster baseline cloned first from its own play, after which every
        round is a DAgger round the teacher labels; warm_states: the states it labels.
        cloning_coef: the weight of the cloning loss kept during PPO, decaying to 0 over
        cloning_decay steps (None: half of timesteps).
    """

    env_id: str
    algo: str = flag(
        "the run",
        "maskable-ppo never picks an illegal action",
        default="maskable-ppo",
        choices=("maskable-ppo", "ppo", "dqn"),
    )
    timesteps: int = flag("the run", "PPO's (or DQN's) env steps", default=50_000)
    seed: int = flag("the run", "the run's seed: network, envs and teaching", default=0, least=0)
    max_seconds: float | None = flag(
        "the run",
        "stop PPO after this much wall time, teaching included, and keep the model "
        "so far as the run's",
        default=None,
        metavar="SECONDS",
        shown="none",
    )
    vec_env: str = flag(
        "the envs",
        "batched: the native batched env, one call a step (where "
        "the id has one); dummy: single envs in SB3's DummyVecEnv",
        default="batched",
        choices=("batched", "dummy"),
    )
    n_envs: int = flag(
        "the envs",
        "envs stepped together",
        default=64,
        shown="64 in a native batch, 4 in a DummyVecEnv",
    )
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # --set
    shaping: str | None = flag(
        "the envs",
        "a potential's name, e.g. distance; none: no shaping",
        default=None,
        metavar="POTENTIAL",
        shown="the game's own",
    )
    shaping_scale: float = flag(
        "the envs",
        "the shaping's coefficient: the reward gains COEF * (gamma * phi(s') - phi(s))",
        default=1.0,
        metavar="COEF",
    )
    shaping_at_loss: str = flag(
        "the envs",
        "the potential of a lost end: zero (leaves the best policy unchanged) or "
        "kept, as at a time limit",
        default="zero",
        choices=("zero", "kept"),
    )
    potential_input: str | None = flag(
        "the envs",
        "give the network a potential as one more observation plane, rewards untouched",
        default=None,
        metavar="POTENTIAL",
        shown="none",
    )
    policy: str = flag(
        "the network",
        "the network",
        default="cnn",
        choices=policy_names,
        shown="the game's own",
        extra=policies_help,
    )
    gamma: float = flag("PPO", "the discount", default=0.99, least=0.0, at_most=1.0)
    learning_rate: float = flag("PPO", "PPO's step size", default=3e-4)
    n_steps: int = flag(
        "PPO", "the rollout per env", default=32, shown="32 in a native batch, 256 in a DummyVecEnv"
    )
    batch_size: int = flag(
        "PPO",
        "the minibatch; on a GPU, thousands keep it busy",
        default=512,
        least=2,
        shown="512 in a native batch, 256 in a DummyVecEnv",
    )
    n_epochs: int = flag(
        "PPO",
        "the passes over each rollout",
        default=4,
        shown="4 in a native batch, 10 in a DummyVecEnv",
    )
    ent_coef: float = flag("PPO", "the entropy bonus's weight", default=0.01, least=0.0)
    features_dim: int = flag("the network", "the cnn policy's features", default=128)
    net_width: int | None = flag(
        "the network",
        "a board policy's channels",
        default=None,
        metavar="CHANNELS",
        shown="the policy's own",
    )
    net_depth: int | None = flag(
        "the network",
        "a board policy's convolutions",
        default=None,
        metavar="LAYERS",
        shown="the game's own",
    )
    precision: str = flag(
        "the network",
        "the network's arithmetic: auto (bfloat16 where the device computes "
        "it in hardware), bf16, fp32; weights stay float32 either way",
        default="auto",
        choices=("auto", "bf16", "fp32"),
    )
    eval_freq: int = flag(
        "evaluations",
        "timesteps between evaluations (PPO's at least one rollout)",
        default=5_000,
        metavar="STEPS",
    )
    eval_episodes: int = flag(
        "evaluations",
        "episodes an evaluation plays",
        default=50,
        shown="50 in a native batch, 20 in a DummyVecEnv",
    )
    checkpoint_freq: int | None = flag(
        "evaluations",
        "timesteps between checkpoints",
        default=None,
        metavar="STEPS",
        shown="a 20th of the budget",
    )
    threads: int | None = flag(
        "the network", "torch threads", default=None, shown="every core this process may use"
    )
    device: str = flag("the network", "auto (CUDA where present), cpu, cuda", default="auto")
    teacher: str | None = flag(
        "teaching",
        "clone this baseline first (behaviour cloning, then DAgger rounds), then "
        "fine-tune with PPO while a decaying cloning loss keeps what was cloned",
        default=None,
        metavar="AGENT",
        shown="none",
    )
    teacher_states: int = flag(
        "teaching", "states the teacher labels, over all rounds", default=20_000
    )
    dagger_rounds: int = flag("teaching", "round 0 the teacher plays, then the learner", default=3)
    teacher_epochs: int = flag(
        "teaching", "cloning passes over the labels after each round", default=4
    )
    teacher_lr: float = flag("teaching", "cloning's step size (PPO keeps its own)", default=3e-3)
    teacher_batch: int = flag("teaching", "cloning's minibatch", default=64)
    teacher_workers: int = flag(
        "teaching", "processes that label each round, one per core", default=1
    )
    warm_teacher: str | None = flag(
        "teaching",
        "a faster baseline cloned first from its own play; then every round is a "
        "DAgger round, the learner moving and --teacher labelling",
        default=None,
        metavar="AGENT",
        shown="none",
    )
    warm_states: int = flag("teaching", "states the warm teacher labels", default=40_000)
    cloning_coef: float = flag(
        "teaching", "the weight of the cloning loss kept during PPO", default=1.0, least=0.0
    )
    cloning_decay: int | None = flag(
        "teaching",
        "PPO steps over which that weight decays to 0",
        default=None,
        metavar="STEPS",
        shown="half of timesteps",
    )


def training_defaults(env_id: str) -> dict[str, Any]:
    """The settings ``grid-games train`` starts from for ``env_id``: its game's declaration's
    ``training`` row (:mod:`agents.games`), empty for an id the game declares none for."""
    declared = declaration_of(env_id)
    return dict(declared.training.get(env_id, {})) if declared is not None else {}


def compare_rows() -> dict[str, dict[str, Any]]:
    """What ``grid-games compare`` runs for each game, over its training defaults: the id,
    the teacher, the labelled states and PPO steps of its learned policy, and what it
    plays (``sample``, ``episodes``, ``skip_agents``, ``search``), in the order of
    ``grid_envs.GAMES``; each row is its game's declaration's own."""
    return {env_id: row for game in declarations().values() for env_id, row in game.compare.items()}


def symmetries_of(env_id: str) -> Any:
    """The board symmetries of ``env_id`` cloning may use (an
    :data:`agents.train.cloning.ActionMap`), None where its game declares none."""
    declared = declaration_of(env_id)
    return None if declared is None else declared.symmetries.get(env_id)


def default_config(env_id: str, **overrides: Any) -> TrainConfig:
    """The game's :func:`training_defaults` and its vec env's :data:`PATH_DEFAULTS`, then
    ``overrides`` (None values left out; ``shaping="none"`` turns a default off). The
    game's network size goes with its own policy: another policy, given alone, comes at
    its own size."""
    checks.not_renamed(overrides, frozenset(f.name for f in fields(TrainConfig)))
    given = {k: v for k, v in overrides.items() if v is not None}
    game = training_defaults(env_id)
    if given.get("policy", game.get("policy")) != game.get("policy"):
        game.pop("net_width", None)
        game.pop("net_depth", None)
    settings = {**game, **given}
    if settings.get("shaping") == "none":  # no shaping, the game's default included
        settings["shaping"] = None
    vec_env = settings.get("vec_env", "batched")
    if vec_env not in VEC_ENVS:
        raise ValueError(f"vec_env must be one of {VEC_ENVS}, got {vec_env!r}")
    return TrainConfig(env_id=env_id, **{**PATH_DEFAULTS[vec_env], **settings})


EVAL_SEED = 10_000
HELDOUT_SEED = 1_000_000
