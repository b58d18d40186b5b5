"""Sampled environment steps per second of the RLlib backend with 1 and 2 EnvRunners.

Builds the PPO algorithm of :mod:`skyjo_env.train.rllib_ppo` on a local Ray and times
``env_runner_group.sample()`` rounds (no learning): each round every EnvRunner steps its
environments, computing actions with the masked RLModule, until it has its share of the batch.
Steps count every seat's actions. Needs the ``distributed`` extra.

    python -m benchmarks.rllib_sampling [--players 2] [--runners 1 2] [--envs-per-runner 8] [--seconds 20]
"""

from __future__ import annotations

import argparse
import time

import ray
from ray.tune.registry import register_env

from skyjo_env.train.rllib_ppo import ENV_NAME, build_config, make_env
from skyjo_env.train.rllib_run import RLlibRun


def steps_per_second(players: int, runners: int, envs_per_runner: int, batch: int, seconds: float) -> tuple[float, int]:
    """Sampled env steps/s and steps timed, after one warm-up round, over at least ``seconds``."""
    run = RLlibRun(
        players=players,
        env_runners=runners,
        envs_per_runner=envs_per_runner,
        train_batch_size=batch,
        batch_size=batch,
    )
    algo = build_config(run).build_algo()
    try:
        group = algo.env_runner_group

        def sample() -> None:
            group.foreach_env_runner(lambda r: r.sample(num_timesteps=batch // runners), local_env_runner=False)

        sample()  # warm-up: first episodes, module compilation
        steps, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            episodes = [e for per_runner in sample() for e in per_runner]
            steps += sum(e.env_steps() for e in episodes)
        return steps / (time.perf_counter() - started), steps
    finally:
        algo.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2], help="EnvRunner counts to time")
    parser.add_argument("--envs-per-runner", type=int, default=8)
    parser.add_argument("--batch", type=int, default=4000, help="env steps per sampling round, all runners together")
    parser.add_argument("--seconds", type=float, default=20.0, help="time per runner count (at least)")
    args = parser.parse_args(argv)
    register_env(ENV_NAME, make_env)
    ray.init(num_cpus=max(args.runners) + 1, include_dashboard=False, object_store_memory=512 * 1024**2)
    try:
        print(f"{args.players} players, {args.envs_per_runner} envs per EnvRunner, {args.batch} steps per round")
        for runners in args.runners:
            rate, steps = steps_per_second(args.players, runners, args.envs_per_runner, args.batch, args.seconds)
            print(f"env_runners={runners}: {rate:,.0f} env steps/s ({steps} steps)")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
