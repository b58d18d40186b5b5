"""Agent names -> factories: the built-in agents, the shipped PPO agents and third-party plug-ins.

Built-in names are `random`, `threshold`, `counting`, `search`, `expectimax`, the shipped PPO agents
(`agents/weights/*.npz`, e.g. `ppo-2p`) and `ppo`, the shipped network for the table's size. [`register()`][register] adds a name at run time. Installed
packages add theirs through the entry-point group [`ENTRY_POINT_GROUP`][], discovered when a name
is looked up, so `pip install someones-bot` makes `agents.make("someones-bot")` (and
`skyjo tournament --agents someones-bot`) work:

    [project.entry-points."skyjo_env.agents"]
    someones-bot = "someones_bot:SomeonesBot"   # a Policy class, a factory, or a plain policy function

[`skyjo_env.agents.make()`][skyjo_env.agents.make] builds an agent from a name or any other agent spec.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from skyjo_env.agents import pretrained
from skyjo_env.agents.counting import CountingPolicy
from skyjo_env.agents.threshold import ThresholdPolicy
from skyjo_env.random_policy import RandomPolicy

#: The entry-point group through which installed packages register agents.
ENTRY_POINT_GROUP = "skyjo_env.agents"

_FACTORIES: dict[str, Callable[..., Any]] = {}


def register(name: str, factory: Callable[..., Any], *, replace: bool = False) -> None:
    """Make the agent name `name` stand for `factory` (a policy, a policy class or a factory).

    `ValueError` if the name is malformed (empty, surrounding spaces, or a character that agent
    specs reserve: `=`, `:`, `/`) or already taken (unless `replace`).
    """
    if not isinstance(name, str) or not name or name != name.strip() or any(c in name for c in "=:/\\"):
        raise ValueError(
            f"agent name must be a non-empty string without surrounding spaces, '=', ':' or '/', got {name!r}"
        )
    if name in names() and not replace:
        raise ValueError(f"agent name {name!r} is already registered; pass replace=True to override it")
    _FACTORIES[name] = factory


def unregister(name: str) -> None:
    """Forget a name given to [`register()`][register]; `ValueError` if it was not registered that way."""
    if _FACTORIES.pop(name, None) is None:
        raise ValueError(f"agent name {name!r} was not registered with register()")


def names() -> list[str]:
    """Every agent name: registered ones and those of installed plug-ins, sorted."""
    return sorted(set(_FACTORIES) | set(_plugins()))


def factory(name: str) -> Callable[..., Any] | None:
    """What the name `name` stands for (loading a plug-in's object), or `None` for an unknown name.

    `ValueError` naming the plug-in's distribution if its entry point does not load.
    """
    if name in _FACTORIES:
        return _FACTORIES[name]
    point = _plugins().get(name)
    if point is None:
        return None
    try:
        return point.load()
    except Exception as exc:  # any error of a third-party import
        owner = f" of {point.dist.name}" if point.dist is not None else ""
        raise ValueError(f"agent {name!r}: the entry point {point.value!r}{owner} does not load: {exc}") from exc


def _plugins() -> dict[str, EntryPoint]:
    """The installed entry points of [`ENTRY_POINT_GROUP`][], by name (the first of a name wins)."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point)
    return found


register("random", RandomPolicy)
register("threshold", ThresholdPolicy)
register("counting", CountingPolicy)
register("ppo", pretrained.for_table)  # the shipped network for the table's size
for _name in pretrained.available():
    register(_name, functools.partial(pretrained.load, _name))
