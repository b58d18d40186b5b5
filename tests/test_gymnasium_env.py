"""The single-agent Gymnasium environment: checkers, opponents, rewards, illegal actions, truncation."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import skyjo_env
from skyjo_env import Rules
from skyjo_env.gymnasium_env import SkyjoEnv
from skyjo_env.observation import layout, observe
from skyjo_env.random_policy import RandomPolicy


def run_episode(env: SkyjoEnv, seed: int) -> tuple[float, dict, int]:
    """Play the learner uniformly at random among legal actions; returns (return, last info, steps)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps += 1
        if terminated or truncated:
            return total, info, steps


class Spy:
    """A random policy that records, per call, the seat it was asked to play."""

    name = "spy"

    def __init__(self, env: SkyjoEnv, seed: int = 0) -> None:
        self.env, self.random, self.seats = env, RandomPolicy(seed), []

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        engine = self.env.engine
        np.testing.assert_array_equal(observations, observe(engine, engine.current))
        np.testing.assert_array_equal(masks, engine.legal_mask())
        self.seats.append(int(engine.current[0]))
        return self.random(observations, masks)


@pytest.mark.parametrize("options", [{}, {"num_players": 4, "reward": "score"}])
def test_gymnasium_check_env(options):
    env = gymnasium.make("skyjo_env/Skyjo-v0", **options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []  # finite bounds everywhere (skyjo_env.spaces)


def test_stable_baselines3_check_env():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(SkyjoEnv(num_players=3), warn=True)


def test_made_by_id_and_exposed_lazily():
    env = gymnasium.make("skyjo_env/Skyjo-v0", num_players=3, end_score=50, seat=1)
    assert env.unwrapped.rules == Rules(num_players=3, end_score=50)
    assert skyjo_env.SkyjoEnv is SkyjoEnv
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and info["seat"] == 1


def test_the_learner_acts_only_on_its_turn_and_opponents_play_the_rest():
    env = SkyjoEnv(num_players=3, seat=2)
    spy = Spy(env)
    env.set_opponents(spy)
    obs, info = env.reset(seed=1)
    L = layout(3)
    assert sorted(set(spy.seats)) == [0, 1]  # setup flips of seats 0 and 1 come first (R5)
    for _step in range(300):
        assert obs[L["to_act"]][0] == 1 and env.engine.current[0] == 2
        np.testing.assert_array_equal(obs, observe(env.engine, 2)[0])
        np.testing.assert_array_equal(info["action_mask"], env.action_masks())
        np.testing.assert_array_equal(env.action_masks(), env.engine.legal_mask()[0])
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        if terminated:
            break
    assert 2 not in spy.seats


def test_one_policy_per_opponent_seat_in_clockwise_order():
    env = SkyjoEnv(num_players=4, seat=2)
    spies = [Spy(env, i) for i in range(3)]
    env.set_opponents(spies)
    run_episode(env, 3)
    assert [set(s.seats) for s in spies] == [{3}, {0}, {1}]
    calls = [len(s.seats) for s in spies]
    env.set_opponents(None)  # back to the seeded random default
    run_episode(env, 3)
    assert [len(s.seats) for s in spies] == calls


def test_random_seat_is_drawn_at_each_reset():
    env = SkyjoEnv(num_players=3)
    seats = {env.reset(seed=s)[1]["seat"] for s in range(20)}
    assert seats == {0, 1, 2}


def test_same_seed_same_game():
    a, b = SkyjoEnv(num_players=3), SkyjoEnv(num_players=3)
    (return_a, info_a, steps_a), (return_b, info_b, steps_b) = run_episode(a, 7), run_episode(b, 7)
    assert (return_a, steps_a) == (return_b, steps_b)
    np.testing.assert_array_equal(info_a["totals"], info_b["totals"])
    np.testing.assert_array_equal(a.engine.values, b.engine.values)
    a.reset(seed=8)
    b.reset(seed=9)
    assert not np.array_equal(a.engine.values, b.engine.values)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_result_reward_is_the_shared_win_or_loss(seed):
    env = SkyjoEnv(num_players=3, end_score=40)
    total, info, _ = run_episode(env, seed)
    totals = info["totals"]
    winners = totals == totals.min()
    expected = 1 / winners.sum() if winners[env.seat] else -1 / (3 - winners.sum())
    assert info["winner"] == winners[env.seat]
    assert total == pytest.approx(expected if winners.sum() < 3 else 0.0)


def test_score_rewards_add_up_to_the_final_margin():
    env = SkyjoEnv(num_players=3, end_score=60, reward="score")
    total, info, _ = run_episode(env, 4)
    totals = info["totals"].astype(float)
    own = totals[env.seat]
    assert total == pytest.approx((totals.sum() - own) / 2 - own, abs=1e-3)


def test_illegal_action_loses_by_default():
    env = SkyjoEnv()
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(0)  # draw during setup
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert not info["action_mask"].any() and not env.action_masks().any()
    with pytest.raises(ValueError, match="episode is over; call reset"):
        env.step(14)
    env.reset(seed=0)
    env.step(14)  # fine again after a reset


def test_illegal_action_can_raise():
    env = SkyjoEnv(illegal_action="raise", seat=0)
    env.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"illegal action 1 \(take\) for the learner \(seat 0\); legal actions: 14 \(flip 0\)"
    ):
        env.step(1)
    with pytest.raises(ValueError, match="not an action id"):
        env.step(1.0)


def test_an_illegal_opponent_is_named():
    env = SkyjoEnv(seat=0, opponents=lambda obs, masks: np.zeros(len(masks), dtype=np.int64))
    env.reset(seed=0)
    env.step(14)
    with pytest.raises(ValueError, match=r"opponent policy 'function' chose illegal action 0"):
        env.step(15)


def test_max_steps_truncates():
    env = SkyjoEnv(max_steps=30)
    _, _, steps = run_episode(env, 0)
    assert env.engine.steps[0] >= 30 and env.engine.phase[0] != 4 and steps < 30


def test_render_from_the_learners_view():
    env = SkyjoEnv(seat=0, render_mode="ansi")
    obs, info = env.reset(seed=2)
    while not info["action_mask"][0]:  # play to the learner's first choice, then draw
        obs, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    env.step(0)
    assert f"in hand: {int(env.engine.held[0])} (from the draw pile)" in env.render()
    image = SkyjoEnv(render_mode="rgb_array")
    image.reset(seed=0)
    frame = image.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3


def test_bad_options_are_named():
    with pytest.raises(ValueError, match=r"seat=3 is not allowed; use None \(random\) or a seat 0..2"):
        SkyjoEnv(num_players=3, seat=3)
    with pytest.raises(ValueError, match="opponents must be one policy for all 2 opponent seats"):
        SkyjoEnv(num_players=3, opponents=[RandomPolicy()])
    with pytest.raises(ValueError, match="illegal_action='ignore'"):
        SkyjoEnv(illegal_action="ignore")
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['players'\]"):
        SkyjoEnv(players=3)
    with pytest.raises(ValueError, match="reset options"):
        SkyjoEnv().reset(options={"seat": 1})
