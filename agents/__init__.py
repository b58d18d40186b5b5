"""Agents for skyjo-env: every one is a batched [`Policy`][].

[`make()`][make] builds an agent from any agent spec ([`skyjo_env.agents.specs`][]: a registered name, a
trained agent's file or run folder, `module:attr`, `file.py:attr`, `alias=SPEC`); `names()`
lists the registered names, [`register()`][register] adds one, and installed packages add theirs through the
`skyjo_env.agents` entry-point group. [`load()`][load] returns a trained PPO agent (a shipped name such
as `"ppo-2p"`, a run folder or an `.npz` file). Advised networks read a heuristic's advice after
the observation ([`skyjo_env.agents.advice`][]).
"""

from skyjo_env.agents.base import Policy, PricedPolicy
from skyjo_env.agents.counting import CountingPolicy
from skyjo_env.agents.expectimax import ExpectimaxPolicy
from skyjo_env.agents.registry import names, register, unregister
from skyjo_env.agents.search import SearchPolicy
from skyjo_env.agents.specs import load, make
from skyjo_env.agents.threshold import ThresholdPolicy
from skyjo_env.random_policy import RandomPolicy

# Search and expectimax build their base or setup policy from any agent spec, so they sit above the specs
# (and the registry they read): they are registered here, once both are loaded, as a plug-in would be.
register("search", SearchPolicy)
register("expectimax", ExpectimaxPolicy)

__all__ = [
    "CountingPolicy",
    "ExpectimaxPolicy",
    "Policy",
    "PricedPolicy",
    "RandomPolicy",
    "SearchPolicy",
    "ThresholdPolicy",
    "load",
    "make",
    "names",
    "register",
    "unregister",
]
