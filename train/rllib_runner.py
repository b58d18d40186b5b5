"""The EnvRunner of the RLlib backend: RLlib's `SingleAgentEnvRunner`, sampling the batched games in batch.

RLlib's own `SingleAgentEnvRunner` steps a vector env but keeps its books one game at a time:
every step it builds each game's model inputs through its connectors, appends to each game's
episode and calls each game's callbacks, a Python loop over `num_envs` games per step that costs
more than the engine's step of all of them (`benchmarks/rllib_sampling.py` measures both).
[`SkyjoEnvRunner`][] keeps RLlib's construction (the env from the registered creator, the module
from the spec, the weights and state API) and samples in batch: one forward pass and one env step
for all games per step, the rollout held in arrays. [`SkyjoEnvRunner.sample()`][SkyjoEnvRunner.sample] (RLlib's
contract, for `Algorithm.train()`) builds the episodes (`SingleAgentEpisode` chunks) from the arrays once at
the end; [`SkyjoEnvRunner.sample_batch()`][SkyjoEnvRunner.sample_batch] (the backend's loop) returns the training batch
itself, advantages included, so that the learner skips RLlib's per-episode learner connectors as well.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from skyjo_env.actions import NUM_ACTIONS


@dataclass
class Rollout:
    """`T` learner steps of `N` games, in arrays."""

    obs: np.ndarray  #: (T + 1, N, D) observations, the last one after the last step
    actions: np.ndarray  #: (T, N)
    logp: np.ndarray  #: (T, N) log-probabilities of the actions
    inputs: np.ndarray  #: (T, N, 26) the action distribution's inputs (masked logits)
    rewards: np.ndarray  #: (T, N)
    ends: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]  #: (step, games, last observations, terminated)


class SkyjoEnvRunner(SingleAgentEnvRunner):
    """Samples [`MaskedObservations`][skyjo_env.train.rllib_env.MaskedObservations] games in batch; see the module
    docstring."""

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
        """RLlib's contract (`Algorithm.train()` calls it): about `num_timesteps` learner steps
        (whole steps of all games), sampled from the module's exploration distribution; the episode
        chunks of the rollout, games that go on continued by the next call."""
        if num_timesteps is None or num_episodes is not None or random_actions or explore is False:
            raise ValueError("SkyjoEnvRunner samples num_timesteps learner steps from the module's exploration policy")
        return self._episodes(self._rollout(num_timesteps, force_reset))

    def sample_batch(self, num_timesteps: int) -> dict[str, np.ndarray]:
        """The backend's path ([`skyjo_env.train.rllib_ppo`][]): a rollout of about `num_timesteps`
        learner steps as one training batch, its advantages and value targets computed here, in batch,
        by generalised advantage estimation with this runner's critic (as stable-baselines3 computes
        them at collection), so that the learner only updates. Columns: RLlib's `obs`, `actions`,
        `action_logp`, `action_dist_inputs`, `advantages` (not yet standardised) and
        `value_targets`, one row per learner step."""
        rollout = self._rollout(num_timesteps, False)
        T, N = rollout.actions.shape
        gamma, lam = self.config.gamma, self.config.lambda_
        with torch.no_grad():
            values = self._values(rollout.obs.reshape(T * N + N, -1)).reshape(T + 1, N)
        following = values[1:].copy()  # the value of what follows each step
        ended = np.zeros((T, N), dtype=bool)
        for t, games, last, terminated in rollout.ends:
            ended[t, games] = True
            with torch.no_grad():
                following[t, games] = np.where(terminated, 0.0, self._values(last))  # truncated: bootstrapped
        advantages = np.zeros((T, N), dtype=np.float32)
        running = np.zeros(N, dtype=np.float32)
        for t in range(T - 1, -1, -1):
            delta = rollout.rewards[t] + gamma * following[t] - values[t]
            running = delta + gamma * lam * ~ended[t] * running
            advantages[t] = running
        return {
            Columns.OBS: rollout.obs[:T].reshape(T * N, -1),
            Columns.ACTIONS: rollout.actions.reshape(-1),
            Columns.ACTION_LOGP: rollout.logp.reshape(-1),
            Columns.ACTION_DIST_INPUTS: rollout.inputs.reshape(T * N, -1),
            "advantages": advantages.reshape(-1),
            "value_targets": (advantages + values[:T]).reshape(-1),
        }

    def _values(self, obs: np.ndarray) -> np.ndarray:
        """The critic's values of observations `(n, D)`."""
        return self.module.compute_values({Columns.OBS: torch.from_numpy(obs)}).numpy()

    def _rollout(self, num_timesteps: int, force_reset: bool) -> Rollout:
        """Every game plays `ceil(num_timesteps / num_envs)` learner steps from where the last
        rollout stopped (dealt anew with `force_reset`)."""
        env = self.env.env  # MaskedObservations, without RLlib's per-game info lists
        N = self.num_envs
        if force_reset or self._obs is None:
            self._obs, _ = env.reset()
            self._ids = [uuid.uuid4().hex for _ in range(N)]
            self._started = np.zeros(N, dtype=np.int64)
        T = -(-num_timesteps // N)
        obs = np.empty((T + 1, *self._obs.shape), dtype=np.float32)
        obs[0] = self._obs
        r = Rollout(obs, np.empty((T, N), np.int64), np.empty((T, N), np.float32),
                    np.empty((T, N, NUM_ACTIONS), np.float32), np.empty((T, N), np.float32), [])  # fmt: skip
        distribution = self.module.get_exploration_action_dist_cls()
        for t in range(T):
            with torch.no_grad():
                out = self.module.forward_exploration({Columns.OBS: torch.from_numpy(obs[t])})
                dist = distribution.from_logits(out[Columns.ACTION_DIST_INPUTS])
                chosen = dist.sample()
                r.logp[t] = dist.logp(chosen).numpy()
            r.actions[t] = chosen.numpy()
            r.inputs[t] = out[Columns.ACTION_DIST_INPUTS].numpy()
            obs[t + 1], r.rewards[t], terminated, _, info = env.step(r.actions[t])
            if "ended" in info:
                r.ends.append((t, info["ended"], info["final_obs"], terminated[info["ended"]]))
        self._obs = obs[T].copy()
        return r

    def _episodes(self, rollout: Rollout) -> list[SingleAgentEpisode]:
        """The rollout's episode chunks: per game, one per episode that ended in it, then the open one."""
        obs, actions, logp, inputs, rewards = (
            rollout.obs,
            rollout.actions,
            rollout.logp,
            rollout.inputs,
            rollout.rewards,
        )
        T, N = actions.shape
        ended: list[list[tuple[int, np.ndarray, bool]]] = [[] for _ in range(N)]
        for t, games, last, terminated in rollout.ends:
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
        """Game `g`'s steps `start..stop - 1` and the observation after them (`last`);
        `terminated` `None`: the game goes on."""
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
