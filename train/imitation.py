"""Warm start by behaviour cloning: fit the PPO networks to a teacher's play before PPO starts.

From scratch, PPO spends millions of steps against a strong heuristic rediscovering basic play.
A warm start first lets a teacher (any batched policy, e.g. the `counting` heuristic) play the
learner's seat against copies of itself in the batched vector env, recording the learner-seat
observations, masks, actions and discounted returns, and then fits the actor to the teacher's
actions (cross-entropy under the mask) and the critic to the returns (squared error). PPO then
improves on the teacher instead of starting from a uniform policy.

A teacher that prices its actions ([`PricedPolicy`][skyjo_env.agents.base.PricedPolicy], e.g.
counting) or a network ([`pricing()`][skyjo_env.agents.base.pricing]) can be cloned *softened*:
with a `temperature` of `T` points the actor is fitted to the Boltzmann policy `exp(-cost / T)`
over the legal actions ([`soft_targets()`][soft_targets]) instead of the teacher's one choice (a
network's costs are minus its logits: at `T = 1`, its own action probabilities). Its favourite
moves stay the teacher's, but moves the teacher rates nearly as good keep some
probability, so PPO still tries them: a clone of the choice alone puts all but about 1e-4 of its
probability on one move, and PPO, which learns only from the moves it samples, then hardly moves
(docs/shipped-agents.md#the-main-job).

Only turns of games that ended inside the collection window are kept, so every return is exact.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.agents.advice import ADVICE_SIZE, with_advice
from skyjo_env.agents.base import Policy, Pricing, pricing
from skyjo_env.agents.view import argmin_legal
from skyjo_env.learner_games import LearnerGames
from skyjo_env.observation import obs_size, pad
from skyjo_env.rewards import Reward
from skyjo_env.rules import Rules
from skyjo_env.train.networks import SkyjoPolicy


@dataclass
class Demonstrations:
    """Learner turns of a teacher: `observations (n, D)`, `masks (n, 26)`, `actions (n,)`, `returns (n,)`
    and `targets (n, 26)`, the action probabilities the actor is fitted to (the one-hot of the
    teacher's action, or its softened choice)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)


def collect(
    teacher: Policy,
    rules: Rules,
    samples: int,
    *,
    num_envs: int | None = None,
    gamma: float = 0.995,
    reward: Reward = "score",
    reward_scale: float = 0.1,
    advice: str | None = None,
    obs_type: str = "table",
    temperature: float = 0.0,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> Demonstrations:
    """About `samples` learner turns of `teacher` against copies of itself, with exact returns.

    `num_envs` games are played side by side for `samples // num_envs` turns each; by default
    `samples // 500` games (1 to 1024), so that most of the window lies in finished games.
    With `advice`, the recorded observations carry that heuristic's advice ([`skyjo_env.agents.advice`][],
    under `rules`); `obs_type="padded"` records padded observations (the teacher plays from the
    table ones). With `temperature` > 0 and a teacher that prices its actions (or a network), the targets
    are its softened choices ([`soft_targets()`][soft_targets]); otherwise the one-hot of its actions.
    `progress(turns)` is told the turns collected so far after every step.
    """
    if not temperature >= 0:
        raise ValueError(f"temperature={temperature!r} is not allowed; use 0 (the teacher's actions) or more")
    pricer = softened_teacher(teacher, temperature)
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
    targets = np.zeros((steps, num_envs, NUM_ACTIONS), dtype=np.float32)
    rewards = np.zeros((steps, num_envs), dtype=np.float32)
    dones = np.zeros((steps, num_envs), dtype=bool)
    obs = games.reset()
    for t in range(steps):
        masks[t] = games.action_masks()
        if pricer is not None:  # it plays the cheapest legal action: priced once, for the action and the targets
            costs = pricer(obs, masks[t])
            actions[t] = argmin_legal(costs, masks[t])
            targets[t] = soft_targets(costs, masks[t], temperature)
        else:
            actions[t] = teacher(obs, masks[t])
            targets[t, np.arange(num_envs), actions[t]] = 1.0
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
    return Demonstrations(observations[keep], masks[keep], actions[keep], returns[keep], targets[keep])


def softened_teacher(teacher: Policy, temperature: float) -> Pricing | None:
    """The teacher's prices where [`collect()`][collect] softens its play at `temperature` (> 0, and
    the teacher prices its actions or is a network: [`pricing()`][skyjo_env.agents.base.pricing]);
    `None` where it records the teacher's choices."""
    return pricing(teacher) if temperature > 0 else None


def soft_targets(costs: np.ndarray, action_masks: np.ndarray, temperature: float) -> np.ndarray:
    """`(n, 26)` float32: the Boltzmann policy `exp(-cost / temperature)`, normalised over each
    row's legal actions (0 for the illegal ones); each row must allow one action."""
    masks = np.asarray(action_masks, dtype=bool)
    priced = np.where(masks, costs, np.inf)
    regret = priced - priced.min(axis=1, keepdims=True)  # 0 for the teacher's favourites, inf where illegal
    weights = np.exp(-regret / temperature)
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def concatenate(parts: list[Demonstrations]) -> Demonstrations:
    """The turns of several collections as one."""
    return Demonstrations(*(np.concatenate([getattr(d, f.name) for d in parts]) for f in fields(Demonstrations)))


def clone(
    policy: SkyjoPolicy,
    demos: Demonstrations,
    *,
    epochs: int = 10,
    batch_size: int = 1024,
    learning_rate: float = 2e-3,
    vf_coef: float = 0.5,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> list[dict[str, float]]:
    """Fit `policy`'s actor to the demonstrations' targets (cross-entropy; for one-hot targets, the
    teacher's actions) and its critic to the returns.

    One-cycle learning-rate schedule peaking at `learning_rate`; a separate optimiser, so the
    PPO optimiser starts fresh. Returns per epoch the mean losses and the share of turns where
    the actor's most likely action is one the targets rate highest (`agreement`, on up to 50,000 turns).
    `progress(epochs)` is told the epochs done (fractions of one included) after every minibatch.
    """
    if len(demos) < batch_size:
        raise ValueError(f"{len(demos)} demonstrations are fewer than one batch of {batch_size}")
    generator = torch.Generator().manual_seed(seed)
    obs, masks, targets, returns = (
        torch.as_tensor(x) for x in (demos.observations, demos.masks, demos.targets, demos.returns)
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
            values, log_probs = policy.values_and_log_probs(obs[idx], masks[idx])
            pi = -(targets[idx] * log_probs).sum(-1).mean()  # illegal actions: target 0, log-probability finite
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
    """Share of the first `limit` turns where the actor's most likely legal action is one the
    targets rate highest (for one-hot targets: the teacher's action)."""
    n = min(limit, len(demos))
    with torch.no_grad():
        dist = policy.get_distribution(torch.as_tensor(demos.observations[:n]), action_masks=demos.masks[:n])
        probs: torch.Tensor = dist.distribution.probs  # type: ignore[union-attr]  # a Categorical for Discrete actions
        chosen = probs.argmax(dim=1).numpy()
    targets = demos.targets[:n]
    return float(np.mean(targets[np.arange(n), chosen] >= targets.max(axis=1)))
