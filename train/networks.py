"""The torch actor-critic of PPO training: sb3-contrib's masked MLP policy, with a choice of the
arithmetic of its hidden layers.

``float32`` is sb3-contrib's ``MlpPolicy`` itself (same layers, same initial weights). ``bfloat16``
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


class SkyjoPolicy(MaskableActorCriticPolicy):
    """sb3-contrib's ``MlpPolicy`` with ``precision`` ("float32" or "bfloat16") for its hidden layers."""

    def __init__(self, *args: Any, precision: Literal["float32", "bfloat16"] = "float32", **kwargs: Any) -> None:
        if precision not in ("float32", "bfloat16"):
            raise ValueError(f"precision={precision!r} is not allowed; use 'float32' or 'bfloat16'")
        self.precision = precision
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        layers = BFloat16Layers if self.precision == "bfloat16" else MlpExtractor
        self.mlp_extractor = layers(self.features_dim, self.net_arch, self.activation_fn, device=self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "precision": self.precision}
