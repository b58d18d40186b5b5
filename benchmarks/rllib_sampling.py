"""The RLlib backend's throughput: sampled learner steps/s per EnvRunner, and training steps/s against sb3.

Two measurements, in one run, on a local Ray (the ``distributed`` extra):

* **Sampling**, no learning: ``--runners`` EnvRunners sample rollouts again and again for
  ``--seconds``; learner steps per second per EnvRunner, for

  - the **vector path** (the backend's): `SkyjoEnvRunner` steps
    the main job's games (512 per EnvRunner, counting opponents, counting's advice) in batch;
  - the **AEC path** (the backend before): RLlib's stock ``MultiAgentEnvRunner`` steps the PettingZoo
    AEC env (``--aec-envs`` games per EnvRunner), one seat's move at a time, every seat the learner
    (shared self-play; every move a learner step).

* **Training** (``--steps`` > 0): the main job's recipe from scratch (no warm start, no evaluation)
  for ``--steps`` learner steps, with sb3 (``ppo.Run.learn``) and with RLlib on one EnvRunner
  (``rllib_ppo.RLlibRun.learn``), each in a process of its own; steps per second of the learning
  phase and their ratio.

    python benchmarks/rllib_sampling.py [--runners 1 2] [--seconds 20] [--steps 1000000]

Wall-clock figures on a shared machine: run it on an idle one and compare within a run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from typing import Any

import gymnasium
import numpy as np
import ray
from pettingzoo.utils import BaseWrapper
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.pettingzoo_env import raw_env
from skyjo_env.train import rllib_ppo
from skyjo_env.train.config import TrainConfig
from skyjo_env.train.rllib_env import ENV_NAME, make_env

AEC_ENV = "skyjo_aec"

# Runs in a child process: sys.argv = [backend, steps, out]. Prints {"steps", "seconds"} of the learning phase.
TRAIN = r"""
import json, sys, time
from skyjo_env.train.config import TrainConfig
backend, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
config = TrainConfig(total_timesteps=steps, warm_start=None, eval_every=0, checkpoint_every=0, time_limit_minutes=None,
                     out_dir=out)
quiet = dict(overwrite=True, progress=False, say=lambda _: None)
from skyjo_env.train.runs import one_thread  # as train() runs them: torch and BLAS on one thread while games play
if backend == "sb3":
    from skyjo_env.train.ppo import Run
    with one_thread():
        run = Run(config, None, **quiet)
        started = time.perf_counter(); run.learn(); seconds = time.perf_counter() - started
    made = int(run.model.num_timesteps)
else:
    from skyjo_env.train import rllib_ppo
    with rllib_ppo.ray_session(None, config.env_runners + 1), one_thread():
        run = rllib_ppo.RLlibRun(config, None, **quiet)
        try:
            started = time.perf_counter(); run.learn(); seconds = time.perf_counter() - started
        finally:
            run.algo.stop()
    made = run.timesteps
print(json.dumps({"steps": made, "seconds": seconds}))
"""


class FlatObservations(BaseWrapper):
    """The AEC env with each observation flattened as the backend's module reads it: the table
    observation, then the action mask."""

    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        inner = self.env.observation_space(agent)["observation"]
        low = np.concatenate([inner.low, np.zeros(NUM_ACTIONS, np.float32)])
        high = np.concatenate([inner.high, np.ones(NUM_ACTIONS, np.float32)])
        return gymnasium.spaces.Box(low, high, dtype=np.float32)

    def observe(self, agent: str) -> np.ndarray:
        obs = self.env.observe(agent)
        return np.concatenate([obs["observation"], obs["action_mask"].astype(np.float32)])


def make_aec_env(config: dict[str, Any]) -> PettingZooEnv:
    return PettingZooEnv(FlatObservations(raw_env(num_players=2, reward="score")))


def sampler(path: str, runners: int, aec_envs: int) -> Any:
    """The PPO algorithm whose EnvRunners sample for ``path`` ("vector" or "aec")."""
    config = rllib_ppo.build_config(TrainConfig(env_runners=runners, out_dir="unused"))
    if path == "aec":
        spec = rllib_ppo.module_spec(TrainConfig(advice=None, out_dir="unused"))
        config = (
            config.environment(AEC_ENV, env_config={}, disable_env_checking=True)
            .env_runners(
                env_runner_cls=None,
                num_envs_per_env_runner=aec_envs,
                gym_env_vectorize_mode="sync",
                rollout_fragment_length="auto",
            )  # fmt: skip
            .multi_agent(policies={"main"}, policy_mapping_fn=lambda agent, episode, **kwargs: "main")
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"main": spec}))
        )
    return config.build_algo()


def sampling_rate(path: str, runners: int, aec_envs: int, seconds: float) -> float:
    """Learner steps per second per EnvRunner, after one warm-up round, over at least ``seconds``."""
    algo = sampler(path, runners, aec_envs)
    rollout = 512 * 32 if path == "vector" else 2048
    try:
        group = algo.env_runner_group

        def sample() -> int:
            chunks = group.foreach_env_runner(lambda r: r.sample(num_timesteps=rollout, explore=True),
                                              local_env_runner=False)  # fmt: skip
            return sum(e.env_steps() if hasattr(e, "env_steps") else len(e) for per in chunks for e in per)

        sample()  # warm-up: the first deals, the module's first passes
        steps, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            steps += sample()
        return steps / (time.perf_counter() - started) / runners
    finally:
        algo.stop()


def training_rate(backend: str, steps: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([sys.executable, "-c", TRAIN, backend, str(steps), out], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{backend} training failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runners", type=int, nargs="+", default=[1], help="EnvRunner counts to sample with")
    parser.add_argument("--aec-envs", type=int, default=32, help="AEC games per EnvRunner (batched forward passes)")
    parser.add_argument("--seconds", type=float, default=20.0, help="sampling time per path and runner count")
    parser.add_argument("--steps", type=int, default=1_000_000, help="learner steps of each training (0: none)")
    args = parser.parse_args(argv)
    register_env(ENV_NAME, make_env)
    register_env(AEC_ENV, make_aec_env)
    ray.init(num_cpus=max(args.runners) + 1, include_dashboard=False, object_store_memory=512 * 1024**2)
    try:
        print("sampling, learner steps/s per EnvRunner (2 players):")
        for runners in args.runners:
            for path, label in (("vector", "vector path (SkyjoEnvRunner, 512 games, counting + advice)"),
                                ("aec", f"AEC path (stock MultiAgentEnvRunner, {args.aec_envs} games, self-play)")):  # fmt: skip
                print(
                    f"  {runners} EnvRunner(s), {label}: {sampling_rate(path, runners, args.aec_envs, args.seconds):,.0f}"
                )
    finally:
        ray.shutdown()
    if args.steps:
        sb3, rllib = training_rate("sb3", args.steps), training_rate("rllib", args.steps)
        print(f"training, the main job's recipe from scratch, {args.steps:,} learner steps:")
        for name, r in (("sb3 (MaskablePPO, overlapped update)", sb3), ("rllib (1 EnvRunner, overlapped)", rllib)):
            print(f"  {name}: {r['steps'] / r['seconds']:,.0f} steps/s ({r['steps']:,} steps in {r['seconds']:.1f} s)")
        ratio = (rllib["steps"] / rllib["seconds"]) / (sb3["steps"] / sb3["seconds"])
        print(f"  rllib / sb3: {ratio:.2f}x")


if __name__ == "__main__":
    main()
