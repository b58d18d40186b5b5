"""The main job's recipe on Ray RLlib's PPO (new API stack), on one machine or a Ray cluster.

The learning step of the rllib backend ([`RLlibTrainer`][]), as [`skyjo_env.train.ppo`][] (the
sb3 backend) has its own: start or join Ray, build the PPO algorithm (EnvRunners stepping the
batched vector env of [`skyjo_env.train.rllib_env`][], the learner a [`SkyjoModule`][] in this
process), then loop: sample a rollout on every EnvRunner, update the learner. The run driver
([`skyjo_env.train.driver`][]) does the rest as for the sb3 backend: the run folder and its checks,
the warm start, the self-play snapshots, evaluations and checkpoints after each update, and the
final `agent.npz` and report.

Each sample request carries the weights to play with and, when the opponent pool has changed, the
opponents (heuristics and numpy snapshots of the learner), so every EnvRunner plays the pool of the
moment. With `overlap` the EnvRunners sample the next rollout while the learner updates on the last
one, with the weights of the update before (a lag of one update, as the sb3 backend's overlap).

    skyjo train --backend rllib                                   # the main job, local Ray
    skyjo train --backend rllib --address HEAD_IP:6379 --env-runners 8   # on a cluster (docs/distributed.md)

Needs the `distributed` extra (`pip install -e ".[distributed]"`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME
from ray.tune.registry import register_env

from skyjo_env.agents.base import Policy
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.spaces import action_space
from skyjo_env.train import driver
from skyjo_env.train.config import TrainConfig
from skyjo_env.train.driver import Loop, PolicyTrainer, RunDriver
from skyjo_env.train.networks import SkyjoPolicy, resolve_precision
from skyjo_env.train.rllib_env import ENV_NAME, make_env, observation_space
from skyjo_env.train.rllib_module import SkyjoModule
from skyjo_env.train.rllib_runner import SkyjoEnvRunner
from skyjo_env.train.runs import TrainOutcome

#: Object store of a local Ray: small, since only weights and rollouts travel through it.
LOCAL_OBJECT_STORE_BYTES = 512 * 1024**2
#: The folder of the RLlib algorithm (learner, optimiser, EnvRunner states) inside a run's checkpoint.
ALGORITHM = "algorithm"


def module_spec(config: TrainConfig) -> RLModuleSpec:
    """The learner's RLModule: the sb3 backend's networks ([`SkyjoModule`][]) over the EnvRunners' observations."""
    model = {"net_arch": list(config.net_arch), "activation": config.activation,
             "precision": resolve_precision(config.precision)}  # fmt: skip
    return RLModuleSpec(module_class=SkyjoModule, observation_space=observation_space(config),
                        action_space=action_space(), model_config=model)  # fmt: skip


def build_config(config: TrainConfig) -> PPOConfig:
    """RLlib's PPO with the recipe's settings: one rollout is `env_runners x num_envs x n_steps`
    learner steps, updated as the sb3 backend does (minibatches, epochs, clip, entropy and value
    coefficients, gradient norm, no KL penalty, no value clipping, the learning-rate schedule)."""
    c = config
    lr: Any = (
        [[0, c.learning_rate], [c.total_timesteps, 0.0]] if c.learning_rate_schedule == "linear" else c.learning_rate
    )
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config={"train_config": c.to_dict()}, disable_env_checking=True)
        .env_runners(
            num_env_runners=c.env_runners,
            num_envs_per_env_runner=c.num_envs,
            num_cpus_per_env_runner=1,
            gym_env_vectorize_mode="vector_entry_point",
            env_runner_cls=SkyjoEnvRunner,
            rollout_fragment_length=c.n_steps,
        )
        .rl_module(rl_module_spec=module_spec(c))
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=c.env_runners * c.num_envs * c.n_steps,
            minibatch_size=c.batch_size,
            num_epochs=c.n_epochs,
            lr=lr,
            gamma=c.gamma,
            lambda_=c.gae_lambda,
            clip_param=c.clip_range,
            entropy_coeff=c.ent_coef,
            vf_loss_coeff=c.vf_coef,
            vf_clip_param=float("inf"),
            use_kl_loss=False,
            grad_clip=c.max_grad_norm,
            grad_clip_by="global_norm",
        )
        .debugging(seed=c.seed)
    )


@contextlib.contextmanager
def ray_session(address: str | None, num_cpus: int) -> Iterator[None]:
    """Join the cluster at `address` or start a local Ray of `num_cpus` CPUs; shut down only what
    this started. An already initialised Ray (a test's, a notebook's) is used as it is and left running."""
    if ray.is_initialized():
        yield
        return
    if address:
        ray.init(address=address, log_to_driver=True)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES)
    try:
        yield
    finally:
        ray.shutdown()


def sample(runner: Any, *, steps: int, state: Any, opponents: Any) -> dict[str, np.ndarray]:
    """On an EnvRunner: take the learner's weights (`state`), the opponent pool (if given), and
    sample a training batch of about `steps` learner steps
    ([`SkyjoEnvRunner.sample_batch()`][SkyjoEnvRunner.sample_batch])."""
    runner.set_state(state)
    if opponents is not None:
        runner.env.unwrapped.set_opponents(*opponents)
    return runner.sample_batch(steps)


def node_id(runner: Any) -> str:
    """On an EnvRunner: the Ray node it runs on."""
    return ray.get_runtime_context().get_node_id()


class RLlibTrainer(PolicyTrainer):
    """Ray RLlib's PPO: the learning step of a run ([`Trainer`][skyjo_env.train.driver.Trainer]),
    EnvRunners sampling and the learner updating in this process; built new, or from a
    checkpoint's `algorithm/`."""

    def __init__(self, config: TrainConfig, checkpoint: Path | None, timesteps: int) -> None:
        super().__init__(config, checkpoint, timesteps)
        register_env(ENV_NAME, make_env)
        self.algo: Algorithm = build_config(config).build_algo()
        self.module = module_spec(config).build()  # the driver's copy of the learner, for snapshots and evaluations
        self.steps = timesteps
        self.opponents: tuple[list[Policy], list[float]] | None = None  # sent with the next request
        if checkpoint is not None:
            try:
                self.algo.restore_from_path(str((checkpoint / ALGORITHM).resolve()))
            except Exception as exc:  # RLlib raises many kinds on a damaged checkpoint
                self.algo.stop()
                raise ValueError(f"cannot load checkpoint {checkpoint / ALGORITHM}: {exc}") from exc
        self._pull()

    @property
    def timesteps(self) -> int:
        return self.steps

    @property
    def policy(self) -> SkyjoPolicy:
        """The learner's networks (the driver's module, as of the last update)."""
        return self.module.policy

    def describe(self) -> str:
        c = self.config
        nodes = len(set(self.algo.env_runner_group.foreach_env_runner(node_id, local_env_runner=False)))
        return (f"networks: hidden layers {list(c.net_arch)} ({c.activation}) in {resolve_precision(c.precision)}; "
                f"RLlib: {c.env_runners} EnvRunner{'s' * (c.env_runners > 1)} of {c.num_envs:,} games on "
                f"{nodes} node{'s' * (nodes > 1)}")  # fmt: skip

    def warm_started(self) -> None:
        """The learner (and so the EnvRunners) start from the warm-started module."""
        self.algo.learner_group.set_weights({DEFAULT_MODULE_ID: self.module.get_state()})

    def set_opponents(self, policies: list[Policy], weights: list[float]) -> None:
        self.opponents = (policies, weights)

    def save_state(self, folder: Path) -> None:
        self.algo.save_to_path(str((folder / ALGORITHM).resolve()))

    def close(self) -> None:
        self.algo.stop()

    # -------------------------------------------------------------- the learner's weights
    def _pull(self) -> None:
        """Copy the learner's current weights into the driver's module."""
        self.module.set_state(self.algo.learner_group.get_weights([DEFAULT_MODULE_ID])[DEFAULT_MODULE_ID])

    def request(self, steps: int) -> None:
        """Ask every EnvRunner for a rollout of `steps` learner steps, with the learner's weights now
        (and the opponents, if they changed since the last request)."""
        state = {
            "rl_module": {DEFAULT_MODULE_ID: self.module.get_state()}
        }  # the critic too: runners compute advantages
        opponents, self.opponents = self.opponents, None
        self.algo.env_runner_group.foreach_env_runner_async(
            partial(sample, steps=steps, state=state, opponents=opponents), tag="sample"
        )

    def collect(self) -> MultiAgentBatch:
        """The rollouts of the last [`request()`][request], from every EnvRunner, as one training batch whose
        advantages are standardised over it (as RLlib's PPO does)."""
        group = self.algo.env_runner_group
        parts: list[dict[str, np.ndarray]] = []
        pending = group.num_healthy_remote_env_runners()
        while pending:
            ready = group.fetch_ready_async_reqs(tags="sample", timeout_seconds=1.0)
            parts.extend(part for _, part in ready)
            pending -= len(ready)
        batch = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
        advantages = batch["advantages"]
        batch["advantages"] = (advantages - advantages.mean()) / max(float(advantages.std()), 1e-4)
        return MultiAgentBatch({DEFAULT_MODULE_ID: SampleBatch(batch)}, env_steps=len(advantages))

    def update(self, batch: MultiAgentBatch) -> None:
        """One PPO update on `batch`; the driver's module then holds the new weights."""
        c = self.config
        self.steps += batch.env_steps()
        threads = torch.get_num_threads()
        torch.set_num_threads(1 if c.overlap else c.update_threads)  # overlapped: the EnvRunner has the other core
        try:
            self.algo.learner_group.update(
                batch=batch, timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: self.steps},
                num_epochs=c.n_epochs, minibatch_size=c.batch_size, shuffle_batch_per_epoch=True,
            )  # fmt: skip
        finally:
            torch.set_num_threads(threads)
        self._pull()

    # -------------------------------------------------------------- the loop
    def learn(self, loop: Loop) -> None:
        c = self.config
        rollout = c.num_envs * c.n_steps  # per EnvRunner
        self.request(rollout)
        while True:
            batch = self.collect()
            last = self.steps + batch.env_steps() >= loop.until or loop.time_up()
            if c.overlap and not last:
                self.request(rollout)  # sampled with the weights before this update
            self.update(batch)
            loop.after(self.steps)
            if last:
                break
            if not c.overlap:
                self.request(rollout)


class RLlibRun(RunDriver):
    """One RLlib training run, checked and started ([`RunDriver`][] with the [`RLlibTrainer`][]), in
    the Ray the caller holds: `learn()` trains it to its end and checkpoints; `algo` and `module` are
    the trainer's (stop `algo` when done)."""

    def __init__(
        self,
        config: TrainConfig,
        resume: Path | None,
        *,
        overwrite: bool,
        progress: bool,
        say: Callable[[str], None],
    ) -> None:
        super().__init__(config, RLlibTrainer, resume, overwrite=overwrite, progress=progress, say=say)
        self.start()
        assert isinstance(self.trainer, RLlibTrainer)
        self.algo, self.module = self.trainer.algo, self.trainer.module

    def agent(self, name: str = "ppo") -> MLPPolicy:
        """The learner as a numpy policy (the driver's module, as of the last update)."""
        assert isinstance(self.trainer, RLlibTrainer)
        return self.trainer.agent(name)


def train(
    config: TrainConfig,
    resume: str | Path | None = None,
    *,
    overwrite: bool = False,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> TrainOutcome:
    """Train (or resume, from the checkpoint folder `resume`) a run on Ray RLlib, export `agent.npz`
    and measure it against the heuristics: [`skyjo_env.train.ppo.train()`][skyjo_env.train.ppo.train]'s contract, on
    RLlib ([`skyjo_env.train.driver.train()`][skyjo_env.train.driver.train] with the [`RLlibTrainer`][]).

    Without `config.address` a local Ray of `env_runners + 1` CPUs is started (after the run
    folder's checks) and shut down at the end (also after an error); with it the run joins that
    cluster and leaves it running.
    """
    return driver.train(config, RLlibTrainer, resume, overwrite=overwrite, progress=progress, say=say,
                        session=lambda: ray_session(config.address, config.env_runners + 1))  # fmt: skip
