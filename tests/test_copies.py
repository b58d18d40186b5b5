"""Copies are twins: ``copy.deepcopy`` and a pickle round trip of the engine and of every view give
an object that, stepped with the same actions, sees the same observations, rewards and masks as the
original, and stepping the copy leaves the original as it was (R1..R20 are replayed alike: deals,
reshuffles (R12) and opponents' random choices come from copied random streams)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest

import skyjo_env
from skyjo_env import Rules, SkyjoEngine, agents
from skyjo_env.gymnasium_env import SkyjoEnv
from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
from skyjo_env.mixed_games import MixedLearnerGames
from skyjo_env.pettingzoo_env import env as aec_env
from skyjo_env.pettingzoo_env import raw_env
from skyjo_env.sampling import sample_mask

COPIES: dict[str, Callable[[Any], Any]] = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda obj: pickle.loads(pickle.dumps(obj)),
}


def assert_same(a: Any, b: Any) -> None:
    """Equal nested results: arrays, numbers, dicts, tuples and lists of them."""
    if dataclasses.is_dataclass(a):
        assert type(a) is type(b)
        assert_same(vars(a), vars(b))
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert a.shape == b.shape
        assert_same(a.tolist(), b.tolist())
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, (int, float, bool, np.generic, str)) or a is None:
        assert a == b
    else:  # an opponent object named in an info: its copy is another object of the same kind
        assert type(a) is type(b)


def engine_state(engine: SkyjoEngine) -> dict[str, np.ndarray]:
    names = ("values", "face_up", "removed", "draw_pile", "draw_size", "discard_pile", "discard_size", "held",
             "phase", "current", "ender", "totals", "unseen", "steps", "keys", "shuffles")  # fmt: skip
    return {name: getattr(engine, name).copy() for name in names}


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("warmup", [0, 1, 2, 137])
def test_engine_copies_are_twins(how, warmup):
    """R3..R20 over several rounds and games (reshuffles, R12, included), batch of 8 at 3 players."""
    engine = SkyjoEngine(Rules(num_players=3, end_score=60), 8, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(warmup):
        engine.step(sample_mask(engine.legal_mask(), rng))
    twin = COPIES[how](engine)
    before = engine_state(engine)
    # Stepping the copy alone leaves the original untouched.
    twin_rng = copy.deepcopy(rng)
    for _ in range(50):
        twin.step(sample_mask(twin.legal_mask(), twin_rng))
    assert_same(engine_state(engine), before)
    twin = COPIES[how](engine)
    rounds = 0
    for _ in range(1500):
        mask = engine.legal_mask()
        np.testing.assert_array_equal(twin.legal_mask(), mask)
        actions = sample_mask(mask, rng)
        a, b = engine.step(actions), twin.step(actions)
        assert_same(a, b)
        rounds += int(a.round_over.sum())
    assert_same(engine_state(twin), engine_state(engine))
    assert rounds > 8  # many rounds were scored (and games re-dealt) on both


def test_engine_copies_keep_its_scripted_decks_and_auto_reset():
    engine = SkyjoEngine(Rules(), 2, seed=1, auto_reset=False)
    engine.deal_from(1, [np.sort(skyjo_env.cards.DECK)])
    twin = copy.deepcopy(engine)
    assert twin.auto_reset is False
    np.testing.assert_array_equal(twin.values, engine.values)
    engine.reset_games(np.array([1]))  # forgets the script in the original only
    assert twin._scripted.keys() == {1}


def learner_run(env: Any, rng: np.random.Generator, steps: int) -> list[Any]:
    """Steps of a single-learner Gymnasium view with random legal actions (resetting when done)."""
    out = []
    for _ in range(steps):
        result = env.step(int(sample_mask(env.unwrapped.action_masks()[None], rng)[0]))
        out.append(result)
        if result[2] or result[3]:
            out.append(env.reset())
    return out


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize(
    "make",
    [
        lambda: SkyjoEnv(num_players=3, seed=5, reward="score"),
        lambda: gymnasium.make("skyjo_env/Skyjo-v0", num_players=2, seed=5, opponents=agents.make("counting")),
        lambda: SkyjoEnv(num_players=4, seed=5, opponents=agents.make("ppo-4p", seed=3, greedy=False)),
    ],
    ids=["random-opponents", "gymnasium.make-counting", "ppo-sampling"],
)
def test_gymnasium_env_copies_are_twins(how, make):
    env = make()
    env.reset()
    learner_run(env, np.random.default_rng(1), 3)
    twin = COPIES[how](env)
    rng = np.random.default_rng(2)
    expected = learner_run(env, copy.deepcopy(rng), 300)
    assert_same(learner_run(twin, rng, 300), expected)
    assert sum(len(step) == 2 for step in expected) >= 2  # games ended and were dealt again (reset)


def test_stepping_a_gymnasium_copy_leaves_the_original_alone():
    env = SkyjoEnv(num_players=2, seed=5)
    obs, _ = env.reset()
    twin = copy.deepcopy(env)
    state = engine_state(env.engine)
    learner_run(twin, np.random.default_rng(0), 100)
    assert_same(engine_state(env.engine), state)
    # ... and the original then plays exactly as a fresh copy made at the same point would.
    again = pickle.loads(pickle.dumps(env))
    assert_same(learner_run(env, np.random.default_rng(3), 200), learner_run(again, np.random.default_rng(3), 200))


def aec_run(aec: Any, rng: np.random.Generator, steps: int) -> list[Any]:
    """Steps of a PettingZoo AEC env with random legal actions: what each acting agent observes."""
    out = []
    for _ in range(steps):
        if not aec.agents:
            aec.reset()
            out.append("reset")
        agent = aec.agent_selection
        observation, reward, termination, truncation, info = aec.last()
        out.append((agent, observation, reward, termination, truncation, info))
        if termination or truncation:
            aec.step(None)
        else:
            aec.step(int(sample_mask(observation["action_mask"][None].astype(bool), rng)[0]))
    return out


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("make", [raw_env, aec_env], ids=["raw_env", "env"])
def test_pettingzoo_copies_are_twins(how, make):
    aec = make(num_players=3, reward="score", seed=7)
    aec.reset()
    aec_run(aec, np.random.default_rng(0), 2)
    twin = COPIES[how](aec)
    assert twin.agent_selection == aec.agent_selection
    rng = np.random.default_rng(1)
    expected = aec_run(aec, copy.deepcopy(rng), 600)
    assert_same(aec_run(twin, rng, 600), expected)
    assert "reset" in expected  # a game ended and another was played


def vector_run(env: Any, rng: np.random.Generator, steps: int) -> list[Any]:
    out = []
    for _ in range(steps):
        actions = sample_mask(env.action_masks(), rng)
        out.append(env.step(actions))
        out.append(env.action_masks())
    return out


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("player_counts", [None, [2, 5]], ids=["one-size", "mixed"])
def test_vector_env_copies_are_twins(how, player_counts):
    opponents = (
        [agents.make("random"), agents.make("counting", rules=Rules(num_players=2))] if player_counts is None else None
    )
    env = SkyjoVectorEnv(6, seed=3, player_counts=player_counts, opponents=opponents, reward="score")
    env.reset()
    vector_run(env, np.random.default_rng(0), 2)
    twin = COPIES[how](env)
    rng = np.random.default_rng(1)
    expected = vector_run(env, copy.deepcopy(rng), 200)
    assert_same(vector_run(twin, rng, 200), expected)


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("player_counts", [None, [3, 4]], ids=["one-size", "mixed"])
def test_sb3_vec_env_copies_are_twins(how, player_counts):
    pytest.importorskip("stable_baselines3")
    from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv

    env = SkyjoSB3VecEnv(6, None if player_counts else Rules(num_players=3), seed=3, player_counts=player_counts)
    env.reset()
    vector_run(env, np.random.default_rng(0), 1)
    twin = COPIES[how](env)
    rng = np.random.default_rng(1)
    expected = vector_run(env, copy.deepcopy(rng), 200)
    assert_same(vector_run(twin, rng, 200), expected)


@pytest.mark.parametrize("how", COPIES)
def test_mixed_games_copies_are_twins(how):
    games = MixedLearnerGames(9, None, [2, 3, 8], seed=0, reward="lead")
    games.reset()
    twin = COPIES[how](games)
    rng = np.random.default_rng(1)
    twin_rng = copy.deepcopy(rng)
    for _ in range(200):
        actions = sample_mask(games.action_masks(), rng)
        assert_same(twin.step(sample_mask(twin.action_masks(), twin_rng)), games.step(actions))
