"""A vector env whose observations carry a heuristic's advice, for training advised agents.

[`AdvisedVecEnv`][] appends [`skyjo_env.agents.advice.advice()`][skyjo_env.agents.advice.advice] to every observation of
a Skyjo vector env (terminal observations included), so the learner's network reads what an advised
[`MLPPolicy`][skyjo_env.agents.mlp_policy.MLPPolicy] reads when it plays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvObs, VecEnvStepReturn

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.agents.advice import ADVICE_SIZE, check_advisor, with_advice
from skyjo_env.rules import Rules


def action_masks_of(venv: VecEnv) -> np.ndarray:
    """The `(N, 26)` legal actions of a Skyjo vector env, or of a wrapper of one: its `action_masks()`
    (the method sb3-contrib's MaskablePPO calls; stable-baselines3's VecEnv type does not declare it)."""
    masked: Any = venv
    return masked.action_masks()


def observations_of(obs: VecEnvObs) -> np.ndarray:
    """A Skyjo vector env's observations: one array (stable-baselines3 also allows dicts and tuples)."""
    assert isinstance(obs, np.ndarray), type(obs)
    return obs


class AdvisedVecEnv(VecEnvWrapper):
    """Observations `(N, obs + ADVICE_SIZE)`: the wrapped env's, then the advice of `advisor`."""

    def __init__(self, venv: VecEnv, advisor: str, rules: Rules | None = None) -> None:
        check_advisor(advisor)
        inner = venv.observation_space
        assert isinstance(inner, spaces.Box), inner
        low = np.concatenate([inner.low, np.zeros(ADVICE_SIZE, dtype=np.float32)])
        high = np.concatenate([inner.high, np.ones(ADVICE_SIZE, dtype=np.float32)])
        super().__init__(venv, observation_space=spaces.Box(low, high, dtype=np.float32))
        self.advisor = advisor
        self.rules = rules  #: the rules the advice follows (default: the default rules for the player count)

    def reset(self) -> np.ndarray:
        return with_advice(self.advisor, observations_of(self.venv.reset()), action_masks_of(self.venv), self.rules)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        obs = with_advice(self.advisor, observations_of(obs), action_masks_of(self.venv), self.rules)
        ended = [i for i, info in enumerate(infos) if "terminal_observation" in info]
        if ended:
            # A finished game has no legal action: its advice reads "nothing to play".
            last = np.stack([infos[i]["terminal_observation"] for i in ended])
            advised = with_advice(self.advisor, last, np.zeros((len(ended), NUM_ACTIONS), dtype=bool), self.rules)
            for i, row in zip(ended, advised):
                infos[i]["terminal_observation"] = row
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return action_masks_of(self.venv)
