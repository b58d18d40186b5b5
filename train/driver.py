"""One run driver for every training method: the sequence a run goes through, whatever learns.

A training method (sb3's MaskablePPO: [`skyjo_env.train.ppo`][]; Ray RLlib's PPO:
[`skyjo_env.train.rllib_ppo`][]; any other) is a [`Trainer`][]: it supplies its learning step,
its agent and its own checkpoint files. The [`RunDriver`][] does the rest, the same for all:

1. the checks, before anything is written: the trainer's own ([`Trainer.check()`][Trainer.check]),
   the run folder (`check_run_folder`), the resumed checkpoint (the fields fixed on resume:
   [`check_fixed_fields()`][check_fixed_fields]; steps left to train:
   [`check_steps_left()`][check_steps_left]), the opponents (the self-play pool);
2. the start: the trainer built (from the checkpoint when resuming), the folder cleared for a new
   run, `config.json`, the warm start, the first self-play snapshot;
3. the schedule while the trainer learns ([`Loop`][]): progress, snapshots into the pool,
   evaluations (`eval.jsonl`), checkpoints, the time limit;
4. the last checkpoint and the final report (the agent file, the last evaluation, the final
   tournament, `results.json`).

[`train()`][train] runs the four under the folder's claim; a backend's `train()` is
`driver.train(config, MyTrainer, resume, ...)`.

A checkpoint is complete or absent ([`write_checkpoint()`][write_checkpoint]): it is written whole
into `checkpoint.new/`, its `state.json` last, then put in the place of the previous one, which is
kept until then; a run killed at any moment leaves a complete checkpoint to resume
([`recover_checkpoint()`][recover_checkpoint]).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar

from skyjo_env.agents import specs
from skyjo_env.agents.base import Policy
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.evaluation.progress import Progress
from skyjo_env.evaluation.report import claimed_folder
from skyjo_env.files import sync_folder, write_file
from skyjo_env.train.config import (
    CHECKPOINT,
    CHECKPOINT_NEW,
    CHECKPOINT_OLD,
    FIXED_ON_RESUME,
    SELF,
    TrainConfig,
    checkpoint_folder,
)
from skyjo_env.train.networks import SkyjoPolicy
from skyjo_env.train.runs import (
    RUN_FILES,
    TrainOutcome,
    agent_policy,
    check_run_folder,
    final_tournament,
    one_thread,
    prepare_run_folder,
    read_state,
    run_evaluation,
    warm_start,
    write_results,
)
from skyjo_env.train.selfplay import OpponentPool

#: The figures of one evaluation: win rate, its interval and mean game total against each agent.
Figures = dict[str, dict[str, float]]


class Trainer(ABC):
    """A training method's learning step: what the [`RunDriver`][] cannot do for it.

    A subclass is built as `Trainer(config, checkpoint, timesteps)`: a new learner when
    `checkpoint` is `None`, else the learner saved in that checkpoint folder by
    [`save_state()`][save_state] (`timesteps`: the steps it had done, from its `state.json`);
    `ValueError` for a checkpoint it cannot load. It must write nothing: the driver clears the
    run folder after it is built.
    """

    #: The file its agent is saved to, in the run folder (the final agent) and in each checkpoint.
    agent_file: ClassVar[str] = specs.AGENT_FILE
    #: How the progress bar names its steps.
    progress_label: ClassVar[str] = "learning"
    #: Whether it can give frozen copies of its agent for the self-play pool ([`snapshot()`][snapshot]):
    #: a run with `self` among its opponents needs it.
    takes_snapshots: ClassVar[bool] = False

    def __init__(self, config: TrainConfig, checkpoint: Path | None, timesteps: int) -> None:
        self.config = config

    @classmethod  # noqa: B027 (a hook: nothing unless overridden)
    def check(cls, config: TrainConfig) -> None:
        """`ValueError` for a `config` this method cannot learn from (its own sizes); the driver asks
        before anything is written."""

    @property
    @abstractmethod
    def timesteps(self) -> int:
        """Learner steps done, all resumes together (what `total_timesteps` counts)."""

    @abstractmethod
    def describe(self) -> str:
        """One line said as the run starts (its networks, where it runs)."""

    @abstractmethod
    def learn(self, loop: Loop) -> None:
        """Learn until `loop.until` steps or until `loop.time_up()`, calling `loop.after(timesteps)`
        after each unit of learning (an environment step, an update): the driver's schedule runs there."""

    @abstractmethod
    def agent(self, name: str) -> Policy:
        """The learner now as a batched policy named `name`: what evaluations and the final tournament play."""

    @abstractmethod
    def save_agent(self, path: Path, name: str) -> None:
        """Write the learner now as an agent named `name` to `path` (a file named [`agent_file`][agent_file])."""

    @abstractmethod
    def save_state(self, folder: Path) -> None:
        """Write into the new checkpoint `folder` what [`__init__`][Trainer] needs to resume (weights,
        optimiser, counters); the driver adds `config.json`, `state.json`, the pool and the agent."""

    def snapshot(self, name: str) -> MLPPolicy:
        """A frozen numpy copy of the learner for the self-play pool (when [`takes_snapshots`][takes_snapshots])."""
        raise NotImplementedError(f"{type(self).__name__} takes no self-play snapshots")

    def set_opponents(self, policies: list[Policy], weights: list[float]) -> None:  # noqa: B027 (a hook: nothing unless overridden)
        """Play against this opponent mixture from now on (called at the start and whenever the pool changes)."""

    def warm_start_policy(self) -> SkyjoPolicy | None:
        """The network that the warm start (`config.warm_start`) clones its teacher into; `None`: no warm start."""
        return None

    def warm_started(self) -> None:  # noqa: B027 (a hook: nothing unless overridden)
        """Called after the warm start has fitted [`warm_start_policy()`][warm_start_policy]."""

    def evaluated(self, figures: Figures, timesteps: int) -> None:  # noqa: B027 (a hook: nothing unless overridden)
        """Called with each evaluation's figures (logs of its own, such as TensorBoard's)."""

    def close(self) -> None:  # noqa: B027 (a hook: nothing unless overridden)
        """Release what the trainer holds (processes, actors), whether the run ended or failed."""


class PolicyTrainer(Trainer):
    """What the PPO trainers share: a [`SkyjoPolicy`][] learner whose actor is the agent (a numpy
    [`MLPPolicy`][] in `agent.npz`), snapshotted into the self-play pool and warm-started from a teacher.
    A subclass gives [`policy`][policy] and the rest of [`Trainer`][]."""

    progress_label = "PPO"
    takes_snapshots = True

    @classmethod
    def check(cls, config: TrainConfig) -> None:
        """A minibatch must fit in a rollout (`num_envs x n_steps` learner steps)."""
        if config.batch_size > config.num_envs * config.n_steps:
            raise ValueError(
                f"batch_size={config.batch_size:,} is larger than a rollout (num_envs x n_steps = "
                f"{config.num_envs:,} x {config.n_steps:,} = {config.num_envs * config.n_steps:,} steps); use at most that"
            )

    @property
    @abstractmethod
    def policy(self) -> SkyjoPolicy:
        """The learner's networks."""

    def agent(self, name: str) -> MLPPolicy:
        return agent_policy(self.policy, self.config, self.timesteps, name)

    def save_agent(self, path: Path, name: str) -> None:
        self.agent(name).save(path)

    def snapshot(self, name: str) -> MLPPolicy:
        return self.agent(name)

    def warm_start_policy(self) -> SkyjoPolicy:
        return self.policy


class Loop:
    """What the driver hands to [`Trainer.learn()`][Trainer.learn]: the steps to reach, the time
    limit, and [`after()`][after], which reports progress and runs the snapshots, evaluations and
    checkpoints that are due."""

    def __init__(
        self,
        until: int,
        end: float | None,
        bar: Progress,
        actions: list[tuple[int, Callable[[int], object], int | None]],
        start: int,
    ) -> None:
        """`actions`: `(every, action, before)`: `action(timesteps)` each time the run passes a
        multiple of `every` steps, if then below `before` (`None`: always)."""
        self.until = until
        self.end = end
        self.bar = bar
        self.actions = actions
        self.next_at = [(start // every + 1) * every for every, _, _ in actions]

    def time_up(self) -> bool:
        """The run's time limit (`time_limit_minutes`, the warm start included) is reached: stop now."""
        return self.end is not None and time.perf_counter() >= self.end

    def after(self, timesteps: int) -> None:
        """After a unit of learning that brought the learner to `timesteps` steps."""
        self.bar.set(min(timesteps, self.until))
        for i, (every, action, before) in enumerate(self.actions):
            if timesteps >= self.next_at[i]:
                self.next_at[i] = (timesteps // every + 1) * every
                if before is None or timesteps < before:
                    action(timesteps)


def check_fixed_fields(config: TrainConfig, resume: Path | None) -> None:
    """`ValueError` unless `config` keeps the fields that fix the network and its inputs
    (`FIXED_ON_RESUME`) as the checkpoint `resume` was trained with. Reads only."""
    if resume is None:
        return
    saved = TrainConfig.load(resume / "config.json")
    for name in FIXED_ON_RESUME:
        value = getattr(config, name)
        if value != getattr(saved, name):
            raise ValueError(
                f"--{name.replace('_', '-')} {value} cannot change when resuming: the run was trained with "
                f"{name}={getattr(saved, name)!r} ({', '.join(FIXED_ON_RESUME)} fix the network and its inputs)"
            )


def check_steps_left(config: TrainConfig, resume: Path | None) -> None:
    """`ValueError` unless `config.total_timesteps` is above the steps the checkpoint `resume` has done."""
    if resume is None:
        return
    done = read_state(resume)["timesteps"]
    if config.total_timesteps <= done:
        raise ValueError(
            f"total_timesteps={config.total_timesteps:,} is not above the {done:,} steps the run has done; "
            "give a larger --total-timesteps to train on"
        )


class RunDriver:
    """One run of any [`Trainer`][]: the checks on construction (nothing written), then
    [`start()`][start], [`learn()`][learn] and [`finish()`][finish]."""

    def __init__(
        self,
        config: TrainConfig,
        make: type[Trainer],
        resume: str | Path | None = None,
        *,
        overwrite: bool = False,
        progress: bool = True,
        say: Callable[[str], None] = print,
        started: float | None = None,
    ) -> None:
        """`resume`: the checkpoint folder to continue (the run's own `checkpoint/`: put back in
        place first if a kill left it elsewhere); `started`: when the run began (`perf_counter()`),
        for its time limit. `ValueError` for a bad run folder, checkpoint or opponent."""
        make.check(config)
        self.config = config
        self.make = make
        self.started = time.perf_counter() if started is None else started
        self.show_progress = progress
        self.say = say
        self.overwrite = overwrite
        self.out = Path(config.out_dir)
        self.resume = None if resume is None else Path(resume)
        if self.resume is not None and self.resume.absolute() == (self.out / CHECKPOINT).absolute():
            recover_checkpoint(self.out)
        self.files = RUN_FILES if make.agent_file in RUN_FILES else (*RUN_FILES, make.agent_file)
        self.unstarted = check_run_folder(self.out, resume=self.resume is not None, overwrite=overwrite,
                                          files=self.files)  # fmt: skip
        check_fixed_fields(config, self.resume)
        c = config
        self.pool = OpponentPool(c.opponents, c.pool_size, rules=c.game_rules, seed=c.seed,
                                 player_counts=c.player_counts if c.mixed else None)  # fmt: skip
        if SELF in c.opponents and not make.takes_snapshots:
            raise ValueError(
                f"the {make.__name__} trainer keeps no snapshots of itself: leave {SELF!r} out of the opponents"
            )
        self.previous_seconds = 0.0

    # -------------------------------------------------------------- the start
    def start(self) -> Trainer:
        """Build the trainer (from the checkpoint when resuming), clear the folder of a new run,
        write `config.json`, warm-start a new learner, take the first self-play snapshot."""
        c = self.config
        state = None if self.resume is None else read_state(self.resume)
        trainer = self.trainer = self.make(c, self.resume, 0 if state is None else state["timesteps"])
        try:
            self._prepare(state)
        except BaseException:
            trainer.close()
            raise
        return trainer

    def _prepare(self, state: dict[str, Any] | None) -> None:
        """[`start()`][start] once the trainer is built (`state`: the resumed checkpoint's `state.json`)."""
        c, trainer = self.config, self.trainer
        if self.resume is not None and state is not None:
            self.pool.load(self.resume / "pool")
            self.previous_seconds = state["seconds"]
        else:
            prepare_run_folder(self.out, self.unstarted, overwrite=self.overwrite, say=self.say, files=self.files)
        self.out.mkdir(parents=True, exist_ok=True)
        c.save(self.out / "config.json")
        self.say(trainer.describe())
        if self.resume is None and c.warm_start is not None:
            policy = trainer.warm_start_policy()
            if policy is not None:
                warm_start(policy, c, self.out, say=self.say, progress=self.show_progress)
                trainer.warm_started()
        if SELF in c.opponents and not self.pool.snapshots:
            self.add_snapshot(trainer.timesteps)
        trainer.set_opponents(*self.pool.policies_and_weights())

    @property
    def timesteps(self) -> int:
        """The trainer's learner steps, all resumes together."""
        return self.trainer.timesteps

    # -------------------------------------------------------------- the schedule
    def add_snapshot(self, timesteps: int) -> None:
        """A frozen copy of the learner into the self-play pool; the trainer plays the new mixture."""
        self.pool.add(self.trainer.snapshot(f"snapshot@{timesteps}"))
        self.trainer.set_opponents(*self.pool.policies_and_weights())

    def evaluate(self, timesteps: int, agent: Policy | None = None) -> Figures:
        """Evaluate `agent` (the learner now) against each evaluation agent: said, in `eval.jsonl`
        and given to the trainer."""
        agent = self.trainer.agent("learner") if agent is None else agent
        figures = run_evaluation(agent, self.config, self.out, timesteps, say=self.say, progress=self.show_progress)
        self.trainer.evaluated(figures, timesteps)
        return figures

    def save_checkpoint(self, timesteps: int) -> None:
        """A complete checkpoint of the run at `timesteps` steps ([`write_checkpoint()`][write_checkpoint])."""
        seconds = self.previous_seconds + time.perf_counter() - self.started
        write_checkpoint(self.out, self.trainer, self.pool, self.config, timesteps, seconds)

    def learn(self) -> None:
        """Let the trainer learn to `total_timesteps` (or the time limit) on the schedule, then checkpoint."""
        c, trainer = self.config, self.trainer
        end = None if c.time_limit_minutes is None else self.started + 60 * c.time_limit_minutes
        actions: list[tuple[int, Callable[[int], object], int | None]] = [
            (every, action, before) for every, action, before in (
                (c.snapshot_every if SELF in c.opponents else 0, self.add_snapshot, None),
                (c.eval_every, self.evaluate, c.total_timesteps),
                (c.checkpoint_every, self.save_checkpoint, c.total_timesteps),
            ) if every
        ]  # fmt: skip
        start = trainer.timesteps
        with Progress(
            c.total_timesteps, trainer.progress_label, "steps", enabled=self.show_progress, start=start
        ) as bar:
            trainer.learn(Loop(c.total_timesteps, end, bar, actions, start))
            done = trainer.timesteps >= c.total_timesteps
            bar.close("" if done else f"time limit of {c.time_limit_minutes:g} min reached")
        self.save_checkpoint(trainer.timesteps)

    # -------------------------------------------------------------- the report
    def finish(self, run_timesteps: int) -> TrainOutcome:
        """Save the agent into the run folder, evaluate it, play the final tournament and write
        `results.json`; `run_timesteps`: the steps learnt by this call."""
        c, trainer = self.config, self.trainer
        name = specs.trained_agent_name(self.out)
        agent_path = self.out / trainer.agent_file
        trainer.save_agent(agent_path, name)
        agent = trainer.agent(name)
        figures = self.evaluate(trainer.timesteps, agent)
        result = None if c.mixed else final_tournament(agent, c, self.show_progress)
        write_results(self.out, figures, result)
        seconds = time.perf_counter() - self.started
        return TrainOutcome(agent_path, name, figures, result, trainer.timesteps, run_timesteps, seconds,
                            self.previous_seconds + seconds)  # fmt: skip


def train(
    config: TrainConfig,
    make: type[Trainer],
    resume: str | Path | None = None,
    *,
    overwrite: bool = False,
    progress: bool = True,
    say: Callable[[str], None] = print,
    session: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
) -> TrainOutcome:
    """Train (or resume, from the checkpoint folder `resume`) a run of the trainer `make`, export
    its agent and measure it: the whole sequence of [`RunDriver`][] under the claim of the run
    folder. `session`: a context the trainer is built and runs in, entered after the checks (Ray
    for RLlib). `ValueError` for a bad run folder, checkpoint or opponent, before anything is written."""
    started = time.perf_counter()
    with claimed_folder(config.out_dir):  # the folder's files are checked under the claim
        run = RunDriver(config, make, resume, overwrite=overwrite, progress=progress, say=say, started=started)
        check_steps_left(config, run.resume)
        with session(), one_thread():
            trainer = run.start()
            try:
                before = trainer.timesteps
                run.learn()
                return run.finish(trainer.timesteps - before)
            finally:
                trainer.close()


# ---------------------------------------------------------------------------- checkpoints
#: The phases of [`write_checkpoint()`][write_checkpoint], in order: a run killed after any of them
#: (or during one) leaves a complete checkpoint, the previous one or the new one.
CHECKPOINT_PHASES = ("folder", "learner", "pool", "agent", "synced", "state", "retired", "placed", "cleaned")
#: Test hook: a process with this variable set to a phase ends at once (`os._exit`) after that
#: phase of its first checkpoint, as a `kill -9` would end it (tests/test_checkpoints.py).
KILL_AT_PHASE = "SKYJO_TEST_KILL_AT_CHECKPOINT_PHASE"


def _reached(phase: str) -> None:
    if os.environ.get(KILL_AT_PHASE) == phase:
        os._exit(137)


def write_checkpoint(
    out: Path, trainer: Trainer, pool: OpponentPool, config: TrainConfig, timesteps: int, seconds: float
) -> None:
    """Checkpoint the run in `out`, complete or not at all: everything is written into
    `checkpoint.new/` (the trainer's state, the pool, `config.json`, the agent as of now) and
    synced to disk, then `state.json` (learner steps and seconds trained, all resumes together)
    last; only then does it take the place of `checkpoint/` (the previous one moved aside to
    `checkpoint.old/` and removed once the new one is in place)."""
    recover_checkpoint(out)  # a checkpoint left aside by a killed run is put back first
    new, old, final = out / CHECKPOINT_NEW, out / CHECKPOINT_OLD, out / CHECKPOINT
    new.mkdir()
    _reached("folder")
    trainer.save_state(new)
    _reached("learner")
    pool.save(new / "pool")
    _reached("pool")
    config.save(new / "config.json")
    trainer.save_agent(new / trainer.agent_file, "checkpoint")
    _reached("agent")
    _sync_tree(new)
    _reached("synced")
    write_file(new / "state.json", json.dumps({"timesteps": int(timesteps), "seconds": seconds}) + "\n")
    _reached("state")
    if final.exists():
        os.replace(final, old)
        sync_folder(out)
    _reached("retired")
    os.replace(new, final)
    sync_folder(out)
    _reached("placed")
    if old.exists():
        _remove_checkpoint(old)
    _reached("cleaned")


def recover_checkpoint(out: Path) -> None:
    """Put the complete checkpoint of the run folder `out` in its place (`checkpoint/`) if a run
    killed while it wrote one left it aside ([`checkpoint_folder()`][skyjo_env.train.config.checkpoint_folder]),
    and remove the other copies (incomplete, or older)."""
    found, final = checkpoint_folder(out), out / CHECKPOINT
    if found is not None and found != final:
        if final.exists():  # incomplete
            _remove_checkpoint(final)
        os.replace(found, final)
        sync_folder(out)
    for name in (CHECKPOINT_NEW, CHECKPOINT_OLD):
        if (out / name).exists():
            _remove_checkpoint(out / name)


def _remove_checkpoint(folder: Path) -> None:
    """Remove a checkpoint folder, its `state.json` first: a removal cut short leaves no folder
    that passes for a complete checkpoint."""
    (folder / "state.json").unlink(missing_ok=True)
    shutil.rmtree(folder)


def _sync_tree(folder: Path) -> None:
    """`fsync` every file and folder under `folder` (and itself)."""
    for root, _, names in os.walk(folder):
        for name in names:
            fd = os.open(Path(root) / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        sync_folder(Path(root))
