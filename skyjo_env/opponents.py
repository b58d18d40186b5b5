"""Opponents of a learner: batched policies ``policy(observations, action_masks) -> actions``.

Any callable with that signature plays (see :class:`skyjo_env.agents.base.Policy`): it gets the ``(n, obs)``
float32 observations of the seats it plays and their ``(n, 26)`` boolean legal-action masks, and
returns ``n`` legal action ids. A policy that never reads its observations may say so with an
attribute ``observes = False``: it then gets an empty ``(n, 0)`` array, and the environment skips
encoding observations for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from skyjo_env.actions import action_name
from skyjo_env.engine import SkyjoEngine
from skyjo_env.observation import observe

OpponentPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def policy_name(policy: OpponentPolicy) -> str:
    """How errors name a policy: its ``name`` attribute, else its type."""
    return str(getattr(policy, "name", type(policy).__name__))


def per_seat(opponents: OpponentPolicy | Sequence[OpponentPolicy], num_players: int) -> list[OpponentPolicy]:
    """One policy for each opponent seat, in clockwise order after the learner.

    ``opponents`` is one policy for all of them or a sequence of ``num_players - 1`` policies.
    """
    count = num_players - 1
    if callable(opponents):
        return [opponents] * count
    policies = list(opponents)
    if len(policies) != count or not all(callable(p) for p in policies):
        raise ValueError(
            f"opponents must be one policy for all {count} opponent seats or a sequence of {count} "
            f"callables (one per seat, clockwise after the learner), got {opponents!r}"
        )
    return policies


def act(policy: OpponentPolicy, engine: SkyjoEngine, games: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The policy's checked actions for the seats to act in ``games``, whose legal actions are ``masks``.

    Each returned action is an integer legal under its mask, or a ``ValueError`` names the policy.
    """
    if getattr(policy, "observes", True):
        observations = observe(engine, engine.current[games], games)
    else:
        observations = np.empty((len(games), 0), dtype=np.float32)
    actions = np.asarray(policy(observations, masks))
    n = masks.shape[0]
    if actions.shape != (n,) or actions.dtype.kind not in "iu":
        raise ValueError(
            f"opponent policy {policy_name(policy)!r} returned {actions.dtype} actions of shape "
            f"{actions.shape}; it must return {n} integer action ids"
        )
    width = masks.shape[1]
    ok = (actions >= 0) & (actions < width)
    ok &= masks.reshape(-1).take(np.arange(0, n * width, width) + np.where(ok, actions, 0))  # row i, column a_i
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        legal = [action_name(a) for a in np.flatnonzero(masks[i])]
        raise ValueError(
            f"opponent policy {policy_name(policy)!r} chose illegal action {int(actions[i])} "
            f"(row {i} of {n}); legal actions there: {legal}"
        )
    return actions
