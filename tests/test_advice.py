"""Advised agents (agents/advice.py): the counting player's advice as network inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine, agents
from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.agents.advice import ADVICE_SIZE, CAP, advice, with_advice
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.observation import observe, size
from skyjo_env.sampling import sample_bits, unpack_bits


def positions(players: int, games: int = 64, steps: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the players to act in games after random play."""
    engine = SkyjoEngine(Rules(num_players=players), games, seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    for _ in range(steps):
        bits = engine.legal_bits()
        obs.append(observe(engine, engine.current))
        masks.append(unpack_bits(bits))
        engine.step(sample_bits(bits, rng))
    return np.concatenate(obs), np.concatenate(masks)


@pytest.mark.parametrize("players", [2, 4])
def test_advice_names_the_counting_players_move_with_zero_regret(players: int) -> None:
    obs, masks = positions(players)
    a = advice("counting", obs, masks)
    regret, chosen = a[:, :NUM_ACTIONS], a[:, NUM_ACTIONS:]
    assert a.shape == (len(obs), ADVICE_SIZE) and a.dtype == np.float32
    moves = agents.make("counting")(obs, masks)
    assert np.array_equal(chosen.argmax(axis=1), moves) and np.all(chosen.sum(axis=1) == 1)
    rows = np.arange(len(obs))
    assert np.all(regret[rows, moves] == 0)
    assert np.all((regret >= 0) & (regret <= 1))
    assert np.all(regret[~masks] == 1)  # illegal actions read as the worst
    # Some legal alternatives are priced in between: the regret is graded, not just a one-hot.
    assert np.any(masks & (regret > 0) & (regret < 1))


def test_regret_is_the_cost_gap_in_points_clipped_at_the_cap() -> None:
    obs, masks = positions(2)
    costs = np.where(masks, agents.make("counting").costs(obs), np.inf)
    gap = costs - costs.min(axis=1, keepdims=True)
    regret = advice("counting", obs, masks)[:, :NUM_ACTIONS]
    assert np.allclose(regret[masks], np.minimum(gap[masks], CAP) / CAP, atol=1e-6)


def test_rows_without_a_legal_action_get_no_choice() -> None:
    obs, _ = positions(2, games=4, steps=3)
    a = advice("counting", obs, np.zeros((len(obs), NUM_ACTIONS), dtype=bool))
    assert np.all(a[:, :NUM_ACTIONS] == 1) and np.all(a[:, NUM_ACTIONS:] == 0)


def test_an_unknown_advisor_is_refused_with_the_known_ones() -> None:
    obs, masks = positions(2, games=2, steps=1)
    with pytest.raises(ValueError, match="counting"):
        advice("oracle", obs, masks)
    with pytest.raises(ValueError, match="advice='oracle'"):
        MLPPolicy([(np.zeros((size(2) + ADVICE_SIZE, NUM_ACTIONS)), np.zeros(NUM_ACTIONS))], advice="oracle")


def follow_the_advice(players: int) -> MLPPolicy:
    """A one-layer advised network whose logits are the advice's one-hot: it plays like counting."""
    w = np.zeros((size(players) + ADVICE_SIZE, NUM_ACTIONS), dtype=np.float32)
    w[size(players) + NUM_ACTIONS :] = np.eye(NUM_ACTIONS)
    return MLPPolicy([(w, np.zeros(NUM_ACTIONS))], "relu", "follower", advice="counting", metadata={"players": players})


def test_an_advised_network_reads_the_advice_and_round_trips(tmp_path: Path) -> None:
    obs, masks = positions(3)
    follower = follow_the_advice(3)
    assert follower.obs_size == size(3)
    assert np.array_equal(follower(obs, masks), agents.make("counting")(obs, masks))
    follower.save(tmp_path / "follower.npz")
    again = MLPPolicy.load(tmp_path / "follower.npz")
    assert again.advice == "counting" and np.array_equal(again(obs, masks), follower(obs, masks))
    with pytest.raises(ValueError, match="action masks"):
        follower.logits(obs)
    assert np.array_equal(follower.logits(obs, masks), with_advice("counting", obs, masks)[:, -NUM_ACTIONS:])


def test_an_advised_network_without_room_for_the_advice_is_refused() -> None:
    with pytest.raises(ValueError, match=f"more than {ADVICE_SIZE} inputs"):
        MLPPolicy([(np.zeros((ADVICE_SIZE, NUM_ACTIONS)), np.zeros(NUM_ACTIONS))], advice="counting")


def test_the_advised_vector_env_appends_advice_to_every_observation() -> None:
    pytest.importorskip("stable_baselines3")
    from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv
    from skyjo_env.train.advised_env import AdvisedVecEnv

    inner = SkyjoSB3VecEnv(16, Rules(num_players=2), opponents=agents.make("counting"), seed=2)
    env = AdvisedVecEnv(inner, "counting")
    assert env.observation_space.shape == (size(2) + ADVICE_SIZE,)
    obs = env.reset()
    counting = agents.make("counting")
    ended = 0
    for _ in range(300):
        masks = env.action_masks()
        assert np.array_equal(obs[:, -NUM_ACTIONS:].argmax(axis=1), counting(obs[:, : size(2)], masks))
        assert all(env.observation_space.contains(row) for row in obs)
        obs, _, dones, infos = env.step(obs[:, -NUM_ACTIONS:].argmax(axis=1))  # follow the advice
        for i in np.flatnonzero(dones):
            last = infos[i]["terminal_observation"]
            assert last.shape == (size(2) + ADVICE_SIZE,) and not last[-NUM_ACTIONS:].any()
            ended += 1
    assert ended > 0
