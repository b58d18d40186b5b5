"""Skyjo as a single-agent Gymnasium environment: one learner, the other seats played by policies.

Create it with `gymnasium.make("skyjo_env/Skyjo-v0", **options)` (after `import skyjo_env`) or
`SkyjoEnv(**options)`. It is a view over [`LearnerGames`][] of one
game that is not dealt again when it ends (the engine holds every rule; the opponents' moves are
the vector views' own).

* Observation: `Box` float32 of [`skyjo_env.observation`][] from the learner's seat.
* Action: `Discrete(26)`, the table of [`skyjo_env.actions`][]. [`SkyjoEnv.action_masks()`][SkyjoEnv.action_masks]
  (for sb3-contrib's `MaskablePPO`) and `info["action_mask"]` give the legal actions as
  booleans. An action is a Python or numpy integer (a 0-d array too); anything else raises
  [`ActionTypeError`][skyjo_env.checks.ActionTypeError] (a `TypeError` and a `ValueError`). An illegal
  action id loses: the episode terminates with reward -1 and `info["illegal_action"] = True`
  (PettingZoo's classic convention, which also lets Gymnasium's and stable-baselines3's checkers
  step unmasked samples); with `illegal_action="raise"` it raises a `ValueError` that names the
  legal actions instead.
* Each `step` is one learner action followed by the opponents' actions until the learner must act
  again or the game is over. The reward sums the learner's rewards ([`skyjo_env.rewards`][]) over all of them.
* Rewards (option `reward`): `"result"` (default; +1 shared by the winners, -1 shared by the
  losers at game end), `"score"` (at each round end: mean opponent round score minus one's own),
  `"lead"` (at each round end: the change in one's lead over the best opponent, whose game total
  is lowest) or `"none"`, or a mapping of them to weights (their weighted sum); times `reward_scale`.
* `terminated` when the game ends (then `info` also holds `"totals"`, per absolute seat, and
  `"winner"`); `truncated` when, at the learner's turn, the game has had `max_steps`
  actions of all seats.

Options, as every view takes them ([`EnvOptions`][skyjo_env.env_options.EnvOptions], declared once): every [`Rules`][skyjo_env.rules.Rules] field (`num_players`,
`column_rule`, ...) as a keyword, or `rules=Rules(...)`; `seed` (seeds the first `reset`
that is given none); `max_steps` (default [`MAX_STEPS`][skyjo_env.checks.MAX_STEPS]); `render_mode`
(`"human"`, `"ansi"`, `"rgb_array"`, from the learner's view); `obs_type` (`"table"`, the
default, or `"padded"`: the same layout at every player count, see [`skyjo_env.observation`][]);
and of this view: `seat` (the
learner's seat, or `None`: drawn at random at each reset), `opponents` (one policy for all
opponent seats or one per seat, clockwise after the learner; a factory is built with the rules;
default [`RandomPolicy`][skyjo_env.random_policy.RandomPolicy]; `reset(seed=...)` re-seeds the
opponents' randomness ([`reseed()`][skyjo_env.opponents.reseed]), so a seed replays the same game; an
opponent that declares other player counts is refused),
`reward`, `reward_scale` and `illegal_action` (`"lose"` or `"raise"`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from skyjo_env import render
from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.checks import action_id, check_seed, checked_action
from skyjo_env.engine import SkyjoEngine
from skyjo_env.env_options import ILLEGAL_ACTIONS, EnvOptions, view_signature
from skyjo_env.learner_games import LearnerGames
from skyjo_env.observation import observe_as
from skyjo_env.opponents import OpponentPolicy, per_seat
from skyjo_env.spaces import action_space, observation_space

#: The options this view takes ([`EnvOptions`][skyjo_env.env_options.EnvOptions]), besides the rule options.
ENV_OPTIONS = (
    "seat", "opponents", "reward", "reward_scale", "illegal_action", "seed", "max_steps", "render_mode", "obs_type",
)  # fmt: skip
__all__ = ["ENV_OPTIONS", "ILLEGAL_ACTIONS", "SkyjoEnv"]


class SkyjoEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One learner against policies; see the module docstring for spaces, rewards and options."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}
    __signature__ = view_signature(ENV_OPTIONS)  #: what help() shows: the options of EnvOptions

    def __init__(self, **options: Any) -> None:
        self.options = o = EnvOptions.of(ENV_OPTIONS, self.metadata["render_modes"], options)
        self.rules = rules = o.rules
        self.games = LearnerGames(
            1, rules, opponents=self._lineup(o.opponents), seat=o.seat, reward=o.reward, reward_scale=o.reward_scale,
            max_steps=o.max_steps, restart=False, obs_type=o.table_obs_type,
        )  # fmt: skip
        self.illegal_action = o.illegal_action
        self.max_steps = o.max_steps
        self.render_mode = o.render_mode
        self._seed = o.seed  # for the first reset that gets none
        self._ended = True  # the episode is over (or not begun): reset() before step()
        self.observation_space = observation_space(rules, obs_type=o.table_obs_type)
        self.action_space = action_space()

    @property
    def engine(self) -> SkyjoEngine:
        """The engine of the one game."""
        return self.games.engine

    @property
    def seat(self) -> int:
        """The learner's seat in the current game."""
        return int(self.games.seats[0])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new game; opponents act until the learner's first turn (the setup flips, R5)."""
        check_seed(seed)  # (Gymnasium would take a bool as a seed)
        if seed is None and self._seed is not None:
            seed, self._seed = self._seed, None
        super().reset(seed=seed)
        if options:
            raise ValueError(f"reset options {sorted(options)} are not supported; this environment takes none")
        observations = self.games.reset(int(self.np_random.integers(2**63)))
        self._ended = False
        return observations[0], self._info()

    def step(self, action: int | np.integer) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._ended:
            raise ValueError("the episode is over; call reset() before step()")
        a = action_id(action)  # ActionTypeError for what is no action id at all: never a silent loss
        try:  # the step's one check, against the engine's legal actions; then the games play it unchecked
            checked_action(a, self.action_masks(), f"the learner (seat {self.seat})")
        except ValueError:
            if self.illegal_action == "raise":
                raise
            self._ended = True
            return self._observation(), -1.0, True, False, {**self._info(), "illegal_action": True}
        observations, rewards, _, ended = self.games.play(np.array([a], dtype=np.int64))
        observation, terminated, truncated = observations[0], False, False
        info = {}
        if ended is not None:
            self._ended = True
            observation = ended.observations[0]
            truncated = bool(ended.truncated[0])
            terminated = not truncated
            if terminated:
                info = {"totals": ended.totals[0].copy(), "winner": bool(ended.won[0])}
        if self.render_mode == "human":
            self.render()
        return observation, float(rewards[0]), terminated, truncated, {**self._info(), **info}

    def set_opponents(self, opponents: OpponentPolicy | Sequence[OpponentPolicy] | None) -> None:
        """Play the next games (from the next `reset`) against `opponents`, as the option of that name."""
        self.games.set_opponents(self._lineup(opponents))

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner as 26 booleans (all false once the episode is over)."""
        if self._ended:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self.games.action_masks()[0]

    def render(self) -> str | np.ndarray | None:
        return render.rendered(self.render_mode, self.engine, 0, viewer=self.seat)

    # ------------------------------------------------------------------ helpers
    def _lineup(self, opponents: OpponentPolicy | Sequence[OpponentPolicy] | None) -> list[tuple[Any, ...]] | None:
        """The option `opponents` as a pool of one line-up (`None`: the games' seeded random default)."""
        if opponents is None:
            return None
        return [tuple(per_seat(opponents, self.rules.num_players))]

    def _observation(self) -> np.ndarray:
        return observe_as(self.games.obs_type, self.engine, self.seat)[0]

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "seat": self.seat}
