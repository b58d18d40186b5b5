"""N games of Skyjo as one stable-baselines3 `VecEnv`, stepped in batch by a single engine.

[`SkyjoSB3VecEnv`][] is a real `stable_baselines3.common.vec_env.VecEnv` (this module needs
the `train` extra), a thin view over [`LearnerGames`][skyjo_env.learner_games.LearnerGames]: one
[`SkyjoEngine`][] of N games without auto-reset, which holds every rule. In
each game a learner sits in a seat (drawn at random for every new game, or fixed by option
`seat`); the other seats are played by an opponent policy assigned to the game when it starts.

* Observations `(N, 38 * P + 54)` float32 from the learner's seat ([`skyjo_env.observation`][];
  `(N, 365)` with `obs_type="padded"` or mixed tables);
  actions `Discrete(26)` ([`skyjo_env.actions`][]). [`SkyjoSB3VecEnv.action_masks()`][SkyjoSB3VecEnv.action_masks] gives
  the `(N, 26)` legal actions, so `sb3_contrib.MaskablePPO` trains on it directly. An illegal
  learner action raises `ValueError`.
* `step` applies the N learner actions at once, then lets opponents act, in batch, until every
  game is back at its learner's turn or over: while some game has an opponent to act, those games
  are observed, each opponent policy is called once on its games, and the engine steps them
  together. A game's reward sums the learner's rewards over all of that (option
  `reward`: `"result"`, `"score"`, `"lead"` or `"none"`, or a mapping of them to weights, as
  [`skyjo_env.rewards`][]).
* A game that ends (or, at a learner turn, has had `max_steps` actions of all seats: truncation,
  with `info["TimeLimit.truncated"]`) is reported done with `info["terminal_observation"]` and
  `info["opponent"]` (the policy it was played against), and is dealt again at once: new seat,
  new opponent, opponents' moves up to the learner's first turn. The other games' info dicts are
  empty, and the same empty dicts are handed out from step to step (one a caller wrote into is
  replaced); every step returns a new list.
* Opponents: a list of policies (`policy(observations, action_masks) -> actions`, see
  [`skyjo_env.opponents`][]) with sampling `weights`; each game draws one at its start and it
  plays all of that game's opponent seats. [`SkyjoSB3VecEnv.set_opponents()`][SkyjoSB3VecEnv.set_opponents] replaces the
  list for games that start afterwards (self-play pools); games in progress keep their opponent.

Gymnasium users without stable-baselines3 have the same games as a `gymnasium.vector.VectorEnv`
in [`skyjo_env.gymnasium_vector_env`][].
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from skyjo_env.checks import check_seed
from skyjo_env.engine import SkyjoEngine
from skyjo_env.env_options import EnvOptions, view_signature
from skyjo_env.learner_games import VECTOR_ENV_OPTIONS as ENV_OPTIONS
from skyjo_env.mixed_games import MixedLearnerGames, vector_games
from skyjo_env.opponents import OpponentPolicy
from skyjo_env.rules import Rules
from skyjo_env.spaces import action_space, observation_space


class SkyjoSB3VecEnv(VecEnv):
    """`num_envs` Skyjo games for one learner against weighted opponent policies; see the module docstring.

    The options are every view's ([`EnvOptions`][skyjo_env.env_options.EnvOptions]: rule options as keywords or `rules=Rules(...)`, `seed`,
    `max_steps`, `render_mode`: `None` or `"rgb_array"`, for [`get_images()`][get_images], each game
    from its learner's view) and the vector views' (those of
    [`LearnerGames`][skyjo_env.learner_games.LearnerGames]: `opponents`, `weights`, `seat`, `reward`,
    `reward_scale`, `obs_type`). The rules may also be given as the second positional argument.

    With `player_counts` (a list of table sizes 2..8), the games are mixed tables
    ([`MixedLearnerGames`][]): the batch is split among the counts, the
    rules' other options hold at every table, observations are padded (`obs_type` must be
    `"padded"` or left out) and `seat` is not an option.
    """

    #: What help() shows: the number of games and the rules, then the options of EnvOptions.
    __signature__ = view_signature(
        ENV_OPTIONS,
        inspect.Parameter("num_envs", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("rules", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
    )

    def __init__(self, num_envs: int, rules: Rules | None = None, **options: Any) -> None:
        given = options if rules is None else {**options, "rules": rules}
        self.options = o = EnvOptions.of(ENV_OPTIONS, ["rgb_array"], given)
        self.games = vector_games(num_envs, o)
        self.obs_type = obs_type = self.games.obs_type
        self.render_mode = o.render_mode
        N = self.games.num_games
        self._all = np.arange(N)
        self._all.setflags(write=False)
        self._infos: list[dict[str, Any]] = [{} for _ in range(N)]  # empty dicts, reused (see _empty_infos)
        self._actions: np.ndarray | None = None
        super().__init__(N, observation_space(o.rules, obs_type=obs_type), action_space())

    @property
    def engine(self) -> SkyjoEngine:
        """The engine of the N games (mixed tables have one per count: `games.parts[i].engine`)."""
        if isinstance(self.games, MixedLearnerGames):
            raise AttributeError("mixed tables have one engine per player count: use games.parts[i].engine")
        return self.games.engine

    @property
    def rules(self) -> Rules:
        return self.games.rules

    @property
    def seats(self) -> np.ndarray:
        """The learner's seat in each game (read-only)."""
        return self.games.seats

    @property
    def opponents(self) -> list[OpponentPolicy]:
        """The policies drawn for games that start from now on."""
        return self.games.opponents

    @property
    def game_opponents(self) -> list[OpponentPolicy]:
        """The policy playing the opponent seats of each game."""
        return self.games.game_opponents

    def set_opponents(
        self, opponents: OpponentPolicy | Sequence[OpponentPolicy], weights: Sequence[float] | None = None
    ) -> None:
        """Draw the opponent of every game that starts from now on from `opponents` by `weights`."""
        self.games.set_opponents(opponents, weights)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        """Deal new games everywhere (seeded by `seed()` if it was called); learner observations."""
        seed = self._seeds[0]
        self._reset_seeds()
        self._reset_options()
        return self.games.reset(seed)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next [`reset()`][reset] (`None`: a random seed); `ValueError` for anything but
        `None` or a non-negative integer, which the engine could not be seeded with."""
        check_seed(seed)
        return super().seed(None if seed is None else int(seed))

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise ValueError("step_wait() without step_async(actions)")
        actions, self._actions = self._actions, None
        observations, rewards, dones, ended = self.games.step(actions)
        infos = self._empty_infos()
        if ended is not None:
            for i, g in enumerate(ended.games.tolist()):
                info = {"terminal_observation": ended.observations[i], "opponent": ended.opponents[i]}
                if ended.truncated[i]:
                    info["TimeLimit.truncated"] = True
                infos[g] = info  # a new dict: the empty one may be shared with earlier steps' lists
        return observations, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, `(N, 26)` booleans (for `MaskablePPO`)."""
        return self.games.action_masks()

    def close(self) -> None:
        """Nothing to release."""

    def get_images(self) -> list[np.ndarray]:
        if self.render_mode != "rgb_array":
            raise ValueError(f"get_images needs render_mode='rgb_array', this env has render_mode={self.render_mode!r}")
        return self.games.images()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Attributes are shared by all games: the value of this env's `attr_name`, once per index."""
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Attributes are shared by all games, so only all of them can be set at once."""
        if len(self._indices(indices)) != self.num_envs:
            raise ValueError(f"attributes are shared by all {self.num_envs} games; set {attr_name!r} with indices=None")
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        """Per-game methods: only `action_masks` (one mask per game, as sb3-contrib asks for them)."""
        if method_name != "action_masks" or method_args or method_kwargs:
            raise AttributeError(
                f"SkyjoSB3VecEnv has no per-game method {method_name!r}; the only one is 'action_masks()'"
            )
        return list(self.action_masks()[self._indices(indices)])

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    # ------------------------------------------------------------------ helpers
    def _empty_infos(self) -> list[dict[str, Any]]:
        """A new list of N empty info dicts for a step; [`step_wait()`][step_wait] replaces those of done games.

        Building N dicts every step is a sizeable part of a step, so the empty dicts are reused from
        step to step; one that a caller has written into is replaced, never cleared.
        """
        if any(self._infos):
            self._infos = [info if not info else {} for info in self._infos]
        return list(self._infos)

    def _indices(self, indices: VecEnvIndices) -> np.ndarray:
        if indices is None:
            return self._all
        return self._all[indices] if isinstance(indices, slice) else np.asarray(indices, dtype=np.int64).reshape(-1)
