"""AEC env throughput: PettingZoo steps/s of random legal play, 2 players, one thread.

A step is ``env.last()`` (observation and action mask of the agent to act) plus ``env.step``,
with the action drawn uniformly from the mask; finished games are reset. Measured for the bare
``raw_env`` and for ``env()`` (an illegal move loses; PettingZoo's order enforcing wrapper), with
``--profile`` a cProfile of the bare env instead.

    python benchmarks/aec_env.py [--seconds 3] [--players 2] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from skyjo_env.pettingzoo_env import env, raw_env


def play(aec, steps: int, rng: np.random.Generator) -> int:
    """Play ``steps`` steps of random legal play, resetting finished games; returns games finished."""
    games = 0
    for _ in range(steps):
        obs, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.reset()
            games += 1
            continue
        legal = np.flatnonzero(obs["action_mask"])
        aec.step(int(legal[rng.integers(legal.size)]))
    return games


def measure(make, players: int, seconds: float, repeats: int = 3) -> tuple[float, float, float]:
    """Steps per second of wall time and of CPU time, and games/s: the best of ``repeats`` runs."""
    aec = make(num_players=players)
    aec.reset(seed=0)
    rng = np.random.default_rng(0)
    play(aec, 200, rng)  # warm-up
    best = (0.0, 0.0, 0.0)
    for _ in range(repeats):
        steps = games = 0
        start, cpu = time.perf_counter(), time.process_time()
        while (elapsed := time.perf_counter() - start) < seconds / repeats:
            games += play(aec, 500, rng)
            steps += 500
        best = max(best, (steps / elapsed, steps / (time.process_time() - cpu), games / elapsed))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per measurement")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--profile", action="store_true", help="cProfile 5000 steps of raw_env instead")
    args = parser.parse_args()
    if args.profile:
        aec = raw_env(num_players=args.players)
        aec.reset(seed=0)
        with cProfile.Profile() as profile:
            play(aec, 5000, np.random.default_rng(0))
        pstats.Stats(profile).sort_stats("tottime").print_stats(20)
        return
    print(f"{args.players} players, random legal play")
    print(f"{'env':>10} {'steps/s':>10} {'per CPU s':>10} {'games/s':>8}")
    for label, make in (("raw_env", raw_env), ("env()", env)):
        steps, per_cpu, games = measure(make, args.players, args.seconds)
        print(f"{label:>10} {steps:>10,.0f} {per_cpu:>10,.0f} {games:>8,.1f}")


if __name__ == "__main__":
    main()
