"""One agent in one seat against copies of another: its win rate and what each of its decisions costs.

Run: ``python benchmarks/matches.py --agent SPEC [--against SPEC] [--players 2,4] [--games N] [--block B]
[--workers W] [--seed S]``. At every player count it plays ``--agent`` against ``players - 1`` copies of
``--against`` (default counting), seats rotated (whole line-up blocks, `skyjo_env.evaluation.tournament`),
and prints the agent's win rate with its Wilson 95% interval, its mean round score, the time per decision
of its seat (every decision of whole games, the decisions of a block's games made together) and the
games played per hour.

The games are played in blocks of ``--block`` (a tournament each, seed ``seed + k`` for block k), by
``--workers W`` processes, one per core. Wins and decisions are summed over the blocks; a line on stderr
per finished block keeps the running tally, so a stopped match still tells its figures, and matches
with disjoint seeds pool. `benchmarks/search.py` plays its search matches through `play_blocks()`.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from skyjo_env import agents
from skyjo_env.evaluation.stats import wilson_interval
from skyjo_env.evaluation.tournament import run_tournament


class Timed:
    """A policy that counts the decisions it makes and the time they take."""

    def __init__(self, policy: agents.Policy) -> None:
        self.policy = policy
        self.name = policy.name
        self.decisions = 0
        self.seconds = 0.0

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        started = time.perf_counter()
        actions = self.policy(observations, action_masks)
        self.seconds += time.perf_counter() - started
        self.decisions += len(observations)
        return actions


@dataclass
class Share:
    """What one block measured: the agent's wins and seats, its rounds, its decisions and their time."""

    games: int
    wins: int
    seats: int
    round_score_sum: float
    rounds: int
    decisions: int
    seconds: float


@dataclass
class Match:
    """A whole match: the blocks' shares summed, and its wall time."""

    games: int
    wins: int
    seats: int
    mean_round_score: float
    decisions: int
    ms_per_decision: float
    games_per_hour: float

    def describe(self) -> str:
        low, high = wilson_interval(self.wins, self.seats)
        return (
            f"win rate {self.wins / self.seats:.3f} ({low:.3f}-{high:.3f}), {self.wins} wins of {self.seats} seats "
            f"over {self.games} games; mean round score {self.mean_round_score:.2f}; "
            f"{self.ms_per_decision:.2f} ms per decision ({self.decisions} decisions), {self.games_per_hour:,.0f} games/h"
        )


def play_share(players: int, spec: str, options: dict[str, Any], against: str, games: int, seed: int) -> Share:
    """One block of games: `spec` (made with `options`) against `players - 1` copies of `against`."""
    with threadpool_limits(1):
        agent = Timed(agents.make(spec, players=players, seed=seed, **options))
        pool = [agent, *(agents.make(against, players=players) for _ in range(players - 1))]
        result = run_tournament(pool, players, games, seed=seed, progress=False)
    ours = result.agents[0]
    return Share(result.games, ours.wins, ours.seats, ours.mean_round_score * ours.rounds, ours.rounds,
                 agent.decisions, agent.seconds)  # fmt: skip


def play_blocks(
    players: int, spec: str, options: dict[str, Any], against: str, games: int, block: int, workers: int, seed: int
) -> Match:
    """`games` games (whole blocks of `block`, seeds `seed`, `seed + 1`, ...) of `spec` against `against`,
    on `workers` processes, with a line on stderr per finished block."""
    blocks = -(-games // block)
    started = time.perf_counter()
    shares: list[Share] = []
    with ProcessPoolExecutor(workers) as pool:
        jobs = [(players, spec, options, against, block, seed + k) for k in range(blocks)]
        for share in pool.map(play_share, *zip(*jobs)):
            shares.append(share)
            wins, seats = sum(s.wins for s in shares), sum(s.seats for s in shares)
            ms = 1000 * sum(s.seconds for s in shares) / max(sum(s.decisions for s in shares), 1)
            print(f"  block {len(shares)}/{blocks}: {wins} wins of {seats} seats, {ms:.2f} ms per decision, "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)  # fmt: skip
    seconds = time.perf_counter() - started
    total = {f: sum(getattr(s, f) for s in shares) for f in ("games", "wins", "seats", "rounds", "decisions")}
    spent = sum(s.seconds for s in shares)
    return Match(total["games"], total["wins"], total["seats"], sum(s.round_score_sum for s in shares) / total["rounds"],
                 total["decisions"], 1000 * spent / max(total["decisions"], 1), 3600 * total["games"] / seconds)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", required=True, help="the agent spec in the measured seat (e.g. expectimax)")
    parser.add_argument("--against", default="counting", help="the opponents' agent spec")
    parser.add_argument("--players", default="2", help="comma-separated player counts")
    parser.add_argument("--games", type=int, default=400, help="games per match (rounded up to whole blocks)")
    parser.add_argument("--block", type=int, default=200, help="games per tournament (decided together)")
    parser.add_argument("--workers", type=int, default=1, help="processes playing the blocks")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if min(args.workers, args.games, args.block) < 1:
        parser.error("--games, --block and --workers must be positive")
    for players in (int(p) for p in args.players.split(",")):
        match = play_blocks(players, args.agent, {}, args.against, args.games, args.block, args.workers, args.seed)
        print(f"{players}p {args.agent} vs {players - 1} {args.against} (seeds from {args.seed}, {args.workers} "
              f"workers): {match.describe()}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
