# --8<-- [start:policy]
"""Greedy Skyjo agents: keep low cards, swap out the highest face-up card."""

import numpy as np

from skyjo_env.actions import DRAW, FLIP, REPLACE, TAKE
from skyjo_env.agents.view import CHOOSE, DRAWN, SETUP, TAKEN, decode
from skyjo_env.rules import Rules


def policy(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """One action for each of the N observations, legal under its mask."""
    view = decode(observations)  # seat 0 is the observer's own grid
    values = view.values[:, 0]  # (N, 12) my face-up card values
    hidden = view.hidden[:, 0]  # (N, 12) my face-down slots
    face_up = ~hidden & ~view.removed[:, 0]  # my face-up cards in play

    up_values = np.where(face_up, values, -np.inf)
    worst = up_values.max(axis=1)  # my highest face-up card
    worst_slot = up_values.argmax(axis=1)
    first_hidden = hidden.argmax(axis=1)  # my first face-down slot
    has_hidden = hidden.any(axis=1)

    # The card to place: the discard top when choosing, else the one in hand.
    card = np.where(view.phase == CHOOSE, view.discard, view.held)
    improves = card < worst  # it beats my highest face-up card
    slot = np.where(improves | ~has_hidden, worst_slot, first_hidden)
    keep = improves | (card <= 4) | ~has_hidden

    actions = np.select(
        [view.phase == p for p in (SETUP, CHOOSE, TAKEN, DRAWN)],
        [
            FLIP + first_hidden,  # setup: turn a card up
            np.where((card <= 3) | improves, TAKE, DRAW),
            REPLACE + slot,  # a taken card must be placed
            np.where(keep, REPLACE + slot, FLIP + first_hidden),
        ],
    )
    # Never illegal: where the choice is not legal, the first legal action.
    legal = masks[np.arange(len(actions)), actions]
    return np.where(legal, actions, masks.argmax(axis=1))


# --8<-- [end:policy]


# --8<-- [start:class]
class ColumnGreedy:
    """Greedy play that, under the column rule (R13), also builds columns."""

    def __init__(self, rules: Rules | None = None) -> None:
        rules = Rules() if rules is None else rules  # the table's rules
        self.name = "column-greedy"
        self.columns = rules.column_rule

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = policy(observations, masks)
        if not self.columns:
            return actions  # no columns to build: plain greedy play
        view = decode(observations)
        values, hidden = view.values[:, 0], view.hidden[:, 0]
        face_up = ~hidden & ~view.removed[:, 0]
        card = np.where(view.phase == CHOOSE, view.discard, view.held)

        # Per slot: the face-up cards equal to `card` in its column (k % 4).
        equal = face_up & (values == card[:, None])
        in_column = equal.reshape(-1, 3, 4).sum(axis=1)[:, np.arange(12) % 4]
        # Where the card joins its kind: face down, or over a higher card.
        higher = face_up & (values > card[:, None])
        joins = (in_column > 0) & (hidden | higher)
        slot = np.where(joins, in_column, 0).argmax(axis=1)  # most equal cards
        rows = np.arange(len(slot))
        completes = joins.any(axis=1) & (in_column[rows, slot] == 2)

        kept = (actions >= REPLACE) & (actions < FLIP)  # greedy keeps the card
        actions = np.where((view.phase == CHOOSE) & completes, TAKE, actions)
        actions = np.where(kept & joins.any(axis=1), REPLACE + slot, actions)
        legal = masks[rows, actions]
        return np.where(legal, actions, masks.argmax(axis=1))


# --8<-- [end:class]
