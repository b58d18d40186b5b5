"""Mixed tables: padded observations in every view, games of several player counts in one batch,
advice and networks that play every count they were trained for."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.agents import specs
from skyjo_env.agents.advice import ADVICE_SIZE, advice
from skyjo_env.agents.counting import CountingPolicy
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.gymnasium_env import SkyjoEnv
from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
from skyjo_env.mixed_games import MixedLearnerGames
from skyjo_env.observation import PADDED_SIZE, observe, pad, padded_players, size, unpad
from skyjo_env.pettingzoo_env import raw_env
from skyjo_env.random_policy import RandomPolicy
from skyjo_env.sampling import sample_bits, sample_mask


def random_actions(games, rng: np.random.Generator) -> np.ndarray:
    return sample_bits(games.legal_bits(), rng)


def test_games_are_split_among_the_counts_and_observed_padded():
    games = MixedLearnerGames(10, None, [5, 2, 8], seed=0, reward="score")
    assert games.player_counts == (2, 5, 8)
    assert [part.num_games for part in games.parts] == [4, 3, 3]
    assert games.players.tolist() == [2] * 4 + [5] * 3 + [8] * 3
    obs = games.reset()
    assert obs.shape == (10, PADDED_SIZE)
    np.testing.assert_array_equal(padded_players(obs), games.players)
    rng = np.random.default_rng(1)
    ended_games = 0
    for _ in range(400):
        obs, rewards, dones, ended = games.step(random_actions(games, rng))
        np.testing.assert_array_equal(padded_players(obs), games.players)
        for part, start in zip(games.parts, games.offsets):
            rows = slice(start, start + part.num_games)
            np.testing.assert_array_equal(unpad(obs[rows], part.rules.num_players), observe(part.engine, part.seats))
        if ended is not None:
            np.testing.assert_array_equal(np.flatnonzero(dones), ended.games)
            np.testing.assert_array_equal(padded_players(ended.observations), games.players[ended.games])
            assert ended.totals.shape == (len(ended.games), 8)
            for i, g in enumerate(ended.games):  # no totals past a game's own seats
                assert not ended.totals[i, games.players[g] :].any()
            ended_games += len(ended.games)
    assert ended_games >= 10


def test_the_same_seed_gives_the_same_games():
    def run(seed: int) -> list[np.ndarray]:
        games = MixedLearnerGames(6, None, [3, 4], seed=seed, opponents=CountingPolicy, reward="score")
        rng = np.random.default_rng(0)
        out = [games.reset()]
        for _ in range(60):
            obs, rewards, _, _ = games.step(random_actions(games, rng))
            out += [obs, rewards]
        return out

    first, again, other = run(3), run(3), run(4)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_bad_mixed_options_are_named():
    with pytest.raises(ValueError, match="distinct counts from 2 to 8"):
        MixedLearnerGames(8, None, [2, 9])
    with pytest.raises(ValueError, match="distinct counts from 2 to 8"):
        MixedLearnerGames(8, None, [3, 3])
    with pytest.raises(ValueError, match="non-empty list of integers"):
        MixedLearnerGames(8, None, [])
    with pytest.raises(ValueError, match=r"at least one game per player count \(3\)"):
        MixedLearnerGames(2, None, [2, 3, 4])
    with pytest.raises(ValueError, match="'seat' is not an option of mixed tables"):
        MixedLearnerGames(4, None, [2, 3], seat=0)
    games = MixedLearnerGames(4, None, [2, 3], seed=0)
    games.reset()
    actions = random_actions(games, np.random.default_rng(0))
    actions[3] = 99
    with pytest.raises(ValueError, match=r"illegal action 99 for the learner in game 3 \(3 players, seat \d\)"):
        games.step(actions)


def test_sb3_view_of_mixed_tables():
    pytest.importorskip("stable_baselines3")
    from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv

    env = SkyjoSB3VecEnv(6, player_counts=[2, 6], opponents=CountingPolicy, seed=0, reward="score")
    obs = env.reset()
    assert env.observation_space.shape == (PADDED_SIZE,) and env.obs_type == "padded"
    rng = np.random.default_rng(0)
    terminal = 0
    for _ in range(300):
        assert all(env.observation_space.contains(row) for row in obs)
        obs, _, dones, infos = env.step(sample_bits(env.games.legal_bits(), rng))
        for i in np.flatnonzero(dones):
            assert env.observation_space.contains(infos[i]["terminal_observation"])
            terminal += 1
    assert terminal > 0
    with pytest.raises(ValueError, match="padded observations and random seats"):
        SkyjoSB3VecEnv(4, player_counts=[2, 3], obs_type="table")
    with pytest.raises(AttributeError, match="one engine per player count"):
        _ = env.engine


def test_gymnasium_vector_view_of_mixed_tables():
    env = SkyjoVectorEnv(6, player_counts=[3, 7], opponents=CountingPolicy, reward="score")
    obs, infos = env.reset(seed=0)
    assert env.single_observation_space.shape == (PADDED_SIZE,) and obs.shape == (6, PADDED_SIZE)
    assert padded_players(obs).tolist() == [3, 3, 3, 7, 7, 7]
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(300):
        assert env.observation_space.contains(obs)
        obs, _, terminated, truncated, infos = env.step(sample_mask(infos["action_mask"], rng))
        for i in np.flatnonzero(terminated | truncated):
            assert env.single_observation_space.contains(infos["final_obs"][i])
            finished += 1
    assert finished > 0
    with pytest.raises(
        ValueError, match="padded observations and random seats: leave out obs_type='table' and seat=None"
    ):
        SkyjoVectorEnv(4, player_counts=[2, 3], obs_type="table")


@pytest.mark.parametrize("num_players", [2, 3, 8])
def test_every_view_offers_padded_observations(num_players):
    """obs_type='padded' gives the table observation padded, in a space shared by every count."""
    gym_env = SkyjoEnv(num_players=num_players, obs_type="padded", seed=0)
    check_env(gym_env, skip_render_check=True)
    obs, _ = gym_env.reset(seed=1)
    table = SkyjoEnv(num_players=num_players)
    assert obs.shape == (PADDED_SIZE,) and gym_env.observation_space == SkyjoEnv(obs_type="padded").observation_space
    np.testing.assert_array_equal(unpad(obs[None], num_players)[0], table.reset(seed=1)[0])

    vector = SkyjoVectorEnv(3, num_players=num_players, obs_type="padded")
    obs, _ = vector.reset(seed=2)
    np.testing.assert_array_equal(obs, pad(SkyjoVectorEnv(3, num_players=num_players).reset(seed=2)[0], num_players))

    aec = raw_env(num_players=num_players, obs_type="padded")
    aec.reset(seed=3)
    seen = aec.observe(aec.agent_selection)["observation"]
    assert aec.observation_space(aec.agent_selection)["observation"].contains(seen)
    plain = raw_env(num_players=num_players)
    plain.reset(seed=3)
    np.testing.assert_array_equal(seen, pad(plain.observe(plain.agent_selection)["observation"][None], num_players)[0])
    with pytest.raises(ValueError, match="obs_type='wide' is not allowed"):
        raw_env(obs_type="wide")


def test_advice_of_padded_observations_is_each_counts_advice():
    rows, table_advice, masks = [], [], []
    for players in (2, 5, 8):
        engine = SkyjoEngine(Rules(num_players=players), 5, seed=players)
        rng = np.random.default_rng(players)
        for _ in range(30):
            engine.step(sample_bits(engine.legal_bits(), rng))
        obs, mask = observe(engine, engine.current), engine.legal_mask()
        rows.append(pad(obs, players))
        masks.append(mask)
        table_advice.append(advice("counting", obs, mask, Rules(num_players=players)))
    mixed = np.concatenate(rows)[::-1]  # counts interleaved in no particular order
    got = advice("counting", mixed, np.concatenate(masks)[::-1])
    np.testing.assert_array_equal(got, np.concatenate(table_advice)[::-1])


def padded_network(player_counts: list[int], seed: int = 0) -> MLPPolicy:
    rng = np.random.default_rng(seed)
    shapes = [(PADDED_SIZE + ADVICE_SIZE, 32), (32, 26)]
    weights = [(rng.normal(size=s).astype(np.float32), rng.normal(size=s[1]).astype(np.float32)) for s in shapes]
    return MLPPolicy(weights, "relu", "mixed", advice="counting", metadata={"player_counts": player_counts})


def test_a_padded_network_plays_table_and_padded_observations_of_its_counts(tmp_path):
    policy = padded_network([3, 5])
    assert policy.padded and policy.player_counts == (3, 5)
    for players in (3, 5):
        engine = SkyjoEngine(Rules(num_players=players), 6, seed=1)
        obs, masks = observe(engine, engine.current), engine.legal_mask()
        np.testing.assert_array_equal(policy(obs, masks), policy(pad(obs, players), masks))
    with pytest.raises(ValueError, match=r"table ones of 3, 5 players \(168, 244 entries\)"):
        policy(np.zeros((1, size(4)), dtype=np.float32), np.ones((1, 26), dtype=bool))
    path = tmp_path / "mixed.npz"
    policy.save(path)
    assert MLPPolicy.load(path, rules=Rules(num_players=5)).players == 5
    with pytest.raises(ValueError, match=r"agent 'mixed' was trained for 3, 5 players; this table has 4"):
        MLPPolicy.load(path, rules=Rules(num_players=4))
    with pytest.raises(ValueError, match="was trained for 3, 5 players; this table has 2"):
        specs.make(str(path), players=2)
    assert specs.make(str(path), players=3).players == 3


def test_a_padded_network_is_an_opponent_at_every_count():
    policy = padded_network([2, 3, 4, 5, 6, 7, 8])
    games = MixedLearnerGames(7, None, range(2, 9), seed=0, opponents=[policy, RandomPolicy(0)])
    games.reset()
    rng = np.random.default_rng(0)
    for _ in range(50):
        games.step(random_actions(games, rng))


def test_seated_names_play_one_table_size_of_the_mixed_network(tmp_path, monkeypatch):
    from skyjo_env.agents import pretrained

    monkeypatch.setattr(pretrained, "FOLDER", tmp_path)
    assert pretrained.available() == []
    padded_network([3, 4, 5, 6, 7, 8]).save(tmp_path / f"{pretrained.MIXED}.npz")
    assert pretrained.available() == sorted(["ppo-mixed", *pretrained.SEATED])
    for name, (_, players) in pretrained.SEATED.items():  # none of them is 4
        agent = pretrained.load(name)
        assert agent.name == name and agent.players == players and agent.player_counts == (players,)
        specs.check_fits(agent, players)
        with pytest.raises(ValueError, match=f"agent '{name}' was trained for {players} players; this table has 4"):
            specs.check_fits(agent, 4)
        engine = SkyjoEngine(Rules(num_players=players), 3, seed=0)
        assert agent(observe(engine, engine.current), engine.legal_mask()).shape == (3,)
    with pytest.raises(
        ValueError,
        match=r"agent 'ppo-5p' is ppo-mixed seated at tables of 5 players; this table has 3: use ppo-3p or ppo-mixed",
    ):
        pretrained.load("ppo-5p", rules=Rules(num_players=3))
    assert pretrained.load("ppo-mixed", rules=Rules(num_players=4)).players == 4
    with pytest.raises(ValueError, match="trained for 3-8 players; this table has 2"):
        pretrained.load("ppo-mixed", rules=Rules(num_players=2))


@pytest.mark.parametrize("players", range(2, 9))
def test_a_shipped_agent_loads_by_name_at_every_table_size_and_there_only(players):
    from skyjo_env.agents import pretrained

    name = f"ppo-{players}p"
    agent = pretrained.load(name)
    assert agent.name == name and agent.players == players and agent.player_counts == (players,)
    engine = SkyjoEngine(Rules(num_players=players), 4, seed=players)
    legal = engine.legal_mask()
    actions = agent(observe(engine, engine.current), legal)
    assert actions.shape == (4,) and legal[np.arange(4), actions].all()
    other = 3 if players == 2 else 2
    with pytest.raises(ValueError, match=f"agent '{name}'.* {players} players; this table has {other}"):
        specs.check_fits(agent, other)
