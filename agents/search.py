"""The search player: rollouts of a base policy on the engine, from positions sampled from what it has seen.

In Skyjo nobody sees a face-down card, not even its owner, and every card ever seen is public, so
the cards a seat has not seen (the `unseen` counts of its observation) are exchangeable: dealing
them at random over the face-down slots and the draw pile is an exact sample of what the seat can
believe. At each decision of play (setup flips are left to the base policy):

* Base policy: any agent spec; by default the shipped network for the table's size, `ppo-{P}p`
  ([`default_base()`][default_base]): over counting, search won 0.581 against counting at 2 players,
  over `ppo-2p` 0.709 against counting and 0.563 against `ppo-2p` with rollouts to the round's end, 0.716
  and 0.553 with rollouts cut over the value network (the default at 2 players; 2,000 games each,
  docs/agents/search.md).
* Candidates: the base policy's `top` preferred legal actions, its own choice first, then by its
  `costs()` (counting) or its `logits()` (a network); a base with neither offers its choice
  and the legal actions in id order.
* Samples: `samples` positions per game (by default 32 at 2 players, 64 from 3 players on,
  [`default_budget()`][default_budget]), built from the observation alone ([`positions()`][positions]):
  the unseen cards shuffled over the face-down slots and the draw pile, the discard pile rebuilt
  from the seen cards (its order below the top matters only to a reshuffle, R12), the seats turned
  so that the searching seat is seat 0.
* Rollouts: every legal candidate is played in every sample (common random numbers: the same cards
  and the same random stream for every candidate), then the base policy plays every seat to the end
  of the round, all games, candidates and samples in one engine, the base called once per step on
  every row. With `screen`, every candidate first plays that many samples only; one whose paired
  mean gain over the base's choice is then below minus half its standard error plays no more, and
  a decision left with no other candidate ends there. With `horizon` the rollouts stop after that
  many steps and every grid counts its face-down slots at the mean of the unseen cards, or, with a
  value `network` ([`skyjo_env.agents.value_net`][]), every seat scores the network's expected round
  score from the searching seat's view; so do the few that play past [`ROLLOUT_STEPS_PER_SEAT`][]
  (a base may never end a round). By default the network is the shipped one for the table's size
  where one is shipped (2 players today), and rollouts over a network stop after
  [`NETWORK_HORIZON`][] steps (8): as strong as rollouts to the round's end, at a third of the time
  (docs/agents/search.md); `network=none` plays to the round's end.
* Value, for the searching seat: the opponents' mean round score minus its own (after R17's
  doubling), or, where the round's end ends the game (R19), `win_points` times its share of the
  result (R20: the winners share +1, the others -1). With `value="game"` a round that does not end
  the game is valued by the game's expected result as well: `win_points` times the mean share over
  fixed futures of later rounds from the new totals ([`expected_results()`][expected_results]).
* Decision: the base policy's choice is left only for a candidate whose paired mean gain over it,
  over the common samples, exceeds `margin` standard errors (by default 2 at 2 players, 1.5 from
  3 players on); of those, the one with the highest
  lower bound (mean gain minus `margin` standard errors) is played.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from skyjo_env import random_streams
from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.agents import value_net
from skyjo_env.agents.base import base_choice, pricing
from skyjo_env.agents.specs import make
from skyjo_env.agents.view import CHOOSE, SETUP, ObservationView, decode
from skyjo_env.cards import COUNTS, DECK_SIZE, MIN_VALUE, NUM_VALUES, SLOTS
from skyjo_env.engine import SkyjoEngine
from skyjo_env.limits import MAX_GAME_STEPS, MAX_SEARCH_SAMPLES, check_limit
from skyjo_env.observation import observe, pad
from skyjo_env.opponents import act
from skyjo_env.rewards import result_shares, rewards
from skyjo_env.rules import Rules

_SLOT_BITS = (1 << np.arange(SLOTS)).astype(np.uint32)
_NO_CARD = 255  # random_streams.shuffle's code for a position past the valid ones
#: After the screening samples a candidate goes on while its paired mean gain plus this many standard errors is positive.
SCREEN_ERRORS = 0.5
#: A rollout still in its round after this many steps per seat is valued as at `horizon`: a base policy
#: may play a round that never ends (no seat reveals its last card, R15; ppo-2p self-play does, rarely).
#: Rounds of counting or the shipped networks, setup included, took at most 67 steps per seat at 2
#: players, 56 at 4, 135 at 8 (300 rounds each).
ROLLOUT_STEPS_PER_SEAT = 150
#: What a rollout's value may be: `"round"`, the round-score difference (or the game's result where the
#: round ended it); `"game"`, the game's expected result from the totals after the round.
VALUES_BY = ("round", "game")
#: The `"game"` value's model of the later rounds: every seat's round score independent and normal with
#: this mean and standard deviation (counting's self-play: 13.8 and 10.2 at 2 players, 15.1 and 10.7 at 4,
#: 16.9 and 10.6 at 6; ppo-4p's: 13.8 and 11.1; 1,900-2,700 rounds each), over `FUTURES` futures of at
#: most `FUTURE_ROUNDS` rounds, the same for every rollout.
ROUND_MEAN, ROUND_SD = 14.0, 11.0
FUTURES, FUTURE_ROUNDS = 32, 16
#: `network` and `horizon` as the table has them by default: the shipped value network for the table's size
#: ([`default_budget()`][default_budget]), and rollouts cut after [`NETWORK_HORIZON`][] steps with a network,
#: at the round's end without one.
BY_TABLE = "default"
#: Steps after which rollouts over a value network stop by default. Over the shipped 2-player network,
#: against ppo-2p (400 games): 4 steps won 0.438, 6 0.537, 8 0.562, 12 0.573, to the round's end 0.563.
NETWORK_HORIZON = 8


def default_base(rules: Rules) -> str:
    """The base policy search measures best over: the shipped network for the table's size."""
    return f"ppo-{rules.num_players}p"


class Budget(NamedTuple):
    """What search spends by default at a table ([`default_budget()`][default_budget])."""

    samples: int
    margin: float
    network: str | None

    def cut(self, network: Any = BY_TABLE, horizon: int | str | None = BY_TABLE) -> tuple[Any, int | str | None]:
        """`(network, horizon)` with [`BY_TABLE`][] replaced by the table's defaults: its shipped network, and
        [`NETWORK_HORIZON`][] steps over a network, the round's end without one."""
        if isinstance(network, str) and network == BY_TABLE:
            network = self.network
        if isinstance(horizon, str) and horizon == BY_TABLE:
            horizon = None if network is None else NETWORK_HORIZON
        return network, horizon


def default_budget(rules: Rules) -> Budget:
    """Search's defaults at the table of `rules`: 32 samples and 2 standard errors at 2 players; 64 and
    1.5 from 3 players on, where more opponents make every rollout noisier (measured at 3, 4 and 6
    players, docs/agents/search.md); and the shipped value network for the table's size where one is
    shipped ([`value_net.for_table()`][skyjo_env.agents.value_net.for_table]), over which rollouts stop
    after [`NETWORK_HORIZON`][] steps: at 2 players as strong as rollouts to the round's end, at a
    third of the time."""
    samples, margin = (32, 2.0) if rules.num_players == 2 else (64, 1.5)
    return Budget(samples, margin, value_net.for_table(rules.num_players))


@dataclass(frozen=True)
class Decisions:
    """What [`SearchPolicy.decide()`][SearchPolicy.decide] played and why: `actions (n,)`,
    `candidates (n, top)` (the base's choice first; -1 where fewer are legal), the searched `rows`
    `(m,)`, and for them the candidates' rollout `values (m, top, samples)` and `alive (m, top)`
    ([`SearchPolicy.rollout_values()`][SearchPolicy.rollout_values])."""

    actions: np.ndarray
    candidates: np.ndarray
    rows: np.ndarray
    values: np.ndarray
    alive: np.ndarray


class SearchPolicy:
    """Rollout search over a base policy with common random numbers and a paired-evidence rule."""

    name = "search"

    def __init__(
        self,
        base: Any = None,
        samples: int | None = None,
        top: int = 4,
        margin: float | None = None,
        win_points: float = 50.0,
        horizon: int | str | None = BY_TABLE,
        screen: int | None = 8,
        value: str = "round",
        network: Any = BY_TABLE,
        rules: Rules | None = None,
        seed: int | None = None,
    ) -> None:
        self.rules = Rules() if rules is None else rules
        budget = default_budget(self.rules)
        samples = budget.samples if samples is None else samples
        network, horizon = budget.cut(network, horizon)
        if not isinstance(samples, int) or samples < 2:
            raise ValueError(f"samples={samples!r} is not allowed; use an integer of at least 2")
        if not isinstance(top, int) or top < 2:
            raise ValueError(f"top={top!r} is not allowed; use an integer of at least 2")
        if screen is not None and (not isinstance(screen, int) or screen < 2):
            raise ValueError(f"screen={screen!r} is not allowed; use an integer of at least 2 or None (no screening)")
        if horizon is not None and (not isinstance(horizon, int) or horizon < 1):
            raise ValueError(
                f"horizon={horizon!r} is not allowed; use a positive integer, None (the round's end) or {BY_TABLE!r}"
            )
        check_limit("samples", samples, MAX_SEARCH_SAMPLES)
        check_limit("top", top, NUM_ACTIONS, "actions")
        check_limit("screen", screen, MAX_SEARCH_SAMPLES)
        check_limit("horizon", horizon, MAX_GAME_STEPS, "steps")
        if value not in VALUES_BY:
            raise ValueError(f"value={value!r} is not allowed; use one of {VALUES_BY}")
        self.base = make(default_base(self.rules) if base is None else base, rules=self.rules, seed=seed)
        self.samples = samples
        self.top = top
        self.margin = float(budget.margin if margin is None else margin)
        self.win_points = float(win_points)
        self.horizon = horizon if isinstance(horizon, int) else None  # (anything else is refused above)
        self.screen = screen
        self.value = value
        self.network = None if network is None else value_net.load(network)
        if self.network is not None:
            self.network.check_table(self.rules.num_players)
        self._rng = np.random.default_rng(seed)
        self._ahead = futures(self.rules, seed)

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self.decide(observations, action_masks).actions

    def decide(self, observations: np.ndarray, action_masks: np.ndarray) -> Decisions:
        """Search's actions with what it chose them from ([`Decisions`][]): the candidates of every
        row and the rollout values of the rows it searched (setup flips and a single legal
        candidate are left to the base)."""
        obs = np.asarray(observations, dtype=np.float32)
        masks = np.asarray(action_masks, dtype=bool)
        choice = base_choice(self.base, obs, masks, "search's base").copy()  # (candidates' rows are set below)
        v = decode(obs)
        if v.num_players != self.rules.num_players:
            raise ValueError(f"search was made for {self.rules.num_players} players; observations have {v.num_players}")
        candidates = self.candidates(obs, masks, choice)
        rows = np.flatnonzero((v.phase != SETUP) & (candidates[:, 1] >= 0))
        values = np.zeros((0, self.top, self.samples))
        alive = np.zeros((0, self.top), dtype=bool)
        if rows.size:
            values, alive = self.rollout_values(v.take(rows), candidates[rows])
            choice[rows] = candidates[rows, chosen(lower_bounds(values, alive, self.margin))]
        return Decisions(choice, candidates, rows, values, alive)

    def candidates(self, observations: np.ndarray, masks: np.ndarray, choice: np.ndarray) -> np.ndarray:
        """`(n, top)` candidate actions per row, the base's choice first, then its cheapest other
        legal actions; -1 where fewer are legal."""
        price = np.where(masks, self.prices(observations, masks), np.inf)
        price[np.arange(len(choice)), choice] = -np.inf
        order = np.argsort(price, axis=1, kind="stable")[:, : self.top]
        legal = np.take_along_axis(masks, order, axis=1)
        return np.where(legal, order, -1)

    def prices(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`(n, 26)` the base's preference as a price (lower first): its `costs()`, else minus its
        `logits()` (a network; [`pricing()`][skyjo_env.agents.base.pricing]), else 0 (the legal actions in id order)."""
        prices = pricing(self.base)
        if prices is None:
            return np.zeros(masks.shape, dtype=np.float64)
        return np.asarray(prices(observations, masks), dtype=np.float64)

    def rollout_values(self, v: ObservationView, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`(values (n, C, S), alive (n, C))`: each candidate's rollout value in each of the row's
        `S` common samples, and the candidates that played them all; one dropped at the screening
        has values in its first `screen` samples only (0 after), one that is -1 none."""
        n, C = candidates.shape
        S = self.samples
        start = positions(v, self.rules, S, self._rng)
        values = np.zeros((n, C, S))
        alive = candidates >= 0
        first = S if self.screen is None else min(self.screen, S)
        self.fill(start, candidates, values, alive[:, :, None] & (np.arange(S) < first))
        if first < S:
            alive = survivors(values[:, :, :first], alive)
            self.fill(start, candidates, values, alive[:, :, None] & (np.arange(S) >= first))
        return values, alive

    def fill(self, start: dict[str, np.ndarray], candidates: np.ndarray, values: np.ndarray, cells: np.ndarray) -> None:
        """Fill `values[i, c, s]` `(n, C, S)` for every true `cells[i, c, s]`: candidate `c` of row `i`
        played in the row's sample `s` of `start` ([`positions()`][positions], `S` per row), then the
        rollout."""
        i, c, s = np.nonzero(cells)
        if i.size:
            sample = i * values.shape[2] + s
            values[i, c, s] = self.rollouts({k: a[sample] for k, a in start.items()}, candidates[i, c])

    def rollouts(self, state: dict[str, np.ndarray], first: np.ndarray) -> np.ndarray:
        """Values for seat 0 of playing `first` in each game of `state`, then the base policy
        for every seat to the end of the round (or `horizon` steps, or
        [`ROLLOUT_STEPS_PER_SEAT`][] per seat)."""
        engine = SkyjoEngine.from_states(self.rules, state, check=False)  # positions() deals the deck
        limit = ROLLOUT_STEPS_PER_SEAT * self.rules.num_players
        if self.horizon is not None:
            limit = min(limit, self.horizon)
        values = np.zeros(len(first))
        active = engine.all_games
        actions = first
        steps = 0
        while True:
            result = engine.step(actions, active, check=False)
            steps += 1
            done = result.round_over
            if done.any():
                won = rewards("result", result)[done, 0]
                if self.value == "game":
                    score = self.win_points * expected_results(result.totals[done], self.rules.end_score, self._ahead)
                else:
                    score = rewards("score", result)[done, 0]
                values[active[done]] = np.where(result.game_over[done], self.win_points * won, score)
                active = active[~done]
            if not active.size:
                return values
            if steps >= limit:
                expected = self.round_scores(engine, active)
                if self.value == "game":
                    totals = engine.totals[active] + expected
                    values[active] = self.win_points * expected_results(totals, self.rules.end_score, self._ahead)
                else:
                    values[active] = expected[:, 1:].mean(axis=1) - expected[:, 0]
                return values
            actions = act(self.base, engine, active, role="search's base policy")  # checked against the engine's mask

    def round_scores(self, engine: SkyjoEngine, games: np.ndarray) -> np.ndarray:
        """`(n, P)` each seat's expected score of the round in play in `games` of `engine`, from seat 0's
        view: the `network`'s, or without one every grid with its face-down slots at the mean of the
        cards seat 0 has not seen (no doubling; [`value_net.expected_grid_scores()`][skyjo_env.agents.value_net.expected_grid_scores])."""
        P = self.rules.num_players
        seen = observe(engine, 0, games)
        if self.network is None:
            return value_net.expected_grid_scores(pad(seen, P))[:, :P].astype(np.float64)
        return self.network.values(seen)[1][:, :P].astype(np.float64)


def positions(v: ObservationView, rules: Rules, samples: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """`samples` engine states per observation (row `i * samples + s`), as
    [`SkyjoEngine.load()`][SkyjoEngine.load] takes them, drawn from what the observer has seen alone.

    The observer is seat 0 and to act. Its unseen cards are shuffled over the face-down slots and the
    draw pile; the discard pile holds the seen cards that are nowhere else, the top one last.
    `ValueError` for an observation whose unseen cards are not its face-down cards and draw pile
    (the observer does not act, or another seat holds a drawn card)."""
    n, P = v.values.shape[:2]
    hidden = v.hidden.reshape(n, P * SLOTS)
    unseen = v.unseen.astype(np.int64)
    face_down, total = hidden.sum(axis=1), unseen.sum(axis=1)
    if np.any(total != face_down + v.draw_size):
        raise ValueError("the unseen cards must be the observer's face-down cards and the draw pile")
    m = n * samples
    copy = np.repeat(np.arange(n), samples)
    seeds = rng.integers(0, 2**32, size=m, dtype=np.uint32)
    codes = random_streams.shuffle(seeds, _sorted_codes(unseen)[copy], valid=total[copy]).astype(np.int8)
    cards = codes + np.int8(MIN_VALUE)  # the shuffled unseen cards: face-down slots first, then the draw pile
    values = v.values.reshape(n, P * SLOTS).astype(np.int8)[copy]
    down = hidden[copy]
    r, k = np.nonzero(down)
    values[r, k] = cards[r, (np.cumsum(down, axis=1) - 1)[r, k]]
    at = np.minimum(face_down[copy, None] + np.arange(DECK_SIZE), DECK_SIZE - 1)
    draw = np.take_along_axis(cards, at, axis=1)
    draw[np.arange(DECK_SIZE) >= v.draw_size[copy, None]] = 0

    holding = v.phase > CHOOSE
    up = ~v.hidden & ~v.removed
    shown = np.zeros((n, NUM_VALUES), dtype=np.int64)
    np.add.at(shown, (np.nonzero(up)[0], v.values[up].astype(np.int64) - MIN_VALUE), 1)
    discards = COUNTS - unseen - shown
    discards[np.flatnonzero(holding), v.held[holding] - MIN_VALUE] -= 1
    size = discards.sum(axis=1)
    has_top = np.flatnonzero(size > 0)
    discards[has_top, v.discard[has_top] - MIN_VALUE] -= 1
    pile = (_sorted_codes(discards).astype(np.int8) + np.int8(MIN_VALUE)).astype(np.int8)
    pile[has_top, size[has_top] - 1] = v.discard[has_top]
    pile[np.arange(DECK_SIZE) >= size[:, None]] = 0

    ender = v.ender
    per_game = {
        "discard_pile": pile,
        "discard_size": size.astype(np.int16),
        "held": np.where(holding, v.held, 0).astype(np.int8),
        "phase": v.phase.astype(np.int8),
        "current": np.zeros(n, dtype=np.int8),
        "ender": ender.astype(np.int8),
        "final_turns": np.maximum(ender, 0).astype(np.int8),  # the seats from the observer up to the ender
        "starter": np.zeros(n, dtype=np.int8),
        "round_index": np.zeros(n, dtype=np.int16),
        "round_scores": np.zeros((n, P), dtype=np.int16),
        "totals": np.rint(v.totals * rules.end_score).astype(np.int16),
        "steps": np.zeros(n, dtype=np.int32),
        "face_up": (~v.hidden * _SLOT_BITS).sum(axis=2).astype(np.uint32),
        "removed": (v.removed * _SLOT_BITS).sum(axis=2).astype(np.uint32),
    }
    return {
        **{name: array[copy] for name, array in per_game.items()},
        "values": values.reshape(m, P, SLOTS),
        "draw_pile": draw,
        "draw_size": v.draw_size[copy].astype(np.int16),
        "keys": rng.integers(0, 2**32, size=(m, 2), dtype=np.uint32),
        "shuffles": np.zeros(m, dtype=np.uint32),
    }


def paired_gains(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`(n, C)` mean and standard error of each candidate's gain over the first, over the samples
    of `values` `(n, C, S)` (the candidates' rollout values on common samples)."""
    diff = values - values[:, :1]
    return diff.mean(axis=2), diff.std(axis=2, ddof=1) / np.sqrt(values.shape[2])


def survivors(values: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """`(n, C)` the candidates of `alive` that go on after the screening samples `values` `(n, C, s)`:
    those whose paired mean gain is above minus `SCREEN_ERRORS` standard errors; the first while
    another does."""
    mean, error = paired_gains(values)
    kept = alive & (mean + SCREEN_ERRORS * error > 0)
    kept[:, 0] = kept[:, 1:].any(axis=1)
    return kept


def lower_bounds(values: np.ndarray, alive: np.ndarray, margin: float) -> np.ndarray:
    """`(n, C)` each `alive` candidate's paired mean gain over the first minus `margin` standard
    errors, over the samples of `values` `(n, C, S)`; 0 for the first, -inf for the others."""
    mean, error = paired_gains(values)
    bound = np.where(alive, mean - margin * error, -np.inf)
    bound[:, 0] = 0
    return bound


def chosen(bounds: np.ndarray) -> np.ndarray:
    """`(n,)` the candidate played per row, given the [`lower_bounds()`][lower_bounds] `(n, C)`: the
    one with the highest positive bound, else the first (the base's choice)."""
    return np.where(bounds.max(axis=1) > 0, bounds.argmax(axis=1), 0)


def _sorted_codes(counts: np.ndarray) -> np.ndarray:
    """`(n, 150)` uint32: per row the value codes 0..14 of the counted cards, lowest first, then
    `_NO_CARD`."""
    ends = np.cumsum(counts, axis=1)
    code = (np.arange(DECK_SIZE)[:, None] >= ends[:, None, :]).sum(axis=2)
    return np.where(code < NUM_VALUES, code, _NO_CARD).astype(np.uint32)


def futures(rules: Rules, seed: int | None) -> np.ndarray:
    """`(FUTURES, FUTURE_ROUNDS, P)` fixed futures of later rounds for [`expected_results()`][expected_results]:
    every seat's total after each round, less today's, its round scores normal with `ROUND_MEAN` and
    `ROUND_SD`."""
    scores = np.random.default_rng(None if seed is None else [seed, 1]).normal(
        ROUND_MEAN, ROUND_SD, (FUTURES, FUTURE_ROUNDS, rules.num_players)
    )
    return np.cumsum(scores, axis=1).astype(np.float32)


def expected_results(totals: np.ndarray, end_score: int, ahead: np.ndarray) -> np.ndarray:
    """`(n,)` seat 0's expected game result (R20's shares) from game totals `totals` `(n, P)` after
    a round that did not end the game, over the futures `ahead` `(K, R, P)`: every seat's total
    after each of the next R rounds, less today's; a future ends at its first round in which a
    total reaches `end_score` (R19), or after its last."""
    K, R, P = ahead.shape
    t = totals.astype(np.float32)[:, None, :]
    final = np.empty((len(totals), K, P), dtype=np.float32)
    open_ = np.ones((len(totals), K), dtype=bool)
    for r in range(R):
        now = t + ahead[:, r]  # (n, K, P)
        ends = open_ & (now.max(axis=2) >= end_score) if r < R - 1 else open_
        final = np.where(ends[:, :, None], now, final)
        open_ &= ~ends
        if not open_.any():
            break
    win = final == final.min(axis=2, keepdims=True)
    return result_shares(win.reshape(-1, P))[:, 0].reshape(len(totals), K).mean(axis=1)
