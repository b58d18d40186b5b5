"""Train a MaskablePPO agent on the batched vector env against heuristics and its own snapshots.

Read top to bottom, CleanRL-style: check the run folder, build the opponent mixture and the vector
env under the run's rules, build (or resume) the model, warm-start a new one from a teacher
(:mod:`skyjo_env.train.imitation`), then learn with callbacks — progress, self-play snapshots,
evaluation against each heuristic (printed, in TensorBoard and ``eval.jsonl``), checkpoints — and
finally export the actor as a numpy policy (``agent.npz``) and measure it in a tournament.

    skyjo train --total-timesteps 200000 --out runs/quick
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.vec_env import VecEnv
from threadpoolctl import threadpool_limits

from skyjo_env.agents import specs
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv
from skyjo_env.train.advised_env import AdvisedVecEnv
from skyjo_env.train.arguments import check_output_folder
from skyjo_env.train.config import CHECKPOINT, SELF, TrainConfig, has_checkpoint
from skyjo_env.train.imitation import clone, collect, concatenate, softened_teacher
from skyjo_env.train.networks import ACTIVATIONS, SkyjoPolicy, resolve_precision
from skyjo_env.train.overlap import OverlappedPPO
from skyjo_env.train.progress import Progress
from skyjo_env.train.selfplay import OpponentPool, snapshot
from skyjo_env.train.shaping import ShapedReward
from skyjo_env.train.tournament import TournamentResult, games_played, run_tournament

#: What a run writes into its folder; ``overwrite`` removes exactly these.
RUN_FILES = (
    "config.json",
    "warm_start.json",
    "eval.jsonl",
    "results.json",
    specs.AGENT_FILE,
    CHECKPOINT,
    "tensorboard",
)


@dataclass
class TrainOutcome:
    """Where a run left its agent, how it fared, and how long it took."""

    agent_path: Path
    agent_name: str
    final_eval: dict[str, dict[str, float]]  #: head-to-head figures against each evaluation agent (and table size)
    tournament: TournamentResult | None  #: the final tournament (``None`` for mixed tables: see ``final_eval``)
    timesteps: int  #: learner steps of the run in total (all resumes)
    run_timesteps: int  #: learner steps of this call
    seconds: float  #: wall time of this call
    total_seconds: float  #: wall time of the run in total (all resumes)


# ---------------------------------------------------------------------------- evaluation
def learner_policy(model: MaskablePPO, config: TrainConfig, name: str = "ppo") -> MLPPolicy:
    """The learner's current actor as a greedy numpy policy (its metadata: players, rules, steps, config)."""
    metadata = {
        "players": config.players, "rules": config.game_rules.to_dict(), "timesteps": int(model.num_timesteps),
        "config": config.to_dict(),
    }  # fmt: skip
    if config.mixed:
        metadata["player_counts"] = list(config.player_counts)
    return snapshot(model.policy, config.activation, name, metadata, config.advice)


def evaluate(
    policy: MLPPolicy, config: TrainConfig, games: int, seed: int, progress: bool | Progress = False
) -> dict[str, dict[str, float]]:
    """Win rate (with its 95% interval) and mean game total of ``policy`` against each evaluation agent.

    The learner plays every seat in turn against ``players - 1`` copies of the agent (``games``
    rounded up to whole rotations of the seats); ``progress`` reports the games of all of them.
    Mixed tables are evaluated at each table size, keyed ``"name@Pp"``.
    """
    out = {}
    for players in config.player_counts:
        rules = config.table_rules(players)
        for i, name in enumerate(config.eval_opponents):
            others = [specs.make(name, rules=rules, seed=seed + i * 10 + k) for k in range(players - 1)]
            result = run_tournament([policy, *others], players, games, rules=rules, seed=seed + i, progress=progress)
            mine = result.agents[0]
            out[f"{name}@{players}p" if config.mixed else name] = {
                "win_rate": mine.win_rate, "win_ci_low": mine.win_ci[0], "win_ci_high": mine.win_ci[1],
                "mean_game_total": mine.mean_game_total,
            }  # fmt: skip
    return out


def describe(figures: dict[str, dict[str, float]]) -> str:
    """Evaluation figures as one line: ``counting 0.512 (0.481-0.543), ...``."""
    return ", ".join(
        f"{name} {f['win_rate']:.3f} ({f['win_ci_low']:.3f}-{f['win_ci_high']:.3f})" for name, f in figures.items()
    )


# ---------------------------------------------------------------------------- callbacks
class Every(BaseCallback):
    """Calls ``action(timesteps)`` each time the run passes a multiple of ``interval`` steps, before
    ``until`` (the run's last step, where the run does it anyway after its last update)."""

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
    """Torch uses ``threads`` threads for each PPO update and one while rollouts are collected."""

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
    """Stops learning once ``time.perf_counter()`` reaches ``end``."""

    def __init__(self, end: float) -> None:
        super().__init__()
        self.end = end

    def _on_step(self) -> bool:
        return time.perf_counter() < self.end


class ProgressCallback(BaseCallback):
    """Reports the learner steps of a ``learn`` call on a :class:`Progress`."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress

    def _on_step(self) -> bool:
        self.progress.set(int(self.model.num_timesteps))
        return True


@dataclass(frozen=True)
class LinearSchedule:
    """A learning rate that falls linearly from ``start`` to 0 over the run's total steps (SB3 calls
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
        # One thread each for torch and numpy's BLAS: on 2 cores, thread pools that spin against
        # the env's numpy work (or other processes) cost far more than they gain.
        torch.set_num_threads(1)
        threadpool_limits(1)
        rules = self.rules = config.game_rules
        self.pool = OpponentPool(config.opponents, config.pool_size, rules=rules, seed=config.seed,
                                 player_counts=config.player_counts if config.mixed else None)  # fmt: skip
        self.env = SkyjoSB3VecEnv(
            config.num_envs, rules, reward=config.reward, reward_scale=config.reward_scale, seed=config.seed,
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
            if unstarted:
                say(f"{self.out} holds {', '.join(unstarted)} of a run that stopped before it learned: starting afresh")
            if overwrite or unstarted:
                remove_run_files(self.out)
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
            self.warm_start()
        if SELF in config.opponents and not self.pool.snapshots:
            self.add_snapshot(self.model.num_timesteps)
        self._update_opponents()

    def warm_start(self) -> None:
        """Behaviour-clone the teacher ``config.warm_start`` into the fresh model (``warm_start.json``)."""
        c = self.config
        counts = c.player_counts
        teachers = [specs.make(c.warm_start, rules=c.table_rules(p), seed=c.seed + k) for k, p in enumerate(counts)]
        temperature = c.warm_start_temperature if softened_teacher(teachers[0], c.warm_start_temperature) else 0.0
        epochs = f"{c.warm_start_epochs} epoch" + ("" if c.warm_start_epochs == 1 else "s")
        softened = f", softened at {temperature:g} point" + ("" if temperature == 1 else "s") if temperature else ""
        self.say(f"warm start: cloning {c.warm_start}'s play ({c.warm_start_samples:,} turns, {epochs}{softened})")
        share = c.warm_start_samples // len(counts)  # each table size's turns
        parts = []
        with Progress(share * len(counts), "warm start: collecting", "turns", enabled=self.show_progress) as bar:
            for k, (players, teacher) in enumerate(zip(counts, teachers)):
                done = k * share  # turns of the earlier table sizes

                def report(turns: int, done: int = done) -> None:
                    bar.set(done + turns)

                parts.append(collect(teacher, c.table_rules(players), share, gamma=c.gamma, reward=c.reward,
                                     reward_scale=c.reward_scale, advice=c.advice, obs_type="padded" if c.mixed else "table",
                                     temperature=temperature, seed=c.seed + 1 + k, progress=report))  # fmt: skip
        demos = concatenate(parts)
        with Progress(c.warm_start_epochs, "warm start: fitting", "epochs", enabled=self.show_progress) as bar:
            torch.set_num_threads(c.update_threads)  # fitting is torch alone: the games wait
            policy = self.model.policy
            assert isinstance(policy, SkyjoPolicy), type(policy)  # the learner's policy class (Run)
            history = clone(policy, demos, epochs=c.warm_start_epochs, seed=c.seed, progress=bar.set)
            torch.set_num_threads(1)
        record = {"teacher": c.warm_start, "temperature": temperature, "turns": len(demos), "epochs": history}
        (self.out / "warm_start.json").write_text(json.dumps(record, indent=2) + "\n")
        self.say(f"warm start: {len(demos):,} turns kept, agreement with {c.warm_start} {history[-1]['agreement']:.3f}")

    # -------------------------------------------------------------- periodic actions
    def add_snapshot(self, timesteps: int) -> None:
        self.pool.add(learner_policy(self.model, self.config, f"snapshot@{timesteps}"))
        self._update_opponents()

    def _update_opponents(self) -> None:
        policies, weights = self.pool.policies_and_weights()
        self.env.set_opponents(policies, weights)

    def run_evaluation(self, timesteps: int) -> dict[str, dict[str, float]]:
        """Evaluate against each heuristic: printed, logged to TensorBoard and to ``eval.jsonl``."""
        c = self.config
        # Each opponent plays the learner in whole rotations of the seats (the learner and P - 1 copies).
        games = sum(games_played(c.eval_games, p) for p in c.player_counts) * len(c.eval_opponents)
        with Progress(games, f"evaluation at {timesteps:,} steps", "games", enabled=self.show_progress) as bar:
            figures = evaluate(learner_policy(self.model, c), c, c.eval_games, seed=timesteps, progress=bar)
        for name, f in figures.items():
            key = name.replace("@", "_")
            self.model.logger.record(f"eval/win_rate_vs_{key}", f["win_rate"])
            self.model.logger.record(f"eval/game_total_vs_{key}", f["mean_game_total"])
        self.model.logger.dump(timesteps)
        with open(self.out / "eval.jsonl", "a") as log:
            log.write(json.dumps({"timesteps": int(timesteps), "vs": figures}) + "\n")
        self.say(
            f"evaluation at {timesteps:,} steps ({self.config.eval_games:,} games each), win rate vs {describe(figures)}"
        )
        return figures

    def save_checkpoint(self, timesteps: int) -> None:
        folder = self.out / CHECKPOINT
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save(folder / "model.zip")  # weights, optimiser state and step count
        self.pool.save(folder / "pool")
        self.config.save(folder / "config.json")
        state = {"timesteps": int(timesteps), "seconds": self.previous_seconds + time.perf_counter() - self.started}
        (folder / "state.json").write_text(json.dumps(state) + "\n")

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


#: The files of a run that stopped before it learned (during its warm start, or refused): a new
#: run in its folder replaces them without ``overwrite``.
UNSTARTED_FILES = ("config.json", "warm_start.json")


def check_run_folder(out: Path, *, resume: bool, overwrite: bool) -> list[str]:
    """``ValueError`` unless ``out`` may hold this run: a folder that exists or can be made, and be
    written, and, unless the run resumes it or ``overwrite`` is given, without an earlier run's
    files; those of a run that stopped before it learned (:data:`UNSTARTED_FILES`) are no run.
    Returns those files, which the new run replaces."""
    check_output_folder(out)
    if resume and overwrite:
        raise ValueError("--resume continues a run and --overwrite starts one afresh: give one of them")
    if resume or overwrite:
        return []
    found = [name for name in RUN_FILES if (out / name).exists()]
    if set(found) <= set(UNSTARTED_FILES):
        return found
    if not has_checkpoint(out):
        raise ValueError(
            f"{out} holds an earlier run that saved no checkpoint ({', '.join(found)}), so it cannot be resumed; "
            "start it afresh with --overwrite, or choose another --out"
        )
    raise ValueError(
        f"{out} already holds a run ({', '.join(found)}); resume it with --resume {out}, "
        "start it afresh with --overwrite, or choose another --out"
    )


def remove_run_files(out: Path) -> None:
    """Remove an earlier run's files from ``out`` (nothing else)."""
    for name in RUN_FILES:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def read_state(folder: Path) -> dict[str, Any]:
    """A checkpoint's ``state.json`` (learner steps and seconds trained); ``ValueError`` if unreadable."""
    try:
        state = json.loads((folder / "state.json").read_text())
        timesteps, seconds = state["timesteps"], float(state.get("seconds", 0.0))
        if isinstance(timesteps, bool) or not isinstance(timesteps, int) or timesteps < 0:
            raise ValueError(f"timesteps={timesteps!r} is not a step count")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"checkpoint {folder} has no readable state.json: {exc}") from None
    return {"timesteps": timesteps, "seconds": seconds}


def final_tournament(agent: MLPPolicy, config: TrainConfig, progress: bool) -> TournamentResult:
    """The agent and the evaluation agents in a tournament of ``config.final_games`` games."""
    rules = config.game_rules
    pool = [agent] + [specs.make(n, rules=rules, seed=config.seed + i) for i, n in enumerate(config.eval_opponents)]
    games = games_played(config.final_games, len(pool))
    with Progress(games, "final tournament", "games", enabled=progress) as bar:
        return run_tournament(pool, rules.num_players, config.final_games, rules=rules, seed=config.seed, progress=bar)


def train(
    config: TrainConfig,
    resume: str | Path | None = None,
    *,
    overwrite: bool = False,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> TrainOutcome:
    """Train (or resume, from the checkpoint folder ``resume``) a run, export ``agent.npz``, and
    measure it against the heuristics.

    ``say`` receives the phase lines (warm start, evaluations, the final tournament); progress bars
    go to stderr unless ``progress`` is false. ``ValueError`` for a bad run folder, opponent or
    checkpoint, before anything is written.
    """
    started = time.perf_counter()
    if resume is not None:
        done = read_state(Path(resume))["timesteps"]
        if config.total_timesteps <= done:
            raise ValueError(
                f"total_timesteps={config.total_timesteps:,} is not above the {done:,} steps the run has done; "
                "give a larger --total-timesteps to train on"
            )
    run = Run(config, Path(resume) if resume is not None else None, overwrite=overwrite, progress=progress, say=say)
    before = int(run.model.num_timesteps) if resume is not None else 0
    run.learn()
    name = specs.trained_agent_name(run.out)
    agent = learner_policy(run.model, config, name=name)
    agent_path = run.out / specs.AGENT_FILE
    agent.save(agent_path)
    figures = run.run_evaluation(run.model.num_timesteps)
    result = None if config.mixed else final_tournament(agent, config, progress)
    (run.out / "results.json").write_text(
        json.dumps({"final_eval": figures, "tournament": None if result is None else result.to_dict()}, indent=2) + "\n"
    )
    seconds = time.perf_counter() - started
    return TrainOutcome(
        agent_path,
        name,
        figures,
        result,
        int(run.model.num_timesteps),
        int(run.model.num_timesteps) - before,
        seconds,
        run.previous_seconds + seconds,
    )
