"""The counting player: expected-value play from public card counting.

Every option is scored by the change it makes to the expected score of the player's own grid,
column by column ([`skyjo_env.agents.columns`][]), and the cheapest legal one is played:

* A face-down card is worth `mu`, the mean of the cards the player has not seen (the `unseen`
  counts of the observation). Drawing is worth the expectation, over the unseen cards, of the best
  thing to do with the drawn card; taking the discard is compared with that, and is played only
  if it gains something (a taken card put back over an equal one is a pass, and two players
  passing would swap one card forever).
* Columns (R13): a card that completes a face-up pair removes the column; a face-up pair of w's is
  credited `pair_weight * p(w) * (2w + third card)` for the hope of completing it later; a
  face-down card next to a pair completes it with probability `p(w)`.
* Ending the round (R15, R17): before turning its last face-down card it estimates the chance of
  being doubled, from its exact score against each opponent's face-up cards plus `mu` per
  face-down card minus one last improving turn, and adds the expected doubling to that option.
* Feeding: a card it discards may be taken by the next player; what that card would gain them
  (over their worst card, or by completing a face-up pair) beyond an average draw is added,
  times `feed_weight`.
* Once another player has ended the round it plays its last turn for its own final score only
  (no pair hopes).
* Setup: turns up `setup_slots` (by default two cards of one row: two columns to build on).

It plays by the table's rules: with the column rule off (R13) columns are worth the sum of their
cards and no pair is hoped for; with columns completed at the final reveal staying (R14 off), a
face-down card turned up only for scoring completes nothing. Its weights were tuned in 2-player
tournaments against itself under the default rules (see `docs/baselines.md`).
"""

from __future__ import annotations

import numpy as np

from skyjo_env.actions import DRAW, FLIP, NUM_ACTIONS, REPLACE, TAKE
from skyjo_env.agents.columns import ColumnModel
from skyjo_env.agents.view import CHOOSE, SETUP, VALUES, ObservationView, argmin_legal, decode, weighted_sum
from skyjo_env.cards import COLS, MIN_VALUE, SLOTS
from skyjo_env.rules import Rules

_MIN_GAIN = 0.25  # a take must gain at least this much
_NEVER = np.float32(1e6)  # cost of an option never chosen while another is legal


class CountingPolicy:
    """Expected-value player with card counting, column building and round-end judgement."""

    name = "counting"

    def __init__(
        self,
        pair_weight: float = 4.0,
        last_turn_ref: float = 2.0,
        feed_weight: float = 0.7,
        setup_slots: tuple[int, int] = (0, 1),
        rules: Rules | None = None,
    ) -> None:
        if len(set(setup_slots)) != 2 or not all(0 <= s < SLOTS for s in setup_slots):
            raise ValueError(f"setup_slots must be two different slots in 0..{SLOTS - 1}, got {setup_slots!r}")
        self.rules = Rules() if rules is None else rules
        self.columns = self.rules.column_rule
        self.final_reveal_columns = self.rules.column_rule and self.rules.column_rule_at_final_reveal
        self.pair_weight = pair_weight
        self.last_turn_ref = last_turn_ref
        self.feed_weight = feed_weight
        preference = np.full(SLOTS, 10.0, dtype=np.float32) + np.arange(SLOTS) * 1e-3
        preference[list(setup_slots)] = (0.0, 1.0)
        self._setup_costs = preference

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return argmin_legal(self.costs(observations), action_masks)

    def costs(self, observations: np.ndarray) -> np.ndarray:
        """`(n, 26)` float32: the expected change of the own grid's score of every action (lower
        is better; only legal actions are meaningful, and some illegal ones may be infinite)."""
        v = decode(observations)
        n = v.phase.size
        # Law of an unseen card. A finished game's last observation may have none left (an 8-player
        # game can see every card): its row is NaN, and no action of it is legal.
        with np.errstate(invalid="ignore"):
            p = v.unseen / v.unseen.sum(axis=1, keepdims=True)
        own, hidden, removed = (np.ascontiguousarray(x[:, 0]) for x in (v.values, v.hidden, v.removed))
        beta = np.where(v.round_ending, np.float32(0), np.float32(self.pair_weight))
        reveal = None if self.final_reveal_columns else ~v.round_ending  # on a last turn, cards stay down
        model = ColumnModel(own, hidden, removed, p, beta, self.columns, reveal)
        rows = np.arange(n)
        flip = np.where(hidden, model.flip_deltas(), np.inf)  # before the cost of the discard
        # The card to place: the discard (to price taking it) or the card in hand.
        card = np.where(v.phase == CHOOSE, v.discard, v.held)
        place = model.replace_deltas(card)

        # Turning the last face-down card ends the round: add the expected R17 doubling.
        ending = np.flatnonzero((hidden.sum(axis=1) == 1) & ~v.round_ending & (v.phase != SETUP))
        last = np.where(hidden.sum(axis=1) == 1, hidden.argmax(axis=1), -1)
        doubling = np.zeros((n, VALUES.size), dtype=np.float32)  # by value of the last card
        if ending.size:
            doubling[ending] = self._doubling_costs(v.take(ending), p[ending])
            at = last[ending]
            place[ending, at] += doubling[ending, card[ending] - MIN_VALUE]
            flip[ending, at] += (doubling[ending] * p[ending]).sum(axis=1)

        # What the discarded card is worth to the next player: the replaced card (a face-down one
        # is unknown until then), or the drawn card when turning a card up.
        feed = self._feeding_costs(v, p)  # (n, 15) by value of the discard
        up_value = (own - MIN_VALUE).astype(np.intp)
        slot_feed = np.where(hidden, (feed * p).sum(axis=1, keepdims=True), feed[rows[:, None], up_value])
        place += slot_feed

        costs = np.empty((n, NUM_ACTIONS), dtype=np.float32)
        # Taking the discard without gaining is a pass: two such players could swap one card forever.
        best_take = place.min(axis=1)
        takes = best_take < -_MIN_GAIN
        costs[:, TAKE] = np.where(takes, best_take, _NEVER)
        costs[:, DRAW] = 0
        costs[:, REPLACE:FLIP] = place
        played_flip = flip + feed[rows, v.held - MIN_VALUE][:, None]
        costs[:, FLIP:] = np.where((v.phase == SETUP)[:, None], self._setup_costs, played_flip)
        # Drawing is compared with taking only where taking gains something.
        choose = np.flatnonzero((v.phase == CHOOSE) & takes)
        if choose.size:
            penalty_slot = np.where(doubling[choose].any(axis=1), last[choose], -1)
            by_card = model.best_replacements(choose, slot_feed[choose], penalty_slot, doubling[choose])  # (c, 15)
            best = np.minimum(by_card, flip[choose].min(axis=1)[:, None] + feed[choose])
            costs[choose, DRAW] = (best * p[choose]).sum(axis=1)
        return costs

    def _feeding_costs(self, v: ObservationView, p: np.ndarray) -> np.ndarray:
        """`(n, 15)`: cost of handing the next player a discard of each value: what taking it
        would gain them (over their worst card, or by completing a face-up pair) beyond what they
        expect from a draw, times `feed_weight`."""
        n = p.shape[0]
        mu = weighted_sum(p, VALUES)[:, None]
        values, hidden = np.ascontiguousarray(v.values[:, 1]), np.ascontiguousarray(v.hidden[:, 1])
        present = ~v.removed[:, 1]
        worth = np.where(hidden, mu, values)  # expected value of each of their slots
        worst = np.where(present, worth, -np.inf).max(axis=1)
        gain = np.maximum(worst[:, None] - VALUES, 0)  # (n, 15)
        # A face-up pair of w's completed by a w (R13): its column, 2w + third card, goes.
        up = (~hidden & present).reshape(n, 3, COLS)
        w3 = values.reshape(n, 3, COLS)
        t3 = worth.reshape(n, 3, COLS)
        flat = gain.reshape(-1)
        offset = (np.arange(n) * VALUES.size - MIN_VALUE)[:, None]
        for i, j, k in ((0, 1, 2), (0, 2, 1), (1, 2, 0)) if self.columns else ():
            pair = up[:, i] & up[:, j] & (w3[:, i] == w3[:, j])
            saving = 2 * w3[:, i] + t3[:, k]
            np.maximum.at(flat, (offset + w3[:, i].astype(np.intp))[pair], saving[pair])
        from_draw = (gain * p).sum(axis=1, keepdims=True)
        return self.feed_weight * np.maximum(gain - from_draw, 0)

    def _doubling_costs(self, v: ObservationView, p: np.ndarray) -> np.ndarray:
        """`(e, 15)`: expected extra cost of R17 doubling if the last face-down card becomes x."""
        # Every other own card is face up: the final score is exact but for the last card x,
        # which removes its column if the other two are a pair of x's (R13, R14).
        own = v.values[:, 0]
        last = v.hidden[:, 0].argmax(axis=1)
        rows = np.arange(last.size)
        known = own.sum(axis=1)  # face-down and removed slots read 0
        a, b = own[rows, (last + 4) % 12], own[rows, (last + 8) % 12]
        completes = (a == b)[:, None] & (a[:, None] == VALUES) & self.columns
        score = known[:, None] + np.where(completes, -2 * a[:, None], VALUES)  # (e, 15) by last card

        mu = weighted_sum(p, VALUES)
        var = weighted_sum(p, VALUES**2) - mu**2
        opp_hidden = v.hidden[:, 1:]
        present = ~v.removed[:, 1:]
        slots = np.where(opp_hidden, mu[:, None, None], v.values[:, 1:])
        worst = np.where(present, slots, -np.inf).max(axis=2)
        opp = np.where(present, slots, 0).sum(axis=2) - np.maximum(worst - self.last_turn_ref, 0)
        spread = np.sqrt(opp_hidden.sum(axis=2) * var[:, None] + 4.0)
        z = (score[:, :, None] + 0.5 - opp[:, None, :]) / spread[:, None, :]
        beaten = 1.0 / (1.0 + np.exp(-1.702 * z))  # P(an opponent scores <= us), normal approx.
        doubled = 1.0 - np.prod(1.0 - beaten, axis=2)
        return doubled * np.maximum(score, 0)
