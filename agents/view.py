"""Decode batched observation vectors ([`skyjo_env.observation`][]) into named arrays.

Heuristic agents see the game only through this view of the observation and the legal mask, never
through the engine. Seats are relative to the observer (seat 0 is the observer's own grid).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skyjo_env.cards import COUNTS, DECK_SIZE, MAX_VALUE, MIN_VALUE, SLOTS
from skyjo_env.observation import layout, num_players

#: Card values -2..12 as floats, indexed like the one-hot blocks of the observation.
VALUES = np.arange(MIN_VALUE, MAX_VALUE + 1, dtype=np.float32)

#: Phases as decoded from the `phase` one-hot (`NO_PHASE` when it is empty: the game is over).
SETUP, CHOOSE, DRAWN, TAKEN, NO_PHASE = 0, 1, 2, 3, -1
_PHASE_CODES = np.array([1, 2, 3, 4], dtype=np.float32)  # phase one-hot -> phase + 1 (0: none)


@dataclass(frozen=True)
class ObservationView:
    """One batch of observations as arrays; `N` observations, `P` players.

    Attributes:
        values: `(N, P, 12)` float32 face-up card values (0 where face down or removed).
        hidden: `(N, P, 12)` bool, the slot is face down.
        removed: `(N, P, 12)` bool, the slot's column was removed (R13).
        discard: `(N,)` int64 value of the discard pile's top card.
        held: `(N,)` int64 value of the card in hand: in phase `TAKEN`, and in `DRAWN` for the
            drawer (0 otherwise).
        phase: `(N,)` int64, one of `SETUP`, `CHOOSE`, `DRAWN`, `TAKEN`, `NO_PHASE`.
        unseen: `(N, 15)` float32 count of each value -2..12 not yet seen by the observer.
        totals: `(N, P)` float32 game totals divided by the end score.
        round_ending: `(N,)` bool, another player has ended the round (R15).
        ender: `(N,)` int64 relative seat of the player who ended the round, -1 while none has.
        draw_size: `(N,)` int64 cards in the draw pile.
    """

    values: np.ndarray
    hidden: np.ndarray
    removed: np.ndarray
    discard: np.ndarray
    held: np.ndarray
    phase: np.ndarray
    unseen: np.ndarray
    totals: np.ndarray
    round_ending: np.ndarray
    ender: np.ndarray
    draw_size: np.ndarray

    @property
    def num_players(self) -> int:
        return self.values.shape[1]

    def take(self, rows: np.ndarray) -> ObservationView:
        """The view of the observations `rows` alone."""
        return ObservationView(**{name: getattr(self, name)[rows] for name in self.__dataclass_fields__})


def decode(observations: np.ndarray) -> ObservationView:
    """Decode `(N, 38P+54)` observations into an [`ObservationView`][]."""
    obs = np.asarray(observations, dtype=np.float32)
    if obs.ndim != 2:
        raise ValueError(f"observations must be a 2-D batch (N, 38P+54), got shape {obs.shape}")
    n, width = obs.shape
    P = num_players(width)
    L = layout(P)
    grids = obs[:, : L["discard_top"].start].reshape(n, P, 3, SLOTS)
    round_ending = obs[:, L["round_ending"].start] > 0.5
    return ObservationView(
        values=np.rint(grids[:, :, 0] * MAX_VALUE),
        hidden=grids[:, :, 1] > 0.5,
        removed=grids[:, :, 2] > 0.5,
        discard=_one_hot_value(obs[:, L["discard_top"]]),
        held=_one_hot_value(obs[:, L["held"]]),
        phase=weighted_sum(obs[:, L["phase"]], _PHASE_CODES).astype(np.int64) - 1,
        unseen=np.rint(obs[:, L["unseen"]] * COUNTS).astype(np.float32),
        totals=obs[:, L["totals"]],
        round_ending=round_ending,
        ender=np.where(round_ending, obs[:, L["ender"]].argmax(axis=1), -1),
        draw_size=np.rint(obs[:, L["draw_size"].start] * DECK_SIZE).astype(np.int64),
    )


def _one_hot_value(one_hot: np.ndarray) -> np.ndarray:
    """Card value of each one-hot row over -2..12 (0 for an empty row)."""
    return np.rint(weighted_sum(one_hot, VALUES)).astype(np.int64)


def weighted_sum(rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """`rows @ weights` for `(n, k)` rows, without BLAS (whose threads only cost time on
    these small products)."""
    return np.einsum("nk,k->n", rows, weights)


def argmin_legal(costs: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """Per row, the legal action of lowest cost (the lowest action id on ties)."""
    masks = np.asarray(action_masks, dtype=bool)
    if not masks.any(axis=1).all():
        raise ValueError(f"no legal action in row(s) {np.flatnonzero(~masks.any(axis=1)).tolist()}")
    return np.where(masks, costs, np.inf).argmin(axis=1)
