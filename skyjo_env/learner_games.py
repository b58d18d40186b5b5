"""N games of Skyjo for one learner against batched opponents: the core of the vector environments.

:class:`LearnerGames` owns one :class:`~skyjo_env.engine.SkyjoEngine` of N games without
auto-reset (the engine holds every rule). In each game a learner sits in a seat (drawn at random
for every new game, or fixed); the other seats are played by an opponent policy assigned to the
game when it starts. :meth:`LearnerGames.step` applies the N learner actions at once, then lets
opponents act, in batch, until every game is back at its learner's turn or over: while some game
has an opponent to act, those games are observed, each opponent policy is called once on its
games, and the engine steps them together. A game that ends (or, at a learner turn, has had
``max_steps`` actions of all seats: truncation) is reported in :class:`Ended` and dealt again at
once: new seat, new opponent, opponents' moves up to the learner's first turn.

This module needs numpy only; :mod:`skyjo_env.sb3_vec_env` (stable-baselines3) and
:mod:`skyjo_env.gymnasium_vector_env` (Gymnasium) are thin views over it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from skyjo_env.random_policy import RandomPolicy
from skyjo_env import render
from skyjo_env.actions import NUM_ACTIONS, action_name
from skyjo_env.arguments import check_max_steps
from skyjo_env.engine import OVER, SkyjoEngine
from skyjo_env.observation import observe
from skyjo_env.opponents import OpponentPolicy, act
from skyjo_env.rules import Rules
from skyjo_env.sampling import unpack_bits


@dataclass(frozen=True)
class Ended:
    """The games that ended during a step, before they were dealt again (all arrays of length k)."""

    games: np.ndarray  #: (k,) game indices, ascending
    observations: np.ndarray  #: (k, obs) the learner's last observation of each ended game
    truncated: np.ndarray  #: (k,) bool: stopped by ``max_steps`` rather than finished
    seats: np.ndarray  #: (k,) the learner's seat in each ended game
    opponents: list[OpponentPolicy]  #: the policy that played the opponent seats of each ended game


class LearnerGames:
    """``num_games`` Skyjo games for one learner against weighted opponent policies; see the module docstring.

    Args:
        num_games: number of games N.
        rules: the rule options (default ``Rules()``: 2 players).
        opponents: one policy or a list of policies (default: a seeded ``RandomPolicy``).
        weights: sampling weight of each policy in ``opponents`` (default: equal).
        seat: the learner's seat in every game, or ``None`` (default): a random seat per game.
        reward: ``"result"``, ``"score"``, ``"lead"`` or ``"none"`` (see :class:`~skyjo_env.engine.SkyjoEngine`).
        reward_scale: every reward is multiplied by this (e.g. 0.05 for ``"score"`` rewards).
        max_steps: truncate a game at the first learner turn after this many actions of all its
            seats (a guard against policies that never end a round); ``None`` for no limit.
        seed: seeds the deals, the seats, the opponent draws and the default opponent.
    """

    def __init__(
        self,
        num_games: int,
        rules: Rules | None = None,
        *,
        opponents: OpponentPolicy | Sequence[OpponentPolicy] | None = None,
        weights: Sequence[float] | None = None,
        seat: int | None = None,
        reward: str = "result",
        reward_scale: float = 1.0,
        max_steps: int | None = 10_000,
        seed: int | None = None,
    ) -> None:
        self.engine = SkyjoEngine(rules, num_games, seed=seed, auto_reset=False, reward=reward)
        self.rules = rules = self.engine.rules
        P = rules.num_players
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < P):
            raise ValueError(f"seat={seat!r} is not allowed; use None (random per game) or a seat 0..{P - 1}")
        if isinstance(reward_scale, bool) or not isinstance(reward_scale, (int, float)) or not np.isfinite(reward_scale):
            raise ValueError(f"reward_scale={reward_scale!r} is not allowed; use a finite number")
        check_max_steps(max_steps)
        self.num_games = N = self.engine.batch_size
        self.reward_scale = np.float32(reward_scale)
        self.fixed_seat = seat
        self.max_steps = max_steps
        self._rng = np.random.default_rng(seed)
        self._all = np.arange(N)
        self._seats = np.zeros(N, dtype=np.int64)
        self._pool: list[OpponentPolicy] = []  # every policy that some game may be playing
        self._draw = np.zeros(0)  # probability of drawing each pool entry for a new game
        self._game_opponent = np.zeros(N, dtype=np.int64)  # pool index of each game's opponent
        self._default = self._random_opponent() if opponents is None else None  # re-seeded by reset(seed)
        self.set_opponents(self._default if opponents is None else opponents, weights)
        self._carry = np.zeros(N, dtype=np.float32)  # rewards of new games before their learner's turn
        self._bits: np.ndarray | None = None  # legal actions of the learners, cached per state
        self._ended: list[tuple[np.ndarray, ...]] = []  # per restart in a step: games, observations, truncated, seats, opponents

    @property
    def seats(self) -> np.ndarray:
        """The learner's seat in each game (read-only)."""
        view = self._seats.view()
        view.flags.writeable = False
        return view

    # ------------------------------------------------------------------ opponents
    @property
    def opponents(self) -> list[OpponentPolicy]:
        """The policies drawn for games that start from now on."""
        return [p for p, w in zip(self._pool, self._draw) if w > 0]

    @property
    def game_opponents(self) -> list[OpponentPolicy]:
        """The policy playing the opponent seats of each game."""
        return [self._pool[i] for i in self._game_opponent.tolist()]

    def set_opponents(
        self, opponents: OpponentPolicy | Sequence[OpponentPolicy], weights: Sequence[float] | None = None
    ) -> None:
        """Draw the opponent of every game that starts from now on from ``opponents`` by ``weights``."""
        policies = [opponents] if callable(opponents) else list(opponents)
        if not policies or not all(callable(p) for p in policies):
            raise ValueError(f"opponents must be a policy or a non-empty list of policies (callables), got {opponents!r}")
        w = np.ones(len(policies)) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (len(policies),) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(
                f"weights must be {len(policies)} non-negative finite numbers, not all zero (one per opponent), got {weights!r}"
            )
        in_use = np.unique(self._game_opponent) if self._pool else np.zeros(0, dtype=np.int64)
        remap = np.zeros(len(self._pool), dtype=np.int64)
        remap[in_use] = np.arange(in_use.size)
        self._game_opponent = remap[self._game_opponent] if self._pool else self._game_opponent
        self._pool = [self._pool[i] for i in in_use] + policies
        self._draw = np.concatenate([np.zeros(in_use.size), w / w.sum()])

    # ------------------------------------------------------------------ games
    def reset(self, seed: int | None = None) -> np.ndarray:
        """Deal new games everywhere (re-seeded if ``seed`` is given); the learners' observations."""
        self.engine.reset(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            if self._default is not None:
                new = self._random_opponent()
                self._pool = [new if p is self._default else p for p in self._pool]
                self._default = new
        self._carry[:] = 0
        self._draw_seats_and_opponents(self._all)
        self._advance(self._all, self._carry, np.ones(self.num_games, dtype=bool))  # all done: no game restarts
        self._bits = None
        return observe(self.engine, self._seats)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, Ended | None]:
        """Play the N learner actions, then the opponents up to every learner's next turn.

        Returns the learners' observations ``(N, obs)``, rewards ``(N,)`` float32, done flags
        ``(N,)`` and the :class:`Ended` games (``None`` when no game ended). An illegal or
        malformed action raises ``ValueError`` naming the game and its legal actions, before any
        game moves.
        """
        actions = self._checked(actions)
        rewards, self._carry = self._carry, np.zeros(self.num_games, dtype=np.float32)
        result = self.engine.step(actions, check=False)
        rewards += result.rewards[self._all, self._seats]
        dones = np.zeros(self.num_games, dtype=bool)
        self._advance(self._all, rewards, dones)
        self._bits = None
        if self.reward_scale != 1:
            rewards *= self.reward_scale
        return observe(self.engine, self._seats), rewards, dones, self._collect_ended()

    def legal_bits(self) -> np.ndarray:
        """The learners' legal actions as ``(N,)`` bit sets (bit ``a`` set: action ``a`` is legal)."""
        if self._bits is None:
            self._bits = self.engine.legal_bits()
        return self._bits

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, ``(N, 26)`` booleans."""
        return unpack_bits(self.legal_bits())

    def images(self) -> list[np.ndarray]:
        """An RGB image of every game (:func:`~skyjo_env.render.render_rgb`), each from its learner's view."""
        return [render.render_rgb(self.engine, g, viewer=s) for g, s in enumerate(self._seats.tolist())]

    # ------------------------------------------------------------------ helpers
    def _draw_seats_and_opponents(self, games: np.ndarray) -> None:
        """For games just dealt: the learner's seat and the opponent policy."""
        P = self.rules.num_players
        self._seats[games] = self._rng.integers(P, size=games.size) if self.fixed_seat is None else self.fixed_seat
        self._game_opponent[games] = self._rng.choice(len(self._pool), size=games.size, p=self._draw)

    def _advance(self, games: np.ndarray, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Bring every game of ``games`` to its learner's turn, in batch.

        Opponents act in all the games where it is their turn, at once, until none is left. A game
        that ends (or, at its learner's turn, has reached ``max_steps``) and is not yet ``dones``
        is recorded, marked in ``dones`` and dealt again, and its opponents play on in the new
        game within the same loop. The learner's rewards go to ``rewards``, or to the carry of the
        next step for games already done (they belong to the new game).
        """
        engine, seats = self.engine, self._seats
        while games.size:
            ended = self._ended_games(games) & ~dones[games]
            if ended.any():
                self._restart(games[ended], dones)
            games = games[engine.current[games] != seats[games]]
            if not games.size:
                return
            masks = engine.legal_mask(games)
            if len(self._pool) == 1:
                actions = act(self._pool[0], engine, games, masks)
            else:
                group = self._game_opponent[games]
                actions = np.empty(games.size, dtype=np.int64)
                for k in np.unique(group).tolist():
                    rows = np.flatnonzero(group == k)
                    actions[rows] = act(self._pool[k], engine, games[rows], masks[rows])
            gained = engine.step(actions, games, check=False).rewards[np.arange(games.size), seats[games]]
            fresh = dones[games]
            if fresh.any():
                self._carry[games[fresh]] += gained[fresh]
                rewards[games[~fresh]] += gained[~fresh]
            else:
                rewards[games] += gained

    def _ended_games(self, games: np.ndarray) -> np.ndarray:
        """Over, or at the learner's turn with ``max_steps`` actions played."""
        engine = self.engine
        over = engine.phase[games] == OVER
        if self.max_steps is None:
            return over
        return over | ((engine.steps[games] >= self.max_steps) & (engine.current[games] == self._seats[games]))

    def _restart(self, games: np.ndarray, dones: np.ndarray) -> None:
        """Record the episodes of ``games`` as ended, then deal them again."""
        engine = self.engine
        seats = self._seats[games]
        truncated = engine.phase[games] != OVER
        opponents = self._game_opponent[games]
        self._ended.append((games, observe(engine, seats, games), truncated, seats, opponents))
        dones[games] = True
        engine.reset_games(games)
        self._draw_seats_and_opponents(games)

    def _collect_ended(self) -> Ended | None:
        """The games recorded by :meth:`_restart` during this step, in game order; clears the record."""
        parts, self._ended = self._ended, []
        if not parts:
            return None
        games, observations, truncated, seats, opponents = (np.concatenate(x) for x in zip(*parts))
        order = np.argsort(games, kind="stable")
        return Ended(
            games=games[order],
            observations=observations[order],
            truncated=truncated[order],
            seats=seats[order],
            opponents=[self._pool[i] for i in opponents[order].tolist()],
        )

    def _checked(self, actions: np.ndarray) -> np.ndarray:
        """The learners' actions as int64, each legal; ``ValueError`` naming a game otherwise."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_games,) or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_games} integer action ids, got {actions.dtype} of shape {actions.shape}")
        actions = actions.astype(np.int64, copy=False)
        bits = self.legal_bits()
        ok = (actions >= 0) & (actions < NUM_ACTIONS)
        ok &= ((bits.astype(np.int64) >> np.where(ok, actions, 0)) & 1) == 1
        if not ok.all():
            g = int(np.flatnonzero(~ok)[0])
            legal = [action_name(a) for a in np.flatnonzero(unpack_bits(bits[g : g + 1])[0])]
            raise ValueError(
                f"illegal action {int(actions[g])} for the learner in game {g} (seat {int(self._seats[g])}); "
                f"legal actions: {legal}. Use the action masks (e.g. sb3_contrib.MaskablePPO)."
            )
        return actions

    def _random_opponent(self) -> RandomPolicy:
        """The default opponent, seeded from this object's generator; it reads no observations."""
        policy = RandomPolicy(int(self._rng.integers(2**63)))
        policy.observes = False
        return policy
