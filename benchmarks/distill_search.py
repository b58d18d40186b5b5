"""How much of search's gain a network fitted to its rollouts keeps: held-out rollout gain per position.

Search (over a network base, by default the shipped `ppo-{P}p`) plays one seat of every game against
copies of `--against`; at each of its decisions the script records the base's logits and, for each of
search's candidates, the rollouts' mean paired gain over the base's choice (round points) and its
standard error (a candidate dropped at the screening: over its screening samples). A copy of the base's
actor is then fitted (cross-entropy, Adam) to `softmax(logits + gain / tau - (error / tau)^2 / 2)` over the
candidates (the last term keeps noisy gains from inflating the runners-up: the mean of exp(noise / tau)
exceeds 1) on all positions but the `--held-out` share, which values the fit: the divergence from the
targets before and after, and the rollouts' gain per position of the moves the fitted network changes
(the base's own choice gains 0; a move outside the candidates counts 0). `--out` saves the fitted network.

    python benchmarks/distill_search.py --players 4 --positions 40000 --samples 32 --workers 2 --seed 7
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from skyjo_env import agents
from skyjo_env.agents.advice import with_advice
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.agents.search import default_base, paired_gains
from skyjo_env.learner_games import LearnerGames
from skyjo_env.observation import obs_size
from skyjo_env.rules import Rules
from skyjo_env.train.networks import ACTIVATIONS, masked_distribution

FIELDS = ("inputs", "masks", "logits", "candidates", "gain", "error")


def collect(players: int, base: str, against: str, samples: int, games: int, steps: int, seed: int) -> dict:
    """`games * steps` positions of search (its seat) against `against`, with the base's network inputs."""
    rules = Rules(num_players=players)
    with threadpool_limits(1):
        search = agents.make("search", players=players, base=base, samples=samples, seed=seed)
        network = search.base
        table = LearnerGames(games, rules, opponents=[agents.make(against, players=players)], seed=seed)
        obs = table.reset()
        record: dict[str, list[np.ndarray]] = {k: [] for k in FIELDS}
        for _ in range(steps):
            masks = table.action_masks()
            decided = search.decide(obs, masks)
            rows, candidates, alive = decided.rows, decided.candidates[decided.rows], decided.alive
            full, full_error = paired_gains(decided.values)
            screened, screened_error = paired_gains(decided.values[:, :, : search.screen or search.samples])
            gain, error = np.zeros(decided.candidates.shape), np.zeros(decided.candidates.shape)
            gain[rows] = np.where(alive, full, np.where(candidates >= 0, screened, 0))
            error[rows] = np.where(alive, full_error, np.where(candidates >= 0, screened_error, 0))
            inputs = with_advice(network.advice, obs, masks, rules) if network.advice else obs
            for key, array in zip(FIELDS, (inputs, masks, network.logits(obs, masks), decided.candidates, gain, error)):
                record[key].append(np.array(array))
            obs, *_ = table.step(decided.actions)
    return {k: np.concatenate(a) for k, a in record.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--base", default=None, help="search's base, a network (default: ppo-{P}p)")
    parser.add_argument("--against", default="counting", help="the other seats' agent spec")
    parser.add_argument("--positions", type=int, default=40_000, help="positions recorded (in all)")
    parser.add_argument("--games", type=int, default=200, help="games played together per worker")
    parser.add_argument("--samples", type=int, default=32, help="search's samples per decision")
    parser.add_argument("--tau", type=float, default=2.0, help="points per logit of the targets' shift")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--held-out", type=float, default=0.1, help="share of positions that value the fit")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="save the fitted network here (.npz)")
    args = parser.parse_args()
    if min(args.positions, args.games, args.workers, args.epochs) < 1 or not 0 < args.held_out < 1 or args.tau <= 0:
        parser.error("--positions, --games, --workers, --epochs and --tau must be positive, --held-out in (0, 1)")
    base = args.base or default_base(Rules(num_players=args.players))
    network = agents.make(base, players=args.players)
    if not isinstance(network, MLPPolicy) or network.obs_size != obs_size("table", args.players):
        parser.error(f"--base {base!r} is not a network of {args.players}-player table observations")
    if args.out and not Path(args.out).parent.is_dir():
        parser.error(f"--out {args.out!r}: no folder {str(Path(args.out).parent)!r}")
    steps = -(-args.positions // (args.games * args.workers))
    started = time.perf_counter()
    jobs = [
        (args.players, base, args.against, args.samples, args.games, steps, args.seed + k) for k in range(args.workers)
    ]
    with ProcessPoolExecutor(args.workers) as pool:
        parts = list(pool.map(collect, *zip(*jobs)))
    data = {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}
    n = len(data["masks"])
    print(f"{n} positions of {args.players}p search ({args.samples} samples, base {base}) vs {args.against} "
          f"in {time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip

    torch.manual_seed(args.seed)
    x, masks = torch.as_tensor(data["inputs"], dtype=torch.float32), torch.as_tensor(data["masks"])
    logits = torch.as_tensor(data["logits"], dtype=torch.float32).masked_fill(~masks, -1e9)
    rows, cols = np.nonzero(data["candidates"] >= 0)
    shift = torch.zeros_like(logits)  # the rollouts' gain of each candidate, in points; 0 elsewhere
    shift[rows, data["candidates"][rows, cols]] = torch.as_tensor(data["gain"][rows, cols], dtype=torch.float32)
    noise = torch.zeros_like(logits)
    noise[rows, data["candidates"][rows, cols]] = torch.as_tensor(data["error"][rows, cols], dtype=torch.float32)
    targets = torch.softmax(logits + shift / args.tau - (noise / args.tau) ** 2 / 2, dim=1)
    base_choice = logits.argmax(dim=1)
    order = torch.randperm(n)
    held, fit = order[: int(args.held_out * n)], order[int(args.held_out * n) :]
    activation = ACTIVATIONS[network.activation]
    layers: list[torch.nn.Module] = []
    for i, (w, b) in enumerate(network.weights):
        linear = torch.nn.Linear(*w.shape)
        linear.weight.data, linear.bias.data = torch.tensor(w.T.copy()), torch.tensor(b.copy())
        layers += [linear] + ([activation()] if i < len(network.weights) - 1 else [])
    net = torch.nn.Sequential(*layers)

    def held_out() -> str:
        with torch.no_grad():
            log_p, p = masked_distribution(net(x[held]), masks[held])
        divergence = (targets[held] * (torch.log(targets[held] + 1e-12) - log_p)).sum(1).mean()
        moves = p.argmax(dim=1)
        changed = (moves != base_choice[held]).float().mean()
        gain = shift[held].gather(1, moves[:, None]).mean()
        return f"divergence {divergence:.4f}, moves changed {changed:.4f}, gain {gain:+.4f} points per position"

    print(f"held out ({len(held)}), before: {held_out()}", flush=True)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    for epoch in range(args.epochs):
        for batch in fit[torch.randperm(len(fit))].split(512):
            log_p, _ = masked_distribution(net(x[batch]), masks[batch])
            loss = -(targets[batch] * log_p).sum(1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"held out, epoch {epoch + 1}: {held_out()}", flush=True)
    if args.out:
        weights = [(m.weight.data.numpy().T.copy(), m.bias.data.numpy().copy())
                   for m in net if isinstance(m, torch.nn.Linear)]  # fmt: skip
        MLPPolicy(weights, network.activation, name="distilled", metadata=network.metadata, advice=network.advice).save(
            args.out
        )


if __name__ == "__main__":
    main()
