"""Expected column costs of one player's grid, for the counting player ([`skyjo_env.agents.counting`][]).

For every slot k the model gives `cost(k, x)`, the expected final cost of k's column if k held
value x face up while the other two slots stay as they are:

* `x + base(k)`, where `base` sums the other two slots (a face-down slot counts `mu`, the
  mean unseen card);
* minus `c1` when `x == m1` and `c2` when `x == m2`: x pairs with a face-up card of the
  column (credited `hope`), or completes a face-up pair (cost 0, R13), or pairs with the face-up
  card next to a face-down one, which then completes the column with probability `p(x)`;
* minus `hope(a, x)` for any x when the other two are a face-up pair of a's.

`hope(w, t) = beta * p(w) * max(2w + t, 0)` credits a face-up pair of w's with third card t for
the chance of completing it later (`beta = 0`: no future, exact expectations). Everything is
elementwise over `(n, 12)` arrays; [`ColumnModel.best_replacements()`][ColumnModel.best_replacements] folds the few
corrected (slot, value) cells into a `(n, 15)` minimum instead of building `(n, 12, 15)` tables.
"""

from __future__ import annotations

import numpy as np

from skyjo_env.agents.view import VALUES, weighted_sum
from skyjo_env.cards import COLS, MIN_VALUE, NUM_VALUES, SLOTS

#: Column of every slot.
COLUMN = np.arange(SLOTS) % COLS


class ColumnModel:
    """Expected costs of the columns of `n` grids (see the module docstring).

    Args:
        values: `(n, 12)` float32 face-up values (any card value, e.g. 0, where face down).
        hidden: `(n, 12)` face-down flags.
        removed: `(n, 12)` removed-column flags.
        p: `(n, 15)` float32 probability of each value -2..12 for an unseen card.
        beta: `(n,)` float32 weight of the hope of completing pairs later.
        columns: the column rule is on (R13); off, a column costs the sum of its cards.
        reveal_completes: `(n,)` bool, a face-down card can still complete its column when it is
            turned up; false on a last turn when columns completed at the final reveal stay (R14 off).
    """

    #: Rows of [`slots`][], the per-slot parameters of the model.
    FIELDS = ("delta_base", "m1", "c1", "m2", "c2", "pair_weight", "pair_value")

    def __init__(
        self,
        values: np.ndarray,
        hidden: np.ndarray,
        removed: np.ndarray,
        p: np.ndarray,
        beta: np.ndarray,
        columns: bool = True,
        reveal_completes: np.ndarray | None = None,
    ) -> None:
        # Contiguous (n, 12) arrays throughout: numpy loops over strided rows of 12 are slow.
        values, hidden, removed = (np.ascontiguousarray(x) for x in (values, hidden, removed))
        n = values.shape[0]
        self.p = p
        self._p_index = (np.arange(n) * NUM_VALUES - MIN_VALUE)[:, None]  # row offsets into p.ravel()
        mu = weighted_sum(p, VALUES)[:, None]
        self.mu = mu
        beta = beta[:, None]
        # The other two slots of each slot's column: slots k + 4 and k + 8 (mod 12).
        a, b = _others(values)
        ha, hb = _others(hidden)
        ea, eb = _others(np.where(hidden, mu, values))
        pa, pb = _others(self.p_of(values))
        self.base = ea + eb

        #: `(7, n, 12)`: the [`FIELDS`][] of every slot, in one block to gather rows at once.
        self.slots = np.empty((len(self.FIELDS), n, SLOTS), dtype=np.float32)
        delta_base, m1, c1, m2, c2, pair_weight, pair_value = self.slots
        both_up = ~(ha | hb)
        pair = both_up & (a == b)
        split = both_up & (a != b)
        one = ha ^ hb
        np.copyto(m1, np.where(ha, b, a))  # the face-up one of the others, or a
        pw = np.where(ha, pb, pa)
        np.copyto(pair_value, a)
        np.copyto(m2, b)
        np.multiply(beta * pa, pair, out=pair_weight)  # hope(a, x) = pair_weight * max(2a + x, 0)
        completes = self.base + a - pair_weight * np.maximum(3 * a, 0)  # x completes the pair: cost 0
        pairs_with_a = beta * pa * np.maximum(2 * a + b, 0)
        pairs_beside_hidden = pw * (3 * m1 + beta * np.maximum(2 * m1 + mu, 0))
        if reveal_completes is not None:
            one = one & reveal_completes[:, None]
        np.copyto(c1, np.where(pair, completes, np.where(split, pairs_with_a, np.where(one, pairs_beside_hidden, 0))))
        np.multiply(beta * pb * np.maximum(2 * b + a, 0), split, out=c2)
        if not columns:  # no corrections: every slot costs its card
            c1[:] = c2[:] = pair_weight[:] = 0
        self.delta_base, self.m1, self.c1, self.m2, self.c2, self.pair_weight, self.pair_value = self.slots
        self.current = self._current(values, hidden, removed)  # (n, 4)
        np.copyto(delta_base, np.where(removed, np.inf, self.base - self.current[:, COLUMN]))

    def p_of(self, values: np.ndarray) -> np.ndarray:
        """`p[i, values[i, k]]` for every row i and slot k (values -2..12)."""
        return self.p.ravel().take(self._p_index + values.astype(np.intp))

    def replace_deltas(self, x: np.ndarray) -> np.ndarray:
        """`(n, 12)`: change of the expected grid cost from putting value `x[i]` in each slot."""
        x = np.asarray(x, dtype=np.float32)[:, None]
        corrections = _corrections(x, self.m1, self.c1, self.m2, self.c2, self.pair_weight, self.pair_value)
        return self.delta_base + x - corrections

    def best_replacements(
        self, rows: np.ndarray, slot_cost: np.ndarray, penalty_slot: np.ndarray, penalty: np.ndarray
    ) -> np.ndarray:
        """`(len(rows), 15)`: for grids `rows`, the lowest cost of putting each value -2..12 in
        some slot: the change of the expected grid cost, plus `slot_cost[i, k]` for slot k, plus
        `penalty[i, x]` for value x in slot `penalty_slot[i]` (-1: none).

        The minimum over slots of `x + delta_base` is taken once; the few (slot, value) cells
        with corrections are then folded in by scatter-minimum.
        """
        n = rows.size
        delta, m1, c1, m2, c2, weight, pair_value = self.slots[:, rows]
        delta = delta + slot_cost
        # Slots whose every value has a correction, or whose correction raises a cost, go whole.
        full = (weight > 0) | (c1 < 0)
        penalised = np.flatnonzero(penalty_slot >= 0)
        full[penalised, penalty_slot[penalised]] = True
        best = np.where(full, np.inf, delta).min(axis=1)[:, None] + VALUES
        flat = best.reshape(-1)
        offset = (np.arange(n) * NUM_VALUES - MIN_VALUE)[:, None]
        for m, c in ((m1, c1), (m2, c2)):
            cells = ~full & (c != 0)
            np.minimum.at(flat, (offset + m.astype(np.intp))[cells], (delta + m - c)[cells])
        fr, fk = np.nonzero(full)
        if fr.size:
            m1, c1, m2, c2, weight, pair_value, base = (
                x[fr, fk, None] for x in (m1, c1, m2, c2, weight, pair_value, delta)
            )
            values = base + VALUES - _corrections(VALUES, m1, c1, m2, c2, weight, pair_value)
            values += np.where((penalty_slot[fr] == fk)[:, None], penalty[fr], 0)
            np.minimum.at(flat, (fr[:, None] * NUM_VALUES + np.arange(NUM_VALUES)).reshape(-1), values.reshape(-1))
        return best

    def flip_deltas(self) -> np.ndarray:
        """`(n, 12)`: expected change of the grid cost from turning each slot up (a card of law
        `p`; the pair hope is taken at the mean card)."""
        return (
            self.delta_base
            + self.mu
            - (
                self.p_of(self.m1) * self.c1
                + self.p_of(self.m2) * self.c2
                + self.pair_weight * np.maximum(2 * self.pair_value + self.mu, 0)
            )
        )

    def _current(self, values: np.ndarray, hidden: np.ndarray, removed: np.ndarray) -> np.ndarray:
        """`(n, 4)` expected cost of each column as it stands: `cost(k, value of k)` at one
        face-up slot k of it (any gives the same)."""
        n = values.shape[0]
        up = (~hidden & ~removed).reshape(n, 3, COLS)
        row = np.where(up[:, 0], 0, np.where(up[:, 1], 1, 2))
        at = (np.arange(n)[:, None] * SLOTS + row * COLS + np.arange(COLS)).reshape(-1)  # flat (n, 4)
        x, base, m1, c1, m2, c2, weight, pair_value = (
            field.reshape(-1).take(at).reshape(n, COLS)
            for field in (values, self.base, self.m1, self.c1, self.m2, self.c2, self.pair_weight, self.pair_value)
        )
        cost = x + base - _corrections(x, m1, c1, m2, c2, weight, pair_value)
        cost = np.where(up[:, 0] | up[:, 1] | up[:, 2], cost, 3 * self.mu)
        return np.where(removed[:, :COLS], 0, cost)


def _corrections(
    x: np.ndarray, m1: np.ndarray, c1: np.ndarray, m2: np.ndarray, c2: np.ndarray,
    weight: np.ndarray, pair_value: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """What `cost(k, x)` takes off `x + base(k)`: the matches of x, and the hope of a pair."""
    return (x == m1) * c1 + (x == m2) * c2 + weight * np.maximum(2 * pair_value + x, 0)


def _others(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every slot k, the values of slots `k + 4` and `k + 8` (mod 12): the rest of its column."""
    return (
        np.concatenate([grid[:, COLS:], grid[:, :COLS]], axis=1),
        np.concatenate([grid[:, 2 * COLS :], grid[:, : 2 * COLS]], axis=1),
    )
