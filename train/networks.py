"""The torch actor-critic of PPO training: sb3-contrib's masked MLP policy, with a choice of the
arithmetic of its hidden layers.

``float32`` is sb3-contrib's ``MlpPolicy`` itself (same layers, same initial weights, and bit for
bit the same actions, log-probabilities, entropies and gradients: ``tests/test_networks.py``), in
fewer torch calls: the masked distribution is computed once as plain tensors (sb3-contrib builds a
``Categorical`` twice per call, checking its arguments each time). ``bfloat16``
runs the hidden layers, which hold nearly all of the arithmetic, under ``torch.autocast`` in
bfloat16; the weights, the action and value heads, the distribution and the loss stay float32.
Where the processor multiplies bfloat16 in hardware (AVX-512 BF16 on x86; ``bfloat16_supported``)
the hidden layers then take about half the time and a PPO update of the main job about 0.7 of it
(docs/speed.md); the logits and values differ from float32 by the rounding of 8-bit mantissas
(``tests/test_networks.py`` bounds it). ``auto`` picks bfloat16 where it is supported, float32
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
    """Whether ``device`` (SB3's ``"auto"``: the one a model would use) multiplies bfloat16 natively."""
    device = get_device(device)
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a build without oneDNN
        return False


def resolve_precision(precision: Precision, device: torch.device | str = "auto") -> Literal["float32", "bfloat16"]:
    """``precision`` with ``"auto"`` replaced by what ``device`` supports."""
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


#: The logit sb3-contrib gives a masked action.
MASKED_LOGIT = -1e8


def masked_log_probs(logits: torch.Tensor, masks: torch.Tensor | np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log-probabilities, masks)`` of the masked categorical distribution over ``logits`` ``(n, k)``.

    The arithmetic of sb3-contrib's ``MaskableCategorical``, step for step so that the results are
    bit for bit its ``logits``: normalise, give masked actions :data:`MASKED_LOGIT`, normalise again.
    """
    normalised = logits - logits.logsumexp(-1, keepdim=True)
    masks = torch.as_tensor(masks, dtype=torch.bool, device=logits.device).reshape(normalised.shape)
    masked = torch.where(masks, normalised, torch.tensor(MASKED_LOGIT, dtype=logits.dtype, device=logits.device))
    return masked - masked.logsumexp(-1, keepdim=True), masks


class SkyjoPolicy(MaskableActorCriticPolicy):
    """sb3-contrib's ``MlpPolicy`` with ``precision`` ("float32" or "bfloat16") for its hidden layers."""

    def __init__(self, *args: Any, precision: Literal["float32", "bfloat16"] = "float32", **kwargs: Any) -> None:
        if precision not in ("float32", "bfloat16"):
            raise ValueError(f"precision={precision!r} is not allowed; use 'float32' or 'bfloat16'")
        self.precision = precision
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
        """Actions (sampled as ``Categorical.sample`` does, from the same random draws), values and
        log-probabilities of the actions, as sb3-contrib's policy gives them."""
        if action_masks is None:
            return super().forward(obs, deterministic)
        latent_pi, latent_vf = self._latents(obs)
        log_probs, _ = masked_log_probs(self.action_net(latent_pi), action_masks)
        probs = log_probs.softmax(-1)
        actions = probs.argmax(dim=1) if deterministic else torch.multinomial(probs, 1, True).T.reshape(-1)
        return actions, self.value_net(latent_vf), log_probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)

    def evaluate_actions(
        self, obs: torch.Tensor, actions: torch.Tensor, action_masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-probabilities and entropies of ``actions`` (the PPO loss's inputs), as
        sb3-contrib's policy gives them."""
        if action_masks is None:
            return super().evaluate_actions(obs, actions)
        latent_pi, latent_vf = self._latents(obs)
        log_probs, masks = masked_log_probs(self.action_net(latent_pi), action_masks)
        log_prob = log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
        p_log_p = torch.where(masks, log_probs * log_probs.softmax(-1), torch.tensor(0.0, device=log_probs.device))
        return self.value_net(latent_vf), log_prob, -p_log_p.sum(-1)

    def _build_mlp_extractor(self) -> None:
        layers = BFloat16Layers if self.precision == "bfloat16" else MlpExtractor
        self.mlp_extractor = layers(self.features_dim, self.net_arch, self.activation_fn, device=self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "precision": self.precision}
