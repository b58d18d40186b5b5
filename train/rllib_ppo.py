"""Multi-agent self-play PPO on Ray RLlib (new API stack), locally or on a Ray cluster.

The environment is the PettingZoo AEC :class:`skyjo_env.aec_env.raw_env` (an illegal action
raises, so a masking bug cannot hide), wrapped in RLlib's ``PettingZooEnv`` and registered with
``ray.tune.registry.register_env`` as :data:`ENV_NAME`. Every seat is an RLlib agent; seats map to
modules of :class:`train.rllib_module.MaskedActorCritic`, which masks illegal actions itself:

* ``--self-play shared`` (default): one learning module :data:`MAIN` plays every seat.
* ``--self-play frozen``: :data:`MAIN` plays one seat per game (drawn from the episode id), a frozen
  copy :data:`FROZEN` plays the others; every ``--sync-every`` iterations the frozen copy takes
  MAIN's current weights.

Without ``--address`` a local Ray is started (``ray.init(num_cpus=...)``) and shut down at the
end; with ``--address`` the run joins an existing cluster (see ``docs/distributed.md``). The
output folder gets ``config.json`` (the run's settings), ``progress.jsonl`` (one line of figures
per iteration) and ``checkpoint/`` (``Algorithm.save_to_path``), which
:class:`agents.rllib_agent.RLlibPolicy` plays in tournaments.

CLI: ``python -m train.rllib_ppo --players 2 --iterations 50 --env-runners 2 --out runs/rllib``.
Needs the ``distributed`` extra (``pip install -e ".[distributed]"``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import time
import zlib
from dataclasses import asdict, dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any, Iterator

import ray
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env

from skyjo_env.aec_env import raw_env
from skyjo_env.rules import Rules
from train.rllib_module import MAIN, MaskedActorCritic

ENV_NAME = "skyjo_aec"
FROZEN = "frozen"
SELF_PLAY_MODES = ("shared", "frozen")
CHECKPOINT_DIR = "checkpoint"
#: Object store of a local Ray: small, since only weights and sample batches travel through it.
LOCAL_OBJECT_STORE_BYTES = 512 * 1024**2


@dataclass
class RLlibRun:
    """Settings of one RLlib PPO run.

    Attributes:
        players: seats at the table (2..8).
        iterations: ``Algorithm.train()`` calls.
        env_runners: remote EnvRunner actors sampling in parallel (0: sample in the driver).
        envs_per_runner: environments each EnvRunner steps together.
        self_play: ``"shared"`` or ``"frozen"`` (see the module docstring).
        sync_every: iterations between copies of MAIN into FROZEN (``"frozen"`` only).
        reward: environment reward mode, ``"score"`` (per round) or ``"result"`` (+1/-1 at game end).
        rules: further options of the environment (``Rules`` fields other than ``num_players``).
        batch_size: environment steps per training batch (all seats together).
        minibatch_size, epochs, lr, gamma, gae_lambda, clip_param, entropy_coeff: PPO settings.
        hidden: hidden layer sizes of the policy and value MLPs.
        checkpoint_every: iterations between checkpoints (0: only at the end).
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
    batch_size: int = 8000
    minibatch_size: int = 1000
    epochs: int = 4
    lr: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_param: float = 0.2
    entropy_coeff: float = 0.01
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    checkpoint_every: int = 10
    seed: int = 0
    out: str = "runs/rllib"

    def __post_init__(self) -> None:
        if not 2 <= self.players <= 8:
            raise ValueError(f"players={self.players!r} is not allowed; use 2 to 8")
        if self.self_play not in SELF_PLAY_MODES:
            raise ValueError(f"self_play={self.self_play!r} is not allowed; use one of {SELF_PLAY_MODES}")
        if self.reward not in ("score", "result"):
            raise ValueError(f"reward={self.reward!r} is not allowed; use 'score' or 'result'")
        if "num_players" in self.rules:
            raise ValueError("set the player count with players, not rules['num_players']")
        known = [f.name for f in fields(Rules) if f.name != "num_players"]
        unknown = sorted(set(self.rules) - set(known))
        if unknown:
            raise ValueError(f"unknown rule option(s) {unknown}; rule options are {known}")
        for name in ("iterations", "envs_per_runner", "sync_every", "batch_size", "minibatch_size", "epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; use a positive integer")
        for name in ("env_runners", "checkpoint_every"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed; use 0 or more")
        if self.minibatch_size > self.batch_size:
            raise ValueError(f"minibatch_size={self.minibatch_size} exceeds batch_size={self.batch_size}")
        if not self.hidden or any(w < 1 for w in self.hidden):
            raise ValueError(f"hidden={self.hidden!r} is not allowed; use one or more positive layer sizes")
        raw_env(**self.env_config())  # the EnvRunners' own check, here before any actor starts

    def env_config(self) -> dict[str, Any]:
        """Keyword options of :class:`raw_env` for this run."""
        return {"num_players": self.players, "reward": self.reward, **self.rules}


def make_env(config: dict[str, Any]) -> PettingZooEnv:
    """The environment creator registered as :data:`ENV_NAME`: ``config`` holds ``raw_env`` options."""
    return PettingZooEnv(raw_env(**dict(config)))


def shared_mapping(agent_id: str, episode: Any, **kwargs: Any) -> str:
    """Every seat is played by MAIN."""
    return MAIN


def frozen_mapping(agent_id: str, episode: Any, players: int, **kwargs: Any) -> str:
    """MAIN plays one seat per game, chosen by the episode id; FROZEN plays the others."""
    main_seat = zlib.crc32(str(episode.id_).encode()) % players
    return MAIN if agent_id == f"player_{main_seat}" else FROZEN


def build_config(run: RLlibRun) -> PPOConfig:
    """The PPO algorithm config of ``run`` (new API stack, one local learner)."""
    modules = [MAIN] if run.self_play == "shared" else [MAIN, FROZEN]
    mapping = shared_mapping if run.self_play == "shared" else partial(frozen_mapping, players=run.players)
    module = RLModuleSpec(module_class=MaskedActorCritic, model_config={"hidden": list(run.hidden)})
    return (
        PPOConfig()
        # RLlib's env pre-check steps unmasked random actions, which raw_env rejects as illegal.
        .environment(ENV_NAME, env_config=run.env_config(), disable_env_checking=True)
        .multi_agent(policies=set(modules), policy_mapping_fn=mapping, policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: module for m in modules}))
        .env_runners(
            num_env_runners=run.env_runners,
            num_envs_per_env_runner=run.envs_per_runner,
            num_cpus_per_env_runner=1,
            rollout_fragment_length="auto",
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=run.batch_size,
            minibatch_size=run.minibatch_size,
            num_epochs=run.epochs,
            lr=run.lr,
            gamma=run.gamma,
            lambda_=run.gae_lambda,
            clip_param=run.clip_param,
            entropy_coeff=run.entropy_coeff,
            # Round-score returns are tens of points: clipping the value loss would stall the critic.
            vf_clip_param=float("inf"),
        )
        .debugging(seed=run.seed)
    )


@contextlib.contextmanager
def ray_session(address: str | None, num_cpus: int | None) -> Iterator[None]:
    """Join the cluster at ``address`` or start a local Ray; shut down only what this started.

    An already initialised Ray (for example a test's) is used as it is and left running.
    """
    if ray.is_initialized():
        yield
        return
    if address:
        ray.init(address=address)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES)
    try:
        yield
    finally:
        ray.shutdown()


def sync_frozen(algo: Algorithm) -> None:
    """Copy MAIN's learner weights into FROZEN, in the learner and in every EnvRunner.

    The EnvRunners are updated with a blocking call: RLlib's own weight sync is fire-and-forget
    and drops the call to a runner still busy with an earlier one, which would leave a stale
    frozen copy unnoticed.
    """
    weights = algo.learner_group.get_weights([MAIN])[MAIN]
    algo.learner_group.set_weights({FROZEN: weights})
    algo.env_runner_group.foreach_env_runner(partial(_set_frozen, weights=weights))


def _set_frozen(runner: Any, weights: dict[str, Any]) -> None:
    runner.module[FROZEN].set_state(weights)


def summarise(iteration: int, result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The figures of one ``Algorithm.train()`` result kept in ``progress.jsonl`` (NaN as None)."""
    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get(MAIN, {})
    faults = result.get("fault_tolerance", {})
    row = {
        "iteration": iteration,
        "seconds": seconds,
        "env_steps": runners.get("num_env_steps_sampled_lifetime"),
        "episodes": runners.get("num_episodes_lifetime"),
        "episode_len_mean": runners.get("episode_len_mean"),
        "main_return_mean": runners.get("module_episode_returns_mean", {}).get(MAIN),
        "seat_return_mean": runners.get("agent_episode_returns_mean", {}),
        "policy_loss": learner.get("policy_loss"),
        "vf_loss": learner.get("vf_loss"),
        "entropy": learner.get("entropy"),
        "healthy_env_runners": faults.get("num_healthy_workers"),
        "env_runner_restarts": faults.get("num_remote_worker_restarts"),
    }
    return {k: _plain(v) for k, v in row.items()}


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars as Python numbers, NaN as None, dicts converted entry by entry."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 6)
    return value


def train(run: RLlibRun, address: str | None = None, num_cpus: int | None = None, verbose: bool = True) -> Path:
    """Train ``run``; returns the checkpoint folder (``run.out/checkpoint``).

    ``num_cpus`` sizes a local Ray (default ``env_runners + 1``: one per EnvRunner plus the
    driver's learner); it is ignored with ``address`` or an already initialised Ray.
    """
    out = Path(run.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(asdict(run), indent=2) + "\n")
    checkpoint = out / CHECKPOINT_DIR
    register_env(ENV_NAME, make_env)
    with ray_session(address, num_cpus if num_cpus is not None else run.env_runners + 1):
        algo = build_config(run).build_algo()
        try:
            if run.self_play == "frozen":
                sync_frozen(algo)
            with open(out / "progress.jsonl", "w") as log:
                for i in range(1, run.iterations + 1):
                    started = time.perf_counter()
                    row = summarise(i, algo.train(), time.perf_counter() - started)
                    log.write(json.dumps(row) + "\n")
                    log.flush()
                    if verbose:
                        print(json.dumps(row))
                    if run.self_play == "frozen" and i % run.sync_every == 0:
                        sync_frozen(algo)
                    if run.checkpoint_every and i % run.checkpoint_every == 0 and i < run.iterations:
                        algo.save_to_path(str(checkpoint.resolve()))
            algo.save_to_path(str(checkpoint.resolve()))
        finally:
            algo.stop()
    return checkpoint


def add_rllib_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of an RLlib run to ``parser`` (``python -m train.rllib_ppo`` and ``skyjo train``).

    Option names that ``skyjo train`` may already define (``--players``, ``--seed``, ``--out``)
    are added only if missing; :func:`run_rllib` reads them under the same names.
    """
    d = RLlibRun()
    existing = set(parser._option_string_actions)  # noqa: SLF001 (argparse has no public lookup)
    options = {
        "--players": dict(type=int, default=d.players, help="seats at the table, 2..8"),
        "--iterations": dict(type=int, default=d.iterations, help="Algorithm.train() calls"),
        "--env-runners": dict(type=int, default=d.env_runners, help="remote EnvRunner actors (0: sample in the driver)"),
        "--envs-per-runner": dict(type=int, default=d.envs_per_runner, help="environments per EnvRunner"),
        "--address": dict(default=None, help="Ray cluster to join (HEAD:6379 or 'auto'); default: start a local Ray"),
        "--num-cpus": dict(type=int, default=None, help="CPUs of a local Ray (default: env runners + 1)"),
        "--self-play": dict(choices=SELF_PLAY_MODES, default=d.self_play, help="shared module, or MAIN vs a frozen copy"),
        "--sync-every": dict(type=int, default=d.sync_every, help="iterations between copies of MAIN into the frozen copy"),
        "--reward": dict(choices=("score", "result"), default=d.reward, help="environment reward mode"),
        "--batch-size": dict(type=int, default=d.batch_size, help="environment steps per training batch"),
        "--minibatch-size": dict(type=int, default=d.minibatch_size, help="SGD minibatch size"),
        "--epochs": dict(type=int, default=d.epochs, help="passes over each batch"),
        "--lr": dict(type=float, default=d.lr, help="learning rate"),
        "--hidden": dict(type=int, nargs="+", default=d.hidden, help="hidden layer sizes"),
        "--rule": dict(
            action="append", default=[], metavar="NAME=VALUE",
            help="a rule option of the environment, e.g. end_score=50 or column_rule=false (repeatable)",
        ),
        "--checkpoint-every": dict(type=int, default=d.checkpoint_every, help="iterations between checkpoints (0: end only)"),
        "--seed": dict(type=int, default=d.seed, help="seeds RLlib (environments, modules)"),
        "--out": dict(default=d.out, help="output folder: config.json, progress.jsonl, checkpoint/"),
    }
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


def run_rllib(args: argparse.Namespace) -> Path:
    """Train from parsed :func:`add_rllib_arguments` options; returns the checkpoint folder."""
    run = RLlibRun(
        players=args.players,
        iterations=args.iterations,
        env_runners=args.env_runners,
        envs_per_runner=args.envs_per_runner,
        self_play=args.self_play,
        sync_every=args.sync_every,
        reward=args.reward,
        rules=parse_rules(args.rule),
        batch_size=args.batch_size,
        minibatch_size=args.minibatch_size,
        epochs=args.epochs,
        lr=args.lr,
        hidden=list(args.hidden),
        checkpoint_every=args.checkpoint_every,
        seed=args.seed,
        out=args.out,
    )
    checkpoint = train(run, address=args.address, num_cpus=args.num_cpus)
    print(f"checkpoint: {checkpoint}")
    return checkpoint


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m train.rllib_ppo", description=__doc__.split("\n\n")[0])
    add_rllib_arguments(parser)
    run_rllib(parser.parse_args(argv))


if __name__ == "__main__":
    main()
