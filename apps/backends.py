"""Training backends: the methods `skyjo train --backend NAME` runs, behind one small interface.

Every backend trains the same recipe, one [`TrainConfig`][] (every field a
`skyjo train` flag), and leaves the same run folder ([`skyjo_env.train.runs`][]). A
[`Backend`][] names the extra it needs, the fields it cannot honour (refused when set, never
ignored) and the function that trains. Two are registered: `sb3` (sb3-contrib's MaskablePPO on the
batched vector env, [`skyjo_env.train.ppo`][]) and `rllib` (Ray RLlib's PPO with EnvRunners
stepping the batched vector env, on one machine or a cluster, [`skyjo_env.train.rllib_ppo`][]). A
third training method is a [`skyjo_env.train.driver.Trainer`][] (its learning step; the run driver
does the rest) and a module with a `train(config, resume, *, overwrite, progress, say)` function
that runs it (`driver.train(config, MyTrainer, resume, ...)`), registered here with
[`register_backend()`][register_backend] (see CONTRIBUTING.md).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skyjo_env.apps.arguments import rule_options
from skyjo_env.apps.flags import default_of, given
from skyjo_env.observation import count_range
from skyjo_env.train.config import TrainConfig, check_resumable, opponent_weight

if TYPE_CHECKING:  # the run's steps need torch: the command line loads them only to train
    from skyjo_env.train.runs import TrainOutcome

#: How a backend trains: `train(config, resume, *, overwrite, progress, say)` (`resume`: the
#: checkpoint folder of the run to continue, or `None`).
Trainer = Callable[..., "TrainOutcome"]


@dataclass(frozen=True)
class Backend:
    """One way to train the recipe of a [`TrainConfig`][]."""

    name: str
    help: str  #: one line for `skyjo train --help`
    extra: str  #: the extra it needs (`pip install 'skyjo-env[EXTRA]'`)
    modules: tuple[str, ...]  #: modules of that extra, checked before anything runs
    train: Trainer
    cannot: tuple[str, ...] = ()  #: TrainConfig fields it cannot honour: refused unless at their defaults
    #: Its own defaults of TrainConfig fields, where neither a flag nor `--config` gives them.
    defaults: dict[str, Any] = field(default_factory=dict)

    def check(self, config: TrainConfig) -> None:
        """`ValueError` naming the first field of `cannot` that `config` sets to another value than its default."""
        defaults = {f.name: default_of(f) for f in fields(TrainConfig)}
        for name in self.cannot:
            if getattr(config, name) != defaults[name]:
                others = [b.name for b in BACKENDS.values() if name not in b.cannot]
                where = f"; it is an option of the {' and '.join(others)} backend" if others else ""
                raise ValueError(
                    f"the {self.name} backend cannot honour {name}={getattr(config, name)!r} "
                    f"(--{name.replace('_', '-')}){where}"
                )


BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> None:
    """Make `skyjo train --backend NAME` run `backend`; `ValueError` if the name is taken."""
    if backend.name in BACKENDS:
        raise ValueError(f"a training backend named {backend.name!r} is already registered")
    BACKENDS[backend.name] = backend


def default_out(backend: str, players: Any) -> str:
    """The run folder of a backend's run when `--out` is not given: `runs/ppo-2p`, `runs/rllib-3-8p`,
    `runs/value-2p`."""
    prefix = "ppo" if backend == "sb3" else backend
    return f"runs/{prefix}-{count_range(tuple(players)) if isinstance(players, list) else players}p".replace(", ", ",")


def train_config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The [`TrainConfig`][] of `skyjo train` options: the resumed run's or `--config`'s, then
    flags; `ValueError` for a field the chosen backend cannot honour."""
    flags = given(args, TrainConfig)
    if "opponents" in flags:
        flags["opponents"] = dict(opponent_weight(text) for text in flags["opponents"])
    rules = rule_options(args)
    if args.resume:
        if args.config:
            raise ValueError("--resume continues a run with its own config; --config cannot change it")
        saved = TrainConfig.load(check_resumable(args.resume) / "config.json")
        if "out_dir" in flags and Path(flags["out_dir"]) != Path(args.resume):
            raise ValueError(
                f"--out {flags['out_dir']} differs from --resume {args.resume}: a resumed run stays in its folder"
            )
        base = saved.to_dict() | {"out_dir": args.resume}  # the fields fixed on resume: checked by the run driver
    elif args.config:
        base = TrainConfig.load(args.config).to_dict()
    else:
        base = dict(BACKENDS[args.backend].defaults)
    if "out_dir" not in flags and "out_dir" not in base:
        base["out_dir"] = default_out(args.backend, flags.get("players", base.get("players", TrainConfig.players)))
    if flags.get("reward") == "result" and "shaping" not in flags:
        base["shaping"] = False
    base["rules"] = {**base.get("rules", {}), **rules}
    config = TrainConfig.from_dict({**base, **flags})
    BACKENDS[args.backend].check(config)
    return config


def train_sb3(config: TrainConfig, resume: Path | None = None, **options: Any) -> TrainOutcome:
    """Train with MaskablePPO ([`skyjo_env.train.ppo.train()`][skyjo_env.train.ppo.train])."""
    from skyjo_env.train.ppo import train

    return train(config, resume, **options)


def train_rllib(config: TrainConfig, resume: Path | None = None, **options: Any) -> TrainOutcome:
    """Train with Ray RLlib ([`skyjo_env.train.rllib_ppo.train()`][skyjo_env.train.rllib_ppo.train])."""
    from skyjo_env.train.rllib_ppo import train

    return train(config, resume, **options)


#: What the value trainer has no use for: the PPO recipe's fields, self-play snapshots and Ray's.
VALUE_CANNOT = (
    "reward", "reward_scale", "win_bonus", "shaping", "advice", "warm_start", "warm_start_samples",
    "warm_start_epochs", "warm_start_temperature", "learning_rate_schedule", "n_steps", "gamma", "clip_range",
    "ent_coef", "vf_coef", "max_grad_norm", "precision", "overlap", "snapshot_every", "pool_size", "env_runners",
    "address",
)  # fmt: skip
#: The value trainer's recipe where it differs from PPO's: the agents whose self-play it learns from, the
#: lambda of its TD(lambda) targets, a longer time, and evaluations sized to the expectimax agent's
#: milliseconds a decision (the defaults run in under 30 minutes).
VALUE_DEFAULTS: dict[str, Any] = {
    "opponents": {"ppo": 1.0},
    "gae_lambda": 0.5,
    "net_arch": [256, 256],
    "learning_rate": 1e-3,
    "batch_size": 2048,
    "n_epochs": 2,
    "num_envs": 1024,
    "eval_every": 0,
    "eval_opponents": ["counting"],
    "eval_games": 400,
    "final_games": 400,
    "total_timesteps": 100_000_000,
    "time_limit_minutes": 20,
}


def train_value(config: TrainConfig, resume: Path | None = None, **options: Any) -> TrainOutcome:
    """Train a game-value network for the expectimax agent ([`skyjo_env.train.value.train()`][skyjo_env.train.value.train])."""
    from skyjo_env.train.value import train

    return train(config, resume, **options)


register_backend(Backend(
    "sb3", "MaskablePPO on one machine", "train", ("torch", "stable_baselines3", "sb3_contrib", "tensorboard"),
    train_sb3, cannot=("env_runners", "address"),
))  # fmt: skip
register_backend(Backend(
    "rllib", "Ray RLlib's PPO, EnvRunners on one machine or a Ray cluster", "distributed", ("ray", "sb3_contrib"),
    train_rllib, cannot=("shaping",),
))  # fmt: skip
register_backend(Backend(
    "value", "a game-value network from self-play positions, for the expectimax agent", "train", ("torch",),
    train_value, cannot=VALUE_CANNOT, defaults=VALUE_DEFAULTS,
))  # fmt: skip
