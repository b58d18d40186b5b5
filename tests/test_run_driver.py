"""The run driver: checkpoints are complete or absent (a run killed at any phase of writing one
resumes, from the previous checkpoint or the new one: issue 53), a library caller of ``train()``
gets the command line's refusals on resume, and a trainer of a third kind plugs in (issue 52)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from commands import run as skyjo

pytest.importorskip("sb3_contrib")

from skyjo_env.agents import specs  # noqa: E402
from skyjo_env.agents.base import Policy  # noqa: E402
from skyjo_env.train import driver  # noqa: E402
from skyjo_env.train.config import (  # noqa: E402
    CHECKPOINT,
    CHECKPOINT_NEW,
    CHECKPOINT_OLD,
    TrainConfig,
    check_resumable,
    checkpoint_folder,
)
from skyjo_env.train.driver import CHECKPOINT_PHASES, KILL_AT_PHASE, Loop, Trainer, recover_checkpoint  # noqa: E402
from skyjo_env.train.ppo import train  # noqa: E402

#: The phases after which the new checkpoint, not the previous one, is the run's.
NEW_FROM = ("retired", "placed", "cleaned")


def steps(folder: Path) -> int:
    return json.loads((folder / "state.json").read_text())["timesteps"]


def contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("phase", CHECKPOINT_PHASES)
def test_a_run_killed_at_any_phase_of_a_checkpoint_resumes(capsys, run: Path, phase: str):
    """The resumed run (1,024 steps done) is killed, as by ``kill -9``, after `phase` of its
    checkpoint at 1,536 steps; ``--resume`` then goes on from the complete checkpoint left: the
    previous one (1,024) until the new one has taken its place, the new one (1,536) after."""
    command = "import sys; from skyjo_env.apps.cli import main; sys.exit(main(sys.argv[1:]))"
    killed = subprocess.run(
        [sys.executable, "-c", command, "train", "--resume", str(run), "--total-timesteps", "2048",
         "--checkpoint-every", "512", "--no-progress"],
        env={**os.environ, KILL_AT_PHASE: phase}, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert killed.returncode == 137, killed.stderr  # killed in that phase, not finished
    expected = 1536 if phase in NEW_FROM else 1024
    found = checkpoint_folder(run)
    assert found is not None and steps(found) == expected
    code, out, err = skyjo(capsys, "train", "--resume", str(run), "--total-timesteps", "2048", "--no-progress")
    assert code == 0, err
    assert f"this run: {2048 - expected:,} steps in" in out and "in total: 2,048 steps in" in out
    assert steps(run / CHECKPOINT) == 2048
    assert not (run / CHECKPOINT_NEW).exists() and not (run / CHECKPOINT_OLD).exists()


def test_a_checkpoint_left_aside_is_put_back_and_incomplete_ones_removed(run: Path):
    """What a kill between the two renames leaves (the previous checkpoint as ``checkpoint.old``,
    the new one complete as ``checkpoint.new``): the new one is the run's; an incomplete copy
    (no ``state.json``) never is."""
    (run / CHECKPOINT).rename(run / CHECKPOINT_OLD)
    shutil.copytree(run / CHECKPOINT_OLD, run / CHECKPOINT_NEW)
    (run / CHECKPOINT_NEW / "state.json").write_text('{"timesteps": 1536, "seconds": 1.0}\n')
    assert checkpoint_folder(run) == run / CHECKPOINT_NEW
    recover_checkpoint(run)
    assert steps(run / CHECKPOINT) == 1536 and checkpoint_folder(run) == run / CHECKPOINT
    assert not (run / CHECKPOINT_NEW).exists() and not (run / CHECKPOINT_OLD).exists()
    shutil.copytree(run / CHECKPOINT, run / CHECKPOINT_NEW)
    (run / CHECKPOINT_NEW / "state.json").unlink()  # a checkpoint.new cut short
    (run / CHECKPOINT / "state.json").unlink()  # and a checkpoint/ of an older version cut short
    assert checkpoint_folder(run) is None
    with pytest.raises(ValueError, match="the run there stopped before it saved a checkpoint"):
        check_resumable(run)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("net_arch", [64], "--net-arch [64] cannot change when resuming: the run was trained with net_arch=[16]"),
        ("players", 3, "--players 3 cannot change when resuming: the run was trained with players=2"),
        ("advice", "counting", "--advice counting cannot change when resuming"),
    ],
)
def test_a_library_resume_refuses_what_cannot_change(run: Path, field: str, value, message: str):
    """``train()`` called from Python refuses as ``skyjo train --resume`` does, before writing."""
    config = TrainConfig.from_dict({**TrainConfig.load(run / "config.json").to_dict(), field: value,
                                    "total_timesteps": 2048})  # fmt: skip
    before = contents(run)
    with pytest.raises(ValueError) as refused:
        train(config, run / CHECKPOINT, progress=False, say=lambda _: None)
    assert message in str(refused.value)
    assert contents(run) == before


class CountingTrainer(Trainer):
    """A third kind of trainer, as a value-network trainer would plug in: no PPO policy, an agent
    that is any batched policy (here counting's, learning nothing), its own agent file and state."""

    agent_file = "counting.json"

    def __init__(self, config: TrainConfig, checkpoint: Path | None, timesteps: int) -> None:
        super().__init__(config, checkpoint, timesteps)
        self.steps = 0 if checkpoint is None else json.loads((checkpoint / "learner.json").read_text())["steps"]
        assert self.steps == timesteps

    @property
    def timesteps(self) -> int:
        return self.steps

    def describe(self) -> str:
        return "counting, learning nothing"

    def learn(self, loop: Loop) -> None:
        while self.steps < loop.until and not loop.time_up():
            self.steps += 100  # one unit of learning
            loop.after(self.steps)

    def agent(self, name: str) -> Policy:
        return specs.make("counting", rules=self.config.game_rules)

    def save_agent(self, path: Path, name: str) -> None:
        path.write_text(json.dumps({"agent": "counting", "name": name}))

    def save_state(self, folder: Path) -> None:
        (folder / "learner.json").write_text(json.dumps({"steps": self.steps}))


def test_a_third_trainer_runs_through_the_driver_and_resumes(tmp_path: Path):
    """Any Trainer gets the run folder, the schedule of evaluations and checkpoints, the report and
    the resume of the PPO backends; one without self-play snapshots refuses `self` opponents."""
    config = TrainConfig(total_timesteps=1000, eval_every=200, checkpoint_every=300, eval_games=4, final_games=4,
                         eval_opponents=["random"], opponents={"random": 1.0}, warm_start=None, advice=None,
                         out_dir=str(tmp_path / "run"))  # fmt: skip
    said: list[str] = []
    outcome = driver.train(config, CountingTrainer, progress=False, say=said.append)
    out = tmp_path / "run"
    assert said[0] == "counting, learning nothing" and outcome.timesteps == 1000
    assert outcome.agent_path == out / "counting.json" and json.loads(outcome.agent_path.read_text())["name"] == "run"
    assert [json.loads(line)["timesteps"] for line in (out / "eval.jsonl").read_text().splitlines()] == [
        200, 400, 600, 800, 1000
    ]  # fmt: skip
    assert set(json.loads((out / "results.json").read_text())) == {"final_eval", "tournament"}
    for name in ("learner.json", "counting.json", "config.json", "pool/pool.json"):
        assert (out / CHECKPOINT / name).is_file(), name
    assert steps(out / CHECKPOINT) == 1000
    resumed = driver.train(TrainConfig(**{**config.to_dict(), "total_timesteps": 1500}), CountingTrainer,
                           out / CHECKPOINT, progress=False, say=said.append)  # fmt: skip
    assert (resumed.timesteps, resumed.run_timesteps) == (1500, 500)
    with pytest.raises(ValueError, match="already holds a run"):
        driver.train(config, CountingTrainer, progress=False, say=said.append)
    with pytest.raises(ValueError, match="the CountingTrainer trainer keeps no snapshots of itself"):
        driver.train(TrainConfig(**{**config.to_dict(), "opponents": {"self": 1.0}}), CountingTrainer,
                     overwrite=True, progress=False, say=said.append)  # fmt: skip
    assert (out / "counting.json").is_file()  # nothing removed by the refused run
    driver.train(config, CountingTrainer, overwrite=True, progress=False, say=said.append)
    assert steps(out / CHECKPOINT) == 1000  # --overwrite started afresh, its agent file cleared and rewritten
