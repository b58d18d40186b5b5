"""Agents for skyjo-env: every one is a batched :class:`~skyjo_env.agents.base.Policy`.

Build one by name with :func:`make` (``names()`` lists them); add more with :func:`register`.
Shipped PPO agents are registered by name too (``"ppo-2p"``, ...) and :func:`load` returns one.
Advised networks read a heuristic's advice after the observation (:mod:`skyjo_env.agents.advice`).
"""

from skyjo_env.agents.base import Policy
from skyjo_env.agents.counting import CountingPolicy
from skyjo_env.random_policy import RandomPolicy
from skyjo_env.agents.pretrained import load
from skyjo_env.agents.registry import make, names, register
from skyjo_env.agents.threshold import ThresholdPolicy

__all__ = ["CountingPolicy", "Policy", "RandomPolicy", "ThresholdPolicy", "load", "make", "names", "register"]
