"""Skyjo as a batched TorchRL `EnvBase`: N games for one learner, stepped in batch by one engine.

Needs the `torchrl` extra (`pip install "skyjo-env[torchrl]"`). `SkyjoTorchRLEnv(num_envs=N,
**options)` is a thin view over the same games as the Gymnasium vector view
([`LearnerGames`][skyjo_env.learner_games.LearnerGames], or
[`MixedLearnerGames`][skyjo_env.mixed_games.MixedLearnerGames] with `player_counts`): the opponents
play in batch between the learner's turns, inside `step`. Its batch size is `(N,)`, on the CPU.

* Specs (TorchRL's conventions for masked discrete actions): `observation`, float32 `(N, obs)`
  bounded as the Gymnasium `Box` of [`observation_space()`][skyjo_env.spaces.observation_space];
  `action_mask`, bool `(N, 26)` (`Binary`); `action`, int64 `(N,)`, a `Categorical(26)` whose
  mask the env keeps equal to the legal actions of the games' current turns, so that
  `env.action_spec.rand()` and `env.rand_action()` play legal moves (as TorchRL's `ActionMask`
  transform would, built in); `reward`, float32 `(N, 1)`, the learner's rewards ([`skyjo_env.rewards`][])
  summed over its action and the opponents' moves up to its next turn; `done`, `terminated`
  (the game ended, R19) and `truncated` (`max_steps` reached), bool `(N, 1)`.
* A game that ends is dealt again at once inside the engine, as in every vector view, but TorchRL
  sees the usual protocol: the step's `("next", ...)` holds the ended game's last observation (its
  `action_mask` all `False`: no move is left) with `done`; `reset()` of that game (a partial reset,
  `_reset`, which collectors and `step_and_maybe_reset` make) returns the new game's first
  observation. Stepping a game that is done without that reset raises a `ValueError` naming it,
  as does a partial reset of a game still running: reset every game instead.
* An illegal action raises the `ValueError` of every vector view ([`LearnerGames.step()`][skyjo_env.learner_games.LearnerGames.step]),
  naming the game and its legal actions, before any game moves.
* Seeds: option `seed` seeds the first full reset; `env.set_seed(s)` the next one. A full reset
  (no `_reset` entry, or all games) deals every game again.

Options, as every view takes them ([`EnvOptions`][skyjo_env.env_options.EnvOptions], declared and
checked once): those of [`SkyjoVectorEnv`][skyjo_env.gymnasium_vector_env.SkyjoVectorEnv] (every
[`Rules`][] field as a keyword or `rules=Rules(...)`, `opponents`, `weights`, `seat`, `reward`,
`reward_scale`, `seed`, `max_steps`, `render_mode`, `obs_type`, `player_counts`), except
`autoreset_mode`: TorchRL resets ended games itself.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Binary, Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.env_options import EnvOptions, view_signature
from skyjo_env.learner_games import VECTOR_ENV_OPTIONS
from skyjo_env.mixed_games import vector_games
from skyjo_env.opponents import OpponentPolicy
from skyjo_env.spaces import observation_space

#: The options this view takes ([`EnvOptions`][skyjo_env.env_options.EnvOptions]), besides the rule
#: options: those of the vector views (TorchRL resets ended games itself: no `autoreset_mode`).
ENV_OPTIONS = VECTOR_ENV_OPTIONS


class SkyjoTorchRLEnv(EnvBase):
    """`num_envs` Skyjo games for one learner against batched opponents; see the module docstring."""

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"]}
    batch_locked = True

    #: What help() shows: the number of games, then the options of EnvOptions.
    __signature__ = view_signature(ENV_OPTIONS, inspect.Parameter("num_envs", inspect.Parameter.POSITIONAL_OR_KEYWORD))

    def __init__(self, num_envs: int, **options: Any) -> None:
        o = EnvOptions.of(ENV_OPTIONS, self.metadata["render_modes"], options)
        games = vector_games(num_envs, o)
        N = games.num_games
        super().__init__(batch_size=torch.Size([N]), device="cpu")
        self.games = games
        self.num_envs = N
        self.options = o
        self.render_mode = o.render_mode
        self._now = _Now(o.seed, N)  # (a plain object: torch.nn.Module's attribute setting is slow)
        box = observation_space(o.rules, obs_type=games.obs_type)
        self.observation_spec = Composite(
            observation=Bounded(
                low=torch.as_tensor(np.broadcast_to(box.low, (N, *box.shape)).copy()),
                high=torch.as_tensor(np.broadcast_to(box.high, (N, *box.shape)).copy()),
                shape=(N, *box.shape),
                dtype=torch.float32,
            ),
            action_mask=Binary(n=NUM_ACTIONS, shape=(N, NUM_ACTIONS), dtype=torch.bool),
            shape=(N,),
        )
        self.action_spec = Categorical(NUM_ACTIONS, shape=(N,), dtype=torch.int64)
        self._action = self.input_spec["full_action_spec"]["action"]  # the spec whose mask follows the games
        self.reward_spec = Unbounded(shape=(N, 1), dtype=torch.float32)
        self.done_spec = Composite(
            done=Categorical(2, shape=(N, 1), dtype=torch.bool),
            terminated=Categorical(2, shape=(N, 1), dtype=torch.bool),
            truncated=Categorical(2, shape=(N, 1), dtype=torch.bool),
            shape=(N,),
        )

    # ------------------------------------------------------------------ TorchRL's methods
    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        """A full reset deals every game again; a partial one (`_reset`) shows the ended games' new deals."""
        now = self._now
        reset = None if tensordict is None else tensordict.get("_reset", None)
        if reset is not None:
            reset = reset.reshape(self.num_envs).numpy()
        if now.obs is None or reset is None or reset.all():
            seed, now.seed = now.seed, None
            now.obs = self.games.reset(seed)
            now.held[:] = False
        else:
            running = np.flatnonzero(reset & ~now.held)
            if running.size:
                raise ValueError(
                    f"partial reset of game(s) {running[:10].tolist()} that did not end: only games that are done "
                    "can be reset alone (their next game is already dealt); reset every game instead (env.reset())"
                )
            now.held &= ~reset
        now.masks = self.games.action_masks()
        self._action.update_mask(torch.from_numpy(now.masks))
        no = torch.zeros((self.num_envs, 1), dtype=torch.bool)
        return TensorDict(
            {
                "observation": torch.from_numpy(now.obs),
                "action_mask": torch.from_numpy(now.masks),
                "done": no,
                "terminated": no.clone(),
                "truncated": no.clone(),
            },
            batch_size=self.batch_size,
            device=self.device,
        )

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        """The learners' actions, then the opponents' moves up to every learner's next turn."""
        now = self._now
        if now.obs is None:
            raise ValueError("step() before reset(): call env.reset() first")
        if now.held.any():
            raise ValueError(
                f"game(s) {np.flatnonzero(now.held)[:10].tolist()} ended in the last step: reset them first "
                "(env.reset() with their '_reset' entries, as env.step_and_maybe_reset() and the collectors do)"
            )
        observations, rewards, dones, ended = self.games.step(tensordict.get("action").numpy())
        now.obs = observations
        now.masks = masks = self.games.action_masks()
        self._action.update_mask(torch.from_numpy(masks))
        truncated = np.zeros(self.num_envs, dtype=bool)
        if ended is not None:
            truncated[ended.games[ended.truncated]] = True
            observations = observations.copy()  # (the new games' first observations stay for the reset)
            observations[ended.games] = ended.observations
            masks = masks.copy()
            masks[ended.games] = False
            now.held[:] = dones
        return TensorDict(
            {
                "observation": torch.from_numpy(observations),
                "action_mask": torch.from_numpy(masks),
                "reward": torch.from_numpy(rewards).unsqueeze(-1),
                "done": torch.from_numpy(dones).unsqueeze(-1),
                "terminated": torch.from_numpy(dones & ~truncated).unsqueeze(-1),
                "truncated": torch.from_numpy(truncated).unsqueeze(-1),
            },
            batch_size=self.batch_size,
            device=self.device,
        )

    def maybe_reset(self, tensordict: TensorDictBase) -> TensorDictBase:
        """TorchRL's `maybe_reset` (what `step_and_maybe_reset` and the collectors call after each
        step), without its generic partial-reset merge where it can: when the done games of
        `tensordict` are the games that ended in the last step, their next games are already dealt,
        so every game's current observation and mask replace those of `tensordict`, done flags off."""
        now = self._now
        done = tensordict.get("done", None)
        if done is None or not now.held.any() or not np.array_equal(done.reshape(-1).numpy(), now.held):
            return super().maybe_reset(tensordict)
        now.held[:] = False
        no = torch.zeros((self.num_envs, 1), dtype=torch.bool)
        tensordict.update(
            {
                "observation": torch.from_numpy(now.obs),
                "action_mask": torch.from_numpy(now.masks),
                "done": no,
                "terminated": no.clone(),
                "truncated": no.clone(),
            }
        )
        return tensordict

    def _set_seed(self, seed: int | None) -> None:
        """Seed the next full reset."""
        self._now.seed = None if seed is None else int(seed) % 2**63

    # ------------------------------------------------------------------ the project's extras
    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, `(N, 26)` booleans (none in a game that ended and awaits its reset)."""
        masks = self._now.masks.copy()
        masks[self._now.held] = False
        return masks

    def set_opponents(
        self, opponents: OpponentPolicy | Sequence[OpponentPolicy], weights: Sequence[float] | None = None
    ) -> None:
        """Draw the opponent of every game that starts from now on from `opponents` by `weights`."""
        self.games.set_opponents(opponents, weights)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB image per game from its learner's view (`render_mode="rgb_array"`), else `None`."""
        if self.render_mode is None:
            return None
        return tuple(self.games.images())


class _Now:
    """The env's state between calls: what TorchRL sees of the games."""

    def __init__(self, seed: int | None, num_envs: int) -> None:
        self.seed = seed  #: for the next full reset
        self.obs: np.ndarray | None = None  #: every game's current observation (a new game's first); None before reset
        self.masks = np.zeros((num_envs, NUM_ACTIONS), dtype=bool)  #: every game's current legal actions
        self.held = np.zeros(num_envs, dtype=bool)  #: games that ended in the last step, not yet reset
