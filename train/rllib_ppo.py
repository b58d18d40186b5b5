"""Multi-agent self-play PPO on Ray RLlib (new API stack), locally or on a Ray cluster.

The environment is the PettingZoo AEC :class:`skyjo_env.pettingzoo_env.raw_env` (an illegal action
raises, so a masking bug cannot hide), wrapped in RLlib's ``PettingZooEnv`` and registered with
``ray.tune.registry.register_env`` as :data:`ENV_NAME`. Every seat is an RLlib agent; seats map to
modules of :class:`skyjo_env.train.rllib_module.MaskedActorCritic`, which masks illegal actions itself:

* ``--self-play shared`` (default): one learning module :data:`MAIN` plays every seat.
* ``--self-play frozen``: :data:`MAIN` plays one seat per game (drawn from the episode id), a frozen
  copy :data:`FROZEN` plays the others; every ``--sync-every`` iterations the frozen copy takes
  MAIN's current weights.

Without ``--address`` a local Ray is started (``ray.init(num_cpus=...)``) and shut down at the
end; with ``--address`` the run joins an existing cluster (see ``docs/distributed.md``). The
output folder gets ``config.json`` (the run's settings), ``progress.jsonl`` (one line of figures
per iteration) and ``checkpoint/`` (``Algorithm.save_to_path``), which
:class:`skyjo_env.agents.rllib_agent.RLlibPolicy` plays in tournaments.

CLI: ``python -m skyjo_env.train.rllib_ppo --players 2 --iterations 50 --env-runners 2 --out runs/rllib``
(the options of ``skyjo train --backend rllib``, generated from :class:`~skyjo_env.train.rllib_run.RLlibRun`).
Needs the ``distributed`` extra (``pip install -e ".[distributed]"``).
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
import zlib
from collections.abc import Iterator
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import ray
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env

from skyjo_env.pettingzoo_env import raw_env
from skyjo_env.train.rllib_module import MAIN, MaskedActorCritic
from skyjo_env.train.rllib_run import RLlibRun

ENV_NAME = "skyjo_aec"
FROZEN = "frozen"
CHECKPOINT_DIR = "checkpoint"
#: Object store of a local Ray: small, since only weights and sample batches travel through it.
LOCAL_OBJECT_STORE_BYTES = 512 * 1024**2


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
    module = RLModuleSpec(module_class=MaskedActorCritic, model_config={"hidden": list(run.net_arch)})
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
            train_batch_size_per_learner=run.train_batch_size,
            minibatch_size=run.batch_size,
            num_epochs=run.n_epochs,
            lr=run.learning_rate,
            gamma=run.gamma,
            lambda_=run.gae_lambda,
            clip_param=run.clip_range,
            entropy_coeff=run.ent_coef,
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


def train(run: RLlibRun, verbose: bool = True) -> Path:
    """Train ``run``; returns the checkpoint folder (``run.out_dir/checkpoint``).

    ``run.num_cpus`` sizes a local Ray (default ``env_runners + 1``: one per EnvRunner plus the
    driver's learner); it is ignored with ``run.address`` or an already initialised Ray.
    """
    out = Path(run.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(asdict(run), indent=2) + "\n")
    checkpoint = out / CHECKPOINT_DIR
    register_env(ENV_NAME, make_env)
    with ray_session(run.address, run.num_cpus if run.num_cpus is not None else run.env_runners + 1):
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
                    if run.checkpoint_frequency and i % run.checkpoint_frequency == 0 and i < run.iterations:
                        algo.save_to_path(str(checkpoint.resolve()))
            algo.save_to_path(str(checkpoint.resolve()))
        finally:
            algo.stop()
    return checkpoint


def main(argv: list[str] | None = None) -> int:
    """``python -m skyjo_env.train.rllib_ppo``: the same as ``skyjo train --backend rllib``; the exit status."""
    from skyjo_env.train.cli import main as skyjo

    return skyjo(["train", "--backend", "rllib", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
