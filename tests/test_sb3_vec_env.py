"""The batched stable-baselines3 VecEnv: learner turns, batched opponents, auto-reset, truncation, MaskablePPO."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from skyjo_env import Rules
from skyjo_env.engine import OVER
from skyjo_env.observation import layout, observe
from skyjo_env.random_policy import RandomPolicy
from skyjo_env.sampling import sample_mask
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv


class Spy:
    """A seeded random policy that checks and records every batch it is asked to play."""

    def __init__(self, env: SkyjoSB3VecEnv, name: str, seed: int = 0) -> None:
        self.env, self.name, self.random = env, name, RandomPolicy(seed)
        self.calls: list[int] = []

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        L = layout(self.env.rules.num_players)
        assert observations.shape[0] == masks.shape[0] > 0
        assert (observations[:, L["to_act"]] == 1).all() and masks.any(axis=1).all()
        self.calls.append(len(masks))
        return self.random(observations, masks)


def random_steps(env: SkyjoSB3VecEnv, steps: int, seed: int = 0):
    """Step with uniformly random legal learner actions; yields (obs, rewards, dones, infos)."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield env.step(sample_mask(env.action_masks(), rng))


def assert_at_learner_turns(env: SkyjoSB3VecEnv, obs: np.ndarray) -> None:
    engine = env.engine
    assert (engine.current == env.seats).all() and (engine.phase != OVER).all()
    np.testing.assert_array_equal(obs, observe(engine, env.seats))
    np.testing.assert_array_equal(env.action_masks(), engine.legal_mask())


def test_is_a_vec_env_with_masks_for_sb3_contrib():
    env = SkyjoSB3VecEnv(8, Rules(num_players=3), seed=0)
    assert isinstance(env, VecEnv) and env.num_envs == 8
    assert env.observation_space.shape == (3 * 38 + 54,) and env.action_space.n == 26
    env.reset()
    assert is_masking_supported(env)
    masks = get_action_masks(env)
    assert masks.shape == (8, 26) and masks.dtype == bool
    np.testing.assert_array_equal(masks, env.action_masks())
    assert env.env_method("action_masks", indices=[2])[0].tolist() == env.action_masks()[2].tolist()
    assert env.get_attr("rules", indices=[0, 1]) == [Rules(num_players=3)] * 2
    assert env.env_is_wrapped(VecMonitor) == [False] * 8


def test_every_step_returns_at_the_learners_turn():
    env = SkyjoSB3VecEnv(32, Rules(num_players=4), seed=1)
    obs = env.reset()
    assert_at_learner_turns(env, obs)
    for obs, rewards, dones, _infos in random_steps(env, 150):
        assert obs.shape == (32, 4 * 38 + 54) and rewards.dtype == np.float32 and dones.dtype == bool
        assert_at_learner_turns(env, obs)


def test_opponents_play_in_batches_one_policy_per_game():
    env = SkyjoSB3VecEnv(64, Rules(num_players=3), seed=2)
    a, b = Spy(env, "a", 1), Spy(env, "b", 2)
    env.set_opponents([a, b], weights=[3, 1])
    env.reset()
    games = {}
    for _, _, dones, infos in random_steps(env, 250):
        for g in np.flatnonzero(dones):
            games.setdefault(infos[g]["opponent"].name, 0)
            games[infos[g]["opponent"].name] += 1
    # A call plays many games at once; a is drawn about three times as often as b.
    assert np.mean(a.calls) > 5 and np.mean(b.calls) > 1
    assert 2 < games["a"] / games["b"] < 4.5
    assert set(env.game_opponents) == {a, b}


def test_a_policy_that_reads_no_observations_gets_none_encoded():
    env = SkyjoSB3VecEnv(32, seed=7)
    seen = []

    def blind(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        seen.append(observations.shape)
        return masks.argmax(axis=1)

    blind.observes = False
    env.set_opponents(blind)
    env.reset()
    for obs, *_ in random_steps(env, 20):
        assert_at_learner_turns(env, obs)
    assert seen and all(shape[1] == 0 and shape[0] > 0 for shape in seen)


def test_set_opponents_takes_effect_for_new_games_only():
    env = SkyjoSB3VecEnv(16, seed=3)
    old, new = Spy(env, "old"), Spy(env, "new")
    env.set_opponents(old)
    env.reset()
    env.set_opponents(new)
    assert env.opponents == [new] and set(env.game_opponents) == {old}
    ended = np.zeros(16, dtype=bool)
    for _, _, dones, infos in random_steps(env, 2000):
        for g in np.flatnonzero(dones & ~ended):
            assert infos[g]["opponent"] is old  # the game that just ended started against old
        ended |= dones
        assert all((p is new) == ended[g] for g, p in enumerate(env.game_opponents))
        if ended.all():
            break
    assert ended.all() and set(env.game_opponents) == {new}


def test_seats_are_random_per_game_or_fixed():
    env = SkyjoSB3VecEnv(64, Rules(num_players=3), seed=4)
    env.reset()
    assert set(env.seats.tolist()) == {0, 1, 2}
    first = env.seats.copy()
    for _ in random_steps(env, 100):
        pass
    assert (env.seats != first).any()
    with pytest.raises(ValueError, match="read-only"):
        env.seats[0] = 1
    fixed = SkyjoSB3VecEnv(16, Rules(num_players=3), seat=1, seed=4)
    fixed.reset()
    for obs, *_ in random_steps(fixed, 100):
        assert (fixed.seats == 1).all()
        last = obs
    assert_at_learner_turns(fixed, last)


@pytest.mark.parametrize("reward", ["result", "score", "lead", {"score": 1, "result": 20}])
def test_episode_returns_match_the_final_totals(reward):
    """Rewards over the learner's and the opponents' moves add up to the game's outcome."""
    P, end_score = 3, 40
    env = SkyjoSB3VecEnv(32, Rules(num_players=P, end_score=end_score), reward=reward, seed=5)
    env.reset()
    returns = np.zeros(32)
    L = layout(P)
    finished = 0
    for _, rewards, dones, infos in random_steps(env, 400):
        returns += rewards
        for g in np.flatnonzero(dones):
            terminal = infos[g]["terminal_observation"]
            assert not terminal[L["phase"]].any()  # the finished game, in phase OVER
            totals = np.rint(terminal[L["totals"]] * end_score)  # relative order: the learner first
            win = totals == totals.min()
            result = 0.0 if win.all() else (1 / win.sum() if win[0] else -1 / (P - win.sum()))
            if reward == "lead":
                expected = totals[1:].min() - totals[0]
            elif reward == "result":
                expected = result
            else:
                expected = totals[1:].mean() - totals[0] + (0.0 if reward == "score" else 20 * result)
            assert returns[g] == pytest.approx(expected, abs=1e-3)
            returns[g] = 0
            finished += 1
    assert finished > 20


def test_max_steps_truncates_a_stalling_game():
    """A learner that never turns a card up, against an opponent that neither, is cut off."""

    def stall(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.where(
            masks[:, 1],
            1,
            np.where(masks[:, 2:14].any(axis=1), 2 + masks[:, 2:14].argmax(axis=1), masks.argmax(axis=1)),
        )

    env = SkyjoSB3VecEnv(4, seat=0, opponents=stall, max_steps=120, seed=6)
    env.reset()
    truncated = 0
    for _ in range(200):
        _, _, dones, infos = env.step(stall(None, env.action_masks()))
        for g in np.flatnonzero(dones):
            assert infos[g]["TimeLimit.truncated"] and "terminal_observation" in infos[g]
            truncated += 1
        assert (env.engine.steps <= 120).all()
    assert truncated >= 4


def test_same_seed_same_run():
    runs = []
    for _ in range(2):
        env = SkyjoSB3VecEnv(16, Rules(num_players=2), seed=None)
        env.seed(11)
        runs.append([env.reset()] + [obs for obs, *_ in random_steps(env, 50, seed=3)])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_illegal_learner_action_is_named():
    env = SkyjoSB3VecEnv(4, seat=0, seed=0)
    env.reset()
    with pytest.raises(
        ValueError, match=r"illegal action 0 for the learner in game 0 \(seat 0\); legal actions: \['flip 0'"
    ):
        env.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="4 integer action ids"):
        env.step(np.zeros(3, dtype=np.int64))


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="weights must be 2 non-negative"):
        SkyjoSB3VecEnv(2, opponents=[RandomPolicy(), RandomPolicy()], weights=[1, -1])
    with pytest.raises(ValueError, match="opponents must be a policy or a non-empty list"):
        SkyjoSB3VecEnv(2, opponents=[])
    with pytest.raises(ValueError, match="rules must be a skyjo_env.Rules"):
        SkyjoSB3VecEnv(2, {"num_players": 3})
    with pytest.raises(ValueError, match="reward_scale='x'"):
        SkyjoSB3VecEnv(2, reward_scale="x")
    with pytest.raises(ValueError, match="seat=2 is not allowed"):
        SkyjoSB3VecEnv(2, seat=2)
    with pytest.raises(AttributeError, match="no per-game method 'render'"):
        SkyjoSB3VecEnv(2).env_method("render")


def test_rgb_frames_from_each_learners_view():
    env = SkyjoSB3VecEnv(3, render_mode="rgb_array", seed=0)
    env.reset()
    frames = env.get_images()
    assert len(frames) == 3 and all(f.dtype == np.uint8 and f.ndim == 3 for f in frames)


def test_maskable_ppo_trains_on_it(tmp_path):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the machine is shared; this small net gains nothing from more
    env = VecMonitor(SkyjoSB3VecEnv(64, seed=0))
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=32, batch_size=1024, n_epochs=2, seed=0, policy_kwargs={"net_arch": [64, 64]}
    )
    model.set_logger(configure(str(tmp_path), []))  # not a new SB3-* folder in the system temp dir
    try:
        model.learn(4096)
    finally:
        torch.set_num_threads(threads)
    assert model.num_timesteps >= 4096
    obs = env.reset()
    masks = get_action_masks(env)
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert masks[np.arange(64), actions].all()
