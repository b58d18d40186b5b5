"""N games of Skyjo for one learner against batched opponents: the core of every single-learner view.

[`LearnerGames`][] owns one [`SkyjoEngine`][] of N games without
auto-reset (the engine holds every rule). In each game a learner sits in a seat (drawn at random
for every new game, or fixed); the other seats are played by the opponents drawn for the game when
it starts: one policy for all of them, or a line-up of one policy per seat. [`LearnerGames.step()`][LearnerGames.step]
applies the N learner actions at once, then lets opponents act, in batch, until every game is back
at its learner's turn or over: while some game has an opponent to act, each opponent policy is
called once on all its games ([`play_policies()`][play_policies]) and the engine steps them
together. A game that ends (or, at a learner turn, has had `max_steps` actions of all seats:
truncation) is reported in [`Ended`][]; with `restart` (the vector views) it is dealt again at
once (new seat, new opponents, opponents' moves up to the learner's first turn), without it (the
single-game Gymnasium view) it stays as it ended until [`LearnerGames.reset()`][LearnerGames.reset].

This module needs numpy only; [`skyjo_env.gymnasium_env`][], [`skyjo_env.gymnasium_vector_env`][]
and [`skyjo_env.sb3_vec_env`][] are thin views over it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from skyjo_env import render
from skyjo_env.actions import NUM_ACTIONS, names
from skyjo_env.checks import MAX_STEPS, check_actions, check_max_steps, check_reward_scale, check_seat
from skyjo_env.engine import SkyjoEngine
from skyjo_env.observation import check_obs_type, observe_as
from skyjo_env.opponents import (
    OpponentPolicy,
    build,
    check_table,
    is_factory,
    per_seat,
    play_policies,
    policy_name,
    reseed,
)
from skyjo_env.phases import OVER
from skyjo_env.random_policy import RandomPolicy
from skyjo_env.rewards import Reward, check_reward
from skyjo_env.rewards import rewards as reward_of
from skyjo_env.rules import Rules
from skyjo_env.sampling import unpack_bits

#: One pool entry: a policy (or factory) for every opponent seat, or a line-up of one per seat.
Opponents = Any
#: Every action id's bit: what a held game's action is checked against.
ANY_ACTION = (1 << NUM_ACTIONS) - 1
#: The options of the vector views over these games, besides the rule options.
VECTOR_ENV_OPTIONS = (
    "opponents", "weights", "seat", "reward", "reward_scale", "seed", "max_steps", "render_mode", "obs_type",
    "player_counts",
)  # fmt: skip


@dataclass(frozen=True)
class Ended:
    """The games that ended during a step, before any was dealt again (all arrays of length k)."""

    games: np.ndarray  #: (k,) game indices, ascending
    observations: np.ndarray  #: (k, obs) the learner's last observation of each ended game
    truncated: np.ndarray  #: (k,) bool: stopped by `max_steps` rather than finished
    seats: np.ndarray  #: (k,) the learner's seat in each ended game
    totals: np.ndarray  #: (k, P) the game totals when it ended, by absolute seat
    won: np.ndarray  #: (k,) bool: the learner's total is among the lowest of a finished game (R20)
    opponents: list[Any]  #: what played the opponent seats of each ended game (a policy or a line-up)


def checked_learner_actions(
    actions: np.ndarray, bits: np.ndarray, seats: np.ndarray, players: np.ndarray | None = None
) -> np.ndarray:
    """The learners' actions as int64, each legal under its game's `bits`; else `ValueError`
    naming the game, the learner's seat (and the game's player count, where `players` is given)."""

    def illegal(g: int, a: int) -> str:
        table = "" if players is None else f"{int(players[g])} players, "
        return (
            f"illegal action {a} for the learner in game {g} ({table}seat {int(seats[g])}); legal actions: "
            f"{names(unpack_bits(bits[g : g + 1])[0])}. Use the action masks (e.g. sb3_contrib.MaskablePPO)."
        )

    return check_actions(
        actions,
        bits,
        malformed=lambda a: f"actions must be {len(bits)} integer action ids, got {a.dtype} of shape {a.shape}",
        illegal=illegal,
    )


class LearnerGames:
    """`num_games` Skyjo games for one learner against weighted opponents; see the module docstring.

    Args:
        num_games: number of games N.
        rules: the rule options (default `Rules()`: 2 players).
        opponents: one policy, or a list of pool entries; an entry is a policy (or a factory, built
            with `rules`) that plays every opponent seat, or a tuple of `P - 1` of them, one per
            opponent seat clockwise after the learner. Default: a seeded random player.
        weights: sampling weight of each entry (default: equal); each new game draws one.
        seat: the learner's seat in every game, or `None` (default): a random seat per game.
        reward: `"result"`, `"score"`, `"lead"` or `"none"`, or a mapping of them to weights (see
            [`skyjo_env.rewards`][]).
        reward_scale: every reward is multiplied by this (e.g. 0.05 for `"score"` rewards).
        max_steps: truncate a game at the first learner turn after this many actions of all its
            seats (a guard against policies that never end a round); `None` for no limit.
        seed: seeds the deals, the seats, the opponent draws and the default opponent; `reset(seed)`
            re-seeds them and the opponents' own randomness ([`reseed()`][reseed]).
        restart: deal an ended game again within the step (default); `False` leaves it as it ended.
        obs_type: the learner's observations: `"table"` (default, sized to the table) or
            `"padded"` (every player count alike, see [`skyjo_env.observation`][]). Opponents
            always get table observations.
    """

    def __init__(
        self,
        num_games: int,
        rules: Rules | None = None,
        *,
        opponents: Opponents | Sequence[Opponents] | None = None,
        weights: Sequence[float] | None = None,
        seat: int | None = None,
        reward: Reward = "result",
        reward_scale: float = 1.0,
        max_steps: int | None = MAX_STEPS,
        seed: int | None = None,
        restart: bool = True,
        obs_type: str = "table",
    ) -> None:
        check_reward(reward)
        check_obs_type(obs_type)
        self.obs_type = obs_type
        self.engine = SkyjoEngine(rules, num_games, seed=seed, auto_reset=False)
        self.rules = rules = self.engine.rules
        self.reward = reward
        check_seat(seat, rules.num_players)
        check_reward_scale(reward_scale)
        check_max_steps(max_steps)
        self.num_games = N = self.engine.batch_size
        self.reward_scale = np.float32(reward_scale)
        self.fixed_seat = seat
        self.max_steps = max_steps
        self.restart = bool(restart)
        self._rng = np.random.default_rng(seed)
        self._all = self.engine.all_games
        self._seats = np.zeros(N, dtype=np.int64)
        self._pool: list[tuple[OpponentPolicy, ...]] = []  # every line-up some game may be playing
        self._entries: list[Any] = []  # what was given for each line-up (reported in Ended)
        self._draw = np.zeros(0)  # probability of drawing each pool entry for a new game
        self._game_opponent = np.zeros(N, dtype=np.int64)  # pool index of each game's line-up
        self._default: RandomPolicy | None = None  # the seeded random default, re-seeded by reset(seed)
        self.set_opponents(opponents, weights)
        self._carry = np.zeros(N, dtype=np.float32)  # rewards of new games before their learner's turn
        self._bits: np.ndarray | None = None  # legal actions of the learners, cached per state
        # Per restart in a step: games, observations, truncated, seats, totals, won, pool entries.
        self._ended: list[tuple[np.ndarray, ...]] = []

    @property
    def seats(self) -> np.ndarray:
        """The learner's seat in each game (read-only)."""
        view = self._seats.view()
        view.flags.writeable = False
        return view

    # ------------------------------------------------------------------ opponents
    @property
    def opponents(self) -> list[Any]:
        """The entries drawn for games that start from now on."""
        return [e for e, w in zip(self._entries, self._draw) if w > 0]

    @property
    def game_opponents(self) -> list[Any]:
        """The entry playing the opponent seats of each game."""
        return [self._entries[i] for i in self._game_opponent.tolist()]

    def set_opponents(
        self, opponents: Opponents | Sequence[Opponents] | None, weights: Sequence[float] | None = None
    ) -> None:
        """Draw the opponents of every game that starts from now on from `opponents` by `weights`
        (entries as the argument of that name; `None`: the seeded random default); games in
        progress keep theirs."""
        if opponents is None:
            if self._default is None:
                self._default = self._random_opponent()
            opponents = self._default
        entries = (
            [opponents] if callable(opponents) else list(opponents) if isinstance(opponents, (list, tuple)) else []
        )
        if not entries or not all(callable(e) or isinstance(e, (list, tuple)) for e in entries):
            raise ValueError(
                f"opponents must be a policy or a non-empty list of policies (callables), got {opponents!r}"
            )
        w = np.ones(len(entries)) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (len(entries),) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(
                f"weights must be {len(entries)} non-negative finite numbers, not all zero (one per opponent), got {weights!r}"
            )
        lineups = [self._lineup(e) for e in entries]
        in_use = np.unique(self._game_opponent) if self._pool else np.zeros(0, dtype=np.int64)
        remap = np.zeros(len(self._pool), dtype=np.int64)
        remap[in_use] = np.arange(in_use.size)
        self._game_opponent = remap[self._game_opponent] if self._pool else self._game_opponent
        self._pool = [self._pool[i] for i in in_use] + lineups
        self._entries = [self._entries[i] for i in in_use] + entries
        self._draw = np.concatenate([np.zeros(in_use.size), w / w.sum()])
        # Distinct policies, and which one plays (pool entry, relative opponent seat): a policy is
        # called once per step on all the games it plays, whatever entries and seats they are.
        self._policies: list[OpponentPolicy] = list({id(p): p for lineup in self._pool for p in lineup}.values())
        index = {id(p): i for i, p in enumerate(self._policies)}
        self._choice = np.array([[index[id(p)] for p in lineup] for lineup in self._pool], dtype=np.int64)

    # ------------------------------------------------------------------ games
    def reset(self, seed: int | None = None) -> np.ndarray:
        """Deal new games everywhere (re-seeded if `seed` is given); the learners' observations."""
        self.engine.reset(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            if self._default is not None:
                new = self._random_opponent()
                self._replace(self._default, new)
                self._default = new
            reseed([p for p in self._policies if p is not self._default], seed)  # (the default is new)
        self._carry[:] = 0
        self._draw_seats_and_opponents(self._all)
        self._advance(self._all, self._carry, np.ones(self.num_games, dtype=bool))  # all done: no game restarts
        self._ended = []
        self._bits = None
        return observe_as(self.obs_type, self.engine, self._seats)

    def step(
        self, actions: np.ndarray, hold: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Ended | None]:
        """Play the N learner actions, then the opponents up to every learner's next turn.

        Returns the learners' observations `(N, obs)`, rewards `(N,)` float32, done flags
        `(N,)` and the [`Ended`][] games (`None` when no game ended). An illegal or
        malformed action raises `ValueError` naming the game and its legal actions, before any
        game moves. `hold` `(N,)` bools: games that stay as they are in this step (their actions,
        any in range, are ignored; reward 0, not done), as a view's next-step autoreset needs.
        """
        bits = self.legal_bits() if hold is None else np.where(hold, np.uint32(ANY_ACTION), self.legal_bits())
        return self.play(checked_learner_actions(actions, bits, self._seats), hold)

    def play(
        self, actions: np.ndarray, hold: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Ended | None]:
        """[`step()`][step] with `actions` already checked: int64, each legal under
        [`legal_bits()`][legal_bits] (or in range in a held game). The one check of a step is the
        caller's: `step()`'s, or the one-game view's own ([`skyjo_env.gymnasium_env`][])."""
        if hold is None:
            rewards, self._carry = self._carry, np.zeros(self.num_games, dtype=np.float32)
            result = self.engine.step(actions, check=False)
            rewards += reward_of(self.reward, result)[self._all, self._seats]
            moving = self._all
        else:
            hold = np.asarray(hold, dtype=bool)
            moving = self._all[~hold]
            rewards = np.zeros(self.num_games, dtype=np.float32)
            rewards[moving] = self._carry[moving]
            self._carry[moving] = 0
            result = self.engine.step(actions[moving], moving, check=False)
            rewards[moving] += reward_of(self.reward, result)[np.arange(moving.size), self._seats[moving]]
        dones = np.zeros(self.num_games, dtype=bool)
        self._advance(moving, rewards, dones)
        self._bits = None
        if self.reward_scale != 1:
            rewards *= self.reward_scale
        return observe_as(self.obs_type, self.engine, self._seats), rewards, dones, self._collect_ended()

    def legal_bits(self) -> np.ndarray:
        """The learners' legal actions as `(N,)` bit sets (bit `a` set: action `a` is legal), read-only:
        what the learners' actions are checked against, cached until the games move."""
        if self._bits is None:
            self._bits = self.engine.legal_bits()
            self._bits.setflags(write=False)
        return self._bits

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, `(N, 26)` booleans."""
        return unpack_bits(self.legal_bits())

    def images(self) -> list[np.ndarray]:
        """An RGB image of every game ([`render_rgb()`][skyjo_env.render.render_rgb]), each from its learner's view."""
        return [render.render_rgb(self.engine, g, viewer=s) for g, s in enumerate(self._seats.tolist())]

    # ------------------------------------------------------------------ helpers
    def _lineup(self, entry: Any) -> tuple[OpponentPolicy, ...]:
        """The policy of every opponent seat for a pool entry, factories built with the rules."""
        P = self.rules.num_players
        seats = per_seat(entry if callable(entry) else list(entry), P)
        built: dict[int, OpponentPolicy] = {}  # one object per factory, whatever seats it fills
        for p in seats:
            if id(p) not in built:
                built[id(p)] = policy = build(p, self.rules, int(self._rng.integers(2**63)) if is_factory(p) else None)
                check_table(policy, P, f"opponent {policy_name(policy)!r}")
        return tuple(built[id(p)] for p in seats)

    def _replace(self, old: OpponentPolicy, new: OpponentPolicy) -> None:
        """Put `new` wherever the pool holds `old` (the default opponent, re-seeded)."""
        self._pool = [tuple(new if p is old else p for p in lineup) for lineup in self._pool]
        self._entries = [new if e is old else e for e in self._entries]
        self._policies = [new if p is old else p for p in self._policies]

    def _draw_seats_and_opponents(self, games: np.ndarray) -> None:
        """For games just dealt: the learner's seat and the opponents' pool entry."""
        P = self.rules.num_players
        self._seats[games] = self._rng.integers(P, size=games.size) if self.fixed_seat is None else self.fixed_seat
        self._game_opponent[games] = self._rng.choice(len(self._pool), size=games.size, p=self._draw)

    def _advance(self, games: np.ndarray, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Bring every game of `games` to its learner's turn, in batch.

        Opponents act in all the games where it is their turn, at once, until none is left. A game
        that ends (or, at its learner's turn, has reached `max_steps`) and is not yet `dones`
        is recorded and marked in `dones`; with `restart` it is dealt again and its opponents
        play on in the new game within the same loop. The learner's rewards go to `rewards`, or
        to the carry of the next step for games already done (they belong to the new game).
        """
        engine, seats, P = self.engine, self._seats, self.rules.num_players
        while games.size:
            ended = self._ended_games(games) & ~dones[games]
            if ended.any():
                self._restart(games[ended], dones)
            games = games[(engine.current[games] != seats[games]) & (engine.phase[games] != OVER)]
            if not games.size:
                return
            relative = (engine.current[games] - seats[games]) % P - 1  # opponent seat 0..P-2 after the learner
            chosen = self._choice[self._game_opponent[games], relative]
            result = play_policies(engine, games, self._policies, chosen)
            gained = reward_of(self.reward, result)[np.arange(games.size), seats[games]]
            fresh = dones[games]
            if fresh.any():
                self._carry[games[fresh]] += gained[fresh]
                rewards[games[~fresh]] += gained[~fresh]
            else:
                rewards[games] += gained

    def _ended_games(self, games: np.ndarray) -> np.ndarray:
        """Over, or at the learner's turn with `max_steps` actions played."""
        engine = self.engine
        over = engine.phase[games] == OVER
        if self.max_steps is None:
            return over
        return over | ((engine.steps[games] >= self.max_steps) & (engine.current[games] == self._seats[games]))

    def _restart(self, games: np.ndarray, dones: np.ndarray) -> None:
        """Record the episodes of `games` as ended, then (with `restart`) deal them again."""
        engine = self.engine
        seats = self._seats[games]
        over = engine.phase[games] == OVER
        totals = engine.totals[games].astype(np.int64)
        won = over & (totals[np.arange(games.size), seats] == totals.min(axis=1))  # R20
        record = (
            games,
            observe_as(self.obs_type, engine, seats, games),
            ~over,
            seats,
            totals,
            won,
            self._game_opponent[games],
        )
        self._ended.append(record)
        dones[games] = True
        if self.restart:
            engine.reset_games(games)
            self._draw_seats_and_opponents(games)

    def _collect_ended(self) -> Ended | None:
        """The games recorded by [`_restart()`][_restart] during this step, in game order; clears the record."""
        parts, self._ended = self._ended, []
        if not parts:
            return None
        games, observations, truncated, seats, totals, won, pool = (np.concatenate(x) for x in zip(*parts))
        order = np.argsort(games, kind="stable")
        return Ended(
            games=games[order],
            observations=observations[order],
            truncated=truncated[order],
            seats=seats[order],
            totals=totals[order],
            won=won[order],
            opponents=[self._entries[i] for i in pool[order].tolist()],
        )

    def _random_opponent(self) -> RandomPolicy:
        """The default opponent, seeded from this object's generator; it reads no observations."""
        return RandomPolicy(int(self._rng.integers(2**63)))
