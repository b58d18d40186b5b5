"""The one configuration object of a PPO training run, with documented defaults.

Every field can be set from ``skyjo train`` (``--field value``) or from a JSON file
(``--config run.json``); the run's output folder keeps the resolved ``config.json``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from skyjo_env.agents.advice import check_advisor

#: Opponent kinds a mixture may name: heuristic agent names, or "self" for the snapshot pool.
SELF = "self"
#: The reward modes a learner can train on (the engine's, less ``"none"``).
REWARDS = ("score", "lead", "result")


@dataclass
class TrainConfig:
    """Hyper-parameters and bookkeeping of a MaskablePPO run (defaults: the README's main job).

    Attributes:
        players: seats at the table (2..8); the learner takes a random seat each game.
        total_timesteps: learner actions to train for.
        num_envs: games stepped together in the batched vector env.
        opponents: mixture weights over opponent kinds; each game draws one kind for all its
            opponent seats. Names are agent names (``agents.make``) or ``"self"``: a frozen
            earlier snapshot of the learner from the pool.
        snapshot_every: learner steps between snapshots added to the self-play pool.
        pool_size: most recent snapshots kept in the pool.
        reward: environment reward mode, ``"score"`` (each round: opponents' mean round score
            minus one's own), ``"lead"`` (each round: the change in the lead over the best
            opponent's game total) or ``"result"`` (winners share +1, losers -1, at game end).
        reward_scale: every reward is multiplied by this, to keep returns near unit scale.
        warm_start: a teacher agent name (e.g. ``"counting"``) or ``None``. Before PPO, the teacher
            plays ``warm_start_samples`` learner turns against copies of itself and the networks
            are fitted to its actions and returns for ``warm_start_epochs`` epochs
            (:mod:`skyjo_env.train.imitation`); PPO then improves on it.
        warm_start_samples, warm_start_epochs: size of that behaviour-cloning phase.
        advice: ``None``, or a heuristic (``"counting"``) whose per-action advice the networks read
            after the observation (:mod:`skyjo_env.agents.advice`): PPO then learns where to depart from it.
        shaping: add potential-based shaping from the expected round-score lead (see
            :mod:`skyjo_env.train.shaping`; ``"score"`` reward only), which pays moves when they are made.
        learning_rate, n_steps, batch_size, n_epochs, gamma, gae_lambda, clip_range, ent_coef,
        vf_coef, max_grad_norm: PPO hyper-parameters (n_steps per env per rollout).
        net_arch: hidden layer sizes of the policy and value networks.
        activation: ``"tanh"`` or ``"relu"``.
        eval_every: learner steps between evaluations (0: only at the end).
        eval_games: complete games per heuristic in each evaluation.
        eval_opponents: heuristics the learner is evaluated against (win rate in TensorBoard).
        checkpoint_every: learner steps between checkpoints (0: only at the end).
        time_limit_minutes: stop learning after this many minutes (warm start included), even before ``total_timesteps``
            (``None``: no limit); the run then finishes as usual. The default keeps the README's
            main job (``skyjo train`` with no options) under 20 minutes on 2 cores.
        seed: seeds the environment, the opponents and torch.
        out_dir: folder for checkpoints, TensorBoard logs, the final agent and its results.
    """

    players: int = 2
    total_timesteps: int = 10_000_000
    num_envs: int = 128
    opponents: dict[str, float] = field(
        default_factory=lambda: {"counting": 0.6, "threshold": 0.1, SELF: 0.3}
    )
    snapshot_every: int = 200_000
    pool_size: int = 8
    reward: str = "score"
    reward_scale: float = 0.1
    shaping: bool = False
    advice: str | None = "counting"
    warm_start: str | None = "counting"
    warm_start_samples: int = 1_000_000
    warm_start_epochs: int = 3
    learning_rate: float = 1e-4
    n_steps: int = 32
    batch_size: int = 1024
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.005
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    activation: str = "relu"
    eval_every: int = 500_000
    eval_games: int = 1000
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "threshold", "counting"])
    checkpoint_every: int = 500_000
    time_limit_minutes: float | None = 16.0
    seed: int = 0
    out_dir: str = "runs/ppo"

    def __post_init__(self) -> None:
        if not 2 <= self.players <= 8:
            raise ValueError(f"players={self.players!r} is not allowed; use 2 to 8")
        for name in ("total_timesteps", "num_envs", "n_steps", "batch_size", "n_epochs", "pool_size", "eval_games",
                     "warm_start_samples", "warm_start_epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; use a positive integer")
        for name in ("reward_scale", "learning_rate", "clip_range", "max_grad_norm"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; use a positive number")
        for name in ("ent_coef", "vf_coef"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; use a number >= 0")
        if not (0 < self.gamma <= 1 and 0 <= self.gae_lambda <= 1):
            raise ValueError(f"gamma={self.gamma!r}, gae_lambda={self.gae_lambda!r}: use 0 < gamma <= 1 and 0 <= gae_lambda <= 1")
        if not self.opponents or any(w < 0 for w in self.opponents.values()) or sum(self.opponents.values()) <= 0:
            raise ValueError(f"opponents={self.opponents!r} must map opponent kinds to non-negative weights, not all 0")
        if self.reward not in REWARDS:
            raise ValueError(f"reward={self.reward!r} is not allowed; use one of {REWARDS}")
        if self.shaping and self.reward != "score":
            raise ValueError("shaping=True needs reward='score' (it shapes the round-score lead)")
        check_advisor(self.advice)
        if self.warm_start is not None:
            from skyjo_env import agents
            if self.warm_start not in agents.names():
                raise ValueError(f"warm_start={self.warm_start!r} is not an agent; use None or one of {agents.names()}")
        if self.activation not in ("tanh", "relu"):
            raise ValueError(f"activation={self.activation!r} is not allowed; use 'tanh' or 'relu'")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config field(s) {unknown}; known fields are {sorted(known)}")
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read config {path}: {exc}") from exc
        return cls.from_dict(data)
