"""Train a MaskablePPO agent on the batched vector env against heuristics and its own snapshots.

Read top to bottom, CleanRL-style: check the run folder, build the opponent mixture and the vector
env under the run's rules, build (or resume) the model, warm-start a new one from a teacher
([`skyjo_env.train.imitation`][]), then learn with callbacks — progress, self-play snapshots,
evaluation against each heuristic (printed, in TensorBoard and `eval.jsonl`), checkpoints — and
finally export the actor as a numpy policy (`agent.npz`) and measure it in a tournament.

    skyjo train --total-timesteps 200000 --out runs/quick
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.vec_env import VecEnv

from skyjo_env.evaluation.progress import Progress
from skyjo_env.evaluation.report import claimed_folder
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv
from skyjo_env.train.advised_env import AdvisedVecEnv
from skyjo_env.train.config import CHECKPOINT, SELF, TrainConfig
from skyjo_env.train.networks import ACTIVATIONS, SkyjoPolicy, resolve_precision
from skyjo_env.train.overlap import OverlappedPPO
from skyjo_env.train.runs import (
    TrainOutcome,
    agent_policy,
    check_resume,
    check_run_folder,
    finish,
    one_thread,
    prepare_run_folder,
    read_state,
    run_evaluation,
    warm_start,
    write_checkpoint,
)
from skyjo_env.train.selfplay import OpponentPool
from skyjo_env.train.shaping import ShapedReward


# ---------------------------------------------------------------------------- callbacks
class Every(BaseCallback):
    """Calls `action(timesteps)` each time the run passes a multiple of `interval` steps, before
    `until` (the run's last step, where the run does it anyway after its last update)."""

    def __init__(self, interval: int, action: Callable[[int], Any], until: int | None = None) -> None:
        super().__init__()
        self.interval = interval
        self.action = action
        self.until = until
        self.next_at = 0

    def _on_training_start(self) -> None:
        self.next_at = (self.model.num_timesteps // self.interval + 1) * self.interval

    def _on_step(self) -> bool:
        if self.model.num_timesteps >= self.next_at:
            self.next_at = (self.model.num_timesteps // self.interval + 1) * self.interval
            if self.until is None or self.model.num_timesteps < self.until:
                self.action(self.model.num_timesteps)
        return True


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


class Deadline(BaseCallback):
    """Stops learning once `time.perf_counter()` reaches `end`."""

    def __init__(self, end: float) -> None:
        super().__init__()
        self.end = end

    def _on_step(self) -> bool:
        return time.perf_counter() < self.end


class ProgressCallback(BaseCallback):
    """Reports the learner steps of a `learn` call on a [`Progress`][]."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress

    def _on_step(self) -> bool:
        self.progress.set(int(self.model.num_timesteps))
        return True


@dataclass(frozen=True)
class LinearSchedule:
    """A learning rate that falls linearly from `start` to 0 over the run's total steps (SB3 calls
    it with the share of the steps left, 1 to 0)."""

    start: float

    def __call__(self, progress_remaining: float) -> float:
        return self.start * progress_remaining


class Run:
    """One training run: its config, opponent pool, env, model and output files.

    Everything that can fail on bad input (the run folder, the opponents, the checkpoint to resume)
    is checked before anything is written.
    """

    def __init__(
        self,
        config: TrainConfig,
        resume: Path | None = None,
        *,
        overwrite: bool = False,
        progress: bool = True,
        say: Callable[[str], None] = print,
    ) -> None:
        self.config = config
        self.started = time.perf_counter()
        self.show_progress = progress
        self.say = say
        self.out = Path(config.out_dir)
        unstarted = check_run_folder(self.out, resume=resume is not None, overwrite=overwrite)
        state = None if resume is None else read_state(resume)
        torch.manual_seed(config.seed)
        rules = self.rules = config.game_rules
        self.pool = OpponentPool(config.opponents, config.pool_size, rules=rules, seed=config.seed,
                                 player_counts=config.player_counts if config.mixed else None)  # fmt: skip
        self.env = SkyjoSB3VecEnv(
            config.num_envs, rules, reward=config.env_reward, reward_scale=config.reward_scale, seed=config.seed,
            player_counts=config.player_counts if config.mixed else None,
        )  # fmt: skip
        self.venv: VecEnv = (
            ShapedReward(self.env, rules.num_players, config.gamma, config.reward_scale) if config.shaping else self.env
        )
        if config.advice is not None:
            self.venv = AdvisedVecEnv(self.venv, config.advice, rules)
        self.previous_seconds = 0.0
        self.policy_kwargs = {
            "net_arch": list(config.net_arch),
            "activation_fn": ACTIVATIONS[config.activation],
            "precision": resolve_precision(config.precision),
        }
        if resume is not None and state is not None:
            self.model = self._resume(resume)
            self.previous_seconds = state["seconds"]
        else:
            prepare_run_folder(self.out, unstarted, overwrite=overwrite, say=say)
            self.model = self._learner(
                SkyjoPolicy,
                self.venv,
                **self._hyperparameters(),
                policy_kwargs=self.policy_kwargs,
                tensorboard_log=str(self.out / "tensorboard"),
                seed=config.seed,
                verbose=0,
            )
        self.out.mkdir(parents=True, exist_ok=True)
        config.save(self.out / "config.json")
        say(
            f"networks: hidden layers {list(config.net_arch)} ({config.activation}) in {self.policy_kwargs['precision']}"
        )
        if resume is None and config.warm_start is not None:
            warm_start(self.policy, config, self.out, say=say, progress=progress)
        if SELF in config.opponents and not self.pool.snapshots:
            self.add_snapshot(self.model.num_timesteps)
        self._update_opponents()

    # -------------------------------------------------------------- periodic actions
    def add_snapshot(self, timesteps: int) -> None:
        self.pool.add(agent_policy(self.policy, self.config, timesteps, f"snapshot@{timesteps}"))
        self._update_opponents()

    def _update_opponents(self) -> None:
        policies, weights = self.pool.policies_and_weights()
        self.env.set_opponents(policies, weights)

    def run_evaluation(self, timesteps: int) -> dict[str, dict[str, float]]:
        """Evaluate against each heuristic: printed, logged to TensorBoard and to `eval.jsonl`."""
        policy = agent_policy(self.policy, self.config, timesteps)
        figures = run_evaluation(policy, self.config, self.out, timesteps, say=self.say, progress=self.show_progress)
        for name, f in figures.items():
            key = name.replace("@", "_")
            self.model.logger.record(f"eval/win_rate_vs_{key}", f["win_rate"])
            self.model.logger.record(f"eval/game_total_vs_{key}", f["mean_game_total"])
        self.model.logger.dump(timesteps)
        return figures

    @property
    def policy(self) -> SkyjoPolicy:
        """The learner's networks."""
        policy = self.model.policy
        assert isinstance(policy, SkyjoPolicy), type(policy)  # the learner's policy class (Run)
        return policy

    def save_checkpoint(self, timesteps: int) -> None:
        folder = self.out / CHECKPOINT
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save(folder / "model.zip")  # weights, optimiser state and step count
        self.pool.save(folder / "pool")
        write_checkpoint(
            folder, self.policy, self.config, timesteps, self.previous_seconds + time.perf_counter() - self.started
        )

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
        """The checkpoint's model (pool loaded too)."""
        if not (folder / "model.zip").is_file():
            raise ValueError(f"{folder} is not a checkpoint folder: it has no model.zip")
        try:
            model = self._learner.load(folder / "model.zip", env=self.venv, tensorboard_log=str(self.out / "tensorboard"),
                                       custom_objects={**self._hyperparameters(), "policy_class": SkyjoPolicy,
                                                       "policy_kwargs": self.policy_kwargs})  # fmt: skip
        except Exception as exc:  # SB3 raises many kinds on a damaged zip
            raise ValueError(f"cannot load checkpoint {folder / 'model.zip'}: {exc}") from exc
        self.pool.load(folder / "pool")
        return model

    # -------------------------------------------------------------- the loop
    def learn(self) -> None:
        c = self.config
        done = int(self.model.num_timesteps)
        progress = Progress(c.total_timesteps, "PPO", "steps", enabled=self.show_progress, start=done)
        callbacks: list[BaseCallback] = [ProgressCallback(progress)]
        if not c.overlap:  # an overlapped update has a process and a core of its own
            callbacks.append(UpdateThreads(c.update_threads))
        if SELF in c.opponents:
            callbacks.append(Every(c.snapshot_every, self.add_snapshot))
        if c.eval_every:
            callbacks.append(Every(c.eval_every, self.run_evaluation, until=c.total_timesteps))
        if c.checkpoint_every:
            callbacks.append(Every(c.checkpoint_every, self.save_checkpoint, until=c.total_timesteps))
        if c.time_limit_minutes is not None:
            callbacks.append(Deadline(self.started + 60 * c.time_limit_minutes))  # the warm start counts too
        with progress:
            self.model.learn(
                c.total_timesteps - done, callback=CallbackList(callbacks), reset_num_timesteps=False, tb_log_name="ppo"
            )
            stopped = (
                ""
                if self.model.num_timesteps >= c.total_timesteps
                else f"time limit of {c.time_limit_minutes:g} min reached"
            )
            progress.close(stopped)
        self.save_checkpoint(self.model.num_timesteps)


def train(
    config: TrainConfig,
    resume: str | Path | None = None,
    *,
    overwrite: bool = False,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> TrainOutcome:
    """Train (or resume, from the checkpoint folder `resume`) a run, export `agent.npz`, and
    measure it against the heuristics.

    `say` receives the phase lines (warm start, evaluations, the final tournament); progress bars
    go to stderr unless `progress` is false. `ValueError` for a bad run folder, opponent or
    checkpoint, before anything is written.
    """
    started = time.perf_counter()
    check_resume(config, None if resume is None else Path(resume))
    with claimed_folder(config.out_dir), one_thread():  # Run checks the folder's files under the claim
        run = Run(config, Path(resume) if resume is not None else None, overwrite=overwrite, progress=progress, say=say)
        before = int(run.model.num_timesteps) if resume is not None else 0
        run.learn()
        timesteps = int(run.model.num_timesteps)
        return finish(run.policy, config, run.out, timesteps=timesteps, run_timesteps=timesteps - before, started=started,
                      previous_seconds=run.previous_seconds, evaluate_now=lambda _, t: run.run_evaluation(t),
                      progress=progress)  # fmt: skip
