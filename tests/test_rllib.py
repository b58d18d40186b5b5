"""Ray RLlib backend: the EnvRunners' vector env against the sb3 one, the batched EnvRunner, the warm
start, a short run, resuming, and a real two-node Ray cluster.

Runs in a virtual environment with the ``distributed`` extra (``pip install -e ".[distributed,dev]"``);
skipped where Ray is not installed. Every test that starts Ray shuts it down itself, pass or fail.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402
import torch  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from skyjo_env import agents  # noqa: E402
from skyjo_env.actions import NUM_ACTIONS  # noqa: E402
from skyjo_env.evaluation.tournament import run_tournament  # noqa: E402
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv  # noqa: E402
from skyjo_env.train import rllib_ppo  # noqa: E402
from skyjo_env.train.advised_env import AdvisedVecEnv  # noqa: E402
from skyjo_env.train.config import TrainConfig  # noqa: E402
from skyjo_env.train.rllib_env import make_env, observation_space, runner_seed  # noqa: E402
from skyjo_env.train.rllib_runner import SkyjoEnvRunner  # noqa: E402
from skyjo_env.train.runs import evaluate  # noqa: E402

from commands import run as skyjo  # noqa: E402

pytestmark = pytest.mark.timeout(600)

#: A short run of 2 players: small rollouts, a small network, no evaluation on the way.
SHORT = dict(num_envs=32, n_steps=16, batch_size=256, net_arch=[32, 32], eval_every=0, eval_games=40,
             final_games=30, checkpoint_every=0, snapshot_every=2048, warm_start=None)  # fmt: skip


@pytest.fixture
def local_ray():
    """A local Ray with a CPU for each of 2 EnvRunners and the driver; shut down even on failure."""
    ray.init(num_cpus=3, include_dashboard=False, object_store_memory=rllib_ppo.LOCAL_OBJECT_STORE_BYTES)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.parametrize(("players", "win_bonus"), [(2, 0.0), ([2, 3, 5], 0.0), (3, 20.0)])
def test_the_envrunners_env_is_the_sb3_vector_env_with_its_advice_and_the_mask_appended(players, win_bonus):
    """The same games, seeds and actions give the same observations (with counting's advice), legal
    actions and rewards (a win bonus too) through the RLlib path as through the sb3 backend's AdvisedVecEnv."""
    config = TrainConfig(players=players, win_bonus=win_bonus, out_dir="unused")
    N = 24
    rllib_env = make_env({"train_config": config.to_dict(), "num_envs": N})
    sb3_env = AdvisedVecEnv(
        SkyjoSB3VecEnv(N, config.game_rules, reward=config.env_reward, reward_scale=config.reward_scale,
                       seed=runner_seed(config.seed, 0), player_counts=config.player_counts if config.mixed else None),
        "counting", config.game_rules,
    )  # fmt: skip
    assert rllib_env.single_observation_space == observation_space(config)
    obs, _ = rllib_env.reset()
    sb3_env.seed(runner_seed(config.seed, 0))  # as the EnvRunner's env seeds its first reset
    expected = sb3_env.reset()
    teacher = agents.make("random", seed=3)
    ended = 0
    for _ in range(300):
        masks = sb3_env.action_masks()
        np.testing.assert_array_equal(obs[:, :-NUM_ACTIONS], expected)
        np.testing.assert_array_equal(obs[:, -NUM_ACTIONS:], masks)
        actions = teacher(expected, masks)
        obs, rewards, terminated, truncated, info = rllib_env.step(actions)
        expected, sb3_rewards, dones, infos = sb3_env.step(actions)
        np.testing.assert_array_equal(rewards, sb3_rewards)
        np.testing.assert_array_equal(terminated | truncated, dones)
        if dones.any():
            ended += int(dones.sum())
            np.testing.assert_array_equal(info["ended"], np.flatnonzero(dones))
            last = np.stack([infos[g]["terminal_observation"] for g in np.flatnonzero(dones)])
            np.testing.assert_array_equal(info["final_obs"][:, :-NUM_ACTIONS], last)
            assert not info["final_obs"][:, -NUM_ACTIONS:].any()  # a finished game has no legal action
    assert ended > 0


def test_the_batched_envrunner_samples_whole_legal_episodes_with_their_log_probabilities(tmp_path):
    """SkyjoEnvRunner (in this process): every step of every game once, legal actions, log-probabilities
    of RLlib's distribution, ended games terminated with their last observation, open ones continued."""
    config = TrainConfig(**SHORT, rules={"end_score": 20}, out_dir=str(tmp_path))  # short games (R19)
    from ray.tune.registry import register_env

    register_env(rllib_env_name := "skyjo_vector", make_env)
    algo_config = rllib_ppo.build_config(config)
    assert algo_config.env == rllib_env_name
    runner = SkyjoEnvRunner(config=algo_config)
    rollouts = [runner.sample(num_timesteps=32 * 64, explore=True) for _ in range(3)]
    for episodes in rollouts:
        assert sum(len(e) for e in episodes) == 32 * 64
        for e in episodes:
            obs, actions = e.get_observations(), e.get_actions()
            assert obs.shape == (len(e) + 1, observation_space(config).shape[0])
            assert obs[np.arange(len(e)), -NUM_ACTIONS + actions].all()  # every action legal where it was taken
            logits = torch.from_numpy(e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS))
            expected = torch.log_softmax(logits, -1).gather(1, torch.from_numpy(actions)[:, None])[:, 0]
            np.testing.assert_allclose(e.get_extra_model_outputs(Columns.ACTION_LOGP), expected.numpy(), rtol=1e-5)
            if e.is_terminated:
                assert not obs[-1, -NUM_ACTIONS:].any()
    finished = [e for e in rollouts[0] + rollouts[1] if e.is_terminated]
    assert finished, "64-step windows of 32 games to 20 points: some games end"
    continued = {e.id_ for e in rollouts[1]} & {e.id_ for e in rollouts[0] if not e.is_done}
    assert continued  # a game still going on at the end of a rollout goes on in the next one
    first = {e.id_: e for e in rollouts[0]}
    for e in rollouts[1]:
        if e.id_ in first:
            np.testing.assert_array_equal(e.get_observations(0), first[e.id_].get_observations(-1))
            assert e.t_started == first[e.id_].t_started + len(first[e.id_])
    runner.stop()


def test_the_batch_path_computes_the_advantages_of_generalised_advantage_estimation(tmp_path):
    """sample_batch (the backend's loop) and sample (RLlib's contract) play the same rollout from the
    same seeds; the batch's advantages are those of GAE over each episode chunk of it (terminated
    games valued 0 after their end, games that go on bootstrapped from their next observation), and
    its value targets are the advantages plus the critic's values."""
    from ray.tune.registry import register_env

    config = TrainConfig(**SHORT, rules={"end_score": 20}, gamma=0.9, gae_lambda=0.8, out_dir=str(tmp_path))
    register_env("skyjo_vector", make_env)
    runners = []
    for _ in range(2):
        torch.manual_seed(0)  # the same initial networks
        runners.append(SkyjoEnvRunner(config=rllib_ppo.build_config(config)))
    torch.manual_seed(1)
    episodes = runners[0].sample(num_timesteps=32 * 64, explore=True)
    torch.manual_seed(1)
    batch = runners[1].sample_batch(32 * 64)
    np.testing.assert_array_equal(
        np.sort(batch[Columns.ACTIONS]), np.sort(np.concatenate([e.get_actions() for e in episodes]))
    )
    module = runners[0].module
    expected = []
    for e in episodes:
        with torch.no_grad():
            values = module.compute_values({Columns.OBS: torch.from_numpy(e.get_observations())}).numpy()
        if e.is_terminated:
            values[-1] = 0.0
        rewards, running, advantages = e.get_rewards(), 0.0, []
        for t in range(len(e) - 1, -1, -1):
            running = rewards[t] + config.gamma * values[t + 1] - values[t] + config.gamma * config.gae_lambda * running
            advantages.append(running)
        expected.extend(advantages)
    assert any(e.is_terminated for e in episodes)
    np.testing.assert_allclose(np.sort(batch["advantages"]), np.sort(expected), rtol=1e-4, atol=1e-5)
    with torch.no_grad():
        values = module.compute_values({Columns.OBS: torch.from_numpy(batch[Columns.OBS])}).numpy()
    np.testing.assert_allclose(batch["value_targets"] - batch["advantages"], values, rtol=1e-5, atol=1e-5)
    for runner in runners:
        runner.stop()


def test_the_warm_started_module_plays_like_its_teacher_before_ppo(local_ray, tmp_path):
    """The warm start fits the learner's module (the learner and the EnvRunners start from it): its
    greedy play agrees with counting's choice on most turns, and the run says how much."""
    config = TrainConfig(**{**SHORT, "warm_start": "counting", "warm_start_samples": 80_000, "warm_start_epochs": 4,
                            "net_arch": [64, 64]}, out_dir=str(tmp_path))  # fmt: skip
    said: list[str] = []
    run = rllib_ppo.RLlibRun(config, None, overwrite=False, progress=False, say=said.append)
    try:
        assert any("warm start: " in line and "agreement with counting 0.9" in line for line in said), said
        learner = run.algo.learner_group.get_weights([rllib_ppo.DEFAULT_MODULE_ID])[rllib_ppo.DEFAULT_MODULE_ID]
        for name, value in run.module.get_state().items():
            np.testing.assert_array_equal(np.asarray(learner[name]), np.asarray(value))
        agent, counting = run.agent(), agents.make("counting")
        env = make_env({"train_config": config.to_dict(), "num_envs": 200})
        tables = env.unwrapped.games.reset(seed=5)
        masks = env.unwrapped.action_masks()
        assert np.mean(agent(tables, masks) == counting(tables, masks)) > 0.85
        assert json.loads((tmp_path / "warm_start.json").read_text())["teacher"] == "counting"
    finally:
        run.algo.stop()


def test_a_short_run_improves_on_random_and_resumes(local_ray, tmp_path):
    """A short run from scratch against random players beats them more often than at its start, leaves
    the sb3 backend's run folder, and resumes from its checkpoint."""
    config = TrainConfig(**{**SHORT, "total_timesteps": 60_000, "opponents": {"random": 1.0}, "advice": None,
                            "learning_rate": 1e-3, "time_limit_minutes": None}, out_dir=str(tmp_path / "run"))  # fmt: skip
    run = rllib_ppo.RLlibRun(config, None, overwrite=False, progress=False, say=lambda _: None)
    try:
        before = run.agent()
    finally:
        run.algo.stop()
    outcome = rllib_ppo.train(config, overwrite=True, progress=False, say=lambda _: None)
    out = tmp_path / "run"
    for name in (
        "config.json",
        "eval.jsonl",
        "results.json",
        "agent.npz",
        "checkpoint/agent.npz",
        "checkpoint/state.json",
    ):
        assert (out / name).exists(), name
    after = agents.load(out)
    for policy in (before, after):
        policy.greedy, policy.rng = False, np.random.default_rng(0)
    rates = [evaluate(p, config, games=400, seed=1)["random"]["win_rate"] for p in (before, after)]
    assert rates[1] > rates[0] + 0.1, rates
    assert outcome.timesteps >= 60_000 and outcome.final_eval["random"]["win_rate"] > 0.5
    resumed = rllib_ppo.train(TrainConfig(**{**config.to_dict(), "total_timesteps": 70_000}), out / "checkpoint",
                              progress=False, say=lambda _: None)  # fmt: skip
    assert resumed.timesteps >= 70_000 and resumed.run_timesteps < resumed.timesteps


def test_a_run_folder_in_use_is_refused_before_ray_starts(tmp_path):
    from skyjo_env.evaluation.report import claimed_folder

    config = TrainConfig(**SHORT, out_dir=str(tmp_path / "run"))
    with claimed_folder(tmp_path / "run"), pytest.raises(ValueError, match="is in use: another command"):
        rllib_ppo.train(config, progress=False, say=lambda _: None)
    assert not ray.is_initialized() and list((tmp_path / "run").iterdir()) == []


@pytest.fixture
def two_nodes():
    """A real Ray cluster of two nodes on this machine (a head and a worker node, one CPU each, as
    Ray's own tests start them); stopped at the end, pass or fail."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


def test_training_on_a_two_node_cluster_places_envrunners_on_both_and_its_agent_plays(
    two_nodes, tmp_path, capsys, monkeypatch
):
    """``skyjo train --backend rllib --address`` joins the cluster, its two EnvRunners run on the two
    nodes, and the run folder, given by a relative path, plays in a tournament."""
    monkeypatch.chdir(tmp_path)
    code, out, err = skyjo(capsys, "train", "--backend", "rllib", "--address", two_nodes.address, "--env-runners", "2",
                           "--total-timesteps", "4096", "--num-envs", "32", "--n-steps", "16", "--batch-size", "256",
                           "--net-arch", "32", "--warm-start", "none", "--eval-every", "0", "--eval-games", "20",
                           "--final-games", "20", "--snapshot-every", "2048", "--out", "runs/cluster", "--no-progress")  # fmt: skip
    assert code == 0, err
    assert "RLlib: 2 EnvRunners of 32 games on 2 nodes" in out
    assert "head to head" in out and "agent: runs/cluster/agent.npz" in out
    assert not ray.is_initialized()  # the run left the cluster it joined
    result = run_tournament([agents.make("runs/cluster"), agents.make("random", seed=0)], 2, 20, seed=0, progress=False)
    assert result.games == 20
    code, out, err = skyjo(capsys, "tournament", "--agents", "runs/cluster/checkpoint", "counting", "--games", "4",
                           "--out", "runs/t", "--no-progress")  # fmt: skip
    assert code == 0, err


def test_mixed_tables_train_on_rllib_and_are_evaluated_at_every_size(local_ray, tmp_path):
    """``players`` a list: the EnvRunners play every table size on padded observations, the agent
    plays each of them, evaluated at each, as the sb3 backend's mixed tables."""
    config = TrainConfig(**{**SHORT, "players": [2, 3], "total_timesteps": 2048, "eval_opponents": ["random"],
                            "eval_games": 12}, out_dir=str(tmp_path / "mixed"))  # fmt: skip
    outcome = rllib_ppo.train(config, progress=False, say=lambda _: None)
    assert set(outcome.final_eval) == {"random@2p", "random@3p"} and outcome.tournament is None
    agent = agents.load(tmp_path / "mixed")
    assert agent.player_counts == (2, 3)
    for players in (2, 3):
        others = [agents.make("random", seed=k) for k in range(players - 1)]
        assert run_tournament([agent, *others], players, players * 2, seed=0, progress=False).games == players * 2
