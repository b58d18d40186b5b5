"""Masked PPO on Skyjo with TorchRL's own parts: SkyjoTorchRLEnv, Collector, GAE and ClipPPOLoss.

The learner plays 2-player games against `threshold` (agents.make("threshold")) in 256 games at
once, learning from the round-score difference (reward "score"); its policy is a MaskedCategorical
over the env's `action_mask`. Every `--eval-every` batches the actor, wrapped as a batched numpy
policy, plays `threshold` head to head in the project's tournament; training stops once the lower
end of its win rate's 95% interval is above 0.5 (or after `--frames` steps), and a final
tournament of `--games` games measures it. Needs the `torchrl` extra: pip install "skyjo-env[torchrl]".

    python docs/examples/torchrl_ppo.py [--frames 2000000] [--games 2000] [--eval-every 8]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector  # SyncDataCollector before torchrl 0.14
from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

from skyjo_env import agents
from skyjo_env.evaluation.tournament import run_tournament
from skyjo_env.torchrl import SkyjoTorchRLEnv


def mlp(inputs: int, outputs: int, hidden: int = 128) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, outputs)
    )


class TorchPolicy:
    """The trained actor as a project policy: `(observations (N, D), masks (N, 26)) -> actions (N,)`, greedy."""

    name = "torchrl-ppo"
    players = 2  # trained at 2-player tables (the tournament refuses other sizes)

    def __init__(self, logits: nn.Module) -> None:
        self.logits = logits

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = self.logits(torch.from_numpy(observations))
        logits = logits.masked_fill(~torch.from_numpy(masks), float("-inf"))
        return logits.argmax(dim=-1).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2_000_000, help="learner steps to train on")
    parser.add_argument("--games", type=int, default=2000, help="tournament games against threshold")
    parser.add_argument("--eval-every", type=int, default=8, help="batches between evaluations (400 games)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    env = SkyjoTorchRLEnv(256, opponents=agents.make("threshold"), reward="score", reward_scale=0.05, seed=args.seed)
    obs_size = env.observation_spec["observation"].shape[-1]
    logits = mlp(obs_size, 26)
    actor = ProbabilisticActor(
        TensorDictModule(logits, in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"},  # MaskedCategorical(logits=..., mask=...)
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    critic = ValueOperator(mlp(obs_size, 1), in_keys=["observation"])
    frames_per_batch = 256 * 64
    collector = Collector(env, actor, frames_per_batch=frames_per_batch, total_frames=args.frames)
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=critic, average_gae=True)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5)
    optimizer = torch.optim.Adam(loss.parameters(), lr=1e-3)
    buffer = ReplayBuffer(
        storage=LazyTensorStorage(frames_per_batch), sampler=SamplerWithoutReplacement(), batch_size=1024
    )

    started = time.perf_counter()
    frames = 0
    policy = TorchPolicy(logits)
    for iteration, batch in enumerate(collector, 1):
        frames += batch.numel()
        with torch.no_grad():
            advantage(batch)
        buffer.extend(batch.reshape(-1))
        for _ in range(4):  # epochs
            for _ in range(frames_per_batch // buffer.batch_size):
                parts = loss(buffer.sample())
                total = parts["loss_objective"] + parts["loss_critic"] + parts["loss_entropy"]
                optimizer.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimizer.step()
        ended = batch["next", "done"]
        mean_round = batch["next", "reward"][batch["next", "reward"] != 0].mean().item() / 0.05
        print(
            f"{frames:>9,} steps  {time.perf_counter() - started:6.0f} s  games ended {int(ended.sum()):>4}  "
            f"round-score lead {mean_round:+.2f}"
        )
        if iteration % args.eval_every == 0 and beats_threshold(policy, 400, seed=iteration):
            break
    collector.shutdown()
    print(f"trained on {frames:,} learner steps in {time.perf_counter() - started:.0f} s")
    beats_threshold(policy, args.games, seed=1)


def beats_threshold(policy: TorchPolicy, games: int, seed: int) -> bool:
    """Whether `policy` beats `threshold` head to head over `games` 2-player games (the lower end of
    its win rate's 95% interval above 0.5); prints both agents' figures."""
    result = run_tournament([policy, agents.make("threshold")], players=2, games=games, seed=seed, progress=False)
    for agent in result.agents:
        low, high = agent.win_ci
        print(
            f"  {agent.name:>12}: win rate {agent.win_rate:.3f} ({low:.3f}-{high:.3f}) over {result.games} games, "
            f"mean round score {agent.mean_round_score:.2f}"
        )
    return result.agents[0].win_ci[0] > 0.5


if __name__ == "__main__":
    main()
