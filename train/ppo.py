"""Train a MaskablePPO agent on the batched vector env against heuristics and its own snapshots.

The learning step of the sb3 backend ([`SB3Trainer`][]): build the vector env under the run's
rules and the model (new, or from the checkpoint), then learn, handing every environment step to
the run driver ([`skyjo_env.train.driver`][]), which checks the run folder, warm-starts the model
from a teacher ([`skyjo_env.train.imitation`][]), takes the self-play snapshots, evaluates against
each heuristic (printed, in TensorBoard and `eval.jsonl`), checkpoints, and finally exports the
actor as a numpy policy (`agent.npz`) and measures it in a tournament.

    skyjo train --total-timesteps 200000 --out runs/quick
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.vec_env import VecEnv

from skyjo_env.agents.base import Policy
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv
from skyjo_env.train import driver
from skyjo_env.train.advised_env import AdvisedVecEnv
from skyjo_env.train.config import TrainConfig
from skyjo_env.train.driver import Loop, PolicyTrainer, RunDriver
from skyjo_env.train.networks import ACTIVATIONS, SkyjoPolicy, resolve_precision
from skyjo_env.train.overlap import OverlappedPPO
from skyjo_env.train.runs import TrainOutcome
from skyjo_env.train.shaping import ShapedReward


# ---------------------------------------------------------------------------- callbacks
class DriverLoop(BaseCallback):
    """Hands each environment step to the run driver's [`Loop`][]: progress, snapshots, evaluations
    and checkpoints when due; learning stops once the run's time is up."""

    def __init__(self, loop: Loop) -> None:
        super().__init__()
        self.loop = loop

    def _on_step(self) -> bool:
        self.loop.after(int(self.model.num_timesteps))
        return not self.loop.time_up()


class UpdateThreads(BaseCallback):
    """Torch uses `threads` threads for each PPO update and one while rollouts are collected."""

    def __init__(self, threads: int) -> None:
        super().__init__()
        self.threads = threads

    def _on_rollout_start(self) -> None:
        torch.set_num_threads(1)

    def _on_rollout_end(self) -> None:
        torch.set_num_threads(self.threads)

    def _on_step(self) -> bool:
        return True


@dataclass(frozen=True)
class LinearSchedule:
    """A learning rate that falls linearly from `start` to 0 over the run's total steps (SB3 calls
    it with the share of the steps left, 1 to 0)."""

    start: float

    def __call__(self, progress_remaining: float) -> float:
        return self.start * progress_remaining


class SB3Trainer(PolicyTrainer):
    """sb3-contrib's MaskablePPO on the batched vector env: the learning step of a run
    ([`Trainer`][skyjo_env.train.driver.Trainer]).

    Built new, or from a checkpoint's `model.zip` (weights, optimiser state and step count; the
    config's PPO settings apply). Everything that can fail on bad input is checked here, before
    the run driver writes anything.
    """

    def __init__(self, config: TrainConfig, checkpoint: Path | None, timesteps: int) -> None:
        """`timesteps` is not needed: the model holds its own step count."""
        super().__init__(config, checkpoint, timesteps)
        torch.manual_seed(config.seed)
        rules = config.game_rules
        self.out = Path(config.out_dir)
        self.env = SkyjoSB3VecEnv(
            config.num_envs, rules, reward=config.env_reward, reward_scale=config.reward_scale, seed=config.seed,
            player_counts=config.player_counts if config.mixed else None,
        )  # fmt: skip
        self.venv: VecEnv = (
            ShapedReward(self.env, rules.num_players, config.gamma, config.reward_scale) if config.shaping else self.env
        )
        if config.advice is not None:
            self.venv = AdvisedVecEnv(self.venv, config.advice, rules)
        self.policy_kwargs = {
            "net_arch": list(config.net_arch),
            "activation_fn": ACTIVATIONS[config.activation],
            "precision": resolve_precision(config.precision),
        }
        if checkpoint is not None:
            self.model = self._resume(checkpoint)
        else:
            self.model = self._learner(
                SkyjoPolicy,
                self.venv,
                **self._hyperparameters(),
                policy_kwargs=self.policy_kwargs,
                tensorboard_log=str(self.out / "tensorboard"),
                seed=config.seed,
                verbose=0,
            )

    @property
    def timesteps(self) -> int:
        return int(self.model.num_timesteps)

    @property
    def policy(self) -> SkyjoPolicy:
        """The learner's networks."""
        policy = self.model.policy
        assert isinstance(policy, SkyjoPolicy), type(policy)  # the learner's policy class (SB3Trainer)
        return policy

    def describe(self) -> str:
        c = self.config
        return f"networks: hidden layers {list(c.net_arch)} ({c.activation}) in {self.policy_kwargs['precision']}"

    def set_opponents(self, policies: list[Policy], weights: list[float]) -> None:
        self.env.set_opponents(policies, weights)

    def evaluated(self, figures: dict[str, dict[str, float]], timesteps: int) -> None:
        """The figures into TensorBoard too."""
        for name, f in figures.items():
            key = name.replace("@", "_")
            self.model.logger.record(f"eval/win_rate_vs_{key}", f["win_rate"])
            self.model.logger.record(f"eval/game_total_vs_{key}", f["mean_game_total"])
        self.model.logger.dump(timesteps)

    def save_state(self, folder: Path) -> None:
        self.model.save(folder / "model.zip")  # weights, optimiser state and step count

    def _hyperparameters(self) -> dict[str, Any]:
        """The PPO settings of the config (a resumed run takes them from the config too)."""
        c = self.config
        names = ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range", "ent_coef",
                 "vf_coef", "max_grad_norm")  # fmt: skip
        settings = {name: getattr(c, name) for name in names}
        if c.learning_rate_schedule == "linear":
            settings["learning_rate"] = LinearSchedule(c.learning_rate)
        return settings

    @property
    def _learner(self) -> type[MaskablePPO]:
        """sb3-contrib's MaskablePPO, or its subclass whose updates overlap the rollouts."""
        return OverlappedPPO if self.config.overlap else MaskablePPO

    def _resume(self, folder: Path) -> MaskablePPO:
        """The checkpoint's model."""
        if not (folder / "model.zip").is_file():
            raise ValueError(f"{folder} is not a checkpoint folder: it has no model.zip")
        try:
            return self._learner.load(folder / "model.zip", env=self.venv, tensorboard_log=str(self.out / "tensorboard"),
                                      custom_objects={**self._hyperparameters(), "policy_class": SkyjoPolicy,
                                                      "policy_kwargs": self.policy_kwargs})  # fmt: skip
        except Exception as exc:  # SB3 raises many kinds on a damaged zip
            raise ValueError(f"cannot load checkpoint {folder / 'model.zip'}: {exc}") from exc

    def learn(self, loop: Loop) -> None:
        callbacks: list[BaseCallback] = [DriverLoop(loop)]
        if not self.config.overlap:  # an overlapped update has a process and a core of its own
            callbacks.append(UpdateThreads(self.config.update_threads))
        self.model.learn(loop.until - self.timesteps, callback=CallbackList(callbacks), reset_num_timesteps=False,
                         tb_log_name="ppo")  # fmt: skip


class Run(RunDriver):
    """One sb3 training run, checked and started ([`RunDriver`][] with the [`SB3Trainer`][]):
    `learn()` trains it to its end and checkpoints; its model, networks and pool are at hand."""

    def __init__(
        self,
        config: TrainConfig,
        resume: Path | None = None,
        *,
        overwrite: bool = False,
        progress: bool = True,
        say: Callable[[str], None] = print,
    ) -> None:
        super().__init__(config, SB3Trainer, resume, overwrite=overwrite, progress=progress, say=say)
        self.start()

    @property
    def model(self) -> MaskablePPO:
        """The learner's MaskablePPO."""
        assert isinstance(self.trainer, SB3Trainer)
        return self.trainer.model

    @property
    def policy(self) -> SkyjoPolicy:
        """The learner's networks."""
        assert isinstance(self.trainer, SB3Trainer)
        return self.trainer.policy


def train(
    config: TrainConfig,
    resume: str | Path | None = None,
    *,
    overwrite: bool = False,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> TrainOutcome:
    """Train (or resume, from the checkpoint folder `resume`) a run, export `agent.npz`, and
    measure it against the heuristics ([`skyjo_env.train.driver.train()`][skyjo_env.train.driver.train]
    with the [`SB3Trainer`][]).

    `say` receives the phase lines (warm start, evaluations, the final tournament); progress bars
    go to stderr unless `progress` is false. `ValueError` for a bad run folder, opponent or
    checkpoint (or a resume that changes what fixes the network), before anything is written.
    """
    return driver.train(config, SB3Trainer, resume, overwrite=overwrite, progress=progress, say=say)
