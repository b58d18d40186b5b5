"""Agent names -> constructors, so tournaments and the CLI can build agents by name.

Built-in names are ``random``, ``threshold``, ``counting`` and the shipped PPO agents
(``agents/weights/*.npz``, e.g. ``ppo-2p``). Other modules add theirs with
:func:`register` (for example trained PPO agents).
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable

from skyjo_env.agents import pretrained
from skyjo_env.agents.base import Policy
from skyjo_env.agents.counting import CountingPolicy
from skyjo_env.random_policy import RandomPolicy
from skyjo_env.agents.threshold import ThresholdPolicy

_FACTORIES: dict[str, Callable[..., Policy]] = {}


def register(name: str, factory: Callable[..., Policy], *, replace: bool = False) -> None:
    """Make ``make(name, **kw)`` call ``factory(**kw)``; ``ValueError`` if the name is taken."""
    if not isinstance(name, str) or not name or name != name.strip():
        raise ValueError(f"agent name must be a non-empty string without surrounding spaces, got {name!r}")
    if name in _FACTORIES and not replace:
        raise ValueError(f"agent name {name!r} is already registered; pass replace=True to override it")
    _FACTORIES[name] = factory


def names() -> list[str]:
    """Registered agent names, sorted."""
    return sorted(_FACTORIES)


def make(name: str, *, seed: int | None = None, **kwargs) -> Policy:
    """Build the agent registered as ``name``.

    ``seed`` is passed on only to agents whose constructor takes one (stochastic agents); other
    keyword arguments are passed on as they are.
    """
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(names())}")
    if seed is not None and "seed" in inspect.signature(factory).parameters:
        kwargs["seed"] = seed
    return factory(**kwargs)


register("random", RandomPolicy)
register("threshold", ThresholdPolicy)
register("counting", CountingPolicy)
for _name in pretrained.available():
    register(_name, functools.partial(pretrained.load, _name))
