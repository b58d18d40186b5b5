"""The opponent mixture of a training run: heuristics plus a pool of frozen learner snapshots.

A snapshot is the learner's actor network copied into an [`MLPPolicy`][]
(numpy, batched), so opponents cost no torch calls. The mixture's `"self"` weight is shared
evenly by the snapshots in the pool; the pool keeps the `pool_size` most recent ones.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from skyjo_env import agents
from skyjo_env.agents.base import Policy
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.rules import Rules
from skyjo_env.train.config import SELF


def actor_weights(policy: torch.nn.Module) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor layers `[(W, b), ...]` (`W` as `(in, out)`) of an SB3 actor-critic policy."""
    sb3: Any = policy  # an ActorCriticPolicy: torch's Module types its submodules as Module | Tensor
    layers = [m for m in sb3.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    layers.append(sb3.action_net)
    return [(m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy()) for m in layers]


def snapshot(
    policy: torch.nn.Module, activation: str, name: str, metadata: dict, advice: str | None = None
) -> MLPPolicy:
    """A frozen numpy copy of the learner's actor (`advice`: the heuristic its network reads)."""
    return MLPPolicy(actor_weights(policy), activation, name, metadata=metadata, advice=advice)


class OpponentPool:
    """Heuristic opponents and learner snapshots with the weights of a mixture."""

    def __init__(
        self,
        mixture: dict[str, float],
        pool_size: int,
        *,
        rules: Rules | None = None,
        seed: int = 0,
        player_counts: tuple[int, ...] | None = None,
    ) -> None:
        self.mixture = dict(mixture)
        self.pool_size = pool_size
        self.heuristics: dict[str, Any] = {}  # a policy, or for mixed tables a factory built at each table
        base = Rules() if rules is None else rules
        for i, spec in enumerate(mixture):
            if spec != SELF:
                try:
                    for players in player_counts or (None,):  # mixed tables: check that it fits each size
                        table = rules if players is None else base.replace(num_players=players)
                        self.heuristics[spec] = agents.make(spec, rules=table, seed=seed + i)
                except ValueError as exc:
                    raise ValueError(f"unknown opponent {spec!r} (use {SELF!r} or an agent spec): {exc}") from None
                if player_counts is not None:
                    self.heuristics[spec] = functools.partial(agents.make, spec)
        self.snapshots: list[MLPPolicy] = []

    def add(self, policy: MLPPolicy) -> None:
        """Put a snapshot into the pool, dropping the oldest beyond `pool_size`."""
        self.snapshots.append(policy)
        del self.snapshots[: -self.pool_size]

    def policies_and_weights(self) -> tuple[list[Policy], list[float]]:
        """The opponents and their sampling weights (zero-weight kinds left out)."""
        policies: list[Policy] = []
        weights: list[float] = []
        for name, weight in self.mixture.items():
            if weight <= 0:
                continue
            if name == SELF:
                for snap in self.snapshots:
                    policies.append(snap)
                    weights.append(weight / len(self.snapshots))
            else:
                policies.append(self.heuristics[name])
                weights.append(weight)
        if not policies:
            raise ValueError("the opponent mixture is empty: add a snapshot before using 'self' alone")
        return policies, weights

    # ------------------------------------------------------------------ checkpoints
    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("snapshot-*.npz"):
            old.unlink()
        for i, snap in enumerate(self.snapshots):
            snap.save(folder / f"snapshot-{i:03d}.npz")
        (folder / "pool.json").write_text(json.dumps({"count": len(self.snapshots)}) + "\n")

    def load(self, folder: Path) -> None:
        try:
            count = json.loads((folder / "pool.json").read_text())["count"]
        except (OSError, ValueError, KeyError) as exc:
            raise ValueError(f"checkpoint {folder} has no readable opponent pool: {exc}") from exc
        self.snapshots = [MLPPolicy.load(folder / f"snapshot-{i:03d}.npz") for i in range(count)]
