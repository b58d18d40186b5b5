"""Warm start by behaviour cloning: fit the PPO networks to a teacher's play before PPO starts.

From scratch, PPO spends millions of steps against a strong heuristic rediscovering basic play.
A warm start first lets a teacher (any batched policy, e.g. the ``counting`` heuristic) play the
learner's seat against copies of itself in the batched vector env, recording the learner-seat
observations, masks, actions and discounted returns, and then fits the actor to the teacher's
actions (cross-entropy under the mask) and the critic to the returns (squared error). PPO then
improves on the teacher instead of starting from a uniform policy.

Only turns of games that ended inside the collection window are kept, so every return is exact.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.agents.advice import ADVICE_SIZE, with_advice
from skyjo_env.agents.base import Policy
from skyjo_env.learner_games import LearnerGames
from skyjo_env.observation import obs_size, pad
from skyjo_env.rules import Rules


@dataclass
class Demonstrations:
    """Learner turns of a teacher: ``observations (n, D)``, ``masks (n, 26)``, ``actions (n,)``, ``returns (n,)``."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)


def collect(
    teacher: Policy,
    rules: Rules,
    samples: int,
    *,
    num_envs: int | None = None,
    gamma: float = 0.995,
    reward: str = "score",
    reward_scale: float = 0.1,
    advice: str | None = None,
    obs_type: str = "table",
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> Demonstrations:
    """About ``samples`` learner turns of ``teacher`` against copies of itself, with exact returns.

    ``num_envs`` games are played side by side for ``samples // num_envs`` turns each; by default
    ``samples // 500`` games (1 to 1024), so that most of the window lies in finished games.
    With ``advice``, the recorded observations carry that heuristic's advice (:mod:`skyjo_env.agents.advice`,
    under ``rules``); ``obs_type="padded"`` records padded observations (the teacher plays from the
    table ones). ``progress(turns)`` is told the turns collected so far after every step.
    """
    if num_envs is None:
        num_envs = min(1024, max(1, samples // 500))
    if samples < num_envs:
        raise ValueError(f"samples={samples} is too few; collect at least num_envs={num_envs}")
    games = LearnerGames(num_envs, rules, opponents=[teacher], reward=reward, reward_scale=reward_scale, seed=seed)
    steps = samples // num_envs
    width = obs_size(obs_type, rules.num_players) + (ADVICE_SIZE if advice else 0)
    observations = np.zeros((steps, num_envs, width), dtype=np.float32)
    masks = np.zeros((steps, num_envs, NUM_ACTIONS), dtype=bool)
    actions = np.zeros((steps, num_envs), dtype=np.int64)
    rewards = np.zeros((steps, num_envs), dtype=np.float32)
    dones = np.zeros((steps, num_envs), dtype=bool)
    obs = games.reset()
    for t in range(steps):
        masks[t] = games.action_masks()
        actions[t] = teacher(obs, masks[t])
        seen = obs if obs_type == "table" else pad(obs, rules.num_players)
        observations[t] = with_advice(advice, seen, masks[t], rules) if advice else seen
        obs, rewards[t], dones[t], _ = games.step(actions[t])
        if progress is not None:
            progress((t + 1) * num_envs)
    returns = np.zeros_like(rewards)
    following = np.zeros(num_envs, dtype=np.float32)
    for t in range(steps - 1, -1, -1):
        following = rewards[t] + gamma * following * ~dones[t]
        returns[t] = following
    # A turn counts only if its game ended inside the window (else its return is cut short).
    last_end = np.where(dones.any(axis=0), steps - 1 - np.argmax(dones[::-1], axis=0), -1)
    keep = np.arange(steps)[:, None] <= last_end[None, :]
    return Demonstrations(observations[keep], masks[keep], actions[keep], returns[keep])


def concatenate(parts: list[Demonstrations]) -> Demonstrations:
    """The turns of several collections as one."""
    return Demonstrations(
        *(np.concatenate([getattr(d, f) for d in parts]) for f in ("observations", "masks", "actions", "returns"))
    )


def clone(
    policy: MaskableActorCriticPolicy,
    demos: Demonstrations,
    *,
    epochs: int = 10,
    batch_size: int = 1024,
    learning_rate: float = 2e-3,
    vf_coef: float = 0.5,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> list[dict[str, float]]:
    """Fit ``policy``'s actor to the teacher's actions and its critic to the returns.

    One-cycle learning-rate schedule peaking at ``learning_rate``; a separate optimiser, so the
    PPO optimiser starts fresh. Returns per epoch the mean losses and the share of turns where
    the actor's most likely action is the teacher's (``agreement``, on up to 50,000 turns).
    ``progress(epochs)`` is told the epochs done (fractions of one included) after every minibatch.
    """
    if len(demos) < batch_size:
        raise ValueError(f"{len(demos)} demonstrations are fewer than one batch of {batch_size}")
    generator = torch.Generator().manual_seed(seed)
    obs, masks, actions, returns = (
        torch.as_tensor(x) for x in (demos.observations, demos.masks, demos.actions, demos.returns)
    )
    batches = len(demos) // batch_size
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=learning_rate, total_steps=epochs * batches)
    policy.set_training_mode(True)
    history = []
    for epoch in range(epochs):
        started = time.perf_counter()
        order = torch.randperm(len(demos), generator=generator)
        actor_loss = critic_loss = 0.0
        for b in range(batches):
            idx = order[b * batch_size : (b + 1) * batch_size]
            values, log_prob, _ = policy.evaluate_actions(obs[idx], actions[idx], action_masks=masks[idx])
            pi = -log_prob.mean()
            vf = torch.nn.functional.mse_loss(values.flatten(), returns[idx])
            optimizer.zero_grad()
            (pi + vf_coef * vf).backward()
            optimizer.step()
            schedule.step()
            actor_loss += pi.item()
            critic_loss += vf.item()
            if progress is not None:
                progress(epoch + (b + 1) / batches)
        history.append({
            "epoch": epoch,
            "actor_loss": actor_loss / batches,
            "critic_loss": critic_loss / batches,
            "agreement": agreement(policy, demos),
            "seconds": time.perf_counter() - started,
        })  # fmt: skip
    policy.set_training_mode(False)
    return history


def agreement(policy: MaskableActorCriticPolicy, demos: Demonstrations, limit: int = 50_000) -> float:
    """Share of the first ``limit`` turns where the actor's most likely legal action is the teacher's."""
    n = min(limit, len(demos))
    with torch.no_grad():
        dist = policy.get_distribution(torch.as_tensor(demos.observations[:n]), action_masks=demos.masks[:n])
        probs: torch.Tensor = dist.distribution.probs  # type: ignore[union-attr]  # a Categorical for Discrete actions
        chosen = probs.argmax(dim=1).numpy()
    return float(np.mean(chosen == demos.actions[:n]))
