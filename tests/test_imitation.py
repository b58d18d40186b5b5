"""Warm start by behaviour cloning (train/imitation.py): demonstrations, cloning, the run option."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from skyjo_env import agents  # noqa: E402
from skyjo_env.rules import Rules  # noqa: E402
from skyjo_env.train.config import TrainConfig  # noqa: E402
from skyjo_env.train.imitation import agreement, clone, collect  # noqa: E402
from skyjo_env.train.ppo import Run  # noqa: E402


@pytest.fixture(scope="module")
def demos():
    return collect(agents.make("counting"), Rules(num_players=2), 64 * 400, num_envs=64, seed=3)


def test_demonstrations_are_the_teachers_legal_moves(demos) -> None:
    assert 0 < len(demos) <= 64 * 400
    assert demos.masks[np.arange(len(demos)), demos.actions].all()
    assert np.array_equal(agents.make("counting")(demos.observations, demos.masks), demos.actions)


def test_returns_are_complete_game_results() -> None:
    # R20 with reward "result" and no discount: every kept turn's return is its game's result for the
    # learner, so a 2-player game without a tie gives +1 or -1; a cut-off game would give 0.
    demos = collect(agents.make("threshold"), Rules(num_players=2), 64 * 300, num_envs=64, gamma=1.0,
                    reward="result", reward_scale=1.0, seed=5)  # fmt: skip
    assert len(demos) > 0
    assert set(np.unique(demos.returns)) <= {-1.0, 0.0, 1.0}
    assert np.mean(np.abs(demos.returns) == 1.0) > 0.9  # ties (both win, R20) are rare


def test_too_few_samples_are_refused() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        collect(agents.make("random"), Rules(), 10, num_envs=64)


def test_cloning_makes_the_actor_agree_with_the_teacher(tmp_path: Path, demos) -> None:
    config = TrainConfig(num_envs=16, n_steps=16, batch_size=256, net_arch=[64, 64], opponents={"random": 1.0},
                         warm_start=None, advice=None, out_dir=str(tmp_path))  # fmt: skip
    policy = Run(config).model.policy
    before = agreement(policy, demos)
    history = clone(policy, demos, epochs=4, batch_size=256, learning_rate=3e-3)
    assert [h["epoch"] for h in history] == [0, 1, 2, 3]
    assert history[-1]["actor_loss"] < history[0]["actor_loss"]
    assert history[-1]["agreement"] > max(0.6, before + 0.3), (before, history[-1])


def test_a_run_with_warm_start_records_it(tmp_path: Path) -> None:
    config = TrainConfig(num_envs=16, n_steps=16, batch_size=256, net_arch=[64, 64], opponents={"counting": 1.0},
                         warm_start="counting", warm_start_samples=20_000, warm_start_epochs=2, advice=None,
                         out_dir=str(tmp_path))  # fmt: skip
    Run(config)
    record = json.loads((tmp_path / "warm_start.json").read_text())
    assert record["teacher"] == "counting" and record["turns"] > 0
    assert [e["epoch"] for e in record["epochs"]] == [0, 1]


def test_an_unknown_teacher_names_the_agents() -> None:
    with pytest.raises(ValueError, match="warm_start='nobody'.*counting"):
        TrainConfig(warm_start="nobody")
