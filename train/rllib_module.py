"""The RLModule of the RLlib backend: the sb3 backend's networks behind RLlib's module API.

[`SkyjoModule`][] holds a [`SkyjoPolicy`][] (the same actor and
critic MLPs, initial weights and arithmetic as the sb3 backend's), so one warm start
([`skyjo_env.train.runs.warm_start()`][skyjo_env.train.runs.warm_start]) and one export to `agent.npz`
([`skyjo_env.train.runs.agent_policy()`][skyjo_env.train.runs.agent_policy]) serve both backends. It reads the
observations of [`MaskedObservations`][skyjo_env.train.rllib_env.MaskedObservations]: the networks' inputs, then the
26-entry action mask, which sets the logits of illegal actions to `-inf` before RLlib builds the action
distribution, so sampling and the PPO loss never pick an illegal action (their probability is 0, and
torch's categorical gives them no entropy). A row without a legal action (a game's last observation,
which the learner only values) keeps its logits, so that nothing is computed from `-inf` alone.

`model_config`: `{"net_arch": [128, 128], "activation": "relu", "precision": "float32"}`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.train.networks import ACTIVATIONS, SkyjoPolicy


class SkyjoModule(TorchRLModule, ValueFunctionAPI):
    """Actor and critic of [`SkyjoPolicy`][] over the observation; the actor's logits masked by its last 26 entries."""

    def setup(self) -> None:
        space = self.observation_space
        if not isinstance(space, gym.spaces.Box) or len(space.shape or ()) != 1 or space.shape[0] <= NUM_ACTIONS:
            raise ValueError(
                f"SkyjoModule needs a flat Box observation ending in the {NUM_ACTIONS} action mask, got {space}"
            )
        config = self.model_config or {}
        inputs = gym.spaces.Box(-np.inf, np.inf, (space.shape[0] - NUM_ACTIONS,), np.float32)
        self.policy = SkyjoPolicy(
            inputs, gym.spaces.Discrete(NUM_ACTIONS), lambda _: 0.0, net_arch=list(config["net_arch"]),
            activation_fn=ACTIVATIONS[config["activation"]], precision=config["precision"],
        )  # fmt: skip

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.policy.action_logits(obs[:, :-NUM_ACTIONS])
        illegal = obs[:, -NUM_ACTIONS:] == 0
        illegal &= ~illegal.all(dim=-1, keepdim=True)
        return {Columns.ACTION_DIST_INPUTS: logits.masked_fill(illegal, -torch.inf)}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.policy.predict_values(batch[Columns.OBS][:, :-NUM_ACTIONS]).squeeze(-1)
