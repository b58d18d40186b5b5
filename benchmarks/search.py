"""How much the search agent gains over its base policy, and what each decision costs.

Run: ``python benchmarks/search.py [--games N] [--samples 8,16,32] [--players 2,4] [--base SPEC]
[--against SPEC] [--block B] [--workers W]``. For every sample budget it plays ``search`` against
``players - 1`` copies of ``--against`` (by default its base policy: search's own, ``ppo-{P}p``,
unless ``--base`` names another), seats rotated (whole line-up blocks,
`skyjo_env.evaluation.tournament`), at every player count. It prints the search seat's win rate
with its Wilson 95% interval, the time per search decision (every decision of a seat, whole games,
decisions of many games made together) and the games played per hour.

The games are played in blocks of ``--block`` (a tournament each, seed ``seed + k`` for block k;
a block's games decide together, and blocks of a few hundred keep the rollouts' arrays small), by
``--workers W`` processes, one per core. Wins and decisions are summed over the blocks; a line on
stderr per finished block keeps the running tally (wins, time per decision, seconds so far), so a
stopped match still tells its figures. The targets of issue #36: the whole interval
above 0.5 against the base; 0.70 against counting at 2 players and 0.42 against three counting at 4.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from skyjo_env import Rules, agents
from skyjo_env.agents.search import VALUES_BY, default_base, default_budget
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
    """What one worker measured: the search seat's wins and seats, its decisions and their time."""

    games: int
    wins: int
    seats: int
    round_score_sum: float
    rounds: int
    decisions: int
    seconds: float


def play_share(players: int, options: dict, against: str, games: int, seed: int) -> Share:
    """One block of games: search (with `options`) against `players - 1` copies of `against`."""
    with threadpool_limits(1):
        search = Timed(agents.make("search", players=players, seed=seed, **options))
        pool = [search, *(agents.make(against, players=players) for _ in range(players - 1))]
        result = run_tournament(pool, players, games, seed=seed, progress=False)
    ours = result.by_name("search")
    return Share(result.games, ours.wins, ours.seats, ours.mean_round_score * ours.rounds, ours.rounds,
                 search.decisions, search.seconds)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="games per match (rounded up to whole blocks)")
    parser.add_argument(
        "--block", type=int, default=200, help="games played together (one tournament, seed + its index)"
    )
    parser.add_argument("--players", default="2", help="comma-separated player counts")
    parser.add_argument(
        "--samples",
        default=None,
        help="comma-separated sample budgets (the curve; default: search's own for the table)",
    )
    parser.add_argument("--top", type=int, default=4)
    parser.add_argument("--margin", type=float, default=None, help="default: search's own for the table")
    parser.add_argument("--horizon", type=int, default=None)
    parser.add_argument("--value", default="round", choices=VALUES_BY, help="the rollouts' value (search's `value`)")
    parser.add_argument(
        "--base", default=None, help="search's base policy (an agent spec; default: search's own, ppo-{P}p)"
    )
    parser.add_argument("--against", default=None, help="the opponents' agent spec (default: the base)")
    parser.add_argument("--workers", type=int, default=1, help="processes playing the blocks")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if min(args.workers, args.games, args.block) < 1:
        parser.error("--games, --block and --workers must be positive")
    blocks = -(-args.games // args.block)
    for players in (int(p) for p in args.players.split(",")):
        rules = Rules(num_players=players)
        base = args.base or default_base(rules)
        against = args.against or base
        samples_by_default, margin_by_default = default_budget(rules)
        margin = margin_by_default if args.margin is None else args.margin
        for samples in (int(s) for s in (args.samples or str(samples_by_default)).split(",")):
            options = dict(base=base, samples=samples, top=args.top, margin=margin, horizon=args.horizon,
                           value=args.value)  # fmt: skip
            started = time.perf_counter()
            shares: list[Share] = []
            with ProcessPoolExecutor(args.workers) as pool:
                for share in pool.map(play_share, *zip(*[(players, options, against, args.block, args.seed + k)
                                                         for k in range(blocks)])):  # fmt: skip
                    shares.append(share)
                    wins, seats = sum(s.wins for s in shares), sum(s.seats for s in shares)
                    ms = 1000 * sum(s.seconds for s in shares) / sum(s.decisions for s in shares)
                    print(f"  block {len(shares)}/{blocks}: {wins} wins of {seats} seats, {ms:.1f} ms per decision, "
                          f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)  # fmt: skip
            seconds = time.perf_counter() - started
            games, wins, seats = (sum(getattr(s, f) for s in shares) for f in ("games", "wins", "seats"))
            decisions, spent = sum(s.decisions for s in shares), sum(s.seconds for s in shares)
            low, high = wilson_interval(wins, seats)
            print(
                f"{players}p search (base={base}, samples={samples}, top={args.top}, margin={margin}, "
                f"horizon={args.horizon}, value={args.value}) vs {players - 1} {against}: win rate {wins / seats:.3f} "
                f"({low:.3f}-{high:.3f}), {wins} wins of {seats} seats, over {games} games ({blocks} blocks of "
                f"{args.block}, seeds {args.seed}..{args.seed + blocks - 1}, {args.workers} workers); mean round score "
                f"{sum(s.round_score_sum for s in shares) / sum(s.rounds for s in shares):.2f}; "
                f"{1000 * spent / decisions:.1f} ms per decision ({decisions} decisions), "
                f"{3600 * games / seconds:,.0f} games/h",
                flush=True,
            )


if __name__ == "__main__":
    main()
