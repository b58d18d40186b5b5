"""skyjo-env: a numpy-vectorised Skyjo engine with PettingZoo, Gymnasium and stable-baselines3 views.

The engine ([`SkyjoEngine`][]) imports numpy only. The environment views load on first use:
`skyjo_env.env` and `skyjo_env.raw_env` (PettingZoo AEC), `skyjo_env.SkyjoEnv` (Gymnasium),
`skyjo_env.SkyjoVectorEnv` (a Gymnasium `VectorEnv` of N games) and `skyjo_env.SkyjoSB3VecEnv`
(stable-baselines3, from the `train` extra). Importing the package registers them, as Gymnasium and
PettingZoo plug-ins do: `gymnasium.make("skyjo_env/Skyjo-v0")`,
`gymnasium.make_vec("skyjo_env/Skyjo-v0", num_envs=N)` and `pettingzoo.make("aec", "skyjo_env/skyjo_v0")`.
Entry points are strings, so an environment module loads only when an environment is made.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import gymnasium
import pettingzoo

from skyjo_env.engine import SkyjoEngine, StepResult
from skyjo_env.rules import Rules

try:  # the one version source is pyproject.toml, as installed
    __version__ = version("skyjo-env")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
__all__ = [
    "GYMNASIUM_ID", "PETTINGZOO_ID", "Rules", "SkyjoEngine", "SkyjoEnv", "SkyjoSB3VecEnv", "SkyjoVectorEnv",
    "StepResult", "__version__", "env", "raw_env",
]  # fmt: skip

GYMNASIUM_ID = "skyjo_env/Skyjo-v0"
PETTINGZOO_ID = "skyjo_env/skyjo_v0"

_LAZY = {
    "env": "skyjo_env.pettingzoo_env",
    "raw_env": "skyjo_env.pettingzoo_env",
    "SkyjoEnv": "skyjo_env.gymnasium_env",
    "SkyjoSB3VecEnv": "skyjo_env.sb3_vec_env",
    "SkyjoVectorEnv": "skyjo_env.gymnasium_vector_env",
}

if GYMNASIUM_ID not in gymnasium.registry:  # (a re-import, e.g. importlib.reload, registers once)
    gymnasium.register(
        id=GYMNASIUM_ID,
        entry_point="skyjo_env.gymnasium_env:SkyjoEnv",
        vector_entry_point="skyjo_env.gymnasium_vector_env:SkyjoVectorEnv",  # make_vec: one engine of N games
    )
if hasattr(pettingzoo, "register") and PETTINGZOO_ID not in pettingzoo.aec_registry:  # registry: PettingZoo 1.27+
    pettingzoo.register("aec", PETTINGZOO_ID, entry_point="skyjo_env.pettingzoo_env:env")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'skyjo_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
