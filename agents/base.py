"""The policy interface every agent implements: batched observations and masks in, actions out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from skyjo_env.checks import check_actions, legal_names
from skyjo_env.opponents import policy_name

#: `prices(observations, action_masks) -> (N, 26)`: how a policy ranks the actions, lower first.
Pricing = Callable[[np.ndarray, np.ndarray], np.ndarray]


@runtime_checkable
class Policy(Protocol):
    """A batched policy.

    `policy(observations, action_masks)` maps `(N, obs_size)` float32 observations (see
    [`skyjo_env.observation`][]) and `(N, 26)` boolean legal-action masks of N games to `(N,)`
    integer actions, each legal under its mask. `name` labels it in tournaments.
    """

    name: str

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class PricedPolicy(Policy, Protocol):
    """A policy that prices every action and plays the legal one of lowest cost (lowest id on ties).

    `costs(observations)` gives `(N, 26)` float32 costs (lower is better; only legal actions are
    meaningful). The counting heuristic is one; a warm start fits a network to such a teacher's
    softened choices ([`skyjo_env.train.imitation.soft_targets()`][skyjo_env.train.imitation.soft_targets]).
    """

    def costs(self, observations: np.ndarray) -> np.ndarray: ...


def pricing(policy: Any) -> Pricing | None:
    """How `policy` ranks its actions, lower first: a [`PricedPolicy`][]'s `costs()`, or minus a
    network's `logits()` (its log-probabilities but for a constant per row, so that a Boltzmann
    policy over these prices at temperature 1 is the network's own); `None` for a policy that only chooses."""
    if isinstance(policy, PricedPolicy):
        return lambda observations, action_masks: policy.costs(observations)
    logits = getattr(policy, "logits", None)
    if callable(logits):
        return lambda observations, action_masks: -np.asarray(logits(observations, action_masks))
    return None


def base_choice(base: Any, observations: np.ndarray, action_masks: np.ndarray, role: str) -> np.ndarray:
    """`(N,)` the actions of `base`, a policy another agent builds on, checked against the boolean
    `action_masks`: it gets copies (nothing it writes changes what the caller reads), and a malformed
    result or an illegal action is a `ValueError` naming it as `role` (e.g. `"search's base"`)."""
    masks = np.asarray(action_masks, dtype=bool)
    n, name = len(masks), policy_name(base)

    def illegal(i: int, a: int) -> str:
        return (
            f"{role} {name!r} chose illegal action {a} (row {i} of {n}); legal actions there: {legal_names(masks[i])}"
        )

    return check_actions(
        base(observations.copy(), masks.copy()),
        masks,
        malformed=lambda a: (
            f"{role} {name!r} returned {a.dtype} actions of shape {a.shape}; it must return {n} integer action ids"
        ),
        illegal=illegal,
    )
