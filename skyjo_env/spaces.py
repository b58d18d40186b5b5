"""The Gymnasium spaces shared by every environment: actions, observations and action masks."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.cards import MAX_VALUE, MIN_VALUE, SLOTS
from skyjo_env.observation import PADDED_SEATS, TOTALS_FLOOR, check_obs_type, layout, pad, size, totals_ceiling
from skyjo_env.rules import Rules


def action_space(seed: int | None = None) -> spaces.Discrete:
    """`Discrete(26)`: the action ids of [`skyjo_env.actions`][]."""
    return spaces.Discrete(NUM_ACTIONS, seed=seed)


def observation_space(rules: Rules, seed: int | None = None, obs_type: str = "table") -> spaces.Box:
    """The flat float32 observation of [`skyjo_env.observation`][] at a table under `rules`, with
    the bounds of each entry; with `obs_type="padded"`, of the padded encoding (the same at every
    player count: the bounds of eight seats, and [0, 1] for the player count).

    Card values lie in [-2/12, 1] and every other entry in [0, 1], except the game totals over
    `end_score`: a total before the last round is below `end_score` (R19) and a round scores at
    most 288 (twelve 12s, doubled: R17), so it stays below `1 + 288 / end_score`; below, the
    observation clips it at -1 (a total of `-end_score`, which negative rounds never reach in a
    real game).
    """
    check_obs_type(obs_type)
    if obs_type == "padded":
        full = observation_space(rules.replace(num_players=PADDED_SEATS))
        low, high = pad(full.low[None], PADDED_SEATS)[0], pad(full.high[None], PADDED_SEATS)[0]
        low[size(PADDED_SEATS) :], high[size(PADDED_SEATS) :] = 0.0, 1.0  # the player-count one-hot
        return spaces.Box(low, high, dtype=np.float32, seed=seed)
    P = rules.num_players
    L = layout(P)
    low = np.zeros(size(P), dtype=np.float32)
    high = np.ones(size(P), dtype=np.float32)
    for r in range(P):
        low[L[f"grid_{r}"].start : L[f"grid_{r}"].start + SLOTS] = MIN_VALUE / MAX_VALUE
    low[L["totals"]] = TOTALS_FLOOR
    high[L["totals"]] = totals_ceiling(rules.end_score)
    return spaces.Box(low, high, dtype=np.float32, seed=seed)


def mask_space(seed: int | None = None) -> spaces.Box:
    """An int8 legal-action mask: entry `a` is 1 when action `a` is legal."""
    return spaces.Box(0, 1, shape=(NUM_ACTIONS,), dtype=np.int8, seed=seed)
