"""The steps every training run shares: the run folder, the warm start, the agent, its evaluations and
the final report.

Every trainer (sb3: [`skyjo_env.train.ppo`][]; RLlib: [`skyjo_env.train.rllib_ppo`][]) trains
under one [`TrainConfig`][] and leaves the same folder behind: `config.json`, `warm_start.json`,
`eval.jsonl`, `results.json`, its agent (`agent.npz` for the PPO trainers: the actor as a numpy
[`MLPPolicy`][]) and `checkpoint/` (to resume). This module holds those steps once; the run driver
([`skyjo_env.train.driver`][]) runs them in order.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from threadpoolctl import threadpool_limits

from skyjo_env.agents import specs
from skyjo_env.agents.base import Policy
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.evaluation.progress import Progress, duration
from skyjo_env.evaluation.report import check_output_folder
from skyjo_env.evaluation.tournament import TournamentResult, games_played, run_tournament
from skyjo_env.files import append_file, write_file
from skyjo_env.train.config import CHECKPOINT, CHECKPOINT_NEW, CHECKPOINT_OLD, TrainConfig, has_checkpoint
from skyjo_env.train.imitation import clone, collect, concatenate, softened_teacher
from skyjo_env.train.networks import SkyjoPolicy
from skyjo_env.train.selfplay import snapshot

#: What a run writes into its folder; `overwrite` removes exactly these.
RUN_FILES = (
    "config.json",
    "warm_start.json",
    "eval.jsonl",
    "results.json",
    specs.AGENT_FILE,
    CHECKPOINT,
    CHECKPOINT_NEW,
    CHECKPOINT_OLD,
    "tensorboard",
)


@dataclass
class TrainOutcome:
    """Where a run left its agent, how it fared, and how long it took."""

    agent_path: Path
    agent_name: str
    final_eval: dict[str, dict[str, float]]  #: head-to-head figures against each evaluation agent (and table size)
    tournament: TournamentResult | None  #: the final tournament (`None` for mixed tables: see `final_eval`)
    timesteps: int  #: learner steps of the run in total (all resumes)
    run_timesteps: int  #: learner steps of this call
    seconds: float  #: wall time of this call
    total_seconds: float  #: wall time of the run in total (all resumes)


# ---------------------------------------------------------------------------- the run folder
#: The files of a run that stopped before it learned (during its warm start, or refused): a new
#: run in its folder replaces them without `overwrite`.
UNSTARTED_FILES = ("config.json", "warm_start.json")


def check_run_folder(out: Path, *, resume: bool, overwrite: bool, files: tuple[str, ...] = RUN_FILES) -> list[str]:
    """`ValueError` unless `out` may hold this run: a folder that exists or can be made, and be
    written, and, unless the run resumes it or `overwrite` is given, without an earlier run's
    `files`; those of a run that stopped before it learned ([`UNSTARTED_FILES`][]) are no run.
    Returns those files, which the new run replaces."""
    check_output_folder(out)
    if resume and overwrite:
        raise ValueError("--resume continues a run and --overwrite starts one afresh: give one of them")
    if resume or overwrite:
        return []
    found = [name for name in files if (out / name).exists()]
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


def prepare_run_folder(
    out: Path, unstarted: list[str], *, overwrite: bool, say: Callable[[str], None], files: tuple[str, ...] = RUN_FILES
) -> None:
    """Clear an earlier run's `files` for a new run (`overwrite`, or the files of one that never
    learned, which [`check_run_folder()`][check_run_folder] returned), then make the folder."""
    if unstarted:
        say(f"{out} holds {', '.join(unstarted)} of a run that stopped before it learned: starting afresh")
    if overwrite or unstarted:
        remove_run_files(out, files)
    out.mkdir(parents=True, exist_ok=True)


def remove_run_files(out: Path, files: tuple[str, ...] = RUN_FILES) -> None:
    """Remove an earlier run's `files` from `out` (nothing else)."""
    for name in files:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def read_state(folder: Path) -> dict[str, Any]:
    """A checkpoint's `state.json` (learner steps and seconds trained); `ValueError` if unreadable."""
    try:
        state = json.loads((folder / "state.json").read_text())
        timesteps, seconds = state["timesteps"], float(state.get("seconds", 0.0))
        if isinstance(timesteps, bool) or not isinstance(timesteps, int) or timesteps < 0:
            raise ValueError(f"timesteps={timesteps!r} is not a step count")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"checkpoint {folder} has no readable state.json: {exc}") from None
    return {"timesteps": timesteps, "seconds": seconds}


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Torch and numpy's BLAS on one thread each while a run plays its games, as what they had before
    is restored after: on 2 cores, thread pools that spin against the games' numpy work (or other
    processes) cost far more than they gain. The PPO updates and the warm start's fitting set their
    own torch threads (`update_threads`) for as long as they run."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        torch.set_num_threads(threads)


# ---------------------------------------------------------------------------- warm start
def warm_start(
    policy: SkyjoPolicy, config: TrainConfig, out: Path, *, say: Callable[[str], None], progress: bool
) -> None:
    """Behaviour-clone the teacher `config.warm_start` into `policy` (written to `warm_start.json`)."""
    c = config
    counts = c.player_counts
    teachers = [specs.make(c.warm_start, rules=c.table_rules(p), seed=c.seed + k) for k, p in enumerate(counts)]
    temperature = c.warm_start_temperature if softened_teacher(teachers[0], c.warm_start_temperature) else 0.0
    epochs = f"{c.warm_start_epochs} epoch" + ("" if c.warm_start_epochs == 1 else "s")
    softened = f", softened at {temperature:g} point" + ("" if temperature == 1 else "s") if temperature else ""
    say(f"warm start: cloning {c.warm_start}'s play ({c.warm_start_samples:,} turns, {epochs}{softened})")
    share = c.warm_start_samples // len(counts)  # each table size's turns
    parts = []
    with Progress(share * len(counts), "warm start: collecting", "turns", enabled=progress) as bar:
        for k, (players, teacher) in enumerate(zip(counts, teachers)):
            done = k * share  # turns of the earlier table sizes

            def report(turns: int, done: int = done) -> None:
                bar.set(done + turns)

            parts.append(collect(teacher, c.table_rules(players), share, gamma=c.gamma, reward=c.env_reward,
                                 reward_scale=c.reward_scale, advice=c.advice, obs_type="padded" if c.mixed else "table",
                                 temperature=temperature, seed=c.seed + 1 + k, progress=report))  # fmt: skip
    demos = concatenate(parts)
    with Progress(c.warm_start_epochs, "warm start: fitting", "epochs", enabled=progress) as bar:
        threads = torch.get_num_threads()
        torch.set_num_threads(c.update_threads)  # fitting is torch alone: the games wait
        try:
            history = clone(policy, demos, epochs=c.warm_start_epochs, seed=c.seed, progress=bar.set)
        finally:
            torch.set_num_threads(threads)
    record = {"teacher": c.warm_start, "temperature": temperature, "turns": len(demos), "epochs": history}
    write_file(out / "warm_start.json", json.dumps(record, indent=2) + "\n")
    say(f"warm start: {len(demos):,} turns kept, agreement with {c.warm_start} {history[-1]['agreement']:.3f}")


# ---------------------------------------------------------------------------- the agent and its evaluations
def agent_policy(policy: SkyjoPolicy, config: TrainConfig, timesteps: int, name: str = "ppo") -> MLPPolicy:
    """The learner's current actor as a greedy numpy policy (its metadata: players, rules, steps, config)."""
    metadata = {
        "players": config.players, "rules": config.game_rules.to_dict(), "timesteps": int(timesteps),
        "config": config.to_dict(),
    }  # fmt: skip
    if config.mixed:
        metadata["player_counts"] = list(config.player_counts)
    return snapshot(policy, config.activation, name, metadata, config.advice)


def evaluate(
    policy: Policy, config: TrainConfig, games: int, seed: int, progress: bool | Progress = False
) -> dict[str, dict[str, float]]:
    """Win rate (with its 95% interval) and mean game total of `policy` against each evaluation agent.

    The learner plays every seat in turn against `players - 1` copies of the agent (`games`
    rounded up to whole rotations of the seats); `progress` reports the games of all of them.
    Mixed tables are evaluated at each table size, keyed `"name@Pp"`.
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
    """Evaluation figures as one line: `counting 0.512 (0.481-0.543), ...`."""
    return ", ".join(
        f"{name} {f['win_rate']:.3f} ({f['win_ci_low']:.3f}-{f['win_ci_high']:.3f})" for name, f in figures.items()
    )


def run_evaluation(
    policy: Policy, config: TrainConfig, out: Path, timesteps: int, *, say: Callable[[str], None], progress: bool
) -> dict[str, dict[str, float]]:
    """Evaluate against each evaluation agent: said, and appended to `eval.jsonl`; returns the figures."""
    c = config
    # Each opponent plays the learner in whole rotations of the seats (the learner and P - 1 copies).
    games = sum(games_played(c.eval_games, p) for p in c.player_counts) * len(c.eval_opponents)
    with Progress(games, f"evaluation at {timesteps:,} steps", "games", enabled=progress) as bar:
        figures = evaluate(policy, c, c.eval_games, seed=timesteps, progress=bar)
    append_file(out / "eval.jsonl", json.dumps({"timesteps": int(timesteps), "vs": figures}) + "\n")
    say(f"evaluation at {timesteps:,} steps ({c.eval_games:,} games each), win rate vs {describe(figures)}")
    return figures


def final_tournament(agent: Policy, config: TrainConfig, progress: bool) -> TournamentResult:
    """The agent and the evaluation agents in a tournament of `config.final_games` games."""
    rules = config.game_rules
    pool = [agent] + [specs.make(n, rules=rules, seed=config.seed + i) for i, n in enumerate(config.eval_opponents)]
    games = games_played(config.final_games, len(pool))
    with Progress(games, "final tournament", "games", enabled=progress) as bar:
        return run_tournament(pool, rules.num_players, config.final_games, rules=rules, seed=config.seed, progress=bar)


def write_results(out: Path, figures: dict[str, dict[str, float]], result: TournamentResult | None) -> None:
    """`results.json`: the final evaluation's figures and the final tournament (`None` for mixed tables)."""
    write_file(
        out / "results.json",
        json.dumps({"final_eval": figures, "tournament": None if result is None else result.to_dict()}, indent=2)
        + "\n",
    )


def print_outcome(outcome: TrainOutcome, config: TrainConfig) -> None:
    """The final report of `skyjo train`, whichever backend trained: the tournament table, the
    head-to-head figures and where the agent is."""
    from skyjo_env.evaluation.report import print_table

    if outcome.tournament is not None:
        print_table(outcome.tournament)
    print(f"head to head ({config.eval_games:,} games each, seats rotated), {outcome.agent_name} wins against:")
    for name, f in outcome.final_eval.items():
        print(f"  {name:<12} {f['win_rate']:.3f} (95% CI {f['win_ci_low']:.3f}-{f['win_ci_high']:.3f})")
    print(
        f"this run: {outcome.run_timesteps:,} steps in {duration(outcome.seconds)}; "
        f"in total: {outcome.timesteps:,} steps in {duration(outcome.total_seconds)}; agent: {outcome.agent_path}"
    )
