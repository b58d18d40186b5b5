# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Training a PPO agent
#
# `skyjo_env.train.ppo.train` trains sb3-contrib's `MaskablePPO` on `SkyjoSB3VecEnv`, a stable-baselines3
# vector environment that steps hundreds of games in one engine. Each game seats the learner at
# a random seat against opponents drawn from a mixture: the heuristics and frozen snapshots of
# the learner itself (self-play). During training it measures the learner's win rate against each
# heuristic and appends it to `eval.jsonl`; at the end it exports the actor as a numpy policy
# (`agent.npz`) and plays a tournament.
#
# This notebook trains a small agent for a few minutes, plots its learning curve and measures
# it. A serious run (the shipped agents) takes millions of steps: `skyjo train --help`.

# %%
# %matplotlib inline
import json
import os
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from matplotlib.ticker import EngFormatter

from skyjo_env import agents
from skyjo_env.agents import pretrained
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.evaluation.report import markdown_table
from skyjo_env.evaluation.tournament import run_tournament
from skyjo_env.train.config import TrainConfig
from skyjo_env.train.ppo import train

# "full" (the default) gives figures worth reading; "small" runs in seconds (the tests use it).
BUDGET = os.environ.get("SKYJO_NOTEBOOK_BUDGET", "full")
if BUDGET not in ("small", "full"):
    raise ValueError(f"SKYJO_NOTEBOOK_BUDGET={BUDGET!r} is not allowed; use 'small' or 'full'")
SMALL = BUDGET == "small"

# %% [markdown]
# ## 1. The configuration
#
# `TrainConfig` holds every hyper-parameter with a documented default (the README's main run).
# Here we shrink it: 1.5 million learner steps instead of millions more, rollouts of 128 games
# x 32 steps (the main run plays 512 games) cut into minibatches of 1024, which gives more updates
# per sample and so learns sooner, and an evaluation every 100,000 steps so the learning curve
# has points. The learner trains against a mixture of `counting`, `threshold` and its own
# snapshots. The reward is the round-score difference (`reward="score"`: each round, the
# opponents' mean round score minus one's own), which gives far more signal than win/loss at
# the end of a game.
#
# Before PPO starts, a warm start (`warm_start="counting"`) lets the counting heuristic play
# the learner's seat for a few hundred thousand turns and fits the networks to its moves and
# returns (behaviour cloning, `train/imitation.py`); PPO then improves on that instead of
# starting from random play. `warm_start=None` trains from scratch. The clone is softened
# (`warm_start_temperature=1.0`, in points): the actor learns counting's favourite moves but keeps
# some probability on the moves counting prices within a point or two of them, so PPO still tries
# them; a clone of counting's choices alone (`warm_start_temperature=0`) barely explores.
#
# The networks also read the counting heuristic's *advice* (`advice="counting"`,
# `agents/advice.py`): after the observation, how many points worse counting rates each action
# than its favourite, and which one that is. The clone then plays one of counting's favourite moves
# on about 98% of turns after an epoch, and PPO learns where to depart from it. `advice=None` gives the observation alone.
#
# The run writes into `runs/notebook-ppo` under the notebook's working folder.

# %%
OUT = Path("runs/notebook-ppo")
if SMALL:
    config = TrainConfig(
        total_timesteps=2_048,
        num_envs=32,
        n_steps=32,
        batch_size=512,
        net_arch=[64, 64],
        eval_every=1_024,
        eval_games=4,
        snapshot_every=1_024,
        checkpoint_every=0,
        warm_start_samples=4_096,
        warm_start_epochs=1,
        final_games=8,
        out_dir=str(OUT),
    )
else:
    config = TrainConfig(
        total_timesteps=1_500_000,
        num_envs=128,
        n_steps=32,
        batch_size=1_024,
        net_arch=[128, 128],
        eval_every=100_000,
        eval_games=200,
        snapshot_every=100_000,
        checkpoint_every=0,
        warm_start_samples=300_000,
        warm_start_epochs=4,
        time_limit_minutes=10,  # on a slow machine, stop learning at 10 minutes
        final_games=2_000,
        out_dir=str(OUT),
    )
print(
    f"budget {BUDGET!r}: {config.total_timesteps:,} learner steps, {config.final_games} games in the final tournament"
)
print(
    {
        k: v
        for k, v in config.to_dict().items()
        if k
        in (
            "players",
            "total_timesteps",
            "num_envs",
            "n_steps",
            "batch_size",
            "net_arch",
            "opponents",
            "reward",
            "advice",
            "warm_start",
            "warm_start_samples",
            "eval_every",
            "eval_games",
        )
    }
)

# %% [markdown]
# ## 2. Train
#
# One call. On two CPU cores the full budget takes a few minutes (five to six on a busy
# machine); most of it is PPO's gradient steps and the evaluations, the environment itself steps
# thousands of games per second.

# %%
started = time.perf_counter()
outcome = train(config, overwrite=True, progress=False)  # overwrite: a second run of this cell starts afresh
print(f"trained {outcome.timesteps:,} learner steps in {time.perf_counter() - started:.0f} s")
print("files:", sorted(p.name for p in OUT.iterdir()))

# %% [markdown]
# ## 3. The learning curve
#
# Each line of `eval.jsonl` holds, at some number of learner steps, the greedy learner's win
# rate (with a 95% interval) and mean game total against each heuristic, measured over
# `eval_games` complete games with the heuristic in every other seat. The dotted line is what a
# player as good as its opponents would win: 1 / players.
#
# What to expect at the full budget: with the advice and the warm start, the first evaluation
# already plays like `counting`: it beats `random` and `threshold` by far and wins about half its
# games against `counting`; PPO then looks for moves where it can do better than its teacher.
# Without the advice (`advice=None`) the clone agrees with counting on about 90% of its moves and
# starts near 25% against it; from scratch (`warm_start=None`) beating `threshold` alone took
# about a million steps in our runs.

# %%
evaluations = {}
for line in (OUT / "eval.jsonl").read_text().splitlines():
    entry = json.loads(line)
    evaluations[entry["timesteps"]] = entry["vs"]  # one entry per evaluation, by learner steps
steps = np.array(sorted(evaluations))
opponents = list(evaluations[steps[-1]])

fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5))
for name in opponents:
    rate = np.array([evaluations[s][name]["win_rate"] for s in steps])
    low = np.array([evaluations[s][name]["win_ci_low"] for s in steps])
    high = np.array([evaluations[s][name]["win_ci_high"] for s in steps])
    (line,) = left.plot(steps, rate, marker="o", label=f"vs {name}")
    left.fill_between(steps, low, high, color=line.get_color(), alpha=0.15)
    right.plot(steps, [evaluations[s][name]["mean_game_total"] for s in steps], marker="o", label=f"vs {name}")
left.axhline(1 / config.players, color="black", linestyle=":", linewidth=1, label="1 / players")
left.set_xlabel("learner steps")
left.set_ylabel("win rate (95% interval)")
left.set_ylim(0, 1)
left.set_title("Win rate against each heuristic")
left.legend(loc="center left")
right.set_xlabel("learner steps")
right.set_ylabel("learner's mean game total (lower is better)")
right.set_title("Game totals against each heuristic")
right.legend()
for ax in (left, right):
    ax.xaxis.set_major_formatter(EngFormatter())  # 200k, 1M, ...
plt.tight_layout()
plt.show()
last = evaluations[steps[-1]]
print("final:", ", ".join(f"vs {n} {last[n]['win_rate']:.1%}" for n in opponents))


# %% [markdown]
# ## 4. The agent in a tournament
#
# At the end `train` put the exported agent into a tournament with the heuristics, every agent
# taking every seat in turn. `outcome.tournament` is that result. In two-player games among
# four agents each one meets all three others, so a win rate mixes easy and hard opponents;
# the next section takes them one at a time.


# %%
def plot_win_rates(result, colors, title, width=7):
    """Bar chart of a tournament's win rates with their 95% intervals as error bars."""
    rates = np.array([a.win_rate for a in result.agents])
    errors = np.array([[max(a.win_rate - a.win_ci[0], 0), max(a.win_ci[1] - a.win_rate, 0)] for a in result.agents]).T
    fig, ax = plt.subplots(figsize=(width, 4))
    ax.bar([a.name for a in result.agents], rates, yerr=errors, capsize=6, color=colors)
    ax.axhline(1 / result.players, color="black", linestyle=":", linewidth=1, label="1 / players")
    ax.set_ylabel("win rate (95% interval)")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend()
    plt.show()


result = outcome.tournament
display(Markdown(markdown_table(result)))
plot_win_rates(
    result,
    ["tab:green", "tab:gray", "tab:orange", "tab:blue"],
    f"Tournament: {result.games} games, {result.players} players",
)

# %% [markdown]
# ## 5. Using the trained agent
#
# `agent.npz` is a plain numpy file: `MLPPolicy.load` needs neither torch nor stable-baselines3.
# It is a batched policy like the heuristics, so it plays anywhere they do. Here it meets each
# heuristic head-to-head (new deals), and we look at how its round scores compare.

# %%
mine = MLPPolicy.load(outcome.agent_path)
print(f"{mine.name}: {mine.metadata.get('timesteps'):,} learner steps")
mine.name = "this notebook's ppo"  # to tell it from the shipped agent of the same name below
fig, ax = plt.subplots(figsize=(8, 4))
bins = np.arange(-10, 121, 4)
for name, colour in [("threshold", "tab:orange"), ("counting", "tab:blue")]:
    duel = run_tournament([mine, agents.make(name)], players=2, games=config.final_games, seed=1, progress=False)
    me = duel.agents[0]
    print(
        f"vs {name}: won {me.win_rate:.1%} [{me.win_ci[0]:.1%}, {me.win_ci[1]:.1%}] of {duel.games} games; "
        f"mean round score {me.mean_round_score:.1f} vs {duel.agents[1].mean_round_score:.1f}"
    )
    ax.hist(
        np.clip(me.round_scores, bins[0], bins[-1]),
        bins=bins,
        density=True,
        histtype="step",
        linewidth=2,
        color=colour,
        label=f"{mine.name} vs {name} (mean {me.mean_round_score:.1f})",
    )
ax.set_xlabel("the agent's round score (lower is better)")
ax.set_ylabel("share of rounds")
ax.set_title("Round scores of the trained agent")
ax.legend()
plt.show()

# %% [markdown]
# ## 6. The shipped agent
#
# The package ships agents trained for much longer; `skyjo_env.agents.pretrained.available()` lists them
# and `skyjo_env.agents.pretrained.load(name)` loads one. If the two-player agent is there, we compare
# it with the agent trained above and with the heuristics.

# %%
shipped_name = f"ppo-{config.players}p"
print("shipped agents:", pretrained.available() or "none")
if shipped_name in pretrained.available():
    shipped = pretrained.load(shipped_name)
    shipped.name = f"{shipped_name} (shipped)"
    pool = [shipped, mine, agents.make("threshold"), agents.make("counting")]
    compared = run_tournament(pool, players=config.players, games=config.final_games, seed=2, progress=False)
    display(Markdown(markdown_table(compared)))
    plot_win_rates(
        compared,
        ["tab:purple", "tab:green", "tab:orange", "tab:blue"],
        f"Shipped agent vs this notebook's agent: {compared.games} games",
        width=9,
    )
else:
    print(
        f"No shipped agent {shipped_name!r} in this installation (agents/weights/ has none yet): "
        "skipping the comparison."
    )
