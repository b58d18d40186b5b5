"""Settings of an RLlib run, and its command-line options; importable without Ray.

:class:`RLlibRun` holds one run's settings. Its fields are named like
:class:`~skyjo_env.train.config.TrainConfig`'s where they mean the same (``players``, ``rules``,
``learning_rate``, ``batch_size``, ``n_epochs``, ``net_arch``, ``out_dir``, ...), so ``skyjo train``
has one flag for each setting whichever backend runs it; the flags are generated from the fields
(:mod:`skyjo_env.train.flags`). :func:`run_rllib` trains; only it needs Ray (the ``distributed``
extra), and it says so if Ray is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from skyjo_env.pettingzoo_env import raw_env
from skyjo_env.rules import Rules
from skyjo_env.train.config import Reward, game_rules
from skyjo_env.train.flags import check_types

SelfPlay = Literal["shared", "frozen"]
SELF_PLAY_MODES: tuple[str, ...] = get_args(SelfPlay)


@dataclass
class RLlibRun:
    """Settings of one RLlib PPO run; each field is documented by the string after it."""

    players: int = 2
    """Seats at the table (2..8)."""
    rules: dict[str, Any] = field(default_factory=dict)
    """Rule options besides the player count (``Rules`` fields: column_rule, end_score, ...)."""
    iterations: int = 50
    """``Algorithm.train()`` calls."""
    env_runners: int = 2
    """Remote EnvRunner actors sampling in parallel, one CPU each (0: sample in the driver)."""
    envs_per_runner: int = 8
    """Environments each EnvRunner steps together."""
    self_play: SelfPlay = "shared"
    """'shared': one learning module on every seat; 'frozen': the learner on one seat per game, a
    frozen copy of it on the others."""
    sync_every: int = 5
    """Iterations between copies of the learning module into the frozen one."""
    reward: Reward = "score"
    """Reward: 'score' or 'lead' (per round), or 'result' (+1/-1 at game end)."""
    train_batch_size: int = 8000
    """Environment steps per training batch (all seats together)."""
    batch_size: int = 1000
    """Minibatch size of the PPO updates."""
    n_epochs: int = 4
    """Passes over each batch."""
    learning_rate: float = 3e-4
    """PPO learning rate."""
    gamma: float = 0.995
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clip range."""
    ent_coef: float = 0.01
    """Entropy coefficient."""
    net_arch: list[int] = field(default_factory=lambda: [256, 256], metadata={"metavar": "UNITS"})
    """Hidden layer sizes of the policy and value networks."""
    checkpoint_frequency: int = 10
    """Iterations between checkpoints (0: only at the end)."""
    address: str | None = None
    """Ray cluster to join (HEAD_IP:6379 or 'auto'; 'none': start a local Ray)."""
    num_cpus: int | None = None
    """CPUs of a local Ray ('none': env runners + 1)."""
    seed: int = 0
    """Seeds RLlib (environments, modules)."""
    out_dir: str = field(default="runs/rllib-2p", metadata={"flags": ("--out",), "metavar": "DIR"})
    """Output folder: config.json, progress.jsonl, checkpoint/."""

    def __post_init__(self) -> None:
        check_types(self)
        _ = self.game_rules  # validates the rule options
        for name in ("iterations", "envs_per_runner", "sync_every", "train_batch_size", "batch_size", "n_epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; use a positive integer")
        for name in ("env_runners", "checkpoint_frequency"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; use 0 or more")
        if self.num_cpus is not None and self.num_cpus < 1:
            raise ValueError(f"num_cpus={self.num_cpus!r} is not allowed; use a positive integer or None")
        if self.batch_size > self.train_batch_size:
            raise ValueError(f"batch_size={self.batch_size} exceeds train_batch_size={self.train_batch_size}")
        if not self.net_arch or any(w < 1 for w in self.net_arch):
            raise ValueError(f"net_arch={self.net_arch!r} is not allowed; use one or more positive layer sizes")
        raw_env(**self.env_config())  # the EnvRunners' own check (players and rules too), before any actor starts

    @property
    def game_rules(self) -> Rules:
        """The :class:`Rules` of the run's games."""
        return game_rules(self.players, self.rules)

    def env_config(self) -> dict[str, Any]:
        """Keyword options of :class:`~skyjo_env.pettingzoo_env.raw_env` for this run."""
        return {"num_players": self.players, "reward": self.reward, **self.rules}


def run_rllib(run: RLlibRun) -> Path:
    """Train ``run``; returns the checkpoint folder.

    Raises ``RuntimeError`` naming the ``distributed`` extra if Ray RLlib is not installed.
    """
    try:
        from skyjo_env.train.rllib_ppo import train
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "ray":
            raise
        raise RuntimeError(
            "the RLlib backend needs Ray RLlib: pip install 'skyjo-env[distributed]' (in its own virtual "
            "environment: RLlib pins gymnasium 1.2.2)"
        ) from exc
    checkpoint = train(run)
    print(f"checkpoint: {checkpoint}")
    return checkpoint
