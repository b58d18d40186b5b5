"""Positions for the game-value network: batched self-play, each position with what followed it as its targets.

A batch of games is played to its end in one engine ([`play_policies()`][skyjo_env.opponents.play_policies],
the move loop of the tournaments and the views), every seat by a policy drawn from a pool. Two kinds of
positions are recorded, each as the padded observation ([`skyjo_env.observation.pad`][]) of one seat:

* **Positions of the game** (a share `keep` of the games at every step, from a random seat's view: the
  network learns the positions a seat decides in and those it leaves to the others). When the batch is
  over each gets its game's result (R20 shares, [`result_shares()`][skyjo_env.rewards.result_shares])
  and the scores (after R17's doubling) of the round it was recorded in, seen from its observer: entry
  `r` is the seat `r` places after the observer, entries past the table's size are masked.
* **Branches** (a share `branch` of the decisions of play): every legal action of the seat to act is
  played in a copy of the game, and each copy is played on by the same seats' policies to the end of the
  round in play after the action. Each action's position (right after it, from the deciding seat's view)
  gets that round's scores as targets: the positions the expectimax agent values, one per legal move,
  with targets of the pool's play after it. The copies of one decision share the deal (the hidden cards
  and the draw pile's order), so the differences between their targets are the actions' differences
  and far less noisy than the targets themselves: each branch names a `partner`, another action of the
  same decision drawn at random, whose difference the network learns as well. A branch has no game
  result (its rollout ends with the round).

Targets are Monte Carlo (the values learnt are those of the pool's play), or, for branches with
`bootstrap`, TD(lambda) returns that mix in the network's own round scores at the deciding seat's later
turns of the round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from skyjo_env.checks import MAX_STEPS
from skyjo_env.engine import STATE, SkyjoEngine
from skyjo_env.observation import PADDED_SEATS, PADDED_SIZE, observe, pad
from skyjo_env.opponents import play_policies
from skyjo_env.phases import CHOOSE, OVER, SETUP
from skyjo_env.rewards import result_shares
from skyjo_env.rules import Rules

_ROLE = "value-data policy"


@dataclass
class Positions:
    """Recorded positions: padded observations `(n, 365)`; `results (n, 8)`, each relative seat's share of the
    game's result, learnt where `result_seats (n, 8)` is set; `rounds (n, 8)`, each relative seat's score of
    the round in play, learnt on `seats (n, 8)` (the table's seats); `partner (n,)`, the row whose difference
    of round scores is learnt too (itself where none: a position of the game)."""

    observations: np.ndarray
    results: np.ndarray
    rounds: np.ndarray
    seats: np.ndarray
    result_seats: np.ndarray
    partner: np.ndarray

    def __len__(self) -> int:
        return len(self.observations)


def play_positions(
    rules: Rules,
    pool: Sequence[Any],
    games: int,
    keep: float,
    rng: np.random.Generator,
    weights: np.ndarray | None = None,
    branch: float = 0.0,
    bootstrap: tuple[Any, float] | None = None,
) -> Positions:
    """Play `games` games of `rules` to their end, every seat by a policy drawn from `pool` (by `weights`,
    default alike); record each game's position with probability `keep` at every step (from a random
    seat's view), and branch each decision of play with probability `branch` (see the module)."""
    P = rules.num_players
    engine = SkyjoEngine(rules, games, seed=int(rng.integers(2**63)), auto_reset=False)
    seats = rng.choice(len(pool), size=(games, P), p=weights)
    shares = np.zeros((games, P))
    scores: dict[tuple[int, int], np.ndarray] = {}  # (game, round index) -> the round's scores
    none = np.zeros(0, dtype=np.int64)
    observations = [np.zeros((0, PADDED_SIZE), dtype=np.float16)]
    record_game, record_round, record_seat = [none], [none], [none]
    branches: list[dict[str, np.ndarray]] = []
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
        if branch > 0:
            deciding = active[(engine.phase[active] != SETUP) & (rng.random(active.size) < branch)]
            if deciding.size:
                branches.append(_branches(engine, deciding, seats[deciding]))
        who = seats[active, engine.current[active].astype(np.int64)]
        round_index = engine.round_index[active].astype(np.int64)
        result = play_policies(engine, active, pool, who, role=_ROLE)
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
    own = Positions(
        np.concatenate(observations)[done], results, rounds, seat_rows, seat_rows.copy(), np.arange(len(game))
    )
    return _joined([own, _rolled_out(rules, branches, pool, rng, bootstrap)]) if branches else own


def _branches(engine: SkyjoEngine, games: np.ndarray, seats: np.ndarray) -> dict[str, np.ndarray]:
    """Every legal action of the seat to act in `games`, each played in a copy of its game: the copies'
    states (as [`SkyjoEngine.load()`][skyjo_env.engine.SkyjoEngine.load] takes them), their deciding seat
    (`"decider"`), the seats' policies (`"seats"`) and their decision (`"parent"`, the row of `games`)."""
    parent, action = np.nonzero(engine.legal_mask(games))
    copies = SkyjoEngine.from_states(engine.rules, {k: getattr(engine, k)[games[parent]] for k in STATE}, check=False)
    decider = engine.current[games[parent]].astype(np.int64)
    over = copies.step(action, check=False).game_over
    going = np.flatnonzero(~over)  # an action that ends the game needs no value
    state = {k: getattr(copies, k)[going] for k in STATE}
    return state | {"decider": decider[going], "seats": seats[parent[going]], "parent": parent[going]}


def _rolled_out(
    rules: Rules,
    branches: Sequence[dict[str, np.ndarray]],
    pool: Sequence[Any],
    rng: np.random.Generator,
    bootstrap: tuple[Any, float] | None = None,
) -> Positions:
    """The positions of `branches` (of [`_branches()`][_branches], in order), each rolled on by its seats'
    policies to the end of its round in play, all in one engine. With `bootstrap = (network, lam)` a
    branch's targets are TD(lambda) returns: at the start of each of the deciding seat's later turns of
    the round the network's round scores (its view) take a share `1 - lam` of the weight left."""
    P = rules.num_players
    part = np.concatenate([np.full(len(b["parent"]), k) for k, b in enumerate(branches)])
    joined = {k: np.concatenate([b[k] for b in branches]) for k in branches[0]}
    copies = SkyjoEngine.from_states(rules, {k: joined[k] for k in STATE}, check=False)
    decider, seats = joined["decider"], joined["seats"]
    observations = pad(observe(copies, decider), P).astype(np.float16)
    n = len(decider)
    relative = (decider[:, None] + np.arange(PADDED_SEATS)) % P
    targets = np.zeros((n, PADDED_SEATS), dtype=np.float32)  # relative seats
    left = np.ones(n, dtype=np.float32)  # the weight not yet given to a bootstrapped value
    scored = np.zeros(n, dtype=bool)
    live = np.arange(n)
    while live.size:
        who = seats[live, copies.current[live].astype(np.int64)]
        result = play_policies(copies, live, pool, who, role=_ROLE)
        ended = result.round_over
        done = live[ended]
        targets[done] += left[done, None] * np.take_along_axis(result.round_scores[ended], relative[done], axis=1)
        scored[done] = True
        live = live[~ended & (copies.steps[live] < MAX_STEPS)]
        if bootstrap is not None and live.size:
            network, lam = bootstrap
            turn = live[(copies.current[live] == decider[live]) & (copies.phase[live] == CHOOSE)]
            if turn.size:
                rounds = network.values(observe(copies, decider[turn], turn))[1]
                targets[turn] += (1 - lam) * left[turn, None] * rounds
                left[turn] *= lam
    keep = np.flatnonzero(scored)
    seat_rows = np.broadcast_to(np.arange(PADDED_SEATS) < P, (len(keep), PADDED_SEATS)).copy()
    rounds = targets[keep]
    rounds[~seat_rows] = 0
    # Each branch's partner: another kept branch of its decision (a step's part and a row of its games),
    # drawn at random (itself if none).
    part, parent = part[keep], joined["parent"][keep]
    starts = np.flatnonzero(np.r_[True, (part[1:] != part[:-1]) | (parent[1:] != parent[:-1])])
    size = np.diff(np.r_[starts, len(keep)])
    first, sizes = np.repeat(starts, size), np.repeat(size, size)
    shift = 1 + (rng.random(len(keep)) * np.maximum(sizes - 1, 1)).astype(np.int64)
    partner = first + (np.arange(len(keep)) - first + shift) % sizes
    return Positions(observations[keep], np.zeros_like(rounds), rounds, seat_rows, np.zeros_like(seat_rows), partner)


def _joined(parts: Sequence[Positions]) -> Positions:
    """One set of positions of `parts`, partners renumbered."""
    offsets = np.cumsum([0, *(len(p) for p in parts[:-1])])
    return Positions(
        np.concatenate([p.observations for p in parts]),
        np.concatenate([p.results for p in parts]),
        np.concatenate([p.rounds for p in parts]),
        np.concatenate([p.seats for p in parts]),
        np.concatenate([p.result_seats for p in parts]),
        np.concatenate([p.partner + o for p, o in zip(parts, offsets)]),
    )
