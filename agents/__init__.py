"""Agents for skyjo-env: every one is a batched :class:`~agents.base.Policy`.

Build one by name with :func:`make` (``names()`` lists them); add more with :func:`register`.
Shipped PPO agents are registered by name too (``"ppo-2p"``, ...) and :func:`load` returns one.
Advised networks read a heuristic's advice after the observation (:mod:`agents.advice`).
"""

from agents.base import Policy
from agents.counting import CountingPolicy
from agents.random_agent import RandomPolicy
from agents.pretrained import load
from agents.registry import make, names, register
from agents.threshold import ThresholdPolicy

__all__ = ["CountingPolicy", "Policy", "RandomPolicy", "ThresholdPolicy", "load", "make", "names", "register"]
