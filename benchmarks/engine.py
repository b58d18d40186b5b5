"""Engine throughput: random legal play (sampling included), one thread.

Prints engine steps/s (one step = one action in one game) and complete games/s for batch sizes
1, 64, 1024 and 8192 with 2, 4 and 8 players, and the engine's memory per game. With
``--peer`` it also measures the engine of ``rlskyjo`` (the PyPI package; install it with
``pip install --no-deps rlskyjo numba``) in the same run and prints the ratio.

    python benchmarks/engine.py [--seconds 2] [--peer]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.sampling import sample_bits

BATCHES = (1, 64, 1024, 8192)
PLAYERS = (2, 4, 8)


def measure(players: int, batch: int, seconds: float, repeats: int = 3, seed: int = 0) -> tuple[float, float]:
    """Steps/s and complete games/s of random legal play: the best of ``repeats`` timed runs.

    The machine is shared, so the best run is the one least disturbed by other processes.
    """
    engine = SkyjoEngine(Rules(num_players=players), batch, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(20):  # warm-up
        engine.step(sample_bits(engine.legal_bits(), rng), check=False)
    best = (0.0, 0.0)
    for _ in range(repeats):
        steps = games = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / repeats:
            for _ in range(50):
                result = engine.step(sample_bits(engine.legal_bits(), rng), check=False)
                games += int(result.game_over.sum())
            steps += 50 * batch
        best = max(best, (steps / elapsed, games / elapsed))
    return best


def memory_per_game(players: int, batch: int = 1024) -> float:
    """Bytes of engine state per game (every numpy array the engine holds, divided by B)."""
    engine = SkyjoEngine(Rules(num_players=players), batch)
    total = sum(v.nbytes for v in vars(engine).values() if isinstance(v, np.ndarray) and v.base is None)
    return total / batch


def measure_peer(seconds: float) -> float | None:
    """Steps/s of rlskyjo's 2-player engine under random legal play, or None if not installed."""
    try:
        from rlskyjo.game.skyjo import SkyjoGame
    except ImportError:
        return None
    game = SkyjoGame(num_players=2)
    rng = np.random.default_rng(0)

    def play_one() -> int:
        game.reset()
        steps = 0
        while not game.is_terminated:
            player, _ = game.expected_action
            _, mask = game.collect_observation(player)
            game.act(player, int(rng.choice(np.flatnonzero(mask))))
            steps += 1
        return steps

    play_one()  # compiles its numba functions
    steps = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        steps += play_one()
    return steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="wall time per measurement")
    parser.add_argument("--peer", action="store_true", help="also measure rlskyjo's engine")
    args = parser.parse_args()

    print(f"{'players':>7} {'batch':>6} {'steps/s':>14} {'games/s':>11}")
    ours_2p_8192 = None
    for players in PLAYERS:
        for batch in BATCHES:
            steps, games = measure(players, batch, args.seconds)
            if (players, batch) == (2, 8192):
                ours_2p_8192 = steps
            print(f"{players:>7} {batch:>6} {steps:>14,.0f} {games:>11,.1f}")
    print()
    for players in PLAYERS:
        print(f"memory per game, {players} players: {memory_per_game(players):,.0f} bytes")
    if args.peer:
        peer = measure_peer(args.seconds * 3)
        if peer is None:
            print("\nrlskyjo is not installed: pip install --no-deps rlskyjo numba")
        else:
            print(f"\nrlskyjo engine, 2 players: {peer:,.0f} steps/s")
            print(f"skyjo-env at B=8192 / rlskyjo: {ours_2p_8192 / peer:,.0f}x")


if __name__ == "__main__":
    main()
