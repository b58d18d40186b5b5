"""Search's decision rules compared offline: rollouts spent and held-out gain per decision.

Run: ``python benchmarks/search_decisions.py [--base counting] [--players 2] [--decisions 3000]
[--samples 8,16,32] [--held-out 32] [--screens none,4,8,16] [--margins 1.5,2,2.5]``. It plays
``--base`` against itself, keeps decisions of play (no setup flips) with at least two candidates,
and plays every legal candidate of each in ``max(samples) + held-out`` sampled positions
([`positions()`][skyjo_env.agents.search.positions],
[`SearchPolicy.rollouts()`][skyjo_env.agents.search.SearchPolicy.rollouts]). Each rule (sample
budget, screening samples, margin) decides from the first positions as `search` does; the last
``held-out`` positions, unseen by every rule, then value its choice by full rollouts (to the round's
end; a rule may decide from rollouts cut at ``--horizons``): the **held-out gain** is the
chosen candidate's mean gain over the base's choice there (search's value units: round points, or
`win_points` per game result), averaged over every decision with its standard error: a budget /
strength curve in minutes. Rollouts are counted per decision against every candidate playing
every sample of the largest budget (no screening). Games tell strength; this tells, in minutes,
which rules spend less for the same choices (`benchmarks/search.py` plays the games).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from skyjo_env import Rules, SkyjoEngine, agents
from skyjo_env.agents.search import SearchPolicy, chosen, lower_bounds, positions, survivors
from skyjo_env.agents.view import SETUP, decode
from skyjo_env.observation import observe


def decisions(base: str, rules: Rules, wanted: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """About `wanted` observations and masks of play from `base`'s self-play, every 7th step of 64 games."""
    engine = SkyjoEngine(rules, 64, seed=seed)
    policy = agents.make(base, rules=rules)
    observations, masks = [], []
    kept, step = 0, 0
    while kept < wanted:
        obs, mask = observe(engine, engine.current), engine.legal_mask()
        if step % 7 == 3:
            play = decode(obs).phase != SETUP
            observations.append(obs[play])
            masks.append(mask[play])
            kept += int(play.sum())
        engine.step(policy(obs, mask))
        step += 1
    return np.concatenate(observations)[:wanted], np.concatenate(masks)[:wanted]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="counting")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--samples", default="32", help="comma-separated sample budgets the rules decide from")
    parser.add_argument("--held-out", type=int, default=32, help="further samples that value the rules' choices")
    parser.add_argument("--top", type=int, default=4)
    parser.add_argument("--screens", default="none,4,8,16", help="screening samples to compare ('none': no screening)")
    parser.add_argument("--margins", default="1.5,2,2.5")
    parser.add_argument(
        "--horizons", default="none", help="rollout horizons the rules decide from ('none': the round's end)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rules = Rules(num_players=args.players)
    budgets = [int(b) for b in args.samples.split(",")]
    S, H = max(budgets), args.held_out
    with threadpool_limits(1):
        obs, masks = decisions(args.base, rules, args.decisions, args.seed)
        search = SearchPolicy(base=args.base, samples=S, top=args.top, rules=rules, seed=args.seed)
        candidates = search.candidates(obs, masks, np.asarray(search.base(obs, masks)).astype(np.int64))
        rows = np.flatnonzero(candidates[:, 1] >= 0)
        candidates = candidates[rows]
        n, C = candidates.shape
        start = positions(decode(obs).take(rows), rules, S + H, np.random.default_rng(args.seed))
        legal = candidates >= 0
        values, seconds = play(search, start, candidates, S + H)
        print(f"{n} decisions of {args.players}-player {args.base} self-play with 2+ candidates, rollouts of "
              f"{legal.sum() * (S + H):,} (candidate, sample) pairs in {seconds:.0f} s", flush=True)  # fmt: skip
        held_out = values[:, :, S:] - values[:, :1, S:]
        everything = legal.sum() * S
        for horizon in args.horizons.split(","):
            if horizon != "none":
                truncated = SearchPolicy(base=args.base, samples=S, top=args.top, horizon=int(horizon), rules=rules)
                values, seconds = play(truncated, {k: a.reshape(n, S + H, *a.shape[1:])[:, :S].reshape(n * S, *a.shape[1:])
                                                   for k, a in start.items()}, candidates, S)  # fmt: skip
                print(f"horizon {horizon}: {seconds:.0f} s for the {S} samples", flush=True)
            for budget in budgets:
                for screen in args.screens.split(","):
                    first = budget if screen == "none" else min(int(screen), budget)
                    alive = legal if first == budget else survivors(values[:, :, :first], legal)
                    spent = legal.sum() * first + alive.sum() * (budget - first)
                    for margin in (float(m) for m in args.margins.split(",")):
                        choice = chosen(lower_bounds(values[:, :, :budget], alive, margin))
                        gain = held_out[np.arange(n), choice].mean(axis=1)
                        print(f"horizon {horizon:>4}, samples {budget:>3}, screen {screen:>4}, margin {margin:.1f}: "
                              f"rollouts {spent / everything:.3f}, base's choice left in {np.mean(choice > 0):.3f} "
                              f"of decisions, held-out gain {gain.mean():+.4f} ± {gain.std(ddof=1) / np.sqrt(n):.4f} "
                              "per decision", flush=True)  # fmt: skip


def play(
    search: SearchPolicy, start: dict[str, np.ndarray], candidates: np.ndarray, samples: int
) -> tuple[np.ndarray, float]:
    """`(n, C, samples)` rollout values of every legal candidate in every sample of `start`
    (`samples` per decision), 0 for the missing candidates, and the seconds they took."""
    started = time.perf_counter()
    n, C = candidates.shape
    values = np.zeros((n, C, samples))
    search.fill(start, candidates, values, np.broadcast_to((candidates >= 0)[:, :, None], (n, C, samples)))
    return values, time.perf_counter() - started


if __name__ == "__main__":
    main()
