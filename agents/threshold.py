"""The threshold player: a simple rule-of-thumb baseline.

* Setup: turns up its face-down slots in slot order.
* Takes the discard if its value is at most `take_max`; otherwise draws.
* Keeps a card it took, or a drawn card worth at most `keep_max`: it replaces its highest face-up
  card if that is higher than the card in hand, otherwise its first face-down slot.
* Otherwise discards the drawn card and turns up its first face-down slot.

It knows nothing of columns, card counting or the end of the round.
"""

from __future__ import annotations

import numpy as np

from skyjo_env.actions import DRAW, FLIP, NUM_ACTIONS, REPLACE, TAKE
from skyjo_env.agents.view import SETUP, TAKEN, argmin_legal, decode
from skyjo_env.cards import SLOTS

_SLOT_ORDER = np.arange(SLOTS, dtype=np.float32) * 1e-3  # tie-break: first slot first


class ThresholdPolicy:
    """Takes or keeps low cards, discards high ones (see the module docstring)."""

    name = "threshold"

    def __init__(self, take_max: int = 3, keep_max: int = 5) -> None:
        self.take_max = take_max
        self.keep_max = keep_max

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        view = decode(observations)
        n = len(view.phase)
        costs = np.zeros((n, NUM_ACTIONS), dtype=np.float32)
        phase = view.phase[:, None]
        own_up = view.values[:, 0]
        hidden = view.hidden[:, 0]
        held = view.held[:, None].astype(np.float32)

        # Choose: take a low discard, else draw.
        low_discard = view.discard <= self.take_max
        costs[:, TAKE] = np.where(low_discard, 0.0, 2.0)
        costs[:, DRAW] = 1.0

        # Holding a card: improve on the highest face-up card, else fill the first face-down slot.
        replace = np.where(hidden, _SLOT_ORDER, held - own_up + 0.5)
        keep = (phase == TAKEN) | (held <= self.keep_max)
        flip = np.where(phase == SETUP, _SLOT_ORDER, np.where(keep, 100.0, -100.0) + _SLOT_ORDER)
        costs[:, REPLACE:FLIP] = replace
        costs[:, FLIP:] = flip
        return argmin_legal(costs, action_masks)
