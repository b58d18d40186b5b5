"""PPO training: learning, checkpoints and resuming, corrupt checkpoints, shipped agents."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from skyjo_env import agents  # noqa: E402
from skyjo_env.actions import NUM_ACTIONS  # noqa: E402
from skyjo_env.agents.mlp_policy import MLPPolicy  # noqa: E402
from skyjo_env.agents.pretrained import available, load  # noqa: E402
from skyjo_env.evaluation.tournament import run_tournament  # noqa: E402
from skyjo_env.observation import PADDED_SIZE, size  # noqa: E402
from skyjo_env.train.config import TrainConfig  # noqa: E402
from skyjo_env.train.ppo import Run, train  # noqa: E402
from skyjo_env.train.runs import agent_policy, evaluate  # noqa: E402


def small_config(out: Path, **overrides) -> TrainConfig:
    options = dict(
        learning_rate_schedule="constant",
        total_timesteps=4096, num_envs=32, n_steps=32, batch_size=256, net_arch=[32, 32],
        opponents={"random": 0.5, "self": 0.5}, snapshot_every=2048, eval_every=0, eval_games=20,
        eval_opponents=["random"], checkpoint_every=0, warm_start=None, advice=None, out_dir=str(out),
        overlap=False,  # updates in turn: no update process per test (tests/test_overlap.py has the overlapped path)
    )  # fmt: skip
    options.update(overrides)
    return TrainConfig(**options)


@pytest.mark.parametrize("overlap", [True, False], ids=["overlapped", "in-turn"])
def test_short_training_improves_the_win_rate_against_random(tmp_path: Path, overlap: bool) -> None:
    config = small_config(tmp_path, total_timesteps=60_000, num_envs=64, batch_size=512, net_arch=[64, 64],
                          opponents={"random": 1.0}, learning_rate=1e-3, overlap=overlap)  # fmt: skip
    run = Run(config)

    def win_rate() -> float:
        policy = agent_policy(run.policy, config, run.model.num_timesteps)
        policy.greedy, policy.rng = False, np.random.default_rng(0)  # the policy as trained: sampling
        return evaluate(policy, config, games=400, seed=1)["random"]["win_rate"]

    before = win_rate()
    run.learn()
    after = win_rate()
    assert after > before + 0.15, (before, after)


def test_train_limits_threads_while_it_runs_and_restores_them(tmp_path: Path) -> None:
    """A notebook that calls train() keeps its own torch and BLAS threads afterwards."""
    import torch
    from threadpoolctl import threadpool_info

    from skyjo_env.train import runs

    seen = []
    original = runs.warm_start

    def spy(*args, **kwargs):  # inside the run
        seen.append((torch.get_num_threads(), [p["num_threads"] for p in threadpool_info()]))
        return original(*args, **kwargs)

    before = (torch.get_num_threads(), [p["num_threads"] for p in threadpool_info()])
    torch.set_num_threads(2)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("skyjo_env.train.driver.warm_start", spy)
            train(small_config(tmp_path, final_games=8, warm_start="counting", warm_start_samples=2048,
                               warm_start_epochs=1), progress=False, say=lambda _: None)  # fmt: skip
        assert seen and seen[0][0] == 1 and all(n == 1 for n in seen[0][1])
        assert torch.get_num_threads() == 2
        assert [p["num_threads"] for p in threadpool_info()] == before[1]
    finally:
        torch.set_num_threads(before[0])


def test_train_writes_the_agent_results_and_a_checkpoint(tmp_path: Path) -> None:
    outcome = train(small_config(tmp_path, final_games=8), progress=False)
    assert outcome.timesteps >= 4096
    # A trained agent is named after its run folder, never after a shipped agent (ppo-2p).
    assert outcome.agent_name == tmp_path.name and {a.name for a in outcome.tournament.agents} == {
        tmp_path.name,
        "random",
    }
    agent = MLPPolicy.load(outcome.agent_path)
    assert agent.metadata["players"] == 2 and agent.metadata["timesteps"] == outcome.timesteps
    for name in ("model.zip", "config.json", "state.json", "pool/pool.json"):
        assert (tmp_path / "checkpoint" / name).is_file(), name
    results = json.loads((tmp_path / "results.json").read_text())
    assert set(results) == {"final_eval", "tournament"}
    assert (tmp_path / "eval.jsonl").read_text().count("\n") == 1


def test_resuming_continues_steps_optimiser_and_pool(tmp_path: Path) -> None:
    first = Run(small_config(tmp_path))
    first.learn()
    steps = first.model.num_timesteps
    pool = [s.name for s in first.pool.snapshots]
    optimiser = first.model.policy.optimizer.state_dict()["state"]
    resumed = Run(small_config(tmp_path, total_timesteps=8192), resume=tmp_path / "checkpoint")
    assert resumed.model.num_timesteps == steps
    assert [s.name for s in resumed.pool.snapshots] == pool
    restored = resumed.model.policy.optimizer.state_dict()["state"]
    assert all(np.allclose(restored[k]["exp_avg"], optimiser[k]["exp_avg"]) for k in optimiser)
    resumed.learn()
    assert resumed.model.num_timesteps >= 8192
    assert len(resumed.pool.snapshots) > len(pool)  # snapshots go on being taken


def test_resuming_applies_the_configs_ppo_settings(tmp_path: Path) -> None:
    Run(small_config(tmp_path)).learn()
    resumed = Run(small_config(tmp_path, total_timesteps=6144, learning_rate=1e-5, ent_coef=0.0, n_epochs=2),
                  resume=tmp_path / "checkpoint")  # fmt: skip
    assert (resumed.model.ent_coef, resumed.model.n_epochs) == (0.0, 2)
    resumed.learn()
    assert resumed.model.policy.optimizer.param_groups[0]["lr"] == pytest.approx(1e-5)


def test_an_advised_run_clones_its_teacher_and_exports_an_advised_agent(tmp_path: Path) -> None:
    # agents/advice.py: the networks read the counting player's advice; cloning it is quick.
    config = small_config(tmp_path, advice="counting", warm_start="counting", warm_start_samples=30_000,
                          warm_start_epochs=8, final_games=8)  # fmt: skip
    outcome = train(config, progress=False)
    warm = json.loads((tmp_path / "warm_start.json").read_text())
    assert warm["epochs"][-1]["agreement"] > 0.9  # without the advice: about 0.67
    agent = MLPPolicy.load(outcome.agent_path)
    assert agent.advice == "counting" and agent.obs_size == size(2)
    pool = Run(config, resume=tmp_path / "checkpoint").pool.snapshots
    assert pool and all(s.advice == "counting" for s in pool)


def test_a_time_limit_stops_learning_early(tmp_path: Path) -> None:
    run = Run(small_config(tmp_path, total_timesteps=10_000_000, time_limit_minutes=0.05))
    run.learn()
    assert run.model.num_timesteps < 10_000_000


@pytest.mark.parametrize("damage", ["missing", "garbage", "truncated"])
def test_a_corrupt_checkpoint_gives_a_clear_error(tmp_path: Path, damage: str) -> None:
    run = Run(small_config(tmp_path / "run"))
    run.save_checkpoint(0)
    model = tmp_path / "run" / "checkpoint" / "model.zip"
    if damage == "missing":
        model.unlink()
    elif damage == "garbage":
        model.write_bytes(b"not a zip file")
    else:
        model.write_bytes(model.read_bytes()[:200])
    with pytest.raises(ValueError, match="checkpoint"):
        Run(small_config(tmp_path / "run"), resume=tmp_path / "run" / "checkpoint")


def test_a_corrupt_policy_file_gives_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "agent.npz"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match="cannot read policy file"):
        MLPPolicy.load(bad)


def test_config_rejects_bad_values_with_the_field_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="players"):
        TrainConfig(players=9)
    with pytest.raises(ValueError, match="opponents"):
        TrainConfig(opponents={"counting": -1.0})
    with pytest.raises(ValueError, match="unknown config field"):
        TrainConfig.from_dict({"plyers": 2})
    with pytest.raises(ValueError, match="advice"):
        TrainConfig(advice="oracle")
    for name, value in (("reward_scale", 0.0), ("learning_rate", -1e-4), ("clip_range", 0.0), ("ent_coef", -0.1),
                        ("gamma", 1.5), ("gae_lambda", -0.5), ("warm_start_temperature", -1.0)):  # fmt: skip
        with pytest.raises(ValueError, match=name):
            TrainConfig(**{name: value})
    for value in (-1.0, float("inf")):
        with pytest.raises(ValueError, match="win_bonus"):
            TrainConfig(win_bonus=value)
    with pytest.raises(ValueError, match="win_bonus needs reward 'score' or 'lead'"):
        TrainConfig(reward="result", reward_scale=1.0, win_bonus=20.0)
    with pytest.raises(ValueError, match="unknown opponent"):
        Run(small_config(tmp_path, opponents={"grandmaster": 1.0}))


def test_a_win_bonus_adds_the_result_reward_to_the_runs_reward() -> None:
    assert TrainConfig().env_reward == "score"
    assert TrainConfig(reward="lead", win_bonus=20.0).env_reward == {"lead": 1.0, "result": 20.0}


@pytest.mark.skipif(not available(), reason="no shipped agents in agents/pretrained")
@pytest.mark.parametrize("name", available())
def test_every_shipped_agent_loads_and_plays_legal_moves(name: str) -> None:
    agent = load(name)
    players = agent.players  # the table size it sits at by default: its only one, or a mixed network's first
    assert players in agent.player_counts
    assert agent.obs_size == (PADDED_SIZE if agent.padded else size(players))
    assert name in agents.names() and agents.make(name).obs_size == agent.obs_size
    for other in set(range(2, 9)) - set(agent.player_counts):  # a table size it was not trained for
        with pytest.raises(ValueError, match=f"players.*; this table has {other}"):
            agents.make(name, players=other)
    randoms = [agents.make("random", seed=i) for i in range(players - 1)]
    result = run_tournament([agent, *randoms], players, 20, seed=0, progress=False)
    assert result.by_name(agent.name).win_rate > 0.5  # every shipped agent beats random players


def test_unknown_shipped_agent_names_the_shipped_ones() -> None:
    with pytest.raises(ValueError, match="no shipped agent named 'ppo-99p'"):
        load("ppo-99p")


def test_mlp_policy_masks_illegal_actions_and_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    weights = [
        (rng.normal(size=(size(2), 8)), rng.normal(size=8)),
        (rng.normal(size=(8, NUM_ACTIONS)), rng.normal(size=NUM_ACTIONS)),
    ]
    policy = MLPPolicy(weights, "tanh", "tiny", metadata={"players": 2})
    obs = rng.random((50, size(2)), dtype=np.float32)
    masks = rng.random((50, NUM_ACTIONS)) < 0.3
    masks[:, 0] = True
    for greedy in (True, False):
        policy.greedy = greedy
        actions = policy(obs, masks)
        assert masks[np.arange(50), actions].all()
    policy.greedy = True
    policy.save(tmp_path / "tiny.npz")
    again = MLPPolicy.load(tmp_path / "tiny.npz")
    assert again.name == "tiny" and again.metadata == {"players": 2}
    assert np.array_equal(again(obs, masks), policy(obs, masks))


def test_expected_lead_counts_face_up_cards_and_prices_face_down_ones() -> None:
    from skyjo_env import Rules, SkyjoEngine
    from skyjo_env.cards import DECK, VALUES
    from skyjo_env.observation import observe
    from skyjo_env.train.shaping import expected_lead

    engine = SkyjoEngine(Rules(), 1, seed=0)
    engine.deal_from(0, [DECK[::-1]])  # seat 0 is dealt ten 12s then two 11s, seat 1 eight 11s then four 10s
    for slot in (0, 1, 10, 11):  # setup flips (R5): seat 0 shows 12 and 12, seat 1 shows 10 and 10
        engine.step(np.array([14 + slot]))
    unseen = engine.unseen[0]  # public counts: the draw pile and both grids' face-down cards
    hidden_mean = (unseen * VALUES).sum() / unseen.sum()
    own, other = 24 + 10 * hidden_mean, 20 + 10 * hidden_mean
    assert expected_lead(observe(engine, 0), 2)[0] == pytest.approx(other - own, rel=1e-5)
    assert expected_lead(observe(engine, 1), 2)[0] == pytest.approx(own - other, rel=1e-5)


def test_shaping_terms_telescope_over_a_game() -> None:
    from skyjo_env.sampling import sample_mask
    from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv
    from skyjo_env.train.shaping import ShapedReward, expected_lead

    plain = SkyjoSB3VecEnv(1, reward="score", reward_scale=0.1, seed=4)
    shaped = ShapedReward(SkyjoSB3VecEnv(1, reward="score", reward_scale=0.1, seed=4), players=2, gamma=1.0, scale=0.1)
    first = shaped.reset()
    plain.reset()
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    total_plain = total_shaped = 0.0
    done = False
    while not done:
        _, r_plain, _, _ = plain.step(sample_mask(plain.action_masks(), rng_a))
        _, r_shaped, d, _ = shaped.step(sample_mask(shaped.action_masks(), rng_b))
        total_plain += float(r_plain[0])
        total_shaped += float(r_shaped[0])
        done = bool(d[0])
    # With gamma = 1 the shaping terms sum to -phi(first state): the game's return moves by a constant.
    assert total_shaped == pytest.approx(total_plain - 0.1 * float(expected_lead(first, 2)[0]), abs=1e-3)


def test_a_linear_schedule_lowers_the_learning_rate_with_the_steps_left(tmp_path: Path) -> None:
    run = Run(small_config(tmp_path, total_timesteps=8192, learning_rate=1e-3, learning_rate_schedule="linear"))
    run.learn()
    # SB3 sets the rate before each update, from the steps done when its rollout ends.
    assert run.model.policy.optimizer.param_groups[0]["lr"] == pytest.approx(
        1e-3 * (1 - run.model.num_timesteps / 8192), abs=1e-9
    )
    resumed = Run(small_config(tmp_path, total_timesteps=16384, learning_rate=1e-3, learning_rate_schedule="linear"),
                  resume=tmp_path / "checkpoint")  # fmt: skip
    assert resumed.model.lr_schedule(0.25) == pytest.approx(2.5e-4)  # the config's schedule, on the new total


def test_networks_of_one_batch_key_played_together_choose_as_each_alone() -> None:
    """opponents.play_policies calls self-play snapshots (one batch key) at once: the advice is
    computed once for all their rows, and every row gets the action its own network would choose."""
    from skyjo_env import Rules, SkyjoEngine
    from skyjo_env.observation import observe
    from skyjo_env.sampling import sample_mask

    engine = SkyjoEngine(Rules(), 120, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        engine.step(sample_mask(engine.legal_mask(), rng))
    observations, masks = observe(engine, engine.current), engine.legal_mask()
    networks = [agents.make("ppo-2p", seed=i) for i in range(3)]
    networks[1].greedy = False  # a sampling network draws from its own generator, as alone
    assert len({n.batch_key for n in networks}) == 1
    which = rng.integers(3, size=120)
    together = MLPPolicy.play_together(networks, observations, masks, which)
    alone = [agents.make("ppo-2p", seed=i) for i in range(3)]
    alone[1].greedy = False
    expected = np.empty(120, dtype=np.int64)
    for j, network in enumerate(alone):
        rows = np.flatnonzero(which == j)
        expected[rows] = network(observations[rows], masks[rows])
    assert np.array_equal(together, expected)


def test_two_update_threads_train_the_same_network_as_one(tmp_path: Path) -> None:
    """update_threads changes only how torch splits the update's sums: one rollout and its update
    give the same weights to float32 rounding (the rollouts themselves use one thread either way)."""
    weights = []
    for threads in (1, 2):
        run = Run(
            small_config(tmp_path / str(threads), total_timesteps=1024, update_threads=threads, precision="float32")
        )
        run.learn()
        weights.append([p.detach().numpy().copy() for p in run.model.policy.parameters()])
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(*weights))


def test_short_mixed_table_training_improves_on_random_at_every_count(tmp_path: Path) -> None:
    """skyjo train --players 2-8: one network, one batch of games at every count, evaluated per count;
    after a short run it beats random players at every count (its whole 95% interval above 1/P)."""
    config = small_config(tmp_path, players=list(range(2, 9)), total_timesteps=80_000, num_envs=70, batch_size=700,
                          net_arch=[64, 64], opponents={"random": 1.0}, learning_rate=1e-3)  # fmt: skip
    run = Run(config)

    def figures() -> dict[str, dict[str, float]]:
        policy = agent_policy(run.policy, config, run.model.num_timesteps)
        policy.greedy, policy.rng = False, np.random.default_rng(0)
        return evaluate(policy, config, games=560, seed=1)

    before = figures()
    run.learn()
    after = figures()
    assert list(after) == [f"random@{p}p" for p in range(2, 9)]
    gains = {k: round(after[k]["win_rate"] - before[k]["win_rate"], 3) for k in after}
    above = {k: round(after[k]["win_ci_low"] - 1 / p, 3) for k, p in zip(after, range(2, 9))}
    assert all(gain > 0 for gain in gains.values()) and all(margin > 0 for margin in above.values()), (gains, above)
