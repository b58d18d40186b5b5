"""skyjo-env: a numpy-vectorised Skyjo engine with PettingZoo and Gymnasium environments.

The engine imports numpy only. The environments load on first use: ``skyjo_env.env`` and
``skyjo_env.raw_env`` (PettingZoo AEC), ``skyjo_env.SkyjoEnv`` (Gymnasium),
``skyjo_env.SkyjoVectorEnv`` (a Gymnasium ``VectorEnv`` of N games) and ``skyjo_env.SkyjoVecEnv``
(stable-baselines3, from the ``train`` extra). Importing the package registers
``gymnasium.make("skyjo_env/Skyjo-v0")``, ``gymnasium.make_vec("skyjo_env/Skyjo-v0", num_envs=N)``
and ``pettingzoo.make("aec", "skyjo_env/skyjo_v0")`` without importing Gymnasium or PettingZoo (see :mod:`skyjo_env.registration`).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from skyjo_env.engine import SkyjoEngine, StepResult
from skyjo_env.registration import register_all
from skyjo_env.rules import Rules

__version__ = "0.1.0"
__all__ = ["Rules", "SkyjoEngine", "SkyjoEnv", "SkyjoVecEnv", "SkyjoVectorEnv", "StepResult", "__version__", "env", "raw_env"]

_LAZY = {
    "env": "skyjo_env.aec_env",
    "raw_env": "skyjo_env.aec_env",
    "SkyjoEnv": "skyjo_env.gym_env",
    "SkyjoVecEnv": "skyjo_env.vector_env",
    "SkyjoVectorEnv": "skyjo_env.gym_vector_env",
}

register_all()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'skyjo_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
