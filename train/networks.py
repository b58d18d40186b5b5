"""The torch actor-critic of PPO training: sb3-contrib's masked MLP policy, with a choice of the
arithmetic of its hidden layers.

`float32` is sb3-contrib's `MlpPolicy` itself (same layers, same initial weights, the same
distribution and loss) in fewer and faster torch calls: the masked distribution is computed once,
over the legal actions ([`masked_distribution()`][masked_distribution]), and Adam is torch's fused implementation.
Both change only the rounding: log-probabilities and entropies agree with sb3-contrib's to about
1e-6, and an update of the same rollout moves the weights as sb3-contrib does to about 1e-5
(`tests/test_networks.py`); together they take a sixth to a fifth off the PPO update (docs/speed.md). `bfloat16`
runs the hidden layers, which hold nearly all of the arithmetic, under `torch.autocast` in
bfloat16; the weights, the action and value heads, the distribution and the loss stay float32.
Where the processor multiplies bfloat16 in hardware (AVX-512 BF16 on x86; `bfloat16_supported`)
the hidden layers then take about half the time and a PPO update of the main job about 0.7 of it
(docs/speed.md); the logits and values differ from float32 by the rounding of 8-bit mantissas
(`tests/test_networks.py` bounds it). `auto` picks bfloat16 where it is supported, float32
elsewhere. The default is float32: in the main job's 16 minutes bfloat16 made no more PPO steps.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from stable_baselines3.common.utils import get_device

from skyjo_env.train.config import Precision

#: Activations of the hidden layers, by name.
ACTIVATIONS: dict[str, type[torch.nn.Module]] = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}


def bfloat16_supported(device: torch.device | str = "auto") -> bool:
    """Whether `device` (SB3's `"auto"`: the one a model would use) multiplies bfloat16 natively."""
    device = get_device(device)
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a build without oneDNN
        return False


def resolve_precision(precision: Precision, device: torch.device | str = "auto") -> Literal["float32", "bfloat16"]:
    """`precision` with `"auto"` replaced by what `device` supports."""
    if precision == "auto":
        return "bfloat16" if bfloat16_supported(device) else "float32"
    return precision


class BFloat16Layers(MlpExtractor):
    """SB3's hidden layers (same modules, same parameter names) run in bfloat16; float32 out."""

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        with torch.autocast(features.device.type, dtype=torch.bfloat16):
            return self.policy_net(features).float()

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        with torch.autocast(features.device.type, dtype=torch.bfloat16):
            return self.value_net(features).float()


def masked_distribution(logits: torch.Tensor, masks: torch.Tensor | np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """`(log-probabilities, probabilities)` of the categorical distribution over `logits` `(n, k)`
    restricted to the actions `masks` allows (each row must allow one).

    The distribution of sb3-contrib's `MaskableCategorical` (which gives masked actions a logit of
    -1e8 and normalises twice, with `logsumexp` over values whose exponentials underflow, a slow
    path), computed once over the legal actions: masked actions get probability 0 exactly and a
    finite log-probability that nothing reads, so no NaN reaches a gradient.
    """
    masks = torch.as_tensor(masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
    top = torch.where(masks, logits, -torch.inf).amax(-1, keepdim=True)
    shifted = torch.where(masks, logits - top, 0.0)
    weights = torch.where(masks, shifted.exp(), 0.0)
    total = weights.sum(-1, keepdim=True)
    return shifted - total.log(), weights / total


class SkyjoPolicy(MaskableActorCriticPolicy):
    """sb3-contrib's `MlpPolicy` with `precision` ("float32" or "bfloat16") for its hidden layers."""

    def __init__(self, *args: Any, precision: Literal["float32", "bfloat16"] = "float32", **kwargs: Any) -> None:
        if precision not in ("float32", "bfloat16"):
            raise ValueError(f"precision={precision!r} is not allowed; use 'float32' or 'bfloat16'")
        self.precision = precision
        adam = kwargs.get("optimizer_class", torch.optim.Adam) is torch.optim.Adam
        if adam and kwargs.get("optimizer_kwargs") is None:
            kwargs["optimizer_kwargs"] = {"eps": 1e-5, "fused": True}  # sb3's Adam settings, in one fused call
        super().__init__(*args, **kwargs)

    def _latents(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The actor's and the critic's last hidden layers."""
        features = self.extract_features(obs)
        if self.share_features_extractor:
            return self.mlp_extractor(features)
        pi_features, vf_features = features
        return self.mlp_extractor.forward_actor(pi_features), self.mlp_extractor.forward_critic(vf_features)

    def forward(
        self, obs: torch.Tensor, deterministic: bool = False, action_masks: np.ndarray | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Actions (drawn as `Categorical.sample` draws them), values and log-probabilities of the actions."""
        if action_masks is None:
            return super().forward(obs, deterministic)
        if not np.asarray(action_masks).any(axis=-1).all():
            raise ValueError("an observation has no legal action: every action is masked")
        latent_pi, latent_vf = self._latents(obs)
        log_probs, probs = masked_distribution(self.action_net(latent_pi), action_masks)
        actions = probs.argmax(dim=1) if deterministic else torch.multinomial(probs, 1, True).T.reshape(-1)
        return actions, self.value_net(latent_vf), log_probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)

    def evaluate_actions(
        self, obs: torch.Tensor, actions: torch.Tensor, action_masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-probabilities and entropies of `actions`: the PPO loss's inputs."""
        if action_masks is None:
            return super().evaluate_actions(obs, actions)
        values, log_probs, probs = self._evaluate(obs, action_masks)
        log_prob = log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
        return values, log_prob, -(probs * log_probs).sum(-1)

    def action_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """The actor's logits `(n, 26)` of every action, masked or not."""
        features = self.extract_features(obs, self.pi_features_extractor)
        assert isinstance(features, torch.Tensor)  # one extractor's features
        return self.action_net(self.mlp_extractor.forward_actor(features))

    def values_and_log_probs(
        self, obs: torch.Tensor, action_masks: torch.Tensor | np.ndarray
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Values `(n, 1)` and the log-probabilities `(n, 26)` of every action (finite, and not
        meaningful, for the masked ones): what a warm start fits ([`skyjo_env.train.imitation`][])."""
        values, log_probs, _ = self._evaluate(obs, action_masks)
        return values, log_probs

    def _evaluate(
        self, obs: torch.Tensor, action_masks: torch.Tensor | np.ndarray
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Values, log-probabilities and probabilities of every action
        ([`masked_distribution()`][masked_distribution])."""
        latent_pi, latent_vf = self._latents(obs)
        log_probs, probs = masked_distribution(self.action_net(latent_pi), action_masks)
        return self.value_net(latent_vf), log_probs, probs

    def _build_mlp_extractor(self) -> None:
        layers = BFloat16Layers if self.precision == "bfloat16" else MlpExtractor
        self.mlp_extractor = layers(self.features_dim, self.net_arch, self.activation_fn, device=self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "precision": self.precision}
