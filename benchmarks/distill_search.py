"""Distil search into its base network: fit a copy of the network to search's play and measure what it keeps.

Search (over a network base, by default the shipped `ppo-{P}p`) plays one seat of every game against
copies of `--against`; at each of its decisions the script records the base's inputs and logits, search's
move and, for each of its candidates, the rollouts' mean paired gain over the base's choice (search's value
units) and its standard error (a candidate dropped at the screening: over its screening samples).
`--save` keeps these positions (`.npz`); `--load` fits from saved ones instead of playing.

A copy of the base's actor is then fitted (cross-entropy, Adam) on all positions but the `--held-out`
share to one of two `--targets`:

- `gains`: `softmax(logits + gain / tau - (error / tau)^2 / 2)` over the candidates (the last term keeps
  noisy gains from inflating the runners-up: the mean of exp(noise / tau) exceeds 1);
- `choices`: where search leaves the base's choice, search's move (those positions weighted
  `--departure-weight`); elsewhere the base's own distribution, so that the fit keeps the base there.

The held-out positions value the fit: the divergence from the targets, the moves it changes, the share
of search's departures it plays and of the base's kept moves it changes, and the rollouts' gain per
position of its moves (the base's own choice gains 0; a move outside the candidates counts 0; search's own
beside it). `--out` saves the fitted network (`.npz`, an agent spec of its own).

    python benchmarks/distill_search.py --players 4 --positions 40000 --samples 32 --workers 2 --seed 7
    python benchmarks/distill_search.py --players 2 --positions 500000 --games 500 --workers 2 --seed 2000 --save s1.npz
    python benchmarks/distill_search.py --load s1.npz s2.npz --targets choices --out distilled.npz
"""

from __future__ import annotations

import argparse
import io
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from skyjo_env import agents
from skyjo_env.agents.advice import with_advice
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.agents.search import default_base, paired_gains
from skyjo_env.files import write_file
from skyjo_env.learner_games import LearnerGames
from skyjo_env.observation import obs_size
from skyjo_env.rules import Rules
from skyjo_env.train.networks import ACTIVATIONS, masked_distribution

FIELDS = ("inputs", "masks", "logits", "candidates", "gain", "error", "actions")
TARGETS = ("gains", "choices")


def collect(players: int, base: str, against: str, samples: int, games: int, steps: int, seed: int) -> dict:
    """`games * steps` positions of search (its seat) against `against`, with the base's network inputs."""
    rules = Rules(num_players=players)
    with threadpool_limits(1):
        search = agents.make("search", players=players, base=base, samples=samples, seed=seed)
        network = search.base
        table = LearnerGames(games, rules, opponents=[agents.make(against, players=players, seed=seed)], seed=seed)
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
            arrays = (inputs, masks, network.logits(obs, masks), decided.candidates, gain, error, decided.actions)
            for key, array in zip(FIELDS, arrays):
                record[key].append(np.array(array))
            obs, *_ = table.step(decided.actions)
    return {k: np.concatenate(a) for k, a in record.items()}


def targets_of(
    data: dict, left: torch.Tensor, shift: torch.Tensor, kind: str, tau: float, departure_weight: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """`(targets (n, 26), weights (n,))` the fit's action distribution and weight per position, given the
    positions where search `left` the base's choice and the candidates' gains `shift` ([`candidate_arrays()`][])."""
    masks = torch.as_tensor(data["masks"])
    logits = torch.as_tensor(data["logits"], dtype=torch.float32).masked_fill(~masks, -1e9)
    weights = torch.ones(len(logits))
    if kind == "choices":
        targets = torch.softmax(logits, dim=1)
        targets[left] = torch.nn.functional.one_hot(torch.as_tensor(data["actions"])[left], logits.shape[1]).float()
        weights[left] = departure_weight
        return targets, weights
    noise = candidate_arrays(data, "error")
    return torch.softmax(logits + shift / tau - (noise / tau) ** 2 / 2, dim=1), weights


def candidate_arrays(data: dict, key: str) -> torch.Tensor:
    """`(n, 26)` the candidates' `key` (`gain` or `error`) at their action ids; 0 elsewhere."""
    out = torch.zeros(data["masks"].shape)
    rows, cols = np.nonzero(data["candidates"] >= 0)
    out[rows, data["candidates"][rows, cols]] = torch.as_tensor(data[key][rows, cols], dtype=torch.float32)
    return out


def actor_of(network: MLPPolicy) -> torch.nn.Sequential:
    """A torch copy of `network`'s layers."""
    activation = ACTIVATIONS[network.activation]
    layers: list[torch.nn.Module] = []
    for i, (w, b) in enumerate(network.weights):
        linear = torch.nn.Linear(*w.shape)
        linear.weight.data, linear.bias.data = torch.tensor(w.T.copy()), torch.tensor(b.copy())
        layers += [linear] + ([activation()] if i < len(network.weights) - 1 else [])
    return torch.nn.Sequential(*layers)


def saved(path: str) -> dict | None:
    """The positions of one `--save` file, with its `players` and `base`; `None` if it is not one."""
    try:
        with np.load(path, allow_pickle=False) as file:
            data = {k: file[k] for k in file.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        return None
    return data if {"players", "base", *FIELDS} <= data.keys() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--base", default=None, help="search's base, a network (default: ppo-{P}p)")
    parser.add_argument("--against", default="counting", help="the other seats' agent spec")
    parser.add_argument("--positions", type=int, default=40_000, help="positions recorded (in all)")
    parser.add_argument("--games", type=int, default=200, help="games played together per worker")
    parser.add_argument("--samples", type=int, default=32, help="search's samples per decision")
    parser.add_argument("--save", default=None, help="keep the recorded positions in this .npz file")
    parser.add_argument("--load", nargs="+", default=None, help="fit to positions saved before (no play)")
    parser.add_argument("--targets", choices=TARGETS, default="gains", help="what the network is fitted to")
    parser.add_argument("--tau", type=float, default=2.0, help="gains: points per logit of the targets' shift")
    parser.add_argument("--departure-weight", type=float, default=1.0, help="choices: weight of search's departures")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--held-out", type=float, default=0.1, help="share of positions that value the fit")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="save the fitted network here (.npz)")
    args = parser.parse_args()
    if min(args.positions, args.games, args.workers, args.epochs) < 1 or not 0 < args.held_out < 1:
        parser.error("--positions, --games, --workers and --epochs must be positive, --held-out in (0, 1)")
    if args.tau <= 0 or args.departure_weight <= 0:
        parser.error("--tau and --departure-weight must be positive")
    for path in (args.out, args.save):
        if path and not Path(path).parent.is_dir():
            parser.error(f"{path!r}: no folder {str(Path(path).parent)!r}")
    started = time.perf_counter()
    if args.load:
        missing = [p for p in args.load if not Path(p).is_file()]
        if missing:
            parser.error(f"--load: no file {missing[0]!r}")
        loaded = {p: saved(p) for p in args.load}
        wrong = [p for p, data in loaded.items() if data is None]
        if wrong:
            parser.error(f"--load: {wrong[0]!r} is not a file of positions written by --save")
        parts = [data for data in loaded.values() if data is not None]
        setups = {(int(p["players"]), str(p["base"])) for p in parts}
        if len(setups) > 1:
            parser.error(f"--load: files of different tables or bases {sorted(setups)}")
        players, base = setups.pop()
    else:
        players = args.players
        base = args.base or default_base(Rules(num_players=players))
    network = agents.make(base, players=players)
    if not isinstance(network, MLPPolicy) or network.obs_size != obs_size("table", players):
        parser.error(f"--base {base!r} is not a network of {players}-player table observations")
    if not args.load:
        steps = -(-args.positions // (args.games * args.workers))
        jobs = [
            (players, base, args.against, args.samples, args.games, steps, args.seed + k) for k in range(args.workers)
        ]
        with ProcessPoolExecutor(args.workers) as pool:
            parts = list(pool.map(collect, *zip(*jobs)))
    data = {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}
    n = len(data["masks"])
    base_choice = np.where(data["masks"], data["logits"], -np.inf).argmax(axis=1)
    left = data["actions"] != base_choice
    print(f"{n} positions of {players}p search (base {base}), {left.mean():.4f} leave the base's choice, "
          f"{'loaded' if args.load else f'played against {args.against} in {time.perf_counter() - started:.0f} s'}",
          flush=True)  # fmt: skip
    if args.save:
        buffer = io.BytesIO()
        np.savez(buffer, players=players, base=base, **data)
        write_file(args.save, buffer.getvalue())

    torch.manual_seed(args.seed)
    x, masks = torch.as_tensor(data["inputs"], dtype=torch.float32), torch.as_tensor(data["masks"])
    shift = candidate_arrays(data, "gain")
    targets, weights = targets_of(data, torch.as_tensor(left), shift, args.targets, args.tau, args.departure_weight)
    order = torch.randperm(n)
    held, fit = order[: int(args.held_out * n)], order[int(args.held_out * n) :]
    kept, moved, searched = (torch.as_tensor(a)[held] for a in (base_choice, left, data["actions"]))
    search_gain = shift[held].gather(1, searched[:, None]).mean()
    net = actor_of(network)

    def held_out() -> str:
        with torch.no_grad():
            log_p, p = masked_distribution(net(x[held]), masks[held])
        divergence = (targets[held] * (torch.log(targets[held] + 1e-12) - log_p)).sum(1).mean()
        moves = p.argmax(dim=1)
        played = (moves[moved] == searched[moved]).float().mean()
        changed = (moves[~moved] != kept[~moved]).float().mean()
        gain = shift[held].gather(1, moves[:, None]).mean()
        return (f"divergence {divergence:.4f}, moves changed {(moves != kept).float().mean():.4f}, "
                f"departures played {played:.3f}, kept moves changed {changed:.4f}, "
                f"gain {gain:+.4f} per position (search {search_gain:+.4f})")  # fmt: skip

    print(f"held out ({len(held)}, {int(moved.sum())} departures), before: {held_out()}", flush=True)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    for epoch in range(args.epochs):
        for batch in fit[torch.randperm(len(fit))].split(512):
            log_p, _ = masked_distribution(net(x[batch]), masks[batch])
            loss = (-(targets[batch] * log_p).sum(1) * weights[batch]).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"held out, epoch {epoch + 1}: {held_out()}", flush=True)
    if args.out:
        layers = [
            (m.weight.data.numpy().T.copy(), m.bias.data.numpy().copy()) for m in net if isinstance(m, torch.nn.Linear)
        ]
        MLPPolicy(layers, network.activation, name="distilled", metadata=network.metadata, advice=network.advice).save(
            args.out
        )


if __name__ == "__main__":
    main()
