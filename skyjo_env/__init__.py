"""skyjo-env: a numpy-vectorised Skyjo engine with PettingZoo and Gymnasium environments."""

from skyjo_env.engine import SkyjoEngine, StepResult
from skyjo_env.rules import Rules

__version__ = "0.1.0"
__all__ = ["Rules", "SkyjoEngine", "StepResult", "__version__"]
