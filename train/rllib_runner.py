"""The EnvRunner of the RLlib backend: RLlib's ``SingleAgentEnvRunner``, sampling the batched games in batch.

RLlib's own ``SingleAgentEnvRunner`` steps a vector env but keeps its books one game at a time:
every step it builds each game's model inputs through its connectors, appends to each game's
episode and calls each game's callbacks, a Python loop over ``num_envs`` games per step that costs
more than the engine's step of all of them (``benchmarks/rllib_sampling.py`` measures both).
:class:`SkyjoEnvRunner` keeps RLlib's construction (the env from the registered creator, the module
from the spec, the weights and state API) and overrides :meth:`SkyjoEnvRunner.sample`: one forward
pass and one env step for all games per step, the rollout held in arrays, and the episodes
(``SingleAgentEpisode`` chunks, as RLlib's learners take them) built from the arrays once at the end.
"""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from skyjo_env.actions import NUM_ACTIONS


class SkyjoEnvRunner(SingleAgentEnvRunner):
    """Samples :class:`~skyjo_env.train.rllib_env.MaskedObservations` games in batch; see the module docstring."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._obs: np.ndarray | None = None  # the games' observations where the last rollout stopped
        self._ids: list[str] = []  # each game's episode id
        self._started = np.zeros(0, dtype=np.int64)  # each game's steps before this rollout

    def sample(
        self,
        *,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool | None = None,
        random_actions: bool = False,
        force_reset: bool = False,
    ) -> list[SingleAgentEpisode]:
        """About ``num_timesteps`` learner steps (whole steps of all games), sampled from the module's
        exploration distribution; the episode chunks of the rollout, games that go on continued by
        the next call."""
        if num_timesteps is None or num_episodes is not None or random_actions or explore is False:
            raise ValueError("SkyjoEnvRunner samples num_timesteps learner steps from the module's exploration policy")
        env = self.env.env  # MaskedObservations, without RLlib's per-game info lists
        N = self.num_envs
        if force_reset or self._obs is None:
            self._obs, _ = env.reset()
            self._ids = [uuid.uuid4().hex for _ in range(N)]
            self._started = np.zeros(N, dtype=np.int64)
        T = -(-num_timesteps // N)
        obs = np.empty((T + 1, *self._obs.shape), dtype=np.float32)
        obs[0] = self._obs
        actions = np.empty((T, N), dtype=np.int64)
        logp = np.empty((T, N), dtype=np.float32)
        inputs = np.empty((T, N, NUM_ACTIONS), dtype=np.float32)
        rewards = np.empty((T, N), dtype=np.float32)
        ends: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []  # (step, games, last observations, terminated)
        distribution = self.module.get_exploration_action_dist_cls()
        for t in range(T):
            with torch.no_grad():
                out = self.module.forward_exploration({Columns.OBS: torch.from_numpy(obs[t])})
                dist = distribution.from_logits(out[Columns.ACTION_DIST_INPUTS])
                chosen = dist.sample()
                logp[t] = dist.logp(chosen).numpy()
            actions[t] = chosen.numpy()
            inputs[t] = out[Columns.ACTION_DIST_INPUTS].numpy()
            obs[t + 1], rewards[t], terminated, _, info = env.step(actions[t])
            if "ended" in info:
                ends.append((t, info["ended"], info["final_obs"], terminated[info["ended"]]))
        self._obs = obs[T].copy()
        return self._episodes(obs, actions, logp, inputs, rewards, ends)

    def _episodes(
        self,
        obs: np.ndarray,
        actions: np.ndarray,
        logp: np.ndarray,
        inputs: np.ndarray,
        rewards: np.ndarray,
        ends: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
    ) -> list[SingleAgentEpisode]:
        """The rollout's episode chunks: per game, one per episode that ended in it, then the open one."""
        T, N = actions.shape
        ended: list[list[tuple[int, np.ndarray, bool]]] = [[] for _ in range(N)]
        for t, games, last, terminated in ends:
            for k, g in enumerate(games.tolist()):
                ended[g].append((t, last[k], bool(terminated[k])))
        episodes = []
        for g in range(N):
            start = 0
            for t, final, over in ended[g]:
                episodes.append(self._chunk(g, start, t + 1, obs, actions, logp, inputs, rewards, final, over))
                self._ids[g], self._started[g] = uuid.uuid4().hex, 0
                start = t + 1
            if start < T:
                episodes.append(self._chunk(g, start, T, obs, actions, logp, inputs, rewards, obs[T, g], None))
                self._started[g] += T - start
        return episodes

    def _chunk(
        self,
        g: int,
        start: int,
        stop: int,
        obs: np.ndarray,
        actions: np.ndarray,
        logp: np.ndarray,
        inputs: np.ndarray,
        rewards: np.ndarray,
        last: np.ndarray,
        terminated: bool | None,
    ) -> SingleAgentEpisode:
        """Game ``g``'s steps ``start..stop - 1`` and the observation after them (``last``);
        ``terminated`` ``None``: the game goes on."""
        episode = SingleAgentEpisode(
            self._ids[g],
            observations=[*obs[start:stop, g], last],
            actions=list(actions[start:stop, g]),
            rewards=list(rewards[start:stop, g]),
            extra_model_outputs={
                Columns.ACTION_LOGP: list(logp[start:stop, g]),
                Columns.ACTION_DIST_INPUTS: list(inputs[start:stop, g]),
            },
            terminated=bool(terminated),
            truncated=terminated is False,
            t_started=int(self._started[g]),
            len_lookback_buffer=0,
        )
        return episode.to_numpy()
