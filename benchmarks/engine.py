"""Engine throughput: random legal play (sampling included), one thread.

Prints engine steps/s (one step = one action in one game) and complete games/s for batch sizes
1, 64, 1024 and 8192 with 2, 4 and 8 players, and the engine's memory per game. With
`--peer` it also measures the engine of `rlskyjo` (the PyPI package; install it with
`pip install --no-deps rlskyjo numba`) in the same run and prints the ratio. With `--compare
REV` it instead times this tree's engine against the one at git revision `REV` (an A/B for
engine changes): a pair of worker processes, one per tree, asked in turn on one CPU, a fresh
pair each repeat; it prints per size the median steps per CPU second (less disturbed by other
processes than wall time) and the new/base ratio of the pairs (median, middle half and range).

    python benchmarks/engine.py [--seconds 2] [--peer]
    python benchmarks/engine.py --compare REV [--seconds 0.3] [--repeats 12]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.sampling import sample_bits

BATCHES = (1, 64, 1024, 8192)
PLAYERS = (2, 4, 8)
ROOT = Path(__file__).resolve().parents[1]


def measure(players: int, batch: int, seconds: float, repeats: int = 3, seed: int = 0) -> tuple[float, float]:
    """Steps/s and complete games/s of random legal play: the best of `repeats` timed runs.

    The machine is shared, so the best run is the one least disturbed by other processes.
    """
    engine, rng = warmed_up(players, batch, seed)
    return max(timed_run(engine, rng, seconds / repeats) for _ in range(repeats))


def warmed_up(players: int, batch: int, seed: int = 0) -> tuple[SkyjoEngine, np.random.Generator]:
    """An engine of `batch` games after 20 random steps, and the generator that drew them."""
    engine = SkyjoEngine(Rules(num_players=players), batch, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        engine.step(sample_bits(engine.legal_bits(), rng), check=False)
    return engine, rng


def timed_run(
    engine: SkyjoEngine, rng: np.random.Generator, seconds: float, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, float]:
    """Steps/s and complete games/s of random legal play for about `seconds` by `clock`."""
    steps = games = 0
    start = clock()
    while (elapsed := clock() - start) < seconds:
        for _ in range(50):
            result = engine.step(sample_bits(engine.legal_bits(), rng), check=False)
            games += int(result.game_over.sum())
        steps += 50 * engine.batch_size
    return steps / elapsed, games / elapsed


def memory_per_game(players: int, batch: int = 1024) -> float:
    """Bytes per game of the numpy arrays the engine holds, its helper objects' included (not views)."""
    engine, _ = warmed_up(players, batch)
    owned: dict[int, int] = {}

    def collect(value: object, depth: int) -> None:
        if isinstance(value, np.ndarray):
            if value.base is None:
                owned[id(value)] = value.nbytes
        elif depth and isinstance(value, dict):
            for item in value.values():
                collect(item, depth - 1)
        elif depth and hasattr(value, "__dict__"):
            for item in vars(value).values():
                collect(item, depth - 1)

    collect(engine, 4)
    return sum(owned.values()) / batch


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


def serve() -> None:
    """Worker of `--compare`: answer each line `players batch seconds` with the steps per second
    of CPU time of one timed run (other processes' load then counts less), on an engine kept per
    (players, batch) between requests."""
    engines: dict[tuple[int, int], tuple[SkyjoEngine, np.random.Generator]] = {}
    print(Path(sys.modules["skyjo_env"].__file__ or "").parent, flush=True)  # which tree answers
    for line in sys.stdin:
        players, batch, seconds = line.split()
        size = int(players), int(batch)
        if size not in engines:
            engines[size] = warmed_up(*size)
        print(timed_run(*engines[size], float(seconds), time.process_time)[0], flush=True)


def compare(rev: str, seconds: float, repeats: int) -> None:
    """A/B of this tree's engine (new) against the one at git revision `rev` (base), in one run."""
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
    sizes = [(players, batch) for players in PLAYERS for batch in BATCHES]
    runs: dict[tuple[int, int], dict[str, list[float]]] = {size: {"base": [], "new": []} for size in sizes}
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    with tempfile.TemporaryDirectory() as base:
        subprocess.run(["tar", "-x", "-C", base], input=archive, check=True)
        for repeat in range(repeats):
            # Fresh workers each repeat (a process's memory layout favours or hinders it for its
            # lifetime), both on one CPU, the next one every two repeats (a busier CPU slows both).
            workers = {name: start_worker(tree) for name, tree in (("base", Path(base)), ("new", ROOT))}
            for name, worker in workers.items():
                tree = ask(worker, "")
                if repeat == 0:
                    print(f"{name}: skyjo_env from {tree}")
                if cpus:
                    os.sched_setaffinity(worker.pid, {cpus[repeat // 2 % len(cpus)]})
            for players, batch in sizes:
                for name in ("base", "new") if repeat % 2 == 0 else ("new", "base"):  # each goes first in turn
                    runs[players, batch][name].append(float(ask(workers[name], f"{players} {batch} {seconds}")))
            for worker in workers.values():
                worker.communicate("")
    print(f"\nrevision {rev} (base) against the working tree (new), {repeats} pairs of {seconds} CPU s runs per size")
    print(f"{'players':>7} {'batch':>6} {'base steps/s':>14} {'new steps/s':>14} {'new/base':>9}  middle half, all")
    for (players, batch), run in runs.items():
        ratios = [n / b for n, b in zip(run["new"], run["base"])]
        low, median, high = statistics.quantiles(ratios, n=4)
        print(
            f"{players:>7} {batch:>6} {statistics.median(run['base']):>14,.0f} {statistics.median(run['new']):>14,.0f}"
            f" {median:>9.3f}  {low:.3f}..{high:.3f}, {min(ratios):.3f}..{max(ratios):.3f}"
        )


def start_worker(tree: Path) -> subprocess.Popen:
    """This script in `--serve` mode, importing `skyjo_env` from `tree`."""
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--serve"], cwd=tree, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(tree)},
    )  # fmt: skip


def ask(worker: subprocess.Popen, request: str) -> str:
    """Send a worker one request line (none: read its greeting) and return its answer line."""
    assert worker.stdin is not None and worker.stdout is not None
    if request:
        worker.stdin.write(request + "\n")
        worker.stdin.flush()
    return worker.stdout.readline().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=None, help="time per measurement (2; 0.3 CPU s with --compare)"
    )
    parser.add_argument("--peer", action="store_true", help="also measure rlskyjo's engine")
    parser.add_argument("--compare", metavar="REV", help="A/B against the engine at git revision REV")
    parser.add_argument("--repeats", type=int, default=12, help="pairs of measurements per size with --compare")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve()
    if args.compare:
        if args.repeats < 2:
            parser.error("--repeats must be at least 2")
        return compare(args.compare, args.seconds or 0.3, args.repeats)
    args.seconds = args.seconds or 2.0

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
