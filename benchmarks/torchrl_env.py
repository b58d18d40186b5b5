"""TorchRL env throughput beside the Gymnasium vector env's, in one run: learner steps/s of
``SkyjoTorchRLEnv`` and ``SkyjoVectorEnv`` against random opponents, one thread.

A learner step is as in ``benchmarks/vector_env.py``: one action of the learner in one game, with
the opponents' batched moves up to its next turn and the ended games' new deals. The learner plays
uniformly random legal actions drawn from the ``action_mask`` entry; the TorchRL env is driven as
its collectors drive it, by ``step_and_maybe_reset`` (its partial resets included). Prints the
machine's load average first: on a shared machine the per-CPU-second figure is the steadier one.
Needs the ``torchrl`` extra.

    python benchmarks/torchrl_env.py [--seconds 3] [--players 2] [--sizes 1024]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import numpy as np
import torch
from vector_env import measure

from skyjo_env.sampling import sample_mask
from skyjo_env.torchrl import SkyjoTorchRLEnv


def torchrl_stepper(num_envs: int, players: int) -> Callable[[np.random.Generator], int]:
    """A function that makes one random legal learner step in every game and returns the games ended."""
    env = SkyjoTorchRLEnv(num_envs, num_players=players, seed=0)
    state = env.reset()

    def step(rng: np.random.Generator) -> int:
        nonlocal state
        state.set("action", torch.from_numpy(sample_mask(state["action_mask"].numpy(), rng)))
        data, state = env.step_and_maybe_reset(state)
        return int(data["next", "done"].sum())

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per measurement")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096], help="numbers of games N")
    args = parser.parse_args()
    torch.set_num_threads(1)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.players} players, random opponents; load average {load} on {os.cpu_count()} CPUs")
    print(f"{'view':<28} {'N':>6} {'learner steps/s':>16} {'per CPU s':>12} {'games/s':>10}")
    for n in args.sizes:
        for name, step in (
            ("SkyjoTorchRLEnv (TorchRL)", torchrl_stepper(n, args.players)),
            ("SkyjoVectorEnv (Gymnasium)", None),
        ):
            steps, per_cpu, games = measure(n, args.players, args.seconds, gym=True, step=step)
            print(f"{name:<28} {n:>6} {steps:>16,.0f} {per_cpu:>12,.0f} {games:>10,.1f}")


if __name__ == "__main__":
    main()
