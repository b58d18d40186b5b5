"""PPO updates overlapped with the rollouts (train/overlap.py): an overlapped run is the lagged
schedule played in one process, bit for bit; the update process's failures are reported; an
overlapped run checkpoints and resumes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from skyjo_env.rules import Rules  # noqa: E402
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv  # noqa: E402
from skyjo_env.train.config import TrainConfig  # noqa: E402
from skyjo_env.train.networks import SkyjoPolicy  # noqa: E402
from skyjo_env.train.overlap import ROLLOUT_FIELDS, OverlappedPPO, UpdateProcess  # noqa: E402
from skyjo_env.train.ppo import Run  # noqa: E402

STEPS = 4 * 32 * 16  # four rollouts of 32 games x 16 steps


def model(learner: type[MaskablePPO]) -> MaskablePPO:
    env = SkyjoSB3VecEnv(32, Rules(), seed=3)
    return learner(
        SkyjoPolicy, env, n_steps=16, batch_size=128, n_epochs=2, seed=3, policy_kwargs={"net_arch": [32, 32]}
    )


def state(learner: MaskablePPO) -> tuple[dict[str, Any], dict[str, Any]]:
    return copy.deepcopy((learner.policy.state_dict(), learner.policy.optimizer.state_dict()))


def restore(learner: MaskablePPO, saved: tuple[dict[str, Any], dict[str, Any]]) -> None:
    learner.policy.load_state_dict(saved[0])
    learner.policy.optimizer.load_state_dict(saved[1])


class LaggedPPO(MaskablePPO):
    """The overlapped schedule in one process: each rollout is played with the weights fitted on
    the rollouts before the previous one, and fitted from the weights the previous update left."""

    fitted: tuple[dict[str, Any], dict[str, Any]] | None = None

    def train(self) -> None:
        fitted = self.fitted if self.fitted is not None else state(self)
        restore(self, fitted)
        super().train()
        self.fitted = state(self)
        restore(self, fitted)  # the next rollout is played with the weights before this update

    def learn(self, *args: Any, **kwargs: Any) -> LaggedPPO:  # type: ignore[override]
        super().learn(*args, **kwargs)
        assert self.fitted is not None
        restore(self, self.fitted)
        return self


def test_an_overlapped_run_is_the_lagged_schedule_bit_for_bit() -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the update process: the same sums
    try:
        overlapped = model(OverlappedPPO).learn(STEPS)
        lagged = model(LaggedPPO).learn(STEPS)
        plain = model(MaskablePPO).learn(STEPS)
    finally:
        torch.set_num_threads(threads)
    mine, reference, sequential = (m.policy.state_dict() for m in (overlapped, lagged, plain))
    assert all(torch.equal(mine[k], reference[k]) for k in mine)
    assert not all(torch.equal(mine[k], sequential[k]) for k in mine)  # the lag is real
    mine_adam, reference_adam = (m.policy.optimizer.state_dict()["state"] for m in (overlapped, lagged))
    assert all(torch.equal(mine_adam[k]["exp_avg_sq"], reference_adam[k]["exp_avg_sq"]) for k in mine_adam)
    assert overlapped._n_updates == lagged._n_updates == 4 * 2
    assert overlapped.num_timesteps == lagged.num_timesteps == STEPS


def test_a_failing_update_is_reported_with_its_traceback() -> None:
    learner = model(MaskablePPO)
    updates = UpdateProcess(learner)
    try:
        updates.submit({name: np.zeros(1) for name in ROLLOUT_FIELDS}, 1.0)  # no rollout of this model's shape
        with pytest.raises(RuntimeError, match="the PPO update process failed:(.|\n)*Traceback"):
            updates.result()
    finally:
        updates.close()
    assert updates.process.returncode is not None


def test_an_update_process_that_dies_is_reported() -> None:
    updates = UpdateProcess(model(MaskablePPO))
    updates.process.kill()
    updates.process.wait()
    with pytest.raises(RuntimeError, match="update process ended unexpectedly"):
        updates.submit({}, 1.0)
        updates.result()
    updates.close()


def test_an_overlapped_run_checkpoints_and_resumes(tmp_path: Path) -> None:
    options = dict(total_timesteps=4096, num_envs=32, n_steps=32, batch_size=256, net_arch=[32, 32],
                   opponents={"random": 0.5, "self": 0.5}, snapshot_every=2048, eval_every=0, checkpoint_every=0,
                   warm_start=None, advice=None, overlap=True, out_dir=str(tmp_path))  # fmt: skip
    first = Run(TrainConfig(**options), say=lambda line: None)
    first.learn()
    assert isinstance(first.model, OverlappedPPO) and first.model.num_timesteps == 4096
    saved = first.model.policy.state_dict()
    plain = MaskablePPO.load(tmp_path / "checkpoint" / "model.zip")  # an overlapped run's checkpoint is plain
    assert all(torch.equal(saved[k], v) for k, v in plain.policy.state_dict().items())
    resumed = Run(TrainConfig(**{**options, "total_timesteps": 8192}), resume=tmp_path / "checkpoint",
                  say=lambda line: None)  # fmt: skip
    assert isinstance(resumed.model, OverlappedPPO) and resumed.model.num_timesteps == 4096
    resumed.learn()
    assert resumed.model.num_timesteps == 8192 and resumed.model._n_updates > first.model._n_updates
