"""Agents for skyjo-env: every one is a batched :class:`~agents.base.Policy`."""

from agents.base import Policy
from agents.random_agent import RandomPolicy

__all__ = ["Policy", "RandomPolicy"]
