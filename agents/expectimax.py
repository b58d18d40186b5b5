"""The expectimax player: every legal action valued through a game-value network, over the chance card.

In Skyjo nobody sees a face-down card, not even its owner, and every card ever seen is public: at each
decision the deciding seat knows all that anyone knows, and what it does not know is the multiset of
unseen cards (its observation's `unseen` counts), all exchangeable. So the game is one of perfect
information with chance, and a card's value may be drawn at the moment it is revealed:

* A position is built from the observation alone ([`skyjo_env.agents.search.positions`][]: the unseen
  cards dealt at random over the face-down slots and the draw pile, the deciding seat as seat 0).
* Every legal action is played in it on the engine. An action that reveals a card (a flip, a replace of
  a face-down slot, a draw from the pile) is a chance node: it is played once for each distinct unseen
  value, that card first set to the value (swapped with a hidden card of that value, exact since hidden
  cards are exchangeable), weighted by the value's unseen count ([`outcomes()`][outcomes]). A draw from
  a pile that must first be reshuffled (R12) is played once, on the sampled reshuffle.
* Each outcome is valued for the deciding seat: its share of the result where the game ended (R20), else
  from the [`ValueNetwork`][skyjo_env.agents.value_net.ValueNetwork]'s view of it: with `value="points"`
  (the default) its expected lead in game totals at the round's end (the opponents' mean total less its
  own, each with the network's expected score of the round in play), a game's result counting
  `win_points` points; with `value="game"` the network's expected share of the result. The round-score
  head learns from targets far less noisy than a game's result, and it values small differences
  smoothly. With `depth=1` (the default) every position right after the action is valued by the network,
  which learnt exactly those positions (every legal action's, [`skyjo_env.train.value_data`][]); with
  `depth=2` the position after a take, where the deciding seat places the card it took, is valued by its
  own best placement, one more layer of the same expectimax; with `depth=3` so is the position after each
  drawn value: the whole turn is searched, and the network values only positions in which another seat is
  to act, or a new round.
* The action of highest expected value is played (`margin=0`); by default the choice of a `base` policy
  (the shipped network for the table's size) is played unless another action's value exceeds its value
  by more than `margin` points: the network alone is far weaker than the base, and its small
  disagreements with it are mostly wrong. Setup flips (R5) are left to the `setup` policy.

All games, actions and outcomes of a decision go through one engine and one network call per layer.
Only the cards of a row's sampled position that are never revealed differ between two positions with
the same observation, and no value depends on them but through a round's final scoring (R16).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from skyjo_env.actions import DRAW, FLIP, NUM_ACTIONS, REPLACE
from skyjo_env.agents.base import base_choice
from skyjo_env.agents.search import default_base, positions
from skyjo_env.agents.specs import make
from skyjo_env.agents.value_net import DEFAULT, ValueNetwork, load
from skyjo_env.agents.view import SETUP, decode
from skyjo_env.cards import DECK_SIZE, MIN_VALUE, NUM_VALUES, SLOT_FLAGS, SLOTS
from skyjo_env.engine import STATE, SkyjoEngine
from skyjo_env.observation import observe
from skyjo_env.phases import DRAWN, TAKEN
from skyjo_env.rewards import result_shares
from skyjo_env.rules import Rules
from skyjo_env.snapshot import public_unseen

#: How far the expectimax looks: 1, the positions after the action; 2, after a take (the card is known)
#: also the seat's placement of it; 3, after a draw too (each drawn value's best use): the whole turn.
DEPTHS = (1, 2, 3)
_EXPANDED = {1: (), 2: (TAKEN,), 3: (DRAWN, TAKEN)}  # the phases of the seat's own next decision searched
#: How a position is valued: `"points"`, the seat's expected lead in game totals at the round's end (the
#: opponents' mean total less its own, each total with the network's expected round score), in units of
#: `win_points`; `"game"`, the network's expected share of the game's result.
VALUES_BY = ("points", "game")
_NOWHERE = np.int8(127)  # a card code no real card has: marks the places that hold no hidden card


class ExpectimaxPolicy:
    """Expectimax over the chance cards of a decision (and, by `depth`, of the seat's next one) with a learned game value.

    Args:
        network: the value network: a shipped name (default `"value"`), a `.npz` file or a run folder of
            `skyjo train --backend value`, or a [`ValueNetwork`][skyjo_env.agents.value_net.ValueNetwork].
        value: see [`VALUES_BY`][].
        depth: see [`DEPTHS`][].
        win_points: what a game's result (R20's share) is worth in points of game totals, with `value="points"`.
        base: the agent whose choice is played unless the network values another legal action higher by
            more than `margin` (the rule of thumb of search's paired evidence: a learnt value is trusted
            only where it differs clearly); `None`, the shipped network for the table's size
            ([`default_base()`][skyjo_env.agents.search.default_base], as search's).
        margin: in points of game totals (a game's result counts `win_points`); 0: no base, the network's
            best action is played at every decision.
        setup: the agent spec that makes the setup flips (R5); `None`: the base, or counting without one.
        rules: the rules of the table; at a table of another size the network learnt, the same rules at
            that size ([`at_table()`][at_table]).
        seed: seeds the sampled positions.
    """

    name = "expectimax"

    def __init__(
        self,
        network: Any = DEFAULT,
        value: str = "points",
        depth: int = 1,
        win_points: float = 50.0,
        base: str | None = None,
        margin: float = 4.0,
        setup: str | None = None,
        rules: Rules | None = None,
        seed: int | None = None,
    ) -> None:
        self.rules = Rules() if rules is None else rules
        if depth not in DEPTHS:
            raise ValueError(f"depth={depth!r} is not allowed; use one of {DEPTHS}")
        if value not in VALUES_BY:
            raise ValueError(f"value={value!r} is not allowed; use one of {VALUES_BY}")
        self.network: ValueNetwork = load(network)
        self.network.check_table(self.rules.num_players)
        self.depth = depth
        self.value = value
        self.win_points = float(win_points)
        if not 0 < self.win_points < float("inf"):
            raise ValueError(f"win_points={win_points!r} is not allowed; use a positive number")
        self.margin = float(margin)
        if not 0 <= self.margin < float("inf"):
            raise ValueError(f"margin={margin!r} is not allowed; use a number of points >= 0 (0: no base)")
        self.base = None if self.margin == 0 else make(default_base(self.rules) if base is None else base,
                                                       rules=self.rules, seed=seed)  # fmt: skip
        if setup is None:
            self.setup = self.base if self.base is not None else make("counting", rules=self.rules, seed=seed)
        else:
            self.setup = make(setup, rules=self.rules, seed=seed)
        self._rng = np.random.default_rng(seed)
        self._options: dict[str, Any] = {
            "value": value,
            "depth": depth,
            "win_points": win_points,
            "base": base,
            "margin": margin,
            "setup": setup,
            "seed": seed,
        }
        self._tables: dict[int, ExpectimaxPolicy] = {self.rules.num_players: self}

    def at_table(self, players: int) -> ExpectimaxPolicy:
        """The player for a table of `players` (this one's rules at that size, the same network and
        options): a network that learnt several table sizes plays at each of them; `ValueError` for a
        size it did not learn."""
        if players not in self._tables:
            self._tables[players] = ExpectimaxPolicy(
                self.network, rules=self.rules.replace(num_players=players), **self._options
            )
        return self._tables[players]

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        masks = np.asarray(action_masks, dtype=bool)
        view = decode(obs)
        if view.num_players != self.rules.num_players:
            return self.at_table(view.num_players)(obs, masks)
        phase = view.phase
        actions = np.zeros(len(obs), dtype=np.int64)
        setup = np.flatnonzero(phase == SETUP)
        if setup.size:
            actions[setup] = self.setup(obs[setup], masks[setup])
        play = np.flatnonzero(phase != SETUP)
        if play.size:
            actions[play] = self.choose(obs[play], masks[play])
        return actions

    def choose(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """`(N,)` the actions of decisions of play: the network's best, or the base's choice where no
        action's value exceeds that choice's by more than `margin`."""
        values = self.action_values(observations, action_masks)
        best = values.argmax(axis=1)
        if self.base is None:
            return best
        choice = base_choice(self.base, observations, action_masks, "expectimax's base")
        rows = np.arange(len(best))
        gain = values[rows, best] - values[rows, choice]
        return np.where(gain > self.margin / self.win_points, best, choice)

    def action_values(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """`(N, 26)` each legal action's expected value for the deciding seat in units of a game's result
        (R20's share: +1 for a sole win; with `value="points"` a lead of `win_points` in totals counts 1),
        `-inf` for the illegal ones; observations of play (not setup) of the seat to act."""
        obs = np.asarray(observations, dtype=np.float32)
        masks = np.asarray(action_masks, dtype=bool)
        view = decode(obs)
        if view.num_players != self.rules.num_players:
            return self.at_table(view.num_players).action_values(obs, masks)
        if np.any(view.phase == SETUP):
            raise ValueError("action_values() values decisions of play; setup flips are the setup policy's")
        if not len(obs):
            return np.zeros((0, NUM_ACTIONS))
        start = positions(view, self.rules, 1, self._rng)
        return self._q(start, masks, self.depth)

    def _q(self, state: dict[str, np.ndarray], masks: np.ndarray, depth: int) -> np.ndarray:
        """`(n, 26)` the expected value for seat 0 (to act) of each legal action of `masks` in the
        positions `state`, `-inf` for the illegal ones."""
        parent, action, weight, child = outcomes(self.rules, state, masks)
        engine = SkyjoEngine.from_states(self.rules, child, check=False)  # the start's cards, two swapped
        result = engine.step(action, check=False)
        value = np.zeros(len(action))
        over = result.game_over
        if over.any():
            value[over] = result_shares(result.winners[over])[:, 0]  # in win points (R20)
        going = np.flatnonzero(~over)
        again = going[(engine.current[going] == 0) & np.isin(engine.phase[going], _EXPANDED[depth])]
        if len(again):
            inner = self._q({k: getattr(engine, k)[again] for k in STATE}, engine.legal_mask(again), 1)
            value[again] = inner.max(axis=1)
            going = np.setdiff1d(going, again, assume_unique=True)
        if going.size:
            value[going] = self.position_values(engine, going)
        q = np.full(masks.shape, -np.inf)
        pairs = np.flatnonzero(masks.reshape(-1))
        q.reshape(-1)[pairs] = np.bincount(
            np.searchsorted(pairs, parent * NUM_ACTIONS + action), weight * value, minlength=pairs.size
        )
        return q

    def position_values(self, engine: SkyjoEngine, games: np.ndarray) -> np.ndarray:
        """`(n,)` the value for seat 0 of the positions `games` of `engine` (games not over), from its
        view alone (see [`VALUES_BY`][])."""
        results, rounds = self.network.values(observe(engine, 0, games))
        if self.value == "game":
            return results[:, 0]
        totals = engine.totals[games] + rounds[:, : self.rules.num_players]
        return (totals[:, 1:].mean(axis=1) - totals[:, 0]) / self.win_points


def outcomes(
    rules: Rules, state: dict[str, np.ndarray], masks: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The chance outcomes of every legal action of seat 0 (to act) in positions `state` (as
    [`SkyjoEngine.load()`][skyjo_env.engine.SkyjoEngine.load] takes them) under `masks` `(n, 26)`.

    Returns `(parent, action, weight, child)`, a row per outcome: its position's row, the action, its
    probability given the position's public information (the count of the revealed value among the
    unseen cards, over the unseen cards), and the position with the revealed card set to that value
    (the action not yet played). An action that reveals no card has one outcome of weight 1.
    """
    # The cards seat 0 has not seen: the public unseen counts, less the card it drew and holds (R10).
    names = ("values", "face_up", "removed", "draw_pile", "draw_size", "phase", "held")
    unseen = public_unseen(*(state[k] for k in names)).astype(np.int64)
    drew = np.flatnonzero(state["phase"] == DRAWN)
    unseen[drew, state["held"][drew].astype(np.int64) - MIN_VALUE] -= 1
    parent, action = np.nonzero(masks)
    slot = np.where(action >= FLIP, action - FLIP, action - REPLACE)
    face_down = ~SLOT_FLAGS[state["face_up"][parent, 0]][np.arange(len(action)), np.clip(slot, 0, SLOTS - 1)]
    draws = (action == DRAW) & (state["draw_size"][parent] > 0)
    reveals = draws | (action >= FLIP) | ((action >= REPLACE) & face_down)
    kinds = np.where(reveals[:, None], unseen[parent] > 0, np.arange(NUM_VALUES) == 0)  # (pairs, 15)
    pair, card = np.nonzero(kinds)
    total = unseen.sum(axis=1)
    weight = np.where(reveals[pair], unseen[parent[pair], card] / np.maximum(total[parent[pair]], 1), 1.0)
    rows = parent[pair]
    child = {k: np.array(a[rows]) for k, a in state.items()}
    # Set each revealed card: in a flat row of the hidden places (every grid slot, then the draw pile),
    # swap the card at the revealed place with the first hidden card of the outcome's value.
    m, P = len(rows), rules.num_players
    places = np.concatenate([child["values"].reshape(m, P * SLOTS), child["draw_pile"]], axis=1)
    hidden = np.concatenate(
        [~SLOT_FLAGS[child["face_up"]].reshape(m, P * SLOTS), np.arange(DECK_SIZE) < child["draw_size"][:, None]],
        axis=1,
    )
    shown = np.where(hidden, places, _NOWHERE)
    r = np.flatnonzero(reveals[pair])
    at = np.where(draws[pair[r]], P * SLOTS + child["draw_size"][r].astype(np.int64) - 1, slot[pair[r]])
    value = (card[r] + MIN_VALUE).astype(np.int8)
    source = (shown[r] == value[:, None]).argmax(axis=1)
    places[r, source] = places[r, at]
    places[r, at] = value
    child["values"] = np.ascontiguousarray(places[:, : P * SLOTS].reshape(m, P, SLOTS))
    child["draw_pile"] = np.ascontiguousarray(places[:, P * SLOTS :])
    return rows, action[pair], weight, child
