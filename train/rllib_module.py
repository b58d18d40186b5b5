"""The RLlib RLModule of the Ray backend: an actor-critic MLP that masks illegal actions.

It consumes the AEC environment's observation dict as it is: ``obs["observation"]`` (the flat
float32 vector of :mod:`skyjo_env.observation`) feeds a policy MLP and a value MLP, and
``obs["action_mask"]`` (int8, 1 = legal) sets the logits of illegal actions to
:data:`MASKED_LOGIT` before RLlib builds the action distribution, so sampling, the PPO loss and
greedy play never pick an illegal action. Needs the ``distributed`` extra (``ray[rllib]``).

``model_config``: ``{"hidden": [256, 256]}`` (sizes of the hidden layers of both MLPs).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

MAIN = "main"  #: module id of the learning policy in every RLlib run and checkpoint
#: Logit given to illegal actions: its probability underflows to exactly 0, yet stays finite, so
#: the PPO ratio, KL and entropy terms stay finite (also for an all-zero mask).
MASKED_LOGIT = -1e9
DEFAULT_HIDDEN = (256, 256)
OBS_KEYS = ("observation", "action_mask")


def mlp(inputs: int, hidden: tuple[int, ...], outputs: int) -> nn.Sequential:
    """Linear + tanh layers of sizes ``hidden``, then a linear output layer."""
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(inputs, width), nn.Tanh()]
        inputs = width
    layers.append(nn.Linear(inputs, outputs))
    return nn.Sequential(*layers)


def mask_logits(logits: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with :data:`MASKED_LOGIT` wherever ``action_mask`` is 0."""
    return logits.masked_fill(action_mask == 0, MASKED_LOGIT)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """Policy and value MLPs over ``obs["observation"]``; policy logits masked by ``obs["action_mask"]``."""

    def setup(self) -> None:
        space = self.observation_space
        if not isinstance(space, gym.spaces.Dict) or set(space.spaces) != set(OBS_KEYS):
            raise ValueError(
                f"MaskedActorCritic needs a Dict observation space with keys {OBS_KEYS} "
                f"(the skyjo AEC environment's), got {space}"
            )
        if not isinstance(self.action_space, gym.spaces.Discrete):
            raise ValueError(f"MaskedActorCritic needs a Discrete action space, got {self.action_space}")
        config = self.model_config or {}
        hidden = tuple(int(w) for w in config.get("hidden", DEFAULT_HIDDEN))
        inputs = int(np.prod(space["observation"].shape or ()))
        self.pi = mlp(inputs, hidden, int(self.action_space.n))
        self.vf = mlp(inputs, hidden, 1)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: mask_logits(self.pi(obs["observation"]), obs["action_mask"])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)
