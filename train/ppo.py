"""Train a MaskablePPO agent on the batched vector env against heuristics and its own snapshots.

Read top to bottom, CleanRL-style: build the opponent mixture and the vector env, build (or
resume) the model, warm-start a new one from a teacher heuristic (:mod:`skyjo_env.train.imitation`), then
learn with three callbacks — self-play snapshots, evaluation against
each heuristic (win rate in TensorBoard and ``eval.jsonl``) and checkpoints — and finally export
the actor as a numpy policy (``agent.npz``) and measure it in a tournament.

    skyjo train --total-timesteps 200000 --out runs/quick
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from sb3_contrib import MaskablePPO
from threadpoolctl import threadpool_limits
from stable_baselines3.common.callbacks import BaseCallback, CallbackList

from skyjo_env import agents
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.rules import Rules
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv
from skyjo_env.train.advised_env import AdvisedVecEnv
from skyjo_env.train.config import SELF, TrainConfig
from skyjo_env.train.imitation import clone, collect
from skyjo_env.train.selfplay import OpponentPool, snapshot
from skyjo_env.train.shaping import ShapedReward
from skyjo_env.train.tournament import TournamentResult, run_tournament

ACTIVATION_MODULES = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
CHECKPOINT = "checkpoint"


@dataclass
class TrainOutcome:
    """Where a run left its agent, and how the final tournament went."""

    agent_path: Path
    tournament: TournamentResult
    timesteps: int
    seconds: float


# ---------------------------------------------------------------------------- evaluation
def learner_policy(model: MaskablePPO, config: TrainConfig, name: str = "ppo") -> MLPPolicy:
    """The learner's current actor as a greedy numpy policy."""
    metadata = {"players": config.players, "timesteps": int(model.num_timesteps), "config": config.to_dict()}
    return snapshot(model.policy, config.activation, name, metadata, config.advice)


def evaluate(policy: MLPPolicy, config: TrainConfig, games: int, seed: int) -> dict[str, dict[str, float]]:
    """Win rate and mean game total of ``policy`` against each evaluation heuristic.

    The learner plays every seat in turn against ``players - 1`` copies of the heuristic.
    """
    out = {}
    for i, name in enumerate(config.eval_opponents):
        others = [agents.make(name, seed=seed + i * 10 + k) for k in range(config.players - 1)]
        result = run_tournament([policy, *others], config.players, games, seed=seed + i, progress=False)
        mine = result.agents[0]
        out[name] = {"win_rate": mine.win_rate, "win_ci_low": mine.win_ci[0], "win_ci_high": mine.win_ci[1],
                     "mean_game_total": mine.mean_game_total}
    return out


# ---------------------------------------------------------------------------- callbacks
class Every(BaseCallback):
    """Calls ``action(timesteps)`` each time the run passes a multiple of ``interval`` steps."""

    def __init__(self, interval: int, action) -> None:
        super().__init__()
        self.interval = interval
        self.action = action
        self.next_at = 0

    def _on_training_start(self) -> None:
        self.next_at = (self.model.num_timesteps // self.interval + 1) * self.interval

    def _on_step(self) -> bool:
        if self.model.num_timesteps >= self.next_at:
            self.next_at = (self.model.num_timesteps // self.interval + 1) * self.interval
            self.action(self.model.num_timesteps)
        return True


class Deadline(BaseCallback):
    """Stops learning once ``time.perf_counter()`` reaches ``end``."""

    def __init__(self, end: float) -> None:
        super().__init__()
        self.end = end

    def _on_step(self) -> bool:
        return time.perf_counter() < self.end


class Run:
    """One training run: its config, opponent pool, env, model and output files."""

    def __init__(self, config: TrainConfig, resume: Path | None = None) -> None:
        self.config = config
        self.started = time.perf_counter()
        self.out = Path(config.out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(config.seed)
        # One thread each for torch and numpy's BLAS: on 2 cores, thread pools that spin against
        # the env's numpy work (or other processes) cost far more than they gain.
        torch.set_num_threads(1)
        threadpool_limits(1)
        self.pool = OpponentPool(config.opponents, config.pool_size, seed=config.seed)
        self.env = SkyjoSB3VecEnv(
            config.num_envs,
            rules=Rules(num_players=config.players),
            reward=config.reward,
            reward_scale=config.reward_scale,
            seed=config.seed,
        )
        self.venv = ShapedReward(self.env, config.players, config.gamma, config.reward_scale) if config.shaping else self.env
        if config.advice is not None:
            self.venv = AdvisedVecEnv(self.venv, config.advice)
        if resume is not None:
            self.model = self._resume(resume)
        else:
            self.model = MaskablePPO(
                "MlpPolicy",
                self.venv,
                **self._hyperparameters(),
                policy_kwargs={"net_arch": list(config.net_arch), "activation_fn": ACTIVATION_MODULES[config.activation]},
                tensorboard_log=str(self.out / "tensorboard"),
                seed=config.seed,
                verbose=0,
            )
            if config.warm_start is not None:
                self.warm_start()
        if SELF in config.opponents and not self.pool.snapshots:
            self.add_snapshot(self.model.num_timesteps)
        self._update_opponents()

    def warm_start(self) -> None:
        """Behaviour-clone the teacher ``config.warm_start`` into the fresh model (``warm_start.json``)."""
        c = self.config
        teacher = agents.make(c.warm_start, seed=c.seed)
        demos = collect(teacher, self.env.rules, c.warm_start_samples, gamma=c.gamma, reward=c.reward,
                        reward_scale=c.reward_scale, advice=c.advice, seed=c.seed + 1)  # fmt: skip
        history = clone(self.model.policy, demos, epochs=c.warm_start_epochs, seed=c.seed)
        record = {"teacher": c.warm_start, "turns": len(demos), "epochs": history}
        (self.out / "warm_start.json").write_text(json.dumps(record, indent=2) + "\n")

    # -------------------------------------------------------------- periodic actions
    def add_snapshot(self, timesteps: int) -> None:
        self.pool.add(learner_policy(self.model, self.config, f"snapshot@{timesteps}"))
        self._update_opponents()

    def _update_opponents(self) -> None:
        policies, weights = self.pool.policies_and_weights()
        self.env.set_opponents(policies, weights)

    def run_evaluation(self, timesteps: int) -> dict:
        figures = evaluate(learner_policy(self.model, self.config), self.config, self.config.eval_games, seed=timesteps)
        for name, f in figures.items():
            self.model.logger.record(f"eval/win_rate_vs_{name}", f["win_rate"])
            self.model.logger.record(f"eval/game_total_vs_{name}", f["mean_game_total"])
        self.model.logger.dump(timesteps)
        with open(self.out / "eval.jsonl", "a") as f:
            f.write(json.dumps({"timesteps": int(timesteps), "vs": figures}) + "\n")
        return figures

    def save_checkpoint(self, timesteps: int) -> None:
        folder = self.out / CHECKPOINT
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save(folder / "model.zip")  # weights, optimiser state and step count
        self.pool.save(folder / "pool")
        self.config.save(folder / "config.json")
        (folder / "state.json").write_text(json.dumps({"timesteps": int(timesteps)}) + "\n")

    def _hyperparameters(self) -> dict:
        """The PPO settings of the config (a resumed run takes them from the config too)."""
        c = self.config
        names = ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range", "ent_coef",
                 "vf_coef", "max_grad_norm")  # fmt: skip
        return {name: getattr(c, name) for name in names}

    def _resume(self, folder: Path) -> MaskablePPO:
        folder = Path(folder)
        if not (folder / "model.zip").is_file():
            raise ValueError(f"{folder} is not a checkpoint folder: it has no model.zip")
        try:
            model = MaskablePPO.load(folder / "model.zip", env=self.venv, tensorboard_log=str(self.out / "tensorboard"),
                                     custom_objects=self._hyperparameters())  # fmt: skip
        except Exception as exc:  # SB3 raises many kinds on a damaged zip
            raise ValueError(f"cannot load checkpoint {folder / 'model.zip'}: {exc}") from exc
        self.pool.load(folder / "pool")
        return model

    # -------------------------------------------------------------- the loop
    def learn(self, progress: bool = True) -> None:
        c = self.config
        callbacks = [Every(c.snapshot_every, self.add_snapshot)] if SELF in c.opponents else []
        if c.eval_every:
            callbacks.append(Every(c.eval_every, self.run_evaluation))
        if c.checkpoint_every:
            callbacks.append(Every(c.checkpoint_every, self.save_checkpoint))
        if c.time_limit_minutes is not None:
            callbacks.append(Deadline(self.started + 60 * c.time_limit_minutes))  # the warm start counts too
        remaining = c.total_timesteps - self.model.num_timesteps
        if remaining > 0:
            self.model.learn(
                remaining,
                callback=CallbackList(callbacks),
                progress_bar=progress,
                reset_num_timesteps=False,
                tb_log_name="ppo",
            )
        self.save_checkpoint(self.model.num_timesteps)


def train(config: TrainConfig, resume: str | Path | None = None, progress: bool = True, final_games: int = 2000) -> TrainOutcome:
    """Train (or resume) a run, export ``agent.npz``, and measure it against the heuristics."""
    started = time.perf_counter()
    run = Run(config, Path(resume) if resume is not None else None)
    config.save(run.out / "config.json")
    run.learn(progress)
    agent = learner_policy(run.model, config, name=f"ppo-{config.players}p")
    agent_path = run.out / "agent.npz"
    agent.save(agent_path)
    figures = run.run_evaluation(run.model.num_timesteps)
    pool = [agent] + [agents.make(name, seed=config.seed + i) for i, name in enumerate(config.eval_opponents)]
    result = run_tournament(pool, config.players, final_games, seed=config.seed, progress=progress)
    (run.out / "results.json").write_text(json.dumps({"final_eval": figures, "tournament": result.to_dict()}, indent=2) + "\n")
    return TrainOutcome(agent_path, result, int(run.model.num_timesteps), time.perf_counter() - started)
