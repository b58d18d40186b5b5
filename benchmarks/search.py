"""How much the search agent gains over its base policy, and what each decision costs.

Run: ``python benchmarks/search.py [--games N] [--samples 8,16,32] [--players 2,4]``. For every
sample budget it plays ``search`` against its base policy (by default ``counting``), seats rotated
(whole line-up blocks, `skyjo_env.evaluation.tournament`), at every player count: one search seat
against ``players - 1`` base seats. It prints the search seat's win rate with its Wilson 95%
interval, the time per search decision (every decision of a seat, whole games, decisions of many
games made together) and the games played per hour. The targets of issue #36: the whole interval
above 0.5 against the base; 0.70 against counting at 2 players and 0.42 against three counting at 4.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from skyjo_env import agents
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="games per match (rounded up to whole blocks)")
    parser.add_argument("--players", default="2", help="comma-separated player counts")
    parser.add_argument("--samples", default="32", help="comma-separated sample budgets (the curve)")
    parser.add_argument("--top", type=int, default=4)
    parser.add_argument("--margin", type=float, default=2.0)
    parser.add_argument("--horizon", type=int, default=None)
    parser.add_argument("--base", default="counting")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for players in (int(p) for p in args.players.split(",")):
        for samples in (int(s) for s in args.samples.split(",")):
            search = Timed(
                agents.make(
                    "search", players=players, seed=args.seed, base=args.base, samples=samples,
                    top=args.top, margin=args.margin, horizon=args.horizon,
                )
            )  # fmt: skip
            pool = [search, *(agents.make(args.base, players=players) for _ in range(players - 1))]
            started = time.perf_counter()
            result = run_tournament(pool, players, args.games, seed=args.seed, progress=False)
            seconds = time.perf_counter() - started
            ours = result.by_name("search")
            low, high = ours.win_ci
            print(
                f"{players}p search (samples={samples}, top={args.top}, margin={args.margin}, "
                f"horizon={args.horizon}) vs {players - 1} {args.base}: win rate {ours.win_rate:.3f} "
                f"({low:.3f}-{high:.3f}) over {result.games} games; mean round score {ours.mean_round_score:.2f}; "
                f"{1000 * search.seconds / search.decisions:.1f} ms per decision ({search.decisions} decisions), "
                f"{3600 * result.games / seconds:,.0f} games/h",
                flush=True,
            )


if __name__ == "__main__":
    main()
