"""The PettingZoo AEC environment: PettingZoo's own API, seed and render tests, plus its conventions."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import skyjo_env
from skyjo_env import Rules, SkyjoEngine
from skyjo_env.observation import observe, size
from skyjo_env.pettingzoo_env import env, raw_env
from skyjo_env.rewards import rewards as paid

pytestmark = pytest.mark.filterwarnings(
    # PettingZoo's api_test says this of every dict observation, its own classic envs' included.
    "ignore:Observation is not a NumPy array:UserWarning",
    "ignore:Observation space for each agent probably should be:UserWarning",
)


def play(aec, seed: int) -> dict[str, float]:
    """Play one game with uniformly random legal actions; returns each agent's summed rewards."""
    rng = np.random.default_rng(seed)
    aec.reset(seed=seed)
    returns = dict.fromkeys(aec.possible_agents, 0.0)
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, info = aec.last()
        returns[agent] += reward
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        aec.step(action)
    return returns


@pytest.mark.parametrize("options", [{}, {"num_players": 5, "end_score": 40}, {"num_players": 3, "reward": "score"}])
def test_pettingzoo_api_test(options):
    api_test(env(**options), num_cycles=2000)


def test_pettingzoo_seed_test():
    seed_test(env, num_cycles=300)


def test_pettingzoo_render_test():
    render_test(
        lambda render_mode: env(num_players=3, render_mode=render_mode),
        custom_tests={"ansi": lambda text: "player_2" in text and "draw pile" in text},
    )


def test_made_by_id_with_options_and_exposed_lazily():
    made = pettingzoo.make("aec", "skyjo_env/skyjo_v0", num_players=4, end_score=50)
    assert made.possible_agents == [f"player_{i}" for i in range(4)]
    assert made.unwrapped.rules == Rules(num_players=4, end_score=50)
    assert isinstance(made, pettingzoo.utils.wrappers.OrderEnforcingWrapper)
    assert skyjo_env.env is env and skyjo_env.raw_env is raw_env
    assert raw_env.metadata["name"] == "skyjo_v0" and raw_env.metadata["is_parallelizable"] is False


@pytest.mark.parametrize(
    "code",
    [
        # Registration works whichever is imported first (the engine module's own imports: tests/test_layering.py).
        "import skyjo_env, pettingzoo; pettingzoo.make('aec', 'skyjo_env/skyjo_v0')",
        "import pettingzoo, skyjo_env; pettingzoo.make('aec', 'skyjo_env/skyjo_v0')",
    ],
)
def test_imports(code):
    subprocess.run([sys.executable, "-c", code], check=True)


def test_observations_and_masks_follow_the_engine():
    aec = raw_env(num_players=3)
    aec.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(200):
        engine = aec.engine
        acting = aec.agent_selection
        assert acting == f"player_{engine.current[0]}"
        for seat, agent in enumerate(aec.agents):
            obs = aec.observe(agent)
            assert obs["observation"].shape == (size(3),) and obs["action_mask"].dtype == np.int8
            np.testing.assert_array_equal(obs["observation"], observe(engine, seat)[0])
            expected = engine.legal_mask()[0] if agent == acting else np.zeros(26, dtype=bool)
            np.testing.assert_array_equal(obs["action_mask"], expected)
            assert aec.observation_space(agent).contains(obs)
        aec.step(int(rng.choice(np.flatnonzero(engine.legal_mask()[0]))))


@pytest.mark.parametrize("seed", [0, 1])
def test_result_rewards_are_zero_sum_and_name_the_winners(seed):
    aec = env(num_players=3, end_score=40)
    returns = play(aec, seed)
    assert sum(returns.values()) == pytest.approx(0.0)
    # PettingZoo removes finished agents; the final infos were read by last() before that.
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    finals = {}
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, info = aec.last()
        if terminated:
            finals[agent] = (info, reward)
        aec.step(None if terminated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    totals = {agent: info["total"] for agent, (info, _) in finals.items()}
    winners = [agent for agent, (info, _) in finals.items() if info["winner"]]
    assert winners == [agent for agent in totals if totals[agent] == min(totals.values())]
    for agent, (_, reward) in finals.items():
        share = 1 / len(winners) if agent in winners else -1 / (3 - len(winners))
        assert reward == pytest.approx(share if len(winners) < 3 else 0.0)


def test_score_rewards_match_the_engine():
    """Replaying the same actions on a bare engine gives the same per-seat rewards."""
    aec = raw_env(num_players=2, reward="score", end_score=30)
    aec.reset(seed=3)
    engine = SkyjoEngine(Rules(num_players=2, end_score=30), 1, auto_reset=False)
    engine.reset(3)
    rng = np.random.default_rng(3)
    rounds = 0
    while aec.agents and not aec.terminations[aec.agent_selection]:
        action = int(rng.choice(np.flatnonzero(engine.legal_mask()[0])))
        aec.step(action)
        result = engine.step(np.array([action]))
        rounds += result.round_over[0]
        assert [aec.rewards[f"player_{s}"] for s in range(2)] == paid("score", result)[0].tolist()
    assert rounds >= 1


def test_raw_env_rejects_illegal_actions_with_the_legal_ones():
    aec = raw_env()
    aec.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"illegal action 0 \(draw\) for player_0 in phase setup; legal actions: 14 \(flip 0\)"
    ):
        aec.step(0)
    with pytest.raises(ValueError, match="illegal action 26 .out of range."):
        aec.step(26)
    with pytest.raises(ValueError, match="not an action id"):
        aec.step("draw")
    with pytest.raises(ValueError, match="not an action id"):
        aec.step(True)
    aec.step(np.int64(14))  # numpy integers are actions too
    aec.step(np.array(15))
    assert aec.engine.current[0] == 1


def test_wrapped_env_ends_the_game_on_an_illegal_action(caplog):
    aec = env()
    aec.reset(seed=0)
    aec.step(0)  # draw during setup
    assert "Illegal move made" in caplog.text
    final = {}
    for agent in aec.agent_iter():
        _, reward, terminated, _, _ = aec.last()
        assert terminated
        final[agent] = reward
        aec.step(None)
    assert final == {"player_0": -1.0, "player_1": 0.0}


def test_env_checks_a_step_once_without_building_an_observation(monkeypatch):
    """Issue 54: `raw_env.step`'s check is the step's only one; no TerminateIllegalWrapper builds an
    observation to read the mask."""
    import skyjo_env.pettingzoo_env as pettingzoo_env

    aec = env()
    chain, inner = [], aec
    while inner is not inner.unwrapped:
        chain.append(type(inner))
        inner = inner.env
    assert chain == [pettingzoo.utils.wrappers.OrderEnforcingWrapper, pettingzoo_env.ActionIdWrapper]
    assert isinstance(inner, raw_env)
    checks, observed = [], []
    check, observe_as = pettingzoo_env.checked_action, pettingzoo_env.observe_as
    monkeypatch.setattr(pettingzoo_env, "checked_action", lambda *args: checks.append(args) or check(*args))
    monkeypatch.setattr(pettingzoo_env, "observe_as", lambda *args: observed.append(args) or observe_as(*args))
    aec.reset(seed=0)
    aec.step(14)  # a setup flip (R5)
    assert (len(checks), observed) == (1, [])
    aec.step(0)  # drawing during the setup is illegal (R5): the game is lost
    assert (len(checks), observed) == (2, [])
    assert aec.rewards == {"player_0": -1.0, "player_1": 0.0} and all(aec.terminations.values())


def terminate_illegal_env(**options) -> pettingzoo.AECEnv:
    """`env()` as it was built before issue 54: PettingZoo's TerminateIllegalWrapper around `raw_env`."""
    from skyjo_env.pettingzoo_env import ActionIdWrapper

    wrapped = pettingzoo.utils.wrappers.TerminateIllegalWrapper(raw_env(**options), illegal_reward=-1)
    return pettingzoo.utils.wrappers.OrderEnforcingWrapper(ActionIdWrapper(wrapped))


def illegal_game(aec, seed: int, legal_steps: int | None, after: int) -> list:
    """What `aec` shows at every step of a game whose seed plays `legal_steps` random legal moves (or,
    with `None`, up to the end of the first round) then an illegal one, then its dead steps, `after`
    more steps once every agent left, and the first steps of the next game."""
    rng = np.random.default_rng(seed)
    aec.reset(seed=seed)
    seen = []

    def look() -> None:
        base = aec.unwrapped
        observation, reward, terminated, truncated, info = aec.last() if aec.agents else (None,) * 5
        seen.append(
            (aec.agent_selection, list(aec.agents), dict(base.rewards), dict(base._cumulative_rewards),
             dict(base.terminations), dict(base.truncations), {a: dict(i) for a, i in base.infos.items()},
             reward, terminated, truncated, info, None if observation is None else observation["observation"].tolist(),
             None if observation is None else observation["action_mask"].tolist())
        )  # fmt: skip

    steps = 0
    while (steps < legal_steps) if legal_steps is not None else not any(aec.unwrapped.rewards.values()):
        aec.step(int(rng.choice(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"]))))
        steps += 1
    assert aec.agents and not any(aec.terminations.values())  # the game goes on
    look()
    mask = aec.unwrapped.engine.legal_mask()[0]
    aec.step(int(rng.choice(np.flatnonzero(~mask))))
    look()
    for _agent in aec.agent_iter():
        aec.step(None)
        look()
    for _ in range(after):
        aec.step(0)  # PettingZoo's order enforcing warns of a step after the end and does nothing
        look()
    aec.reset(seed=seed + 1)
    for _ in range(3):
        aec.step(int(rng.choice(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"]))))
        look()
    return seen


@pytest.mark.parametrize(
    ("options", "seed", "legal_steps"),
    [
        ({}, 0, 0),  # the first action
        ({"num_players": 4}, 1, 5),  # during the setup (R5)
        ({"num_players": 3}, 2, 40),  # mid-game: a drawn card in hand, or a turn's first action (R8..R10)
        ({"num_players": 3, "reward": "score"}, 4, None),  # right after a round paid its rewards (R16)
        ({"max_steps": 12}, 5, 11),  # on the last step before the truncation
    ],
)
def test_an_illegal_move_in_env_is_pettingzoos_terminate_illegal_wrapper(options, seed, legal_steps):
    """env() ends the game as PettingZoo's TerminateIllegalWrapper did (-1 for the agent, 0 for the
    others; rewards, cumulative rewards, terminations and truncations, dead steps, then the next game)."""
    ours = illegal_game(env(**options), seed, legal_steps, after=2)
    theirs = illegal_game(terminate_illegal_env(**options), seed, legal_steps, after=2)
    assert ours == theirs
    loser = ours[0][0]
    assert ours[1][2] == {a: -1.0 if a == loser else 0.0 for a in ours[1][1]}
    assert all(ours[1][4].values()) and all(ours[1][5].values())


def test_max_steps_truncates_everyone():
    aec = env(max_steps=7)
    aec.reset(seed=1)
    steps = 0
    for _agent in aec.agent_iter():
        obs, _, terminated, truncated, _ = aec.last()
        if truncated:
            break
        aec.step(int(np.flatnonzero(obs["action_mask"])[0]))
        steps += 1
    assert steps == 7 and all(aec.truncations.values()) and not any(aec.terminations.values())


def test_bad_options_are_named():
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['rewrd'\].*'reward'"):
        raw_env(rewrd="result")
    with pytest.raises(ValueError, match="reward='points' is not allowed"):
        raw_env(reward="points")
    with pytest.raises(ValueError, match="num_players=9"):
        raw_env(num_players=9)
    with pytest.raises(ValueError, match="render_mode='video'"):
        raw_env(render_mode="video")
    with pytest.raises(ValueError, match="max_steps=0"):
        raw_env(max_steps=0)


def test_pickles_with_its_options():
    aec = pickle.loads(pickle.dumps(env(num_players=3, reward="score")))
    assert aec.unwrapped.rules.num_players == 3 and aec.unwrapped.reward == "score"
    assert sum(play(aec, 2).values()) == pytest.approx(0.0, abs=1e-4)


@pytest.mark.parametrize("make", [env, raw_env])
@pytest.mark.parametrize("action", [999, 26, -1])
def test_an_action_id_out_of_range_is_a_value_error(make, action: int):
    aec = make()
    aec.reset(seed=0)
    with pytest.raises(ValueError, match=rf"action {action}\b.*out of range"):
        aec.step(action)
    assert aec.agent_selection == "player_0" and aec.unwrapped.engine.steps[0] == 0  # nothing moved


def test_bad_actions_are_refused_without_asserts():
    """Under `python -O` (asserts removed) a bad action still raises its own error."""
    code = (
        "import skyjo_env\n"
        "for action in (999, -1, 1.5):\n"
        "    aec = skyjo_env.env(); aec.reset(seed=0)\n"
        "    try:\n"
        "        aec.step(action)\n"
        "    except ValueError as error:\n"
        "        print(type(error).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["ValueError", "ValueError", "ActionTypeError"]


@pytest.mark.parametrize("seed", [True, 1.5, -1, "3"])
def test_a_seed_that_seeds_no_deal_is_refused_by_every_view(seed):
    from skyjo_env import SkyjoEnv, SkyjoVectorEnv

    for view in (env(), raw_env(), SkyjoEnv(), SkyjoVectorEnv(2)):
        with pytest.raises(ValueError, match=rf"seed={seed!r} is not allowed; use None or"):
            view.reset(seed=seed)
