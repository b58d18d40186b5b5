"""Skyjo as a single-agent Gymnasium environment: one learner, the other seats played by policies.

Create it with ``gymnasium.make("skyjo_env/Skyjo-v0", **options)`` (after ``import skyjo_env``) or
``SkyjoEnv(**options)``. Underneath is a :class:`~skyjo_env.engine.SkyjoEngine` with one game and
no auto-reset; the engine holds every rule.

* Observation: ``Box`` float32 of :mod:`skyjo_env.observation` from the learner's seat.
* Action: ``Discrete(26)``, the table of :mod:`skyjo_env.actions`. :meth:`SkyjoEnv.action_masks`
  (for sb3-contrib's ``MaskablePPO``) and ``info["action_mask"]`` give the legal actions as
  booleans. An illegal action loses: the episode terminates with reward -1 and
  ``info["illegal_action"] = True`` (PettingZoo's classic convention, which also lets Gymnasium's
  and stable-baselines3's checkers step unmasked samples); with ``illegal_action="raise"`` it
  raises a ``ValueError`` that names the legal actions instead.
* Each ``step`` is one learner action followed by the opponents' actions until the learner must act
  again or the game is over. The reward sums the learner's engine rewards over all of them.
* Rewards (option ``reward``): ``"result"`` (default; +1 shared by the winners, -1 shared by the
  losers at game end), ``"score"`` (at each round end: mean opponent round score minus one's own),
  ``"lead"`` (at each round end: the change in one's lead over the best opponent, whose game total
  is lowest) or ``"none"``.
* ``terminated`` when the game ends (then ``info`` also holds ``"totals"``, per absolute seat, and
  ``"winner"``); ``truncated`` when, at the learner's turn, the game has had ``max_steps``
  actions of all seats.

Options: every :class:`~skyjo_env.rules.Rules` field (``num_players``, ``column_rule``, ...), plus
``seat`` (the learner's seat, or ``None``: drawn at random at each reset), ``opponents`` (one
policy for all opponent seats or one per seat, clockwise after the learner; default
:class:`skyjo_env.random_policy.RandomPolicy`, seeded by ``reset(seed=...)``), ``reward``,
``illegal_action`` (``"lose"`` or ``"raise"``), ``max_steps`` and ``render_mode`` (``"human"``,
``"ansi"``, ``"rgb_array"``, from the learner's view).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from skyjo_env.random_policy import RandomPolicy
from skyjo_env import render
from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.arguments import check_max_steps, check_render_mode, checked_action, rules_from
from skyjo_env.engine import OVER, SkyjoEngine
from skyjo_env.observation import observe
from skyjo_env.opponents import OpponentPolicy, act, per_seat
from skyjo_env.spaces import action_space, observation_space

ENV_OPTIONS = ("seat", "opponents", "reward", "illegal_action", "max_steps", "render_mode")
ILLEGAL_ACTIONS = ("lose", "raise")


class SkyjoEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One learner against policies; see the module docstring for spaces, rewards and options."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        *,
        seat: int | None = None,
        opponents: OpponentPolicy | Sequence[OpponentPolicy] | None = None,
        reward: str = "result",
        illegal_action: str = "lose",
        max_steps: int | None = None,
        render_mode: str | None = None,
        **rule_options: Any,
    ) -> None:
        rules = rules_from(rule_options, ENV_OPTIONS)
        P = rules.num_players
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < P):
            raise ValueError(f"seat={seat!r} is not allowed; use None (random) or a seat 0..{P - 1}")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"illegal_action={illegal_action!r} is not allowed; use one of {ILLEGAL_ACTIONS}")
        check_max_steps(max_steps)
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.rules = rules
        self.engine = SkyjoEngine(rules, 1, auto_reset=False, reward=reward)
        self.fixed_seat = seat
        self.seat = 0 if seat is None else seat  # the learner's seat in the current game
        self._opponents = None if opponents is None else per_seat(opponents, P)  # None: seeded random
        self.opponents = per_seat(RandomPolicy(), P)  # the policies of the current game, per seat
        self.illegal_action = illegal_action
        self.max_steps = max_steps
        self.render_mode = render_mode
        self._ended = True  # the episode is over (or not begun): reset() before step()
        self._game = np.zeros(1, dtype=np.int64)  # the engine's one game
        self.observation_space = observation_space(P)
        self.action_space = action_space()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new game; opponents act until the learner's first turn (the setup flips, R5)."""
        super().reset(seed=seed)
        if options:
            raise ValueError(f"reset options {sorted(options)} are not supported; this environment takes none")
        rng = self.np_random
        self.engine.reset(int(rng.integers(2**63)))
        if self._opponents is None:
            self.opponents = per_seat(RandomPolicy(int(rng.integers(2**63))), self.rules.num_players)
        else:
            self.opponents = self._opponents
        self.seat = int(rng.integers(self.rules.num_players)) if self.fixed_seat is None else self.fixed_seat
        self._reward = 0.0
        self._ended = False
        self._opponents_play()
        return self._observation(), self._info()

    def step(self, action: int | np.integer) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._ended:
            raise ValueError("the episode is over; call reset() before step()")
        try:
            a = checked_action(action, self.action_masks(), f"the learner (seat {self.seat})")
        except ValueError:
            if self.illegal_action == "raise":
                raise
            self._ended = True
            return self._observation(), -1.0, True, False, {**self._info(), "illegal_action": True}
        self._reward = 0.0
        self._advance(np.array([a]))
        self._opponents_play()
        terminated = bool(self.engine.phase[0] == OVER)
        truncated = not terminated and self.max_steps is not None and bool(self.engine.steps[0] >= self.max_steps)
        self._ended = terminated or truncated
        info = self._info()
        if terminated:
            info["totals"] = self._last.totals[0].copy()
            info["winner"] = bool(self._last.winners[0, self.seat])
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._reward, terminated, truncated, info

    def set_opponents(self, opponents: OpponentPolicy | Sequence[OpponentPolicy] | None) -> None:
        """Play the next games (from the next ``reset``) against ``opponents``, as the option of that name."""
        self._opponents = None if opponents is None else per_seat(opponents, self.rules.num_players)

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner as 26 booleans (all false once the episode is over)."""
        if self._ended or self.engine.current[0] != self.seat:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self.engine.legal_mask()[0]

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "rgb_array":
            return render.render_rgb(self.engine, 0, viewer=self.seat)
        text = render.render_text(self.engine, 0, viewer=self.seat)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    # ------------------------------------------------------------------ helpers
    def _advance(self, actions: np.ndarray) -> None:
        self._last = self.engine.step(actions, check=False)
        self._reward += float(self._last.rewards[0, self.seat])

    def _opponents_play(self) -> None:
        """Opponents act until it is the learner's turn or the game is over (a few turns at most)."""
        P = self.rules.num_players
        while self.engine.phase[0] != OVER and self.engine.current[0] != self.seat:
            policy = self.opponents[(int(self.engine.current[0]) - self.seat) % P - 1]
            self._advance(act(policy, self.engine, self._game, self.engine.legal_mask()))

    def _observation(self) -> np.ndarray:
        return observe(self.engine, self.seat)[0]

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "seat": self.seat}
