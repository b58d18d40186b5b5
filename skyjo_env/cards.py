"""The Skyjo deck (R1) and the grid layout (R3) as constants."""

from __future__ import annotations

import numpy as np

#: Card values, lowest first. Index `v - MIN_VALUE` is used wherever values index arrays.
VALUES = np.arange(-2, 13, dtype=np.int8)
MIN_VALUE = -2
MAX_VALUE = 12
NUM_VALUES = len(VALUES)  # 15

#: R1: five -2, ten -1, fifteen 0, ten each of 1..12.
COUNTS = np.array([5, 10, 15] + [10] * 12, dtype=np.int16)
DECK_SIZE = int(COUNTS.sum())  # 150

#: The 150-card deck in sorted order.
DECK = np.repeat(VALUES, COUNTS).astype(np.int8)

#: R3: a grid of 3 rows x 4 columns, slot = row * 4 + column.
ROWS = 3
COLS = 4
SLOTS = ROWS * COLS  # 12
ALL_SLOTS = (1 << SLOTS) - 1  # 0xFFF: bitmask of every slot

#: Bitmask of the three slots of column c is `COLUMN_MASK << c`.
COLUMN_MASK = 0b000100010001

#: Cards every player turns up during setup (R5).
SETUP_FLIPS = 2

#: `SLOT_FLAGS[bits]` unpacks a 12-bit slot bitmask into 12 booleans (slot k = bit k).
SLOT_FLAGS = ((np.arange(1 << SLOTS)[:, None] >> np.arange(SLOTS)) & 1).astype(bool)


def value_counts(games: int, *places: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """`(games, 15)` int64: each game's count of every card value over `places`, pairs of `cards`
    (values, the game first: `(games, ...)`) and a boolean mask of the same shape, the cards counted.
    One `bincount` over every place: an uncounted card goes to one count past the last game's."""
    nowhere = games * NUM_VALUES
    first = np.arange(games, dtype=np.int64) * NUM_VALUES  # each game's first count
    keys = [
        np.where(counted, first.reshape((games,) + (1,) * (cards.ndim - 1)) + cards - MIN_VALUE, nowhere).ravel()
        for cards, counted in places
    ]
    return np.bincount(np.concatenate(keys), minlength=nowhere + 1)[:nowhere].reshape(games, NUM_VALUES)


def check_deck(deck: object, what: str) -> np.ndarray:
    """`deck` as int8 card values if it is an order of the whole 150-card deck (R1); else a
    `ValueError` that calls it `what`."""
    arr = np.asarray(deck)
    if arr.shape != (DECK_SIZE,) or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{what} must be {DECK_SIZE} integer card values, got shape {arr.shape}")
    if not np.array_equal(np.sort(arr), DECK):
        raise ValueError(f"{what} is not a permutation of the 150-card deck (R1)")
    return arr.astype(np.int8)
