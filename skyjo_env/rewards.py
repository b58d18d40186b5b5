"""Rewards of every seat, computed from what a step reports ([`StepResult`][]).

The engine plays the rules and reports round scores, totals and winners; a reward mode is a view's
choice, made here from that report alone:

mode       | reward of each seat, per stepped game
---------- | -------------------------------------
`"result"` | at game end the winners (lowest total, R20) share +1 and the others share -1, so a game's rewards sum to 0; all tied gives 0
`"score"`  | at each round end: the mean round score of the opponents minus one's own
`"lead"`   | at each round end: the change in one's lead over the best opponent (the lowest opponent total minus one's own), so a game's rewards add up to its final lead, positive exactly for a sole winner
`"none"`   | always 0

A reward may also be a weighted sum of modes, given as a mapping: `{"score": 1, "result": 20}` pays the
round-score difference each round and, at game end, 20 points more to a sole winner (20 shared among
tied winners) and 20 / (P - 1) points less to each loser (R20).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache

import numpy as np

from skyjo_env.arrays import any_set, over_seats
from skyjo_env.engine import StepResult

REWARD_MODES = ("result", "score", "lead", "none")
#: A reward: one of [`REWARD_MODES`][], or a mapping of modes to weights (a weighted sum of them).
Reward = str | Mapping[str, float]


def check_reward(mode: Reward) -> None:
    """`ValueError` unless `mode` is one of [`REWARD_MODES`][] or a non-empty mapping of them to
    finite weights."""
    if isinstance(mode, Mapping):
        if mode and all(
            m in REWARD_MODES and isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
            for m, w in mode.items()
        ):
            return
    elif isinstance(mode, str) and mode in REWARD_MODES:
        return
    raise ValueError(
        f"reward={mode!r} is not allowed; use one of {REWARD_MODES} or a mapping of them to finite weights "
        "(e.g. {'score': 1, 'result': 20})"
    )


def rewards(mode: Reward, result: StepResult) -> np.ndarray:
    """`(n, P)` float32 rewards of mode `mode` (or a weighted sum of modes) for the `n` games a step
    reported on.

    A step in which no round ended gives shared read-only zeros.
    """
    if not isinstance(mode, Mapping):
        return _mode_rewards(mode, result)
    if not any_set(result.round_over):  # every mode pays at round ends (a game ends with a round) or never
        return _zeros(*result.round_scores.shape)
    out = np.zeros(result.round_scores.shape, dtype=np.float32)
    for m, w in mode.items():
        if w:
            out += np.float32(w) * _mode_rewards(m, result)
    return out


def _mode_rewards(mode: str, result: StepResult) -> np.ndarray:
    n, P = result.round_scores.shape
    scored = result.game_over if mode == "result" else result.round_over
    if mode == "none" or not any_set(scored):
        return _zeros(n, P)
    out = np.zeros((n, P), dtype=np.float32)
    g = np.flatnonzero(scored)
    if mode == "score":
        s = result.round_scores[g].astype(np.float32)
        out[g] = (s.sum(axis=1, keepdims=True) - s) / (P - 1) - s
    elif mode == "lead":
        totals = result.totals[g]
        out[g] = _lead_over_best_rival(totals) - _lead_over_best_rival(totals - result.round_scores[g])
    else:  # "result"
        out[g] = result_shares(result.winners[g])
    return out


def result_shares(win: np.ndarray) -> np.ndarray:
    """`(n, P)` each seat's share of a game's result (R20) from its winners `win` `(n, P)` bool: the
    winners share +1, the others share -1; all tied gives 0."""
    winners = over_seats(np.add, win.view(np.uint8))[:, None]
    losers = win.shape[1] - winners
    share = np.where(win, 1.0 / winners, -1.0 / np.maximum(losers, 1))
    return np.where(losers > 0, share, 0.0)


def _lead_over_best_rival(totals: np.ndarray) -> np.ndarray:
    """`(n, P)` float32: the lowest total among each seat's opponents minus the seat's own."""
    t = totals.astype(np.float32)
    others = np.where(np.eye(t.shape[1], dtype=bool), np.inf, t[:, None, :])
    return others.min(axis=2) - t


@lru_cache(maxsize=64)
def _zeros(n: int, players: int) -> np.ndarray:
    zeros = np.zeros((n, players), dtype=np.float32)
    zeros.setflags(write=False)
    return zeros
