"""Potential-based reward shaping for the `"score"` reward, computed from observations alone.

The potential of a learner observation is its expected round-score lead: the opponents' mean
expected score minus its own, where a grid's expected score counts face-up cards at their value
and face-down cards at the mean of the cards the learner has not seen (the observation's public
card counts). Adding `gamma * phi(s') - phi(s)` to each reward (with `phi = 0` after the last
step of a game) leaves the optimal policy unchanged (Ng, Harada and Russell, 1999) but pays the
learner as soon as a move changes its expected lead, instead of only when the round is scored.
"""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from skyjo_env.cards import COUNTS, MAX_VALUE, SLOTS, VALUES
from skyjo_env.observation import GRID_FEATURES, layout
from skyjo_env.train.advised_env import action_masks_of, observations_of


def expected_lead(observations: np.ndarray, players: int) -> np.ndarray:
    """Opponents' mean expected round score minus the observer's own, per observation `(N,)`."""
    L = layout(players)
    unseen = observations[:, L["unseen"]] * COUNTS  # card counts by value
    mean_unseen = (unseen @ VALUES.astype(np.float32)) / np.maximum(unseen.sum(axis=1), 1.0)
    grids = observations[:, : players * GRID_FEATURES].reshape(len(observations), players, 3, SLOTS)
    shown = grids[:, :, 0].sum(axis=2) * MAX_VALUE  # face-up values (removed columns are 0)
    hidden = grids[:, :, 1].sum(axis=2)  # face-down cards
    expected = shown + hidden * mean_unseen[:, None]
    return expected[:, 1:].mean(axis=1) - expected[:, 0]


class ShapedReward(VecEnvWrapper):
    """Adds `scale * (gamma * lead(s') - lead(s))` to the rewards of a Skyjo vector env."""

    def __init__(self, venv: VecEnv, players: int, gamma: float, scale: float) -> None:
        super().__init__(venv)
        self.players = players
        self.gamma = np.float32(gamma)
        self.scale = np.float32(scale)
        self._phi = np.zeros(venv.num_envs, dtype=np.float32)

    def reset(self) -> np.ndarray:
        obs = observations_of(self.venv.reset())
        self._phi = self.scale * expected_lead(obs, self.players)
        return obs

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        phi = self.scale * expected_lead(observations_of(obs), self.players)  # after a game ends: the new game's
        next_phi = np.where(dones, np.float32(0.0), phi)
        shaped = rewards + self.gamma * next_phi - self._phi
        self._phi = phi
        return obs, shaped.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        return action_masks_of(self.venv)
