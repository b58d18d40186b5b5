"""Warm start by behaviour cloning (train/imitation.py): demonstrations, cloning, the run option."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("sb3_contrib")

from skyjo_env import agents  # noqa: E402
from skyjo_env.rules import Rules  # noqa: E402
from skyjo_env.train.config import TrainConfig  # noqa: E402
from skyjo_env.train.imitation import agreement, clone, collect, soft_targets  # noqa: E402
from skyjo_env.train.ppo import Run  # noqa: E402


@pytest.fixture(scope="module")
def demos():
    return collect(agents.make("counting"), Rules(num_players=2), 64 * 400, num_envs=64, seed=3)


@pytest.fixture(scope="module")
def softened():
    return collect(agents.make("counting"), Rules(num_players=2), 64 * 400, num_envs=64, temperature=1.0, seed=3)


def test_demonstrations_are_the_teachers_legal_moves(demos) -> None:
    assert 0 < len(demos) <= 64 * 400
    assert demos.masks[np.arange(len(demos)), demos.actions].all()
    assert np.array_equal(agents.make("counting")(demos.observations, demos.masks), demos.actions)
    one_hot = np.zeros_like(demos.targets)
    one_hot[np.arange(len(demos)), demos.actions] = 1.0
    assert np.array_equal(demos.targets, one_hot)  # temperature 0: the teacher's choices


def test_soft_targets_are_a_boltzmann_policy_over_the_legal_actions() -> None:
    costs = np.array([[1.0, 3.0, 1.0, 0.0, np.inf], [5.0, 2.0, 7.0, 9.0, 2.0]], dtype=np.float32)
    masks = np.array([[True, True, True, False, False], [False, True, True, True, True]])
    targets = soft_targets(costs, masks, temperature=2.0)
    assert np.allclose(targets.sum(axis=1), 1.0) and (targets[~masks] == 0).all()
    # Each legal action's weight is exp(-cost / T): the illegal action of cost 0 counts for nothing.
    assert targets[0, 0] == targets[0, 2] and np.isclose(targets[0, 1] / targets[0, 0], np.exp(-1.0))
    assert targets[1, 1] == targets[1, 4] == targets[1].max()
    assert np.isclose(targets[1, 3] / targets[1, 2], np.exp(-1.0))
    cooler = soft_targets(costs, masks, temperature=0.5)
    assert cooler[0, 1] < targets[0, 1]  # a lower temperature: closer to the teacher's choice


def test_a_softened_teacher_plays_as_before_and_is_learnt_as_its_boltzmann_policy(demos, softened) -> None:
    teacher = agents.make("counting")
    assert np.array_equal(softened.actions, demos.actions) and np.array_equal(softened.observations, demos.observations)
    expected = soft_targets(teacher.costs(softened.observations), softened.masks, 1.0)
    assert np.array_equal(softened.targets, expected)
    # The teacher's choice is always among the targets' favourites, and many turns leave others some weight.
    rows = np.arange(len(softened))
    assert (softened.targets[rows, softened.actions] == softened.targets.max(axis=1)).all()
    assert np.mean(softened.targets.max(axis=1) < 0.9) > 0.3


def test_a_network_teacher_is_learnt_as_its_own_action_probabilities() -> None:
    """At temperature 1 a network's softened targets are its own policy: the softmax of its logits over
    the legal actions; it plays its greedy choice, as it does alone."""
    teacher = agents.make("ppo-2p")
    demos = collect(teacher, Rules(num_players=2), 32 * 400, num_envs=32, temperature=1.0, seed=2)
    assert np.array_equal(demos.actions, teacher(demos.observations, demos.masks))
    logits = np.where(demos.masks, teacher.logits(demos.observations, demos.masks).astype(np.float64), -np.inf)
    own = np.exp(logits - logits.max(axis=1, keepdims=True))
    assert np.allclose(demos.targets, own / own.sum(axis=1, keepdims=True), atol=1e-6)
    assert (demos.targets[~demos.masks] == 0).all() and np.mean(demos.targets.max(axis=1) < 0.9) > 0.05
    hard = collect(teacher, Rules(num_players=2), 32 * 400, num_envs=32, temperature=0.0, seed=2)
    assert np.array_equal(hard.actions, demos.actions) and (hard.targets.max(axis=1) == 1).all()


def test_a_teacher_that_does_not_price_its_actions_is_cloned_from_its_choices() -> None:
    demos = collect(agents.make("threshold"), Rules(num_players=2), 32 * 100, num_envs=32, temperature=1.0, seed=1)
    assert np.array_equal(demos.targets.argmax(axis=1), demos.actions) and (demos.targets.max(axis=1) == 1).all()
    with pytest.raises(ValueError, match="temperature=-1"):
        collect(agents.make("counting"), Rules(num_players=2), 3200, num_envs=32, temperature=-1.0)


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


def test_a_softened_clone_keeps_the_teachers_favourites_and_more_entropy(tmp_path: Path, demos, softened) -> None:
    config = TrainConfig(num_envs=16, n_steps=16, batch_size=256, net_arch=[64, 64], opponents={"random": 1.0},
                         warm_start=None, advice=None, out_dir=str(tmp_path))  # fmt: skip
    entropies = []
    for taught in (demos, softened):
        policy = Run(config, overwrite=True).model.policy
        history = clone(policy, taught, epochs=4, batch_size=256, learning_rate=3e-3)
        assert history[-1]["agreement"] > 0.6  # the actor's favourite is one of the teacher's favourites
        with torch.no_grad():
            _, log_probs = policy.values_and_log_probs(torch.as_tensor(taught.observations), taught.masks)
        probs = log_probs.exp().numpy() * taught.masks
        entropies.append(float(-(probs * np.where(taught.masks, log_probs.numpy(), 0)).sum(axis=1).mean()))
    target_entropy = (
        -(softened.targets * np.log(np.where(softened.targets > 0, softened.targets, 1))).sum(axis=1).mean()
    )
    assert entropies[1] > entropies[0] + 0.2 and entropies[1] > 0.5 * target_entropy, (entropies, target_entropy)


def test_a_run_with_warm_start_records_it(tmp_path: Path) -> None:
    config = TrainConfig(num_envs=16, n_steps=16, batch_size=256, net_arch=[64, 64], opponents={"counting": 1.0},
                         warm_start="counting", warm_start_samples=20_000, warm_start_epochs=2, advice=None,
                         out_dir=str(tmp_path))  # fmt: skip
    Run(config)
    record = json.loads((tmp_path / "warm_start.json").read_text())
    assert record["teacher"] == "counting" and record["turns"] > 0
    assert record["temperature"] == config.warm_start_temperature == 1.0  # counting prices its actions
    assert [e["epoch"] for e in record["epochs"]] == [0, 1]


def test_an_unknown_teacher_names_the_agents() -> None:
    with pytest.raises(ValueError, match="warm_start='nobody'.*counting"):
        TrainConfig(warm_start="nobody")
