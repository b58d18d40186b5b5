"""Ray RLlib backend: masked RLModule, self-play PPO on a local Ray, checkpoint played in a tournament.

Runs in a virtual environment with the ``distributed`` extra (``pip install -e ".[distributed,dev]"``);
skipped where Ray is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import gymnasium as gym  # noqa: E402
import ray  # noqa: E402
import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from skyjo_env.actions import NUM_ACTIONS  # noqa: E402
from skyjo_env.agents.rllib_agent import RLlibPolicy, module_path  # noqa: E402
from skyjo_env.pettingzoo_env import raw_env  # noqa: E402
from skyjo_env.random_policy import RandomPolicy  # noqa: E402
from skyjo_env.train import rllib_ppo  # noqa: E402
from skyjo_env.train.rllib_module import MAIN, MASKED_LOGIT, MaskedActorCritic  # noqa: E402
from skyjo_env.train.tournament import run_tournament  # noqa: E402

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray with a CPU for each of 2 EnvRunners and the driver; shut down even on failure."""
    ray.init(num_cpus=3, include_dashboard=False, object_store_memory=rllib_ppo.LOCAL_OBJECT_STORE_BYTES)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def trained(local_ray, tmp_path_factory) -> Path:
    """Output folder of a 2-iteration frozen-opponent run with 2 EnvRunners and tiny batches."""
    out = tmp_path_factory.mktemp("rllib") / "run"
    assert rllib_ppo.main(
        ["--players", "2", "--iterations", "2", "--env-runners", "2", "--envs-per-runner", "2",
         "--train-batch-size", "256", "--batch-size", "64", "--n-epochs", "1", "--net-arch", "32",
         "--self-play", "frozen", "--sync-every", "1", "--checkpoint-frequency", "0", "--out", str(out)]
    ) == 0  # fmt: skip
    return out


def skyjo_module(players: int = 2) -> MaskedActorCritic:
    space = raw_env(num_players=players).observation_space("player_0")
    return MaskedActorCritic(
        observation_space=space, action_space=gym.spaces.Discrete(NUM_ACTIONS), model_config={"hidden": [16]}
    )


def test_module_masks_illegal_actions_in_every_forward_pass():
    module = skyjo_module()
    rng = np.random.default_rng(0)
    obs = torch.from_numpy(rng.random((64, module.observation_space["observation"].shape[0]), dtype=np.float32))
    mask = rng.random((64, NUM_ACTIONS)) < 0.3
    mask[:, 0] = True
    mask[-1] = False  # an agent that is not to act: all-zero mask
    batch = {Columns.OBS: {"observation": obs, "action_mask": torch.from_numpy(mask.astype(np.int8))}}
    for forward in (module.forward_inference, module.forward_exploration, module.forward_train):
        logits = forward(batch)[Columns.ACTION_DIST_INPUTS].detach()
        assert torch.all(logits[torch.from_numpy(~mask)] == MASKED_LOGIT)
        assert torch.all(logits[torch.from_numpy(mask)] > MASKED_LOGIT / 2)
    dist = module.get_exploration_action_dist_cls().from_logits(logits)
    actions = dist.sample().numpy()
    assert mask[np.arange(63), actions[:63]].all()
    assert torch.isfinite(dist.logp(torch.from_numpy(actions))).all() and torch.isfinite(dist.entropy()).all()
    assert module.compute_values(batch).shape == (64,)


def test_module_rejects_an_observation_without_mask():
    with pytest.raises(ValueError, match="Dict observation space"):
        MaskedActorCritic(observation_space=gym.spaces.Box(0, 1, (10,)), action_space=gym.spaces.Discrete(NUM_ACTIONS))


def test_frozen_mapping_gives_main_exactly_one_seat_per_game():
    seats = []
    for i in range(200):
        episode = SimpleNamespace(id_=f"{i:032x}")
        ids = [rllib_ppo.frozen_mapping(f"player_{s}", episode, players=3) for s in range(3)]
        assert sorted(ids) == [rllib_ppo.FROZEN, rllib_ppo.FROZEN, MAIN]
        seats.append(ids.index(MAIN))
    assert set(seats) == {0, 1, 2}


def test_bad_checkpoint_paths_give_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        RLlibPolicy(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="is not an RLlib checkpoint"):
        RLlibPolicy(tmp_path)


def test_training_iterations_on_two_env_runners(trained):
    rows = [json.loads(line) for line in (trained / "progress.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert rows[0]["env_steps"] >= 256 and rows[1]["env_steps"] >= rows[0]["env_steps"] + 256
    assert all(r["healthy_env_runners"] == 2 and r["env_runner_restarts"] == 0 for r in rows)
    assert all(np.isfinite(r["policy_loss"]) and np.isfinite(r["vf_loss"]) for r in rows)
    assert json.loads((trained / "config.json").read_text())["self_play"] == "frozen"
    assert module_path(trained) == trained / "checkpoint" / "learner_group" / "learner" / "rl_module" / MAIN


def test_frozen_copy_holds_the_final_weights_of_main(trained):
    main, frozen = RLlibPolicy(trained), RLlibPolicy(trained, module_id=rllib_ppo.FROZEN)
    for a, b in zip(main.module.state_dict().values(), frozen.module.state_dict().values()):
        assert torch.equal(a, b)
    with pytest.raises(FileNotFoundError, match="no RLModule 'nobody'.*'frozen', 'main'"):
        RLlibPolicy(trained, module_id="nobody")


def test_checkpoint_plays_a_tournament_against_random(trained):
    greedy = RLlibPolicy(trained, name="rllib")
    sampled = RLlibPolicy(trained, name="rllib-sampled", greedy=False, seed=1)
    result = run_tournament([greedy, sampled, RandomPolicy(seed=0)], players=2, games=12, seed=0, progress=False)
    # run_tournament raises on any illegal action, so finishing proves both modes play legally.
    assert result.games == 12
    assert [a.name for a in result.agents] == ["rllib", "rllib-sampled", "random"]
    assert all(a.seats == 8 and a.rounds > 0 for a in result.agents)
    with pytest.raises(ValueError, match="trained for another player count"):
        greedy(np.zeros((1, 10), np.float32), np.ones((1, NUM_ACTIONS), bool))
