"""Heuristic advice as network inputs: what the counting player thinks of every action.

An *advised* agent's network reads the observation followed by [`ADVICE_SIZE`][] numbers
computed from it and the action mask, both public, so the advice leaks nothing. For each of the
26 actions:

* its *regret*: how many points worse the counting heuristic ([`skyjo_env.agents.counting`][]) expects it
  to be than that heuristic's best legal action, clipped to `[0, CAP]` and scaled to `[0, 1]`
  (an illegal action reads 1);
* a one-hot of the action the heuristic would play.

So a network can play the heuristic exactly by following the one-hot, and PPO learns where to
depart from it, instead of rediscovering the card counting and expected values from raw inputs.
"""

from __future__ import annotations

import functools

import numpy as np

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.agents.counting import CountingPolicy
from skyjo_env.observation import PADDED_SIZE, by_player_count, num_players, unpad
from skyjo_env.rules import Rules

#: The heuristics an agent may take advice from.
ADVISORS = ("counting",)
#: Numbers appended to each observation: a regret and a one-hot entry per action.
ADVICE_SIZE = 2 * NUM_ACTIONS
CAP = 20.0  #: regrets beyond this many points read as 1, like illegal actions


@functools.cache
def _advisor(name: str, rules: Rules) -> CountingPolicy:
    """The heuristic `name` of [`ADVISORS`][] (checked by the caller) for `rules`, built once."""
    return {"counting": CountingPolicy}[name](rules=rules)


def check_advisor(name: str | None) -> None:
    """`ValueError` unless `name` is `None` or one of [`ADVISORS`][]."""
    if name is not None and name not in ADVISORS:
        raise ValueError(f"advice={name!r} is not allowed; use None or one of {ADVISORS}")


def advice(name: str, observations: np.ndarray, action_masks: np.ndarray, rules: Rules | None = None) -> np.ndarray:
    """`(n, ADVICE_SIZE)` float32 advice of heuristic `name` under `rules` (default: the
    default rules for the observations' player count; see the module docstring).

    Rows without a legal action (e.g. the terminal observation of a finished game) get regrets of
    1 and no chosen action. Padded observations ([`skyjo_env.observation.pad()`][skyjo_env.observation.pad]) may mix
    player counts: each count's rows are advised under `rules` at that count.
    """
    check_advisor(name)
    masks = np.asarray(action_masks, dtype=bool)
    if np.shape(observations)[1] == PADDED_SIZE:
        base = Rules() if rules is None else rules
        out = np.empty((len(masks), ADVICE_SIZE), dtype=np.float32)
        for players, rows in by_player_count(observations):
            table = unpad(observations[rows], players)
            out[rows] = advice(name, table, masks[rows], base.replace(num_players=players))
        return out
    if rules is None:
        rules = Rules(num_players=num_players(np.shape(observations)[1]))
    costs = np.where(masks, _advisor(name, rules).costs(observations), np.inf)
    best = costs.min(axis=1, keepdims=True)
    playable = np.isfinite(best)
    regret = np.where(playable, np.minimum(costs - np.where(playable, best, 0), CAP), CAP) / CAP
    chosen = np.zeros_like(regret)
    rows = np.flatnonzero(playable[:, 0])
    chosen[rows, costs[rows].argmin(axis=1)] = 1.0
    return np.concatenate([regret, chosen], axis=1).astype(np.float32)


def with_advice(
    name: str, observations: np.ndarray, action_masks: np.ndarray, rules: Rules | None = None
) -> np.ndarray:
    """The observations with the advice of `name` (under `rules`) appended: `(n, obs + ADVICE_SIZE)` float32."""
    obs = np.asarray(observations, dtype=np.float32)
    return np.concatenate([obs, advice(name, obs, action_masks, rules)], axis=1)
