"""Vector env throughput: learner steps/s of ``SkyjoSB3VecEnv`` against random opponents, one thread.

A learner step is one action of the learner in one game, with everything ``step`` does for it:
the opponents' batched moves up to the learner's next turn, auto-resets, and the ``(N, obs)``
observations. The learner plays uniformly random legal actions drawn from ``action_masks()``
(sampling and masks included). Prints figures for N = 256, 1024 and 4096, 2 players by default;
``--gym`` measures the Gymnasium view (``SkyjoVectorEnv``, masks read from ``infos``) instead. The SB3 view
needs stable-baselines3 (the ``train`` extra); ``--gym`` needs only the core install.

    python benchmarks/vector_env.py [--seconds 3] [--players 2] [--gym] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import time
from collections.abc import Callable

import numpy as np

from skyjo_env import Rules
from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
from skyjo_env.sampling import sample_mask

SIZES = (256, 1024, 4096)


def stepper(num_envs: int, players: int, gym: bool) -> Callable[[np.random.Generator], int]:
    """A function that makes one random legal learner step in every game and returns the games ended."""
    if gym:
        env = SkyjoVectorEnv(num_envs, num_players=players)
        info = env.reset(seed=0)[1]

        def step(rng: np.random.Generator) -> int:
            nonlocal info
            _, _, terminations, truncations, info = env.step(sample_mask(info["action_mask"], rng))
            return int(terminations.sum() + truncations.sum())

        return step
    from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv

    vec = SkyjoSB3VecEnv(num_envs, Rules(num_players=players), seed=0)
    vec.reset()
    return lambda rng: int(vec.step(sample_mask(vec.action_masks(), rng))[2].sum())


def measure(
    num_envs: int,
    players: int,
    seconds: float,
    gym: bool = False,
    repeats: int = 3,
    step: Callable[[np.random.Generator], int] | None = None,
) -> tuple[float, float, float]:
    """Learner steps per second of wall time and of CPU time, and games/s: the best of ``repeats`` runs
    of ``step`` (default: the view's ``stepper()``).

    On a shared machine the CPU-time rate is the steadier figure: it leaves out time spent waiting
    for a core.
    """
    step = stepper(num_envs, players, gym) if step is None else step
    rng = np.random.default_rng(0)
    for _ in range(20):  # warm-up
        step(rng)
    best = (0.0, 0.0, 0.0)
    for _ in range(repeats):
        steps = games = 0
        start, cpu = time.perf_counter(), time.process_time()
        while (elapsed := time.perf_counter() - start) < seconds / repeats:
            for _ in range(10):
                games += step(rng)
            steps += 10 * num_envs
        used = time.process_time() - cpu
        best = max(best, (steps / elapsed, steps / used, games / elapsed))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per measurement")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--gym", action="store_true", help="the Gymnasium VectorEnv view instead of the SB3 VecEnv")
    parser.add_argument("--profile", action="store_true", help="cProfile 100 steps at N=4096 instead")
    args = parser.parse_args()
    if not args.gym and importlib.util.find_spec("stable_baselines3") is None:
        parser.error("the SB3 VecEnv needs stable-baselines3: pip install 'skyjo-env[train]', or measure --gym")
    if args.profile:
        from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv

        env = SkyjoSB3VecEnv(4096, Rules(num_players=args.players), seed=0)
        env.reset()
        rng = np.random.default_rng(0)
        with cProfile.Profile() as profile:
            for _ in range(100):
                env.step(sample_mask(env.action_masks(), rng))
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        return
    print(
        f"{'SkyjoVectorEnv (Gymnasium)' if args.gym else 'SkyjoSB3VecEnv (stable-baselines3)'}, {args.players} players, random opponents"
    )
    print(f"{'N':>6} {'learner steps/s':>16} {'per CPU s':>12} {'games/s':>10}")
    for n in SIZES:
        steps, per_cpu, games = measure(n, args.players, args.seconds, args.gym)
        print(f"{n:>6} {steps:>16,.0f} {per_cpu:>12,.0f} {games:>10,.1f}")


if __name__ == "__main__":
    main()
