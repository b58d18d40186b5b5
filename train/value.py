"""The game-value network's learning: a torch MLP fitted to positions' final results.

[`ValueModel`][] is the torch twin of [`skyjo_env.agents.value_net.ValueNetwork`][] (the same layers;
[`to_network()`][ValueModel.to_network] hands its weights to numpy). [`fit()`][fit] takes minibatches of
[`Positions`][skyjo_env.train.value_data.Positions] and minimises the squared errors of every seat's
predicted share of the result and round score (beyond the grid's expected score now,
[`expected_grid_scores()`][skyjo_env.agents.value_net.expected_grid_scores], in
[`ROUND_SCALE`][skyjo_env.agents.value_net.ROUND_SCALE] points a unit) over the table's seats.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from skyjo_env.agents.base import Policy
from skyjo_env.agents.expectimax import ExpectimaxPolicy
from skyjo_env.agents.value_net import FEATURES, OUTPUTS, ROUND_SCALE, ValueNetwork, expected_grid_scores, features
from skyjo_env.observation import PADDED_SEATS
from skyjo_env.opponents import OpponentPolicy, build
from skyjo_env.train import driver
from skyjo_env.train.config import TrainConfig
from skyjo_env.train.driver import Loop, Trainer
from skyjo_env.train.networks import ACTIVATIONS
from skyjo_env.train.runs import TrainOutcome
from skyjo_env.train.value_data import Positions, play_positions

#: The share of the self-play positions kept, at every step of every game (successive positions of a game
#: differ little).
KEEP = 0.5
#: The share of the decisions of play branched: each legal action played in a copy of the game and rolled on
#: to its round's end ([`play_positions()`][skyjo_env.train.value_data.play_positions]).
BRANCH = 0.1
#: The trainer's state in a checkpoint: the torch model and its optimiser.
STATE_FILE = "value_model.pt"


class ValueModel(torch.nn.Module):
    """`features of a padded observation -> 8 expected shares, 8 expected round scores`, hidden layers
    `hidden` with `activation` ([`features()`][skyjo_env.agents.value_net.features] makes its inputs)."""

    def __init__(self, hidden: Sequence[int] = (256, 256), activation: str = "relu") -> None:
        super().__init__()
        sizes = [FEATURES, *hidden, OUTPUTS]
        layers: list[torch.nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
            layers.append(torch.nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(ACTIVATIONS[activation]())
        self.layers = torch.nn.Sequential(*layers)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)

    def to_network(self, metadata: dict[str, Any] | None = None) -> ValueNetwork:
        """The numpy [`ValueNetwork`][skyjo_env.agents.value_net.ValueNetwork] of the same weights."""
        linear = [m for m in self.layers if isinstance(m, torch.nn.Linear)]
        weights = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linear]
        return ValueNetwork(weights, self.activation, metadata)


def fit(
    model: ValueModel,
    optimizer: torch.optim.Optimizer,
    positions: Positions,
    *,
    batch_size: int,
    epochs: int,
    rng: np.random.Generator,
) -> float:
    """`epochs` passes of minibatches of `batch_size` (the last one of a pass what is left) over
    `positions`, in a random order; returns the mean loss of the last pass: the squared errors per seat
    of the result shares (where learnt) and the round scores, and of the round scores' differences to
    each position's partner (in [`ROUND_SCALE`][skyjo_env.agents.value_net.ROUND_SCALE] units)."""
    n = len(positions)
    losses: list[float] = []
    for _ in range(epochs):
        losses.clear()
        order = rng.permutation(n)
        for start in range(0, n, batch_size):
            rows = order[start : start + batch_size]
            both = np.concatenate([rows, positions.partner[rows]])
            observations = positions.observations[both].astype(np.float32)
            out = model(torch.from_numpy(features(observations)))
            beyond = torch.from_numpy((positions.rounds[both] - expected_grid_scores(observations)) / ROUND_SCALE)
            seats = torch.from_numpy(positions.seats[rows].astype(np.float32))
            counted = torch.from_numpy(positions.result_seats[rows].astype(np.float32))
            m = len(rows)
            results = torch.from_numpy(positions.results[rows])
            error = out[:m, PADDED_SEATS:] - beyond[:m]
            difference = error - (out[m:, PADDED_SEATS:] - beyond[m:])
            loss = (((out[:m, :PADDED_SEATS] - results) ** 2 * counted).sum() / counted.sum().clamp(min=1)
                    + ((error**2 + 2 * difference**2) * seats).sum() / seats.sum())  # fmt: skip
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return float(np.mean(losses)) if losses else float("nan")


def squared_errors(network: ValueNetwork, positions: Positions) -> tuple[float, float]:
    """The network's mean squared errors per seat on `positions` (held-out figures): of the result
    shares, and of the round scores (points squared)."""
    results, rounds = network.values(positions.observations.astype(np.float32))
    counted = max(int(positions.result_seats.sum()), 1)
    return (
        float(((results - positions.results) ** 2 * positions.result_seats).sum() / counted),
        float(((rounds - positions.rounds) ** 2 * positions.seats).sum() / positions.seats.sum()),
    )


class ValueTrainer(Trainer):
    """The value network's trainer for the [run driver][skyjo_env.train.driver]: it alternates batches of
    self-play ([`play_positions()`][skyjo_env.train.value_data.play_positions]: `num_envs` games of
    each table size in turn, every seat played by an agent of `opponents` drawn by weight, positions kept
    with probability [`KEEP`][], decisions branched with probability [`BRANCH`][], their targets
    TD(`gae_lambda`) returns bootstrapped from the network as it is, Monte Carlo ones at `gae_lambda=1`)
    with `n_epochs` passes of minibatches of `batch_size` over them. Its
    steps are the positions learnt; its agent is the [`expectimax`][skyjo_env.agents.expectimax] player
    over the network alone (`margin=0`: the run's evaluations measure what the network learnt, no base
    policy's choices), saved as the network itself (`value.npz`)."""

    agent_file = "value.npz"
    progress_label = "value positions"

    def __init__(self, config: TrainConfig, checkpoint: Path | None, timesteps: int) -> None:
        super().__init__(config, checkpoint, timesteps)
        torch.manual_seed(config.seed)
        self.model = ValueModel(config.net_arch, config.activation)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.learning_rate)
        if checkpoint is not None:
            try:
                saved = torch.load(checkpoint / STATE_FILE, weights_only=True)
                self.model.load_state_dict(saved["model"])
                self.optimizer.load_state_dict(saved["optimizer"])
            except (OSError, KeyError, RuntimeError, ValueError) as exc:
                raise ValueError(f"cannot resume the value network from {checkpoint}: {exc}") from exc
        self._timesteps = timesteps
        self.rng = np.random.default_rng([config.seed, timesteps])
        self.pools: dict[int, list[OpponentPolicy]] = {}
        self.weights = np.ones(0)
        self.batches = 0

    @property
    def timesteps(self) -> int:
        return self._timesteps

    def describe(self) -> str:
        c = self.config
        players = "/".join(map(str, c.player_counts))
        return (
            f"value network {FEATURES} -> {' -> '.join(map(str, c.net_arch))} -> {OUTPUTS} ({c.activation}), "
            f"learning from {players}-player self-play of {', '.join(c.opponents)}"
        )

    def set_opponents(self, policies: list[Policy], weights: list[float]) -> None:
        """The driver's opponent pool: its agents play every seat, drawn by weight (a mixed run's
        factories built once for each table size)."""
        self.weights = np.asarray(weights, dtype=np.float64) / sum(weights)
        self.pools = {
            P: [build(policy, self.config.table_rules(P), self.config.seed + i) for i, policy in enumerate(policies)]
            for P in self.config.player_counts
        }

    def learn(self, loop: Loop) -> None:
        c = self.config
        while self._timesteps < loop.until and not loop.time_up():
            P = c.player_counts[self.batches % len(c.player_counts)]
            pool = self.pools[P]
            bootstrap = (self.network(), c.gae_lambda) if c.gae_lambda < 1 else None
            positions = play_positions(
                c.table_rules(P), pool, c.num_envs, KEEP, self.rng, self.weights, BRANCH, bootstrap
            )
            fit(self.model, self.optimizer, positions, batch_size=c.batch_size, epochs=c.n_epochs, rng=self.rng)
            self.batches += 1
            self._timesteps += len(positions)
            loop.after(self._timesteps)

    def network(self) -> ValueNetwork:
        """The network now, as numpy, with its training facts."""
        c = self.config
        return self.model.to_network(
            {"player_counts": list(c.player_counts), "positions": self._timesteps, "rules": c.game_rules.to_dict(),
             "opponents": c.opponents, "seed": c.seed}
        )  # fmt: skip

    def agent(self, name: str) -> Policy:
        player = ExpectimaxPolicy(self.network(), margin=0, rules=self.config.game_rules, seed=self.config.seed)
        player.name = name
        return player

    def save_agent(self, path: Path, name: str) -> None:
        self.network().save(path)

    def save_state(self, folder: Path) -> None:
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}, folder / STATE_FILE)


def train(config: TrainConfig, resume: str | Path | None = None, **options: Any) -> TrainOutcome:
    """Train (or resume, from the checkpoint folder `resume`) a value network under `config` with the
    [run driver][skyjo_env.train.driver.train] (`options`: its `overwrite`, `progress`, `say`); the run
    folder holds `value.npz`, the network the `expectimax` agent plays (`expectimax:network=FOLDER`)."""
    return driver.train(config, ValueTrainer, resume, **options)
