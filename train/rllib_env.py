"""The environment of the RLlib backend's EnvRunners: the sb3 backend's batched games, as a Gymnasium
`VectorEnv` that RLlib's `SingleAgentEnvRunner` steps directly.

RLlib 2.60's EnvRunners take a vector env from a vector entry point (`gym_env_vectorize_mode=
"vector_entry_point"`): [`make_env()`][make_env] builds [`SkyjoVectorEnv`][]
(one engine steps all `num_envs` games; opponents act inside it, in batch) and wraps it in
[`MaskedObservations`][]: each observation
carries the advice the networks read (as in the sb3 backend's
[`AdvisedVecEnv`][skyjo_env.train.advised_env.AdvisedVecEnv]) and then the 26-entry action mask, which the
RLModule ([`skyjo_env.train.rllib_module`][]) splits off to mask its logits. The EnvRunners
([`SkyjoEnvRunner`][skyjo_env.train.rllib_runner.SkyjoEnvRunner]) step it in batch; it deals an ended game
again within the step and reports the ended game's last observation.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector.utils import batch_space

from skyjo_env import spaces
from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.agents.advice import ADVICE_SIZE, with_advice
from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
from skyjo_env.rules import Rules
from skyjo_env.train.config import TrainConfig

#: The name the environment is registered under with `ray.tune.registry.register_env`.
ENV_NAME = "skyjo_vector"


class MaskedObservations(gymnasium.vector.VectorWrapper):
    """Observations `(N, D + A + 26)`: the games', the advice of `advisor` (`A` entries, none
    without an advisor), then the legal actions as 0/1. Infos are left empty (RLlib lists them per game)."""

    def __init__(self, env: SkyjoVectorEnv, advisor: str | None, rules: Rules) -> None:
        super().__init__(env)
        self.advisor = advisor
        self.rules = rules
        inner = env.single_observation_space
        assert isinstance(inner, gymnasium.spaces.Box), inner
        self.single_observation_space = masked_space(inner, advisor)
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._observe(obs, infos["action_mask"]), {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """As the games' step; with same-step autoreset, `infos` holds `ended` (the games that ended,
        ascending) and `final_obs` (their last observations, as these observations read them)."""
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        out: dict[str, Any] = {}
        if "_final_obs" in infos:
            ended = np.flatnonzero(infos["_final_obs"])
            last = np.stack(infos["final_obs"][ended].tolist())
            out = {"ended": ended, "final_obs": self._observe(last, np.zeros((ended.size, NUM_ACTIONS), dtype=bool))}
        return self._observe(obs, infos["action_mask"]), rewards, terminations, truncations, out

    def _observe(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        seen = with_advice(self.advisor, obs, masks, self.rules) if self.advisor else obs
        return np.concatenate([seen, masks.astype(np.float32)], axis=1)


def masked_space(inner: gymnasium.spaces.Box, advisor: str | None) -> gymnasium.spaces.Box:
    """The observations of [`MaskedObservations`][] over a view whose observations are `inner`."""
    extra = ADVICE_SIZE if advisor else 0
    low = np.concatenate([inner.low, np.zeros(extra + NUM_ACTIONS, dtype=np.float32)])
    high = np.concatenate([inner.high, np.ones(extra + NUM_ACTIONS, dtype=np.float32)])
    return gymnasium.spaces.Box(low, high, dtype=np.float32)


def observation_space(config: TrainConfig) -> gymnasium.spaces.Box:
    """The observations the EnvRunners of a run of `config` produce (as [`make_env()`][make_env] builds them)."""
    return masked_space(spaces.observation_space(config.game_rules, obs_type="padded" if config.mixed else "table"),
                        config.advice)  # fmt: skip


def runner_seed(seed: int, worker_index: int) -> int:
    """The games' seed of EnvRunner `worker_index` in a run seeded `seed`: distinct for every runner."""
    return int(np.random.SeedSequence([seed, worker_index]).generate_state(1)[0])


def make_env(context: Any) -> MaskedObservations:
    """The env creator registered as [`ENV_NAME`][]: `context` (RLlib's `EnvContext`, a dict)
    holds `train_config` (a [`TrainConfig.to_dict()`][TrainConfig.to_dict]) and `num_envs`.

    It runs in the EnvRunner's process, so it also keeps that process's torch and BLAS to one
    thread each: the games' numpy work and the module's small forward passes only contend with more.
    The games start against a random player; the driver sends the opponent mixture with the first
    sample request ([`skyjo_env.train.rllib_ppo`][]).
    """
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
    config = TrainConfig.from_dict(dict(context["train_config"]))
    env = SkyjoVectorEnv(
        int(context["num_envs"]), rules=config.game_rules, player_counts=config.player_counts if config.mixed else None,
        reward=config.env_reward, reward_scale=config.reward_scale,
        seed=runner_seed(config.seed, getattr(context, "worker_index", 0)),
    )  # fmt: skip
    return MaskedObservations(env, config.advice, config.game_rules)
