"""How long 10,000 complete 2-player games between the two best heuristics take.

Run: ``python benchmarks/tournament.py [--games N] [--players P]``. Observations, legal masks,
agent decisions and engine steps are all included (a plain `skyjo_env.evaluation.tournament.run_tournament()`
without a progress bar, ratings included); the target is under 20 seconds for 10,000 games on a
2-core machine. The CPU time is printed too: on a shared machine it is the steadier figure.
"""

from __future__ import annotations

import argparse
import time

from skyjo_env import agents
from skyjo_env.evaluation.tournament import run_tournament


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    pool = [agents.make("threshold"), agents.make("counting")]
    started, cpu = time.perf_counter(), time.process_time()
    result = run_tournament(pool, args.players, args.games, seed=args.seed, progress=False)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    rounds = sum(a.rounds for a in result.agents) / args.players
    print(
        f"{result.games} complete {args.players}-player games, threshold vs counting: {seconds:.1f} s "
        f"({cpu:.1f} s of CPU; {result.games / seconds:,.0f} games/s, {rounds / seconds:,.0f} rounds/s)"
    )


if __name__ == "__main__":
    main()
