"""The views' spine (skyjo_env.env_options): every view takes its options through one EnvOptions,
with one default and one check each, and checks a step's actions once."""

from __future__ import annotations

import numpy as np
import pytest

import skyjo_env
from skyjo_env import Rules
from skyjo_env.checks import MAX_STEPS
from skyjo_env.env_options import EnvOptions
from skyjo_env.gymnasium_env import SkyjoEnv
from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
from skyjo_env.pettingzoo_env import raw_env
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv

VIEWS = {
    "raw_env": raw_env,
    "env": skyjo_env.env,
    "SkyjoEnv": SkyjoEnv,
    "SkyjoVectorEnv": lambda **options: SkyjoVectorEnv(2, **options),
    "SkyjoSB3VecEnv": lambda **options: SkyjoSB3VecEnv(2, **options),
}


@pytest.mark.parametrize("name", VIEWS)
def test_every_view_holds_its_options_as_one_env_options(name: str):
    view = VIEWS[name](num_players=3, end_score=50, reward="score", max_steps=500, seed=4)
    options = view.unwrapped.options if name == "env" else view.options
    assert options == EnvOptions(rules=Rules(num_players=3, end_score=50), reward="score", max_steps=500, seed=4)
    default = VIEWS[name]()
    assert (default.unwrapped if name == "env" else default).options.max_steps == MAX_STEPS  # the one default


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reward": "money"}, r"reward='money' is not allowed"),
        ({"max_steps": 0}, r"max_steps=0 is not allowed; use None or a positive integer"),
        ({"seed": -1}, r"seed=-1 is not allowed"),
        ({"obs_type": "flat"}, r"obs_type='flat' is not allowed"),
        ({"players": 3}, r"unknown option\(s\) \['players'\]; rule options are"),
        ({"rules": Rules(), "num_players": 3}, r"either as rules=Rules\(...\) or as keywords, not both"),
        ({"render_mode": "video"}, r"render_mode='video' is not allowed"),
    ],
)
def test_a_bad_option_reads_the_same_in_every_view(options: dict, message: str):
    for make in VIEWS.values():
        with pytest.raises(ValueError, match=message):
            make(**options)


def test_a_view_lists_its_own_options_and_refuses_the_others():
    with pytest.raises(ValueError, match=r"environment options are \['max_steps', 'obs_type', 'render_mode', 'reward'"):
        raw_env(opponents=None)  # an option of the views with one learner only
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['autoreset_mode'\]"):
        SkyjoSB3VecEnv(2, autoreset_mode="next_step")


def test_a_new_view_builds_its_options_in_one_call():
    options = EnvOptions.of(("reward", "seed"), ["ansi"], {"reward": "lead", "num_players": 4})
    assert (options.rules.num_players, options.reward, options.table_obs_type) == (4, "lead", "table")
    with pytest.raises(
        ValueError, match=r"unknown option\(s\) \['seat'\].*environment options are \['reward', 'rules', 'seed'\]"
    ):
        EnvOptions.of(("reward", "seed"), ["ansi"], {"seat": 0})


def test_the_gymnasium_view_checks_a_step_once(monkeypatch: pytest.MonkeyPatch):
    """The view's own check (its documented lose/raise) is the step's only check of the learner's action."""
    import skyjo_env.gymnasium_env as gymnasium_env
    import skyjo_env.learner_games as learner_games

    calls = []
    check = gymnasium_env.checked_action
    monkeypatch.setattr(gymnasium_env, "checked_action", lambda *args: calls.append(args) or check(*args))
    monkeypatch.setattr(learner_games, "checked_learner_actions", lambda *args: pytest.fail("a second check"))
    env = SkyjoEnv(seat=0)
    env.reset(seed=0)
    env.step(14)  # a setup flip (R5)
    assert len(calls) == 1
    assert env.step(0)[4]["illegal_action"]  # drawing during the setup is illegal: lost, by default
    assert len(calls) == 2 and int(np.flatnonzero(env.action_masks()).size) == 0


def test_help_shows_every_view_s_options_with_their_defaults():
    import inspect

    for make, first in (
        (raw_env, "reward"),
        (SkyjoEnv, "seat"),
        (SkyjoVectorEnv, "num_envs"),
        (SkyjoSB3VecEnv, "num_envs"),
    ):
        parameters = inspect.signature(make).parameters
        assert next(iter(parameters)) == first and parameters["max_steps"].default == MAX_STEPS
        assert "rules" in parameters and parameters["rule_options"].kind is inspect.Parameter.VAR_KEYWORD
    assert list(inspect.signature(SkyjoSB3VecEnv).parameters)[:2] == ["num_envs", "rules"]  # rules also positional
