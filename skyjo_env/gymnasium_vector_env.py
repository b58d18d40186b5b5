"""Skyjo as a Gymnasium `VectorEnv`: N games for one learner, stepped in batch by one engine.

Create it with `gymnasium.make_vec("skyjo_env/Skyjo-v0", num_envs=N, **options)` (after
`import skyjo_env`; the id's vector entry point) or `SkyjoVectorEnv(N, **options)`. It is a thin
view over [`LearnerGames`][skyjo_env.learner_games.LearnerGames], the same games as the stable-baselines3
[`SkyjoSB3VecEnv`][skyjo_env.sb3_vec_env.SkyjoSB3VecEnv], and needs only numpy and Gymnasium.

* Spaces: `single_observation_space` is the `Box` float32 of [`skyjo_env.observation`][] (the
  learner's view), `single_action_space` is `Discrete(26)` ([`skyjo_env.actions`][]);
  `observation_space` and `action_space` are their batched forms (`MultiDiscrete` actions).
* `step(actions)` applies the N learner actions at once, then lets the opponents act, in batch,
  until every game is back at its learner's turn. Rewards are float32 and sum the learner's
  rewards ([`skyjo_env.rewards`][]) over all of that (option `reward`: `"result"`, `"score"`, `"lead"` or `"none"`, or a mapping of them to weights).
* `terminations`: the game ended (R19); `truncations`: at a learner turn it had `max_steps`
  actions of all seats. By default such a game is dealt again within the same step
  (`autoreset_mode="same_step"`, `AutoresetMode.SAME_STEP`): the returned observation is the
  new game's first, and `infos["final_obs"]` (an object array, `None` for games that went on,
  mask `infos["_final_obs"]`) holds the last observation of the ended one;
  `infos["final_info"]` holds the learner's `seat` and the `opponent` policy of that game.
  With `autoreset_mode="next_step"` (`AutoresetMode.NEXT_STEP`, Gymnasium's default and what
  RLlib's EnvRunners expect) the step returns the ended game's last observation, and the next step
  ignores that game's action and returns the new game's first observation (reward 0, not done).
* Action masks: `infos["action_mask"]` `(N, 26)` after every `reset` and `step`, and
  [`SkyjoVectorEnv.action_masks()`][SkyjoVectorEnv.action_masks]. An illegal action raises a `ValueError` that names the
  game and its legal actions, before any game moves.
* `reset(seed=...)` takes one integer (one engine deals every game) and no options.

Options, as every view takes them ([`EnvOptions`][skyjo_env.env_options.EnvOptions], declared once): every [`Rules`][skyjo_env.rules.Rules] field as a keyword, or
`rules=Rules(...)`; `seed` (seeds the first `reset` that is given none); `max_steps`
(default [`MAX_STEPS`][skyjo_env.checks.MAX_STEPS]); `render_mode` (`None` or `"rgb_array"`:
`render()` returns one image per game, from its learner's view); `obs_type` (`"table"` or
`"padded"`, see [`skyjo_env.observation`][]); and of the vector views: `player_counts` (mixed
tables: the games split among these table sizes, padded observations, see
[`MixedLearnerGames`][skyjo_env.mixed_games.MixedLearnerGames]),
`opponents` (one policy or a list of pool entries, see
[`LearnerGames`][skyjo_env.learner_games.LearnerGames]; each new game draws one by `weights`; default a
random legal player), `weights`, `seat` (`None`: random per game), `reward` and
`reward_scale`, and `autoreset_mode` (`"same_step"` or `"next_step"`, see above).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector.utils import batch_space

from skyjo_env.checks import check_seed
from skyjo_env.env_options import AUTORESET_MODES, EnvOptions, view_signature
from skyjo_env.learner_games import VECTOR_ENV_OPTIONS
from skyjo_env.mixed_games import vector_games
from skyjo_env.opponents import OpponentPolicy
from skyjo_env.spaces import action_space, observation_space

# Gymnasium 1.0 has no AutoresetMode (its vector wrappers then assume next-step resets).
_AUTORESET = getattr(gymnasium.vector, "AutoresetMode", None)

#: The options this view takes ([`EnvOptions`][skyjo_env.env_options.EnvOptions]), besides the rule options.
ENV_OPTIONS = (*VECTOR_ENV_OPTIONS, "autoreset_mode")
__all__ = ["AUTORESET_MODES", "ENV_OPTIONS", "SkyjoVectorEnv"]


class SkyjoVectorEnv(gymnasium.vector.VectorEnv):
    """`num_envs` Skyjo games for one learner against batched opponents; see the module docstring."""

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"]}
    if _AUTORESET is not None:
        metadata["autoreset_mode"] = _AUTORESET.SAME_STEP
    #: What help() shows: the number of games, then the options of EnvOptions.
    __signature__ = view_signature(ENV_OPTIONS, inspect.Parameter("num_envs", inspect.Parameter.POSITIONAL_OR_KEYWORD))

    def __init__(self, num_envs: int, **options: Any) -> None:
        self.options = o = EnvOptions.of(ENV_OPTIONS, self.metadata["render_modes"], options)
        self.next_step = o.autoreset_mode == "next_step"
        if _AUTORESET is not None:
            self.metadata = {**self.metadata, "autoreset_mode": _AUTORESET[o.autoreset_mode.upper()]}
        self.games = vector_games(num_envs, o)
        self.num_envs = self.games.num_games
        self.render_mode = o.render_mode
        self._seed = o.seed  # for the first reset that gets none
        self.single_observation_space = observation_space(o.rules, obs_type=self.games.obs_type)
        self.single_action_space = action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._started = False
        self._held = np.zeros(self.num_envs, dtype=bool)  # next_step: games that ended in the last step

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal new games everywhere; opponents act up to each learner's first turn."""
        check_seed(seed, f"one integer, not negative (one engine deals all {self.num_envs} games)")
        if options:
            raise ValueError(f"reset options {sorted(options)} are not supported; this environment takes none")
        if seed is None:
            seed, self._seed = self._seed, None
        observations = self.games.reset(None if seed is None else int(seed))
        self._started = True
        self._held[:] = False
        return observations, self._infos()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise ValueError("step() before reset(): call reset() first")
        held = self._held if self._held.any() else None  # only with next_step
        observations, rewards, dones, ended = self.games.step(actions, held)
        truncations = np.zeros(self.num_envs, dtype=bool)
        if ended is not None:
            truncations[ended.games[ended.truncated]] = True
        if self.next_step:
            if ended is not None:
                observations[ended.games] = ended.observations
            self._held = dones
            return observations, rewards, dones & ~truncations, truncations, self._infos()
        infos = self._infos()
        if ended is not None:
            final_obs = np.full(self.num_envs, None, dtype=object)
            opponents = np.full(self.num_envs, None, dtype=object)
            for i, g in enumerate(ended.games.tolist()):
                final_obs[g], opponents[g] = ended.observations[i], ended.opponents[i]
            seats = np.zeros(self.num_envs, dtype=np.int64)
            seats[ended.games] = ended.seats
            infos.update(
                final_obs=final_obs, _final_obs=dones.copy(),
                final_info={"seat": seats, "_seat": dones.copy(), "opponent": opponents, "_opponent": dones.copy()},
                _final_info=dones.copy(),
            )  # fmt: skip
        return observations, rewards, dones & ~truncations, truncations, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, `(N, 26)` booleans (none in a game that has just ended, with
        `autoreset_mode="next_step"`)."""
        masks = self.games.action_masks()
        masks[self._held] = False
        return masks

    def set_opponents(
        self, opponents: OpponentPolicy | Sequence[OpponentPolicy], weights: Sequence[float] | None = None
    ) -> None:
        """Draw the opponent of every game that starts from now on from `opponents` by `weights`."""
        self.games.set_opponents(opponents, weights)

    def render(self) -> tuple[np.ndarray, ...] | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        return tuple(self.games.images())

    def _infos(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "_action_mask": np.ones(self.num_envs, dtype=bool)}
