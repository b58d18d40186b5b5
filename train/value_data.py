"""Positions for the game-value network: batched self-play with each game's final result as the target.

A batch of games is played to its end in one engine ([`play_policies()`][skyjo_env.opponents.play_policies],
the move loop of the tournaments and the views), every seat by a policy drawn from a pool. At every
step a share of the games is recorded from the view of one random seat (the seat to act or another,
so the network learns both the positions a seat decides in and those it leaves to the others), as the
padded observation ([`skyjo_env.observation.pad`][]). When the batch is over, every record gets its
game's result (R20 shares, [`result_shares()`][skyjo_env.rewards.result_shares]) seen from its
observer: entry `r` is the share of the seat `r` places after the observer, entries past the table's
size are masked. Each record also gets the scores (after R17's doubling) of the round it was recorded in,
seen likewise: the round-score head's targets, far less noisy than a game's result. Monte Carlo targets:
no bootstrapping, so the values learnt are those of the pool's play.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from skyjo_env.checks import MAX_STEPS
from skyjo_env.engine import SkyjoEngine
from skyjo_env.observation import PADDED_SEATS, observe, pad
from skyjo_env.opponents import play_policies
from skyjo_env.phases import OVER
from skyjo_env.rewards import result_shares
from skyjo_env.rules import Rules


@dataclass
class Positions:
    """Recorded positions: padded observations `(n, 365)`, `results (n, 8)` (each relative seat's share of
    the game's result), `rounds (n, 8)` (each relative seat's score of the round in play) and
    `seats (n, 8)` bool (the table's seats)."""

    observations: np.ndarray
    results: np.ndarray
    rounds: np.ndarray
    seats: np.ndarray

    def __len__(self) -> int:
        return len(self.observations)


def play_positions(
    rules: Rules,
    pool: Sequence[Any],
    games: int,
    keep: float,
    rng: np.random.Generator,
    weights: np.ndarray | None = None,
) -> Positions:
    """Play `games` games of `rules` to their end, every seat by a policy drawn from `pool` (by `weights`,
    default alike), and record each game's position with probability `keep` at every step (from a random
    seat's view)."""
    P = rules.num_players
    engine = SkyjoEngine(rules, games, seed=int(rng.integers(2**63)), auto_reset=False)
    seats = rng.choice(len(pool), size=(games, P), p=weights)
    shares = np.zeros((games, P))
    scores: dict[tuple[int, int], np.ndarray] = {}  # (game, round index) -> the round's scores
    observations, record_game, record_round, record_seat = [], [], [], []
    finished = np.zeros(games, dtype=bool)
    active = np.arange(games)
    while active.size:
        kept = active[rng.random(active.size) < keep]
        if kept.size:
            observer = rng.integers(P, size=kept.size)
            observations.append(pad(observe(engine, observer, kept), P).astype(np.float16))
            record_game.append(kept)
            record_round.append(engine.round_index[kept].astype(np.int64))
            record_seat.append(observer)
        who = seats[active, engine.current[active].astype(np.int64)]
        round_index = engine.round_index[active].astype(np.int64)
        result = play_policies(engine, active, pool, who, role="value-data policy")
        for i in np.flatnonzero(result.round_over).tolist():
            scores[int(active[i]), int(round_index[i])] = result.round_scores[i]
        over = np.flatnonzero(result.game_over)
        if over.size:
            shares[active[over]] = result_shares(result.winners[over])
            finished[active[over]] = True
        going = (engine.phase[active] != OVER) & (engine.steps[active] < MAX_STEPS)
        active = active[going]
    game, round_ = np.concatenate(record_game), np.concatenate(record_round)
    done = finished[game]  # a game abandoned at the step limit has no result
    game, round_ = game[done], round_[done]
    observer = np.concatenate(record_seat)[done]
    relative = (observer[:, None] + np.arange(PADDED_SEATS)) % P
    seat_rows = np.broadcast_to(np.arange(PADDED_SEATS) < P, relative.shape).copy()
    results = np.take_along_axis(shares[game], relative, axis=1).astype(np.float32)
    played = np.stack([scores[g, r] for g, r in zip(game.tolist(), round_.tolist())]) if game.size else shares[:0]
    rounds = np.take_along_axis(played, relative, axis=1).astype(np.float32)
    results[~seat_rows] = 0
    rounds[~seat_rows] = 0
    return Positions(np.concatenate(observations)[done], results, rounds, seat_rows)
