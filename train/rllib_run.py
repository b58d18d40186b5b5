"""Settings and command-line options of an RLlib run; importable without Ray.

:class:`RLlibRun` holds one run's settings; :func:`add_rllib_arguments` and :func:`run_rllib` are
the hook by which ``python -m skyjo_env.train.rllib_ppo`` and ``skyjo train --backend rllib`` declare and run
it. Only :func:`run_rllib` needs Ray (the ``distributed`` extra); it says so if Ray is missing.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from skyjo_env.pettingzoo_env import raw_env
from skyjo_env.rules import Rules
from skyjo_env.train.config import REWARDS

SELF_PLAY_MODES = ("shared", "frozen")
#: Options that mean the same for every backend of ``skyjo train``: reused if the parser has them.
SHARED_FLAGS = ("--players", "--seed", "--out", "--reward")


@dataclass
class RLlibRun:
    """Settings of one RLlib PPO run.

    Attributes:
        players: seats at the table (2..8).
        iterations: ``Algorithm.train()`` calls.
        env_runners: remote EnvRunner actors sampling in parallel (0: sample in the driver).
        envs_per_runner: environments each EnvRunner steps together.
        self_play: ``"shared"`` (one learning module on every seat) or ``"frozen"`` (the learning
            module on one seat per game, a frozen copy of it on the others).
        sync_every: iterations between copies of the learning module into the frozen one.
        reward: environment reward mode, ``"score"`` or ``"lead"`` (per round) or ``"result"`` (+1/-1 at game end).
        rules: further rule options of the environment (``Rules`` fields but ``num_players``).
        train_batch_size: environment steps per training batch (all seats together).
        minibatch_size, num_epochs, lr, gamma, gae_lambda, clip_param, entropy_coeff: PPO settings.
        hidden: hidden layer sizes of the policy and value MLPs.
        checkpoint_frequency: iterations between checkpoints (0: only at the end).
        seed: seeds RLlib (environments, modules).
        out: output folder.
    """

    players: int = 2
    iterations: int = 50
    env_runners: int = 2
    envs_per_runner: int = 8
    self_play: str = "shared"
    sync_every: int = 5
    reward: str = "score"
    rules: dict[str, Any] = field(default_factory=dict)
    train_batch_size: int = 8000
    minibatch_size: int = 1000
    num_epochs: int = 4
    lr: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_param: float = 0.2
    entropy_coeff: float = 0.01
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    checkpoint_frequency: int = 10
    seed: int = 0
    out: str = "runs/rllib"

    def __post_init__(self) -> None:
        if self.self_play not in SELF_PLAY_MODES:
            raise ValueError(f"self_play={self.self_play!r} is not allowed; use one of {SELF_PLAY_MODES}")
        if self.reward not in REWARDS:
            raise ValueError(f"reward={self.reward!r} is not allowed; use one of {REWARDS}")
        known = [f.name for f in fields(Rules) if f.name != "num_players"]
        unknown = sorted(set(self.rules) - set(known))
        if unknown:
            raise ValueError(f"unknown rule option(s) {unknown}; rule options are {known} (players sets num_players)")
        for name in ("iterations", "envs_per_runner", "sync_every", "train_batch_size", "minibatch_size", "num_epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; use a positive integer")
        for name in ("env_runners", "checkpoint_frequency"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; use 0 or more")
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"minibatch_size={self.minibatch_size} exceeds train_batch_size={self.train_batch_size}")
        if not self.hidden or any(w < 1 for w in self.hidden):
            raise ValueError(f"hidden={self.hidden!r} is not allowed; use one or more positive layer sizes")
        raw_env(**self.env_config())  # the EnvRunners' own check (players too), before any actor starts

    def env_config(self) -> dict[str, Any]:
        """Keyword options of :class:`~skyjo_env.pettingzoo_env.raw_env` for this run."""
        return {"num_players": self.players, "reward": self.reward, **self.rules}


def add_rllib_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of an RLlib run to ``parser``.

    The :data:`SHARED_FLAGS` are added only if ``parser`` lacks them (``skyjo train`` may define
    them for every backend; :func:`run_rllib` reads them under the same names). Any other option
    that ``parser`` already has raises ``ValueError``: two meanings for one flag would be a bug.
    """
    d = RLlibRun()
    options: dict[str, dict[str, Any]] = {
        "--players": dict(type=int, default=d.players, help="seats at the table, 2..8"),
        "--seed": dict(type=int, default=d.seed, help="seeds RLlib (environments, modules)"),
        "--out": dict(default=d.out, help=f"output folder: config.json, progress.jsonl, checkpoint/ (default {d.out})"),
        "--reward": dict(choices=REWARDS, default=d.reward, help=f"environment reward mode (default {d.reward})"),
        "--iterations": dict(type=int, default=d.iterations, help=f"Algorithm.train() calls (default {d.iterations})"),
        "--env-runners": dict(type=int, default=d.env_runners,
                              help=f"remote EnvRunner actors, 0: sample in the driver (default {d.env_runners})"),
        "--envs-per-runner": dict(type=int, default=d.envs_per_runner,
                                  help=f"environments per EnvRunner (default {d.envs_per_runner})"),
        "--address": dict(default=None, help="Ray cluster to join (HEAD_IP:6379 or 'auto'); default: start a local Ray"),
        "--num-cpus": dict(type=int, default=None, help="CPUs of a local Ray (default: env runners + 1)"),
        "--self-play": dict(choices=SELF_PLAY_MODES, default=d.self_play,
                            help="one shared learning module, or the learner against a frozen copy of itself"),
        "--sync-every": dict(type=int, default=d.sync_every,
                             help=f"iterations between copies of the learner into the frozen copy (default {d.sync_every})"),
        "--rule": dict(action="append", default=[], metavar="NAME=VALUE",
                       help="a rule option of the environment, e.g. end_score=50 or column_rule=false (repeatable)"),
        "--train-batch-size": dict(type=int, default=d.train_batch_size,
                                   help=f"environment steps per training batch (default {d.train_batch_size})"),
        "--minibatch-size": dict(type=int, default=d.minibatch_size, help=f"SGD minibatch (default {d.minibatch_size})"),
        "--num-epochs": dict(type=int, default=d.num_epochs, help=f"passes over each batch (default {d.num_epochs})"),
        "--lr": dict(type=float, default=d.lr, help=f"learning rate (default {d.lr})"),
        "--hidden": dict(type=int, nargs="+", default=d.hidden, help=f"hidden layer sizes (default {d.hidden})"),
        "--checkpoint-frequency": dict(type=int, default=d.checkpoint_frequency,
                                       help=f"iterations between checkpoints, 0: end only (default {d.checkpoint_frequency})"),
    }  # fmt: skip
    existing = set(parser._option_string_actions)  # noqa: SLF001 (argparse has no public lookup)
    clashes = sorted((set(options) - set(SHARED_FLAGS)) & existing)
    if clashes:
        raise ValueError(f"the parser already defines {clashes}, which the RLlib backend uses with its own meaning")
    group = parser.add_argument_group("Ray RLlib backend")
    for flag, kwargs in options.items():
        if flag not in existing:
            group.add_argument(flag, **kwargs)


def parse_rules(items: list[str]) -> dict[str, Any]:
    """``["end_score=50", "column_rule=false"]`` -> ``{"end_score": 50, "column_rule": False}`` (JSON values, else text)."""
    rules: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--rule {item!r} is not NAME=VALUE")
        try:
            rules[name] = json.loads(text)
        except json.JSONDecodeError:
            rules[name] = text
    return rules


def run_from_args(args: argparse.Namespace, rules: dict[str, Any] | None = None) -> RLlibRun:
    """The :class:`RLlibRun` of parsed :func:`add_rllib_arguments` options.

    ``rules``: rule options from the caller's own flags (for example ``skyjo train``'s
    ``Rules.to_dict()``); ``num_players`` in it is ignored (``--players`` sets it) and ``--rule``
    entries override it.
    """
    merged = {k: v for k, v in (rules or {}).items() if k != "num_players"} | parse_rules(args.rule)
    return RLlibRun(
        players=args.players,
        iterations=args.iterations,
        env_runners=args.env_runners,
        envs_per_runner=args.envs_per_runner,
        self_play=args.self_play,
        sync_every=args.sync_every,
        reward=args.reward,
        rules=merged,
        train_batch_size=args.train_batch_size,
        minibatch_size=args.minibatch_size,
        num_epochs=args.num_epochs,
        lr=args.lr,
        hidden=list(args.hidden),
        checkpoint_frequency=args.checkpoint_frequency,
        seed=args.seed,
        out=str(args.out),
    )


def run_rllib(args: argparse.Namespace, rules: dict[str, Any] | None = None) -> Path:
    """Train from parsed :func:`add_rllib_arguments` options (see :func:`run_from_args`); returns the checkpoint folder.

    Raises ``RuntimeError`` naming the ``distributed`` extra if Ray RLlib is not installed.
    """
    run = run_from_args(args, rules)
    try:
        from skyjo_env.train.rllib_ppo import train
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "ray":
            raise
        raise RuntimeError(
            'the RLlib backend needs Ray RLlib: pip install -e ".[distributed]" (in its own virtual '
            "environment: RLlib pins gymnasium 1.2.2)"
        ) from exc
    checkpoint = train(run, address=args.address, num_cpus=args.num_cpus)
    print(f"checkpoint: {checkpoint}")
    return checkpoint
