"""N games of Skyjo as one stable-baselines3 ``VecEnv``, stepped in batch by a single engine.

:class:`SkyjoVecEnv` is a real :class:`stable_baselines3.common.vec_env.VecEnv` (this module needs
the ``train`` extra) over one :class:`~skyjo_env.engine.SkyjoEngine` of N games without
auto-reset; the engine holds every rule. In each game a learner sits in a seat (drawn at random
for every new game, or fixed by option ``seat``); the other seats are played by an opponent policy
assigned to the game when it starts.

* Observations ``(N, 38 * P + 54)`` float32 from the learner's seat (:mod:`skyjo_env.observation`);
  actions ``Discrete(26)`` (:mod:`skyjo_env.actions`). :meth:`SkyjoVecEnv.action_masks` gives the
  ``(N, 26)`` legal actions, so ``sb3_contrib.MaskablePPO`` trains on it directly. An illegal
  learner action raises ``ValueError``.
* ``step`` applies the N learner actions at once, then lets opponents act, in batch, until every
  game is back at its learner's turn or over: while some game has an opponent to act, those games
  are observed, each opponent policy is called once on its games, and the engine steps them
  together. A game's reward sums the learner's engine rewards over all of that (option
  ``reward``: ``"result"``, ``"score"`` or ``"none"``, as :class:`~skyjo_env.engine.SkyjoEngine`).
* A game that ends (or, at a learner turn, has had ``max_steps`` actions of all seats: truncation,
  with ``info["TimeLimit.truncated"]``) is reported done with ``info["terminal_observation"]`` and
  ``info["opponent"]`` (the policy it was played against), and is dealt again at once: new seat,
  new opponent, opponents' moves up to the learner's first turn. The other games' info dicts are
  empty, and the same empty dicts are handed out from step to step (one a caller wrote into is
  replaced); every step returns a new list.
* Opponents: a list of policies (``policy(observations, action_masks) -> actions``, see
  :mod:`skyjo_env.opponents`) with sampling ``weights``; each game draws one at its start and it
  plays all of that game's opponent seats. :meth:`SkyjoVecEnv.set_opponents` replaces the list
  for games that start afterwards (self-play pools); games in progress keep their opponent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from agents.random_agent import RandomPolicy
from skyjo_env import render
from skyjo_env.actions import NUM_ACTIONS, action_name
from skyjo_env.arguments import check_max_steps, check_render_mode
from skyjo_env.engine import OVER, SkyjoEngine
from skyjo_env.observation import observe
from skyjo_env.opponents import OpponentPolicy, act
from skyjo_env.rules import Rules
from skyjo_env.sampling import unpack_bits
from skyjo_env.spaces import action_space, observation_space


class SkyjoVecEnv(VecEnv):
    """``num_envs`` Skyjo games for one learner against weighted opponent policies; see the module docstring.

    Args:
        num_envs: number of games N.
        rules: the rule options (default ``Rules()``: 2 players).
        opponents: one policy or a list of policies (default: a seeded ``RandomPolicy``).
        weights: sampling weight of each policy in ``opponents`` (default: equal).
        seat: the learner's seat in every game, or ``None`` (default): a random seat per game.
        reward: ``"result"``, ``"score"`` or ``"none"`` (see :class:`~skyjo_env.engine.SkyjoEngine`).
        reward_scale: every reward is multiplied by this (e.g. 0.05 for ``"score"`` rewards).
        max_steps: truncate a game at the first learner turn after this many actions of all its
            seats (a guard against policies that never end a round); ``None`` for no limit.
        seed: seeds the deals, the seats, the opponent draws and the default opponent.
        render_mode: ``None`` or ``"rgb_array"`` (:meth:`get_images`, each game from its learner's view).
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules | None = None,
        *,
        opponents: OpponentPolicy | Sequence[OpponentPolicy] | None = None,
        weights: Sequence[float] | None = None,
        seat: int | None = None,
        reward: str = "result",
        reward_scale: float = 1.0,
        max_steps: int | None = 10_000,
        seed: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.engine = SkyjoEngine(rules, num_envs, seed=seed, auto_reset=False, reward=reward)
        self.rules = rules = self.engine.rules
        P = rules.num_players
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < P):
            raise ValueError(f"seat={seat!r} is not allowed; use None (random per game) or a seat 0..{P - 1}")
        if isinstance(reward_scale, bool) or not isinstance(reward_scale, (int, float)) or not np.isfinite(reward_scale):
            raise ValueError(f"reward_scale={reward_scale!r} is not allowed; use a finite number")
        check_max_steps(max_steps)
        check_render_mode(render_mode, ["rgb_array"])
        self.reward_scale = np.float32(reward_scale)
        self.fixed_seat = seat
        self.max_steps = max_steps
        self.render_mode = render_mode
        self._rng = np.random.default_rng(seed)
        N = self.engine.batch_size
        self._all = np.arange(N)
        self._seats = np.zeros(N, dtype=np.int64)
        self._pool: list[OpponentPolicy] = []  # every policy that some game may be playing
        self._draw = np.zeros(0)  # probability of drawing each pool entry for a new game
        self._game_opponent = np.zeros(N, dtype=np.int64)  # pool index of each game's opponent
        self._default = self._random_opponent() if opponents is None else None  # re-seeded by seed()
        self.set_opponents(self._default if opponents is None else opponents, weights)
        self._carry = np.zeros(N, dtype=np.float32)  # rewards of new games before their learner's turn
        self._bits: np.ndarray | None = None  # legal actions of the learners, cached per state
        self._infos: list[dict[str, Any]] = [{} for _ in range(N)]  # empty dicts, reused (see _empty_infos)
        self._actions: np.ndarray | None = None
        super().__init__(N, observation_space(P), action_space())

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

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        """Deal new games everywhere (seeded by :meth:`seed` if it was called); learner observations."""
        seed = self._seeds[0]
        self.engine.reset(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            if self._default is not None:
                new = self._random_opponent()
                self._pool = [new if p is self._default else p for p in self._pool]
                self._default = new
        self._reset_seeds()
        self._reset_options()
        self._carry[:] = 0
        self._draw_seats_and_opponents(self._all)
        self._advance(self._all, self._carry, self._empty_infos(), np.ones(self.num_envs, dtype=bool))
        self._bits = None
        return observe(self.engine, self._seats)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        actions = self._checked(self._actions)
        self._actions = None
        rewards, self._carry = self._carry, np.zeros(self.num_envs, dtype=np.float32)
        result = self.engine.step(actions, check=False)
        rewards += result.rewards[self._all, self._seats]
        infos = self._empty_infos()
        dones = np.zeros(self.num_envs, dtype=bool)
        self._advance(self._all, rewards, infos, dones)
        self._bits = None
        if self.reward_scale != 1:
            rewards *= self.reward_scale
        return observe(self.engine, self._seats), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, ``(N, 26)`` booleans (for ``MaskablePPO``)."""
        return unpack_bits(self._legal_bits())

    def close(self) -> None:
        """Nothing to release."""

    def get_images(self) -> list[np.ndarray]:
        if self.render_mode != "rgb_array":
            raise ValueError(f"get_images needs render_mode='rgb_array', this env has render_mode={self.render_mode!r}")
        return [render.render_rgb(self.engine, g, viewer=int(self._seats[g])) for g in range(self.num_envs)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Attributes are shared by all games: the value of this env's ``attr_name``, once per index."""
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Attributes are shared by all games, so only all of them can be set at once."""
        if len(self._indices(indices)) != self.num_envs:
            raise ValueError(f"attributes are shared by all {self.num_envs} games; set {attr_name!r} with indices=None")
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        """Per-game methods: only ``action_masks`` (one mask per game, as sb3-contrib asks for them)."""
        if method_name != "action_masks" or method_args or method_kwargs:
            raise AttributeError(f"SkyjoVecEnv has no per-game method {method_name!r}; the only one is 'action_masks()'")
        return list(self.action_masks()[self._indices(indices)])

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    # ------------------------------------------------------------------ helpers
    def _draw_seats_and_opponents(self, games: np.ndarray) -> None:
        """For games just dealt: the learner's seat and the opponent policy."""
        P = self.rules.num_players
        self._seats[games] = self._rng.integers(P, size=games.size) if self.fixed_seat is None else self.fixed_seat
        self._game_opponent[games] = self._rng.choice(len(self._pool), size=games.size, p=self._draw)

    def _advance(self, games: np.ndarray, rewards: np.ndarray, infos: list[dict], dones: np.ndarray) -> None:
        """Bring every game of ``games`` to its learner's turn, in batch.

        Opponents act in all the games where it is their turn, at once, until none is left. A game
        that ends (or, at its learner's turn, has reached ``max_steps``) and is not yet ``dones``
        is reported in ``infos`` and ``dones`` and dealt again, and its opponents play on in the
        new game within the same loop. The learner's rewards go to ``rewards``, or to the carry of
        the next step for games already done (they belong to the new game).
        """
        engine, seats = self.engine, self._seats
        while games.size:
            ended = self._ended(games) & ~dones[games]
            if ended.any():
                self._restart(games[ended], infos, dones)
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

    def _ended(self, games: np.ndarray) -> np.ndarray:
        """Over, or at the learner's turn with ``max_steps`` actions played."""
        engine = self.engine
        over = engine.phase[games] == OVER
        if self.max_steps is None:
            return over
        return over | ((engine.steps[games] >= self.max_steps) & (engine.current[games] == self._seats[games]))

    def _restart(self, games: np.ndarray, infos: list[dict], dones: np.ndarray) -> None:
        """Report the episodes of ``games`` as done, then deal them again."""
        engine = self.engine
        terminal = observe(engine, self._seats[games], games)
        truncated = engine.phase[games] != OVER
        for i, g in enumerate(games.tolist()):
            info = {"terminal_observation": terminal[i], "opponent": self._pool[self._game_opponent[g]]}
            if truncated[i]:
                info["TimeLimit.truncated"] = True
            infos[g] = info  # a new dict: the empty one may be shared with earlier steps' lists
        dones[games] = True
        engine.reset_games(games)
        self._draw_seats_and_opponents(games)

    def _empty_infos(self) -> list[dict[str, Any]]:
        """A new list of N empty info dicts for a step; :meth:`_restart` replaces those of done games.

        Building N dicts every step is a sizeable part of a step, so the empty dicts are reused from
        step to step; one that a caller has written into is replaced, never cleared.
        """
        if any(self._infos):
            self._infos = [info if not info else {} for info in self._infos]
        return list(self._infos)

    def _legal_bits(self) -> np.ndarray:
        if self._bits is None:
            self._bits = self.engine.legal_bits()
        return self._bits

    def _checked(self, actions: np.ndarray | None) -> np.ndarray:
        """The learners' actions as int64, each legal; ``ValueError`` naming a game otherwise."""
        if actions is None:
            raise ValueError("step_wait() without step_async(actions)")
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integer action ids, got {actions.dtype} of shape {actions.shape}")
        actions = actions.astype(np.int64, copy=False)
        bits = self._legal_bits()
        ok = (actions >= 0) & (actions < NUM_ACTIONS)
        ok &= ((bits.astype(np.int64) >> np.where(ok, actions, 0)) & 1) == 1
        if not ok.all():
            g = int(np.flatnonzero(~ok)[0])
            legal = [action_name(a) for a in np.flatnonzero(unpack_bits(bits[g : g + 1])[0])]
            raise ValueError(
                f"illegal action {int(actions[g])} for the learner in game {g} (seat {int(self._seats[g])}); "
                f"legal actions: {legal}. Use action_masks() (e.g. sb3_contrib.MaskablePPO)."
            )
        return actions

    def _indices(self, indices: VecEnvIndices) -> np.ndarray:
        if indices is None:
            return self._all
        return self._all[indices] if isinstance(indices, slice) else np.asarray(indices, dtype=np.int64).reshape(-1)

    def _random_opponent(self) -> RandomPolicy:
        """The default opponent, seeded from this env's generator; it reads no observations."""
        policy = RandomPolicy(int(self._rng.integers(2**63)))
        policy.observes = False
        return policy
