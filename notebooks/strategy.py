# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.7
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # What the data says about Skyjo
#
# The engine plays thousands of games per second, so questions about the game can be answered
# by simulation instead of argument. This notebook asks:
#
# 1. What is each card worth: how much does being dealt a 12 (or a -2) cost (or gain) you, and
#    which cards are left in the grids at the end?
# 2. What do the column rule (R13, R14) and the doubling rule (R17) change?
# 3. How do scores, game length and the edge of a better player change from 2 to 8 players?
# 4. How do the agents, heuristic and trained, fare at each table size?
#
# The players are the heuristics (`counting`, the strongest; `threshold`, a simple baseline)
# and, where installed, the shipped PPO agents. All numbers are for *these* players: a
# different strategy gives different numbers. Every figure has its sample size in the title.

# %%
# %matplotlib inline
import os

import matplotlib.pyplot as plt
import numpy as np

from skyjo_env import Rules, SkyjoEngine, agents
from skyjo_env.actions import action_name
from skyjo_env.agents import pretrained
from skyjo_env.agents.value_net import shipped as shipped_values
from skyjo_env.cards import COUNTS, DECK, VALUES
from skyjo_env.engine import OVER
from skyjo_env.evaluation.tournament import run_tournament
from skyjo_env.observation import observe
from skyjo_env.phases import DRAWN, TAKEN
from skyjo_env.render import render_text

# "full" (the default) gives figures worth reading; "small" runs in seconds (the tests use it).
BUDGET = os.environ.get("SKYJO_NOTEBOOK_BUDGET", "full")
if BUDGET not in ("small", "full"):
    raise ValueError(f"SKYJO_NOTEBOOK_BUDGET={BUDGET!r} is not allowed; use 'small' or 'full'")
SMALL = BUDGET == "small"
ROUNDS = 100 if SMALL else 6_000  # single rounds simulated per configuration
GAMES = 8 if SMALL else 1_500  # complete games per tournament
PLAYER_COUNTS = [2, 4, 8] if SMALL else list(range(2, 9))
VALUES = VALUES.astype(int)  # -2..12
DECK_MEAN = DECK.mean()
SHIPPED = {n: pretrained.load(n) for n in pretrained.available()}
print(f"budget {BUDGET!r}: {ROUNDS} rounds per configuration, {GAMES} games per tournament")
print("shipped agents:", ", ".join(SHIPPED) or "none installed: the heuristics only")


# %% [markdown]
# ## A round simulator
#
# A round is the natural unit for most questions. With `Rules(episode="round")` a game is a
# single round, and with `auto_reset=False` each game stays in its final state, so after the
# batch is done the engine still holds every final grid. We also copy the dealt cards before
# the first action. `policies[s]` plays seat `s`.


# %%
def play_rounds(policies, rounds=ROUNDS, seed=0, **rule_options):
    """Play `rounds` single rounds at once; return what each one dealt, how it ended and how long it took."""
    P = len(policies)
    engine = SkyjoEngine(Rules(num_players=P, episode="round", **rule_options), rounds, seed=seed, auto_reset=False)
    dealt = engine.values.astype(int)  # (rounds, P, 12), before anyone looks
    unique = list(dict.fromkeys(policies))  # each distinct policy is asked once per step
    while (engine.phase != OVER).any():
        games = np.flatnonzero(engine.phase != OVER)
        seats = engine.current[games].astype(int)
        actions = np.empty(games.size, dtype=np.int64)
        for policy in unique:
            mine = np.flatnonzero(np.isin(seats, [s for s, p in enumerate(policies) if p is policy]))
            if mine.size:
                g = games[mine]
                actions[mine] = policy(observe(engine, seats[mine], g), engine.legal_mask(g))
        engine.step(actions, games)
    removed = ((engine.removed[:, :, None] >> np.arange(12)) & 1).astype(bool)
    final = engine.values.astype(int)
    return {
        "dealt": dealt,
        "final": final,
        "removed": removed,  # slots of removed columns (R13, R14)
        "raw": np.where(removed, 0, final).sum(axis=2),  # round scores before doubling (R16)
        "scores": engine.round_scores.astype(int),  # after doubling (R17)
        "ender": engine.ender.astype(int),
        "turns": (engine.steps - 2 * P) / (2 * P),  # turns per player: 2 actions a turn, after 2 setup flips each
        "reshuffles": engine.shuffles.astype(int) - 1,  # R12: discard pile shuffled into a new draw pile
    }


def win_errors(results):
    """Error bars (below, above) of the agents' win rates: their 95% intervals."""
    return np.array([[max(a.win_rate - a.win_ci[0], 0), max(a.win_ci[1] - a.win_rate, 0)] for a in results]).T


def by_value(cards, keep=None):
    """Count each value -2..12 in grids `cards` (..., 12), optionally only where `keep`."""
    hits = cards[..., None] == VALUES
    if keep is not None:
        hits &= keep[..., None]
    return hits.sum(axis=-2)


self_play = {"counting": agents.make("counting"), "threshold": agents.make("threshold")}
if "ppo-2p" in SHIPPED:
    self_play["ppo-2p"] = SHIPPED["ppo-2p"]
two_player = {name: play_rounds([p, p]) for name, p in self_play.items()}  # self-play, 2 players
for name, d in two_player.items():
    print(
        f"{name:>9} self-play: mean round score {d['scores'].mean():5.1f}, "
        f"{d['turns'].mean():4.1f} turns per player per round"
    )

# %% [markdown]
# ## 1. The value of each card
#
# ### What being dealt a card costs
#
# The deal is random, so the dealt grid is a fair experiment: regress each player's round score
# on how many cards of each value they were dealt (12 cards: no intercept needed), and the
# coefficient of value `v` is what one dealt `v` adds to the round score. Relative to an
# average dealt card, it would be `v - 5.07` if every dealt card stayed until the end (grey
# line). The gap between the bars and the line is what play recovers: high cards are swapped out,
# low cards are kept, but the face-down ones are not known until they are turned up. Error bars
# are 95% intervals (treating every seat as an independent sample).

# %%
share = COUNTS / COUNTS.sum()
VERSUS_AVERAGE = np.eye(VALUES.size) - share  # row v: one card v instead of an average dealt card


def card_effects(X, y):
    """Least-squares effect of one dealt card of each value vs an average one, and its 95% half-width."""
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    covariance = np.var(y - X @ beta) * np.linalg.inv(X.T @ X)
    spread = np.sqrt(np.diag(VERSUS_AVERAGE @ covariance @ VERSUS_AVERAGE.T))
    return VERSUS_AVERAGE @ beta, 1.96 * spread


fig, (left, right) = plt.subplots(1, 2, figsize=(14, 4.5))
width = 0.8 / len(two_player)
for i, (name, d) in enumerate(two_player.items()):
    X = by_value(d["dealt"]).reshape(-1, VALUES.size).astype(float)  # (rounds * P, 15)
    score = d["scores"].reshape(-1).astype(float)
    won = (d["scores"] == d["scores"].min(axis=1, keepdims=True)).reshape(-1).astype(float)  # round won (ties too)
    cost, cost_ci = card_effects(X, score)
    gain, gain_ci = card_effects(X, 100 * won)
    x = VALUES + (i - (len(two_player) - 1) / 2) * width
    left.bar(x, cost, yerr=cost_ci, capsize=2, width=width, label=f"{name} self-play")
    right.bar(x, gain, yerr=gain_ci, capsize=2, width=width, label=f"{name} self-play")
    print(
        f"{name:>9}: a dealt 12 costs {cost[-1] - cost[0]:.1f} points more than a dealt -2 "
        f"(14 if both stayed to the end) and {gain[0] - gain[-1]:.1f} points of % of round-win chance"
    )
left.plot(
    VALUES,
    VALUES - DECK_MEAN,
    color="gray",
    marker="_",
    markersize=12,
    linestyle="none",
    label="if kept to the end: v - 5.07",
)
left.set_xlabel("value of a dealt card")
left.set_ylabel("round points vs an average dealt card")
left.set_title(f"What one dealt card adds to the round score ({ROUNDS} rounds, 2 players)")
right.set_xlabel("value of a dealt card")
right.set_ylabel("change in round-win chance (points of %)")
right.set_title("... and to the chance of winning the round")
for ax in (left, right):
    ax.set_xticks(VALUES)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ### Which cards are left at the end
#
# Every grid is dealt 12 cards in the deck's proportions (grey). At the end of the round, the
# bars show how many cards of each value are still on the table (cards in removed columns do not
# count). Good play keeps the negative cards and zeros, and sheds the high ones.

# %%
fig, ax = plt.subplots(figsize=(11, 4.5))
width = 0.8 / (len(two_player) + 1)
ax.bar(
    VALUES - width * len(two_player) / 2, 12 * share, width=width, color="lightgray", label="dealt (deck share x 12)"
)
for i, (name, d) in enumerate(two_player.items(), start=1):
    left_over = by_value(d["final"], ~d["removed"]).reshape(-1, VALUES.size).mean(axis=0)
    columns = d["removed"].reshape(-1, 12).sum(axis=1).mean() / 3
    ax.bar(
        VALUES + width * (i - len(two_player) / 2),
        left_over,
        width=width,
        label=f"{name}: at the end ({columns:.2f} columns removed per grid)",
    )
ax.set_xticks(VALUES)
ax.set_xlabel("card value")
ax.set_ylabel("cards per grid")
ax.set_title(f"Cards dealt and cards left in the final grids ({ROUNDS} rounds x 2 players)")
ax.legend()
plt.show()

# %% [markdown]
# ## 2. The column rule
#
# `Rules` can switch the column rule (R13) off, or keep it during play but not when the last
# cards are turned up for scoring (R14, `column_rule_at_final_reveal`). We play the same deals
# (same seed) under each variant. Note that the heuristics do not know which rules are in force:
# `counting` builds columns even when the rule is off, which costs it a little there.
# The tournament panel plays complete games of `counting` against `threshold`.

# %%
variants = {
    "column rule (default)": {},
    "not at final reveal": {"column_rule_at_final_reveal": False},
    "no column rule": {"column_rule": False},
}
column_rounds = {
    v: {n: play_rounds([p, p], seed=1, **opts) for n, p in self_play.items() if n != "ppo-2p"}
    for v, opts in variants.items()
}
duels = {
    v: run_tournament(
        [agents.make("counting"), agents.make("threshold")],
        players=2,
        games=GAMES,
        rules=Rules(**opts),
        seed=1,
        progress=False,
    )
    for v, opts in variants.items()
}

fig, axes = plt.subplots(2, 2, figsize=(12, 8))
axes = axes.ravel()
names = list(column_rounds["column rule (default)"])
x = np.arange(len(variants))
width = 0.8 / len(names)
for i, name in enumerate(names):
    runs = [column_rounds[v][name] for v in variants]
    offset = x + (i - (len(names) - 1) / 2) * width
    axes[0].bar(offset, [r["scores"].mean() for r in runs], width=width, label=name)
    axes[1].bar(offset, [r["turns"].mean() for r in runs], width=width, label=name)
    axes[2].bar(offset, [r["removed"].reshape(-1, 12).sum(axis=1).mean() / 3 for r in runs], width=width, label=name)
counting_rates = [duels[v].agents[0] for v in variants]
axes[3].bar(x, [a.win_rate for a in counting_rates], color="tab:blue", yerr=win_errors(counting_rates), capsize=6)
for ax, label in zip(
    axes,
    ["mean round score", "turns per player per round", "columns removed per grid", "counting's win rate vs threshold"],
):
    ax.set_xticks(x, list(variants))
    ax.set_ylabel(label)
for ax in axes[:3]:
    ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # room for the legend above the bars
    ax.legend(title="self-play", loc="upper right", ncol=len(names))
    ax.set_title(f"{ROUNDS} rounds per bar, 2 players")
axes[3].set_ylim(0, 1)
axes[3].axhline(0.5, color="black", linestyle=":", linewidth=1)
axes[3].set_title(f"Complete games: {GAMES} per bar")
plt.tight_layout()
plt.show()
for v in variants:
    d = duels[v]
    print(
        f"{v:>22}: counting wins {d.agents[0].win_rate:.1%} of {d.games} games against threshold, "
        f"{d.agents[0].mean_rounds:.2f} rounds per game"
    )

# %% [markdown]
# ## 3. The doubling rule
#
# The player who ends a round (turns up their last card first) has their round score doubled
# unless it is strictly the lowest (R17; a score of zero or less is never doubled). `Rules` has
# no switch for it, but the final grids tell us everything: we compare the ender's score
# before doubling with the best opponent's, count how often the ender was doubled and what it
# cost, and recompute every round score without doubling (the play itself unchanged).

# %%
fig, axes = plt.subplots(1, len(two_player), figsize=(6.5 * len(two_player), 4), squeeze=False)
for ax, (name, d) in zip(axes[0], two_player.items()):
    rows = np.arange(len(d["ender"]))
    own = d["raw"][rows, d["ender"]]
    best_other = np.where(np.arange(2) == d["ender"][:, None], 10**6, d["raw"]).min(axis=1)
    margin = own - best_other
    doubled = d["scores"][rows, d["ender"]] != own
    bins = np.arange(-40, 41, 2)
    ax.hist(np.clip(margin[~doubled], -40, 40), bins=bins, color="tab:green", label="not doubled")
    ax.hist(np.clip(margin[doubled], -40, 40), bins=bins, color="tab:red", label="doubled")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("ender's score minus the best opponent's (before doubling)")
    ax.set_ylabel("rounds")
    ax.set_title(f"{name} self-play: ender doubled in {doubled.mean():.0%} of {len(doubled)} rounds")
    ax.legend()
    print(
        f"{name:>9}: the ender wins {np.mean(margin < 0):.0%} of rounds outright; doubled in {doubled.mean():.1%}, "
        f"costing {(d['scores'][rows, d['ender']] - own)[doubled].mean() if doubled.any() else 0:.1f} points "
        f"when it happens; mean round score {d['scores'].mean():.2f} with doubling, {d['raw'].mean():.2f} without"
    )
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 4. From 2 to 8 players
#
# Skyjo takes 2 to 8 players (R2). For each count we play single rounds of `counting` against
# itself, and complete games of one `counting` player against `threshold` players in every
# other seat (the tournament rotates the seats). With more players, more of the deck is dealt
# (96 of the 150 cards at 8 players), so the draw pile runs out sooner and the discard pile is
# shuffled into a new one (R12); we count those reshuffles too. A better player's edge is
# measured against the 1 / players share that a player as good as the others would win. (The
# `"small"` budget plays 2, 4 and 8 players only.)

# %%
counts = PLAYER_COUNTS
per_count = {}
for P in counts:
    counting = agents.make("counting")
    d = play_rounds([counting] * P, seed=P)
    rows = np.arange(len(d["ender"]))
    duel = run_tournament(
        [agents.make("counting")] + [agents.make("threshold") for _ in range(P - 1)],
        players=P,
        games=GAMES,
        seed=P,
        progress=False,
    )
    per_count[P] = {
        "round score": d["scores"].mean(),
        "turns": d["turns"].mean(),
        "doubled": np.mean(d["scores"][rows, d["ender"]] != d["raw"][rows, d["ender"]]),
        "reshuffles": d["reshuffles"].mean(),
        "rounds per game": duel.agents[0].mean_rounds,
        "win": duel.agents[0],
        "games": duel.games,
    }
    if f"ppo-{P}p" in SHIPPED:  # a shipped agent for this count: one of it against threshold players
        ppo = run_tournament(
            [SHIPPED[f"ppo-{P}p"]] + [agents.make("threshold") for _ in range(P - 1)],
            players=P,
            games=GAMES,
            seed=P,
            progress=False,
        )
        per_count[P]["ppo win"] = ppo.agents[0]
    print(
        f"P={P}: round score {per_count[P]['round score']:.1f}, {per_count[P]['turns']:.1f} turns, "
        f"{per_count[P]['reshuffles']:.2f} reshuffles per round, "
        f"ender doubled {per_count[P]['doubled']:.0%}, {per_count[P]['rounds per game']:.2f} rounds per game, "
        f"counting wins {per_count[P]['win'].win_rate:.1%} vs 1/P = {1 / P:.1%}"
    )

# %%
fig, axes = plt.subplots(2, 2, figsize=(12, 8))
(a, b), (c, e) = axes
a.plot(counts, [per_count[P]["round score"] for P in counts], marker="o")
a.set_ylabel("mean round score (counting self-play)")
a.set_title(f"Round score ({ROUNDS} rounds per point)")
b.plot(counts, [per_count[P]["turns"] for P in counts], marker="o", label="turns per player per round")
b.plot(counts, [per_count[P]["rounds per game"] for P in counts], marker="s", label="rounds per game (vs threshold)")
b.plot(
    counts, [per_count[P]["reshuffles"] for P in counts], marker="^", label="reshuffles of the discard pile per round"
)
b.set_ylabel("count")
b.set_title("How long rounds and games last")
b.legend()
c.plot(counts, [100 * per_count[P]["doubled"] for P in counts], marker="o", color="tab:red")
c.set_ylabel("rounds where the ender is doubled (%)")
c.set_ylim(0, None)
c.set_title("How often the round-ender is doubled (R17)")
wins = [per_count[P]["win"] for P in counts]
e.errorbar(
    counts,
    [w.win_rate for w in wins],
    capsize=4,
    marker="o",
    label="one counting vs threshold players",
    yerr=win_errors(wins),
)
shipped_counts = [P for P in counts if "ppo win" in per_count[P]]
if shipped_counts:
    e.plot(
        shipped_counts,
        [per_count[P]["ppo win"].win_rate for P in shipped_counts],
        marker="D",
        linestyle="none",
        color="tab:purple",
        label="one shipped PPO agent vs threshold players",
    )
e.plot(counts, [1 / P for P in counts], color="black", linestyle=":", label="1 / players")
e.set_ylim(0, 1)
e.set_ylabel("win rate (95% interval)")
e.set_title(f"A better player's edge ({GAMES} games per point)")
e.legend()
for ax in axes.flat:
    ax.set_xlabel("players")
    ax.set_xticks(counts)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 5. Agents by player count
#
# How each player fares when it sits alone among `counting` players, at every table size: the
# heuristics, and the shipped PPO agent for that count (`ppo-2p`, `ppo-3p`, `ppo-4p`, and
# `ppo-mixed`, the one network trained on mixed tables of 3 to 8 players, under the names
# `ppo-5p` ... `ppo-8p`). One of the agent against P - 1 `counting` players, seats
# rotated: its win rate (an equal player wins 1 / P) and its mean round score.

# %%
by_count = {}  # agent label -> players -> its AgentResult
for P in counts:
    line_up = {"threshold": agents.make("threshold"), "counting": agents.make("counting")}
    if f"ppo-{P}p" in SHIPPED:
        line_up["PPO"] = SHIPPED[f"ppo-{P}p"]
    for label, agent in line_up.items():
        result = run_tournament(
            [agent] + [agents.make("counting") for _ in range(P - 1)], players=P, games=GAMES, seed=P, progress=False
        )
        by_count.setdefault(label, {})[P] = result.agents[0]
    print(
        f"P={P}: "
        + ", ".join(
            f"{label} wins {by_count[label][P].win_rate:.1%}, round score {by_count[label][P].mean_round_score:.1f}"
            for label in line_up
        )
    )

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
for label, results in by_count.items():
    sizes = sorted(results)
    left.errorbar(
        sizes, [results[P].win_rate for P in sizes], yerr=win_errors([results[P] for P in sizes]), capsize=4,
        marker="o", label=label,
    )  # fmt: skip
    right.plot(sizes, [results[P].mean_round_score for P in sizes], marker="o", label=label)
left.plot(counts, [1 / P for P in counts], color="black", linestyle=":", label="1 / players")
left.set_ylabel("win rate against P - 1 counting players (95% interval)")
left.set_title(f"Win rate by table size ({GAMES} games per point)")
right.set_ylabel("mean round score")
right.set_title("Mean round score by table size")
for ax in (left, right):
    ax.set_xlabel("players")
    ax.set_xticks(counts)
    ax.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 6. What a move is worth: a learned game value
#
# Nobody sees a face-down card, not even its owner, and every card ever seen is public: at each
# decision the seat to act knows all that anyone knows, so Skyjo is a game of perfect information with
# chance, like backgammon. The `expectimax` agent values every legal move through a learned value
# network, averaging over the card the move reveals (each unseen value weighted by its count; see
# `docs/agents/expectimax.md`). Below are its values of the moves of three decisions with a card in hand
# from a 2-player game of `counting` players, in points of game totals (its expected lead, the best move
# at 0), beside the moves `counting`, `ppo-2p` and `expectimax` chose. `expectimax` plays `ppo-2p`'s
# move unless the network values another one more than 4 points higher: alone, its network plays far
# worse than `ppo-2p` (its errors on a decision's moves are a few points).

# %%
if "value" in shipped_values() and "ppo-2p" in SHIPPED:
    rules2 = Rules(num_players=2)
    judge = agents.make("expectimax", rules=rules2, seed=0)
    deciders = {"counting": agents.make("counting", rules=rules2), "ppo-2p": SHIPPED["ppo-2p"], "expectimax": judge}
    game = SkyjoEngine(rules2, 1, seed=11, auto_reset=False)
    fig, axes = plt.subplots(1, 3, figsize=(15, 5))
    held, ax = 0, iter(axes)
    while game.phase[0] != OVER and held < 3 * 6:
        obs, mask = observe(game, game.current), game.legal_mask()
        if game.phase[0] in (DRAWN, TAKEN):
            held += 1
            if held % 6 == 0:  # every sixth decision with a card in hand
                worth = judge.action_values(obs, mask)[0] * judge.win_points
                legal = np.flatnonzero(mask[0])
                picks = {name: int(decider(obs, mask)[0]) for name, decider in deciders.items()}
                print(render_text(game, 0, viewer=int(game.current[0])))
                print(", ".join(f"{name} plays {action_name(a)}" for name, a in picks.items()), "\n")
                axis = next(ax)
                axis.barh([action_name(a) for a in legal], worth[legal] - worth[legal].max())
                for a in set(picks.values()):
                    names = ", ".join(name for name, pick in picks.items() if pick == a)
                    axis.annotate(f"<- {names}", (0, action_name(a)), xytext=(4, 0), textcoords="offset points")
                axis.set_title(f"holding a {int(game.held[0])}: each move's value (points)")
        game.step(deciders["counting"](obs, mask))
    plt.tight_layout()
    plt.show()
else:
    print("the shipped value network or ppo-2p is not installed: nothing to show")

# %% [markdown]
# ## Reading the results
#
# The numbers printed above come from the budget this notebook ran with; at the `"small"`
# budget they are noise. Run it with the default `"full"` budget (a few minutes) to read them.
# In the full-budget run made when this notebook was written (the heuristics of that time; the
# figures above are the ones to trust if the agents have changed since), the data said:
#
# * **Cards.** Play recovers most of a bad deal: for `counting`, a dealt 12 instead of a dealt
#   -2 cost about 3 round points, not 14, and about 8.5 points of % of the chance to win the
#   round. For the simpler `threshold` player the same swap cost about twice as much. At the
#   end of a round the grids hold mostly -2..3; cards of 6 and more are nearly all gone.
# * **Columns.** The column rule is worth about 6 points a round to `counting` (mean round score
#   14 with it, 20 without in self-play; about 0.6 columns removed per grid). Applying it at the
#   final reveal too (R14) barely matters. Much of `counting`'s edge is column building: it
#   beat `threshold` in 97% of games with the rule and lost more often than not without it.
# * **Doubling.** Knowing when to end a round is a large part of good play: `counting`'s enders
#   were doubled in about 14% of rounds, `threshold`'s in about half, which added almost 6
#   points to `threshold`'s mean round score and under 1 to `counting`'s.
# * **Players.** Round scores rose slowly from 2 to 6 players, then jumped at 7 and 8, where
#   nearly every round reshuffles the discard pile. Games got shorter (about 5 rounds with 2
#   players, 2 with 8), since with more players someone reaches 100 sooner. The lone
#   `counting` player's win rate fell from 96% to 38%, yet stayed two to three times the
#   1 / players of an equal player. Round-enders were doubled more often as opponents were
#   added, from 14% of rounds with 2 players to about 29% with 5 and 6, and a little less
#   with 7 and 8.
# * **Agents by table size.** Section 5 was added later; its PPO points are the shipped agents,
#   whose 10,000-game figures against P - 1 counting players are in the README: 0.679 at 2
#   players, 0.491 at 3, 0.380 at 4, 0.269 at 5, 0.232 at 6, 0.204 at 7, 0.169 at 8, every one
#   above 1 / P; at 5, 6, 7 and 8 players (one network, `ppo-mixed`) its mean round score is
#   0.92 to 1.47 points below that of the counting players at its table (0.92, 1.47, 1.37 and
#   1.31 over the 1,500 games of each size), 2.32 below at 3 players (`ppo-3p`: 12.73 against
#   15.15 and 14.96) and 1.86 below at 4 (`ppo-4p`).
# * **A move's value.** Section 6 was added with the `expectimax` agent (2026-12-07). In the three
#   decisions shown, `counting`, `ppo-2p` and `expectimax` chose the same move; the network ranked it
#   first or within a point of its first, and put the moves that replace one of the seat's lowest
#   cards several points lower. Over many games its disagreements with `ppo-2p` of a point or two are
#   mostly wrong (docs/agents/expectimax.md), which is why `expectimax` keeps `ppo-2p`'s move unless the
#   network sees more than 4 points.
