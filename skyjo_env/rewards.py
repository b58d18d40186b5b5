"""Rewards of every seat, computed from what a step reports ([`StepResult`][]).

The engine plays the rules and reports round scores, totals and winners; a reward mode is a view's
choice, made here from that report alone:

mode       | reward of each seat, per stepped game
---------- | -------------------------------------
`"result"` | at game end the winners (lowest total, R20) share +1 and the others share -1, so a game's rewards sum to 0; all tied gives 0
`"score"`  | at each round end: the mean round score of the opponents minus one's own
`"lead"`   | at each round end: the change in one's lead over the best opponent (the lowest opponent total minus one's own), so a game's rewards add up to its final lead, positive exactly for a sole winner
`"none"`   | always 0
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from skyjo_env.arrays import any_set, over_seats
from skyjo_env.engine import StepResult

REWARD_MODES = ("result", "score", "lead", "none")


def check_reward(mode: str) -> None:
    """`ValueError` unless `mode` is one of [`REWARD_MODES`][]."""
    if mode not in REWARD_MODES:
        raise ValueError(f"reward={mode!r} is not allowed; use one of {REWARD_MODES}")


def rewards(mode: str, result: StepResult) -> np.ndarray:
    """`(n, P)` float32 rewards of mode `mode` for the `n` games a step reported on.

    A step in which no round ended gives shared read-only zeros.
    """
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
        win = result.winners[g]
        winners = over_seats(np.add, win.view(np.uint8))[:, None]
        losers = P - winners
        share = np.where(win, 1.0 / winners, -1.0 / np.maximum(losers, 1))
        out[g] = np.where(losers > 0, share, 0.0)
    return out


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
