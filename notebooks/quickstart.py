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
# # Skyjo quickstart
#
# This notebook walks through **skyjo-env** from the first `reset` to a tournament:
#
# 1. the rules object and the two environments (PettingZoo AEC and Gymnasium),
# 2. what an agent observes (the observation table) and may do (the action mask),
# 3. pictures of a game (text and an RGB image),
# 4. the built-in agents and the batched engine that plays thousands of games at once,
# 5. a small tournament with plots,
# 6. exporting a game half-way and continuing or replaying it exactly.
#
# The rules are in [`RULES.md`](../RULES.md) at the root of the repository; each rule has an id
# (R1, R2, ...) that the code and this notebook cite.

# %%
# %matplotlib inline
import json
import os

import gymnasium
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

import skyjo_env
from skyjo_env import Rules, SkyjoEngine, agents
from skyjo_env.actions import action_name
from skyjo_env.actions import names as action_names
from skyjo_env.engine import OVER, PHASE_NAMES
from skyjo_env.evaluation.report import markdown_table
from skyjo_env.evaluation.tournament import run_tournament
from skyjo_env.observation import layout, observe, size
from skyjo_env.render import render_rgb, render_text

# "full" (the default) gives figures worth reading; "small" runs in seconds (the tests use it).
BUDGET = os.environ.get("SKYJO_NOTEBOOK_BUDGET", "full")
if BUDGET not in ("small", "full"):
    raise ValueError(f"SKYJO_NOTEBOOK_BUDGET={BUDGET!r} is not allowed; use 'small' or 'full'")
SMALL = BUDGET == "small"
BATCH_GAMES = 64 if SMALL else 2000  # games played at once with the raw engine
TOURNAMENT_GAMES = 60 if SMALL else 3000  # games of the tournament
print(f"budget {BUDGET!r}: {BATCH_GAMES} batched games, {TOURNAMENT_GAMES} tournament games")

# %% [markdown]
# ## 1. Rules
#
# `Rules` is a frozen value object with every option of the rules. The defaults are the
# published game: 2 players, the column rule (R13) on, also at the final reveal (R14), the game
# ends when a total reaches 100 (R19). Every environment takes these options as keyword
# arguments.

# %%
rules = Rules(num_players=2)
rules  # noqa: B018 (a notebook shows the value of a cell's last expression)

# %% [markdown]
# ## 2. The PettingZoo AEC environment
#
# `skyjo_env.env()` is a standard PettingZoo *agent-environment-cycle* environment: one agent
# acts at a time and `env.agent_selection` says which. A turn takes one or two actions (draw,
# then replace or discard-and-flip; or take the discard, then replace), so the same agent can
# act twice in a row: always read `agent_selection`.
#
# Each agent's observation is a dict with a flat float32 `"observation"` vector and an int8
# `"action_mask"` of the 26 actions.

# %%
env = skyjo_env.env(num_players=2)
env.reset(seed=7)
obs, reward, termination, truncation, info = env.last()
print("to act:          ", env.agent_selection)
print("observation:     ", obs["observation"].shape, obs["observation"].dtype)
print("action mask:     ", obs["action_mask"])
print("legal actions:   ", action_names(obs["action_mask"]))

# %% [markdown]
# At the start of a round every player turns two cards face up (R5), so only `flip k` is
# legal. The 26 action ids are fixed for the whole game:
#
# | id | action | meaning |
# |---|---|---|
# | 0 | `draw` | draw the top card of the draw pile |
# | 1 | `take` | take the top card of the discard pile |
# | 2..13 | `replace k` | put the card in hand into slot `k = id - 2` (slot = row * 4 + column) |
# | 14..25 | `flip k` | turn slot `k = id - 14` face up (setup, or after discarding a drawn card) |
#
# ### The observation table
#
# `skyjo_env.observation.layout(P)` names every block of the vector. Seats are relative to
# the observer: `grid_0` is always the observer's own grid, `grid_1` the next seat clockwise.

# %%
L = layout(2)
print(f"{'block':<14}{'entries':>8}   slice")
for name, part in L.items():
    print(f"{name:<14}{part.stop - part.start:>8}   {part.start}:{part.stop}")
print(f"{'total':<14}{size(2):>8}   (38 * P + 54 with P = 2)")

# %% [markdown]
# Reading it back: a grid block is 12 card values divided by 12 (0 where face down), 12
# face-down flags and 12 removed-column flags. One-hot blocks such as `discard_top` index the
# values -2..12, so value = index - 2. Face-down cards are never in the vector: not even their
# owner sees them.

# %%
vec = obs["observation"]
grid = vec[L["grid_0"]].reshape(3, 12)  # rows: values / 12, face-down flags, removed flags
print("my face-down slots:", np.flatnonzero(grid[1]).tolist())
print("discard pile top:  ", int(np.flatnonzero(vec[L["discard_top"]])[0]) - 2)
print("draw pile size:    ", round(float(vec[L["draw_size"]][0]) * 150))

# %% [markdown]
# ### Playing a game through the AEC API
#
# The usual PettingZoo loop: `agent_iter()` yields the agent to act, `last()` gives its
# observation, and a random *legal* action comes from sampling the action space under the mask.
# Each agent's `info` holds its game total and whether it won once the game is over.

# %%
env.reset(seed=7)
actions_taken = 0
final = {}
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None
        final[agent] = (info["total"], info["winner"], reward)
    else:
        action = env.action_space(agent).sample(obs["action_mask"])
        actions_taken += 1
    env.step(action)
print(f"{actions_taken} actions")
for agent, (total, winner, reward) in final.items():
    print(f"{agent}: total {total}, winner {winner}, last reward {reward:+.1f}")

# %% [markdown]
# ### How the mask follows the phases
#
# The environment is a view over a one-game `SkyjoEngine` (`env.unwrapped.engine`), which
# knows the phase. Here are the first actions of a game: the setup flips, then turns of
# *choose* (draw or take) and *drawn*/*taken* (where to put the card).

# %%
env.reset(seed=3)
engine = env.unwrapped.engine
for _ in range(10):
    agent = env.agent_selection
    mask = env.last()[0]["action_mask"]
    legal = action_names(mask)
    action = int(np.random.default_rng(len(legal)).choice(np.flatnonzero(mask)))
    phase = PHASE_NAMES[int(engine.phase[0])]
    shown = ", ".join(legal) if len(legal) <= 4 else f"{legal[0]}, ..., {legal[-1]} ({len(legal)})"
    print(f"{agent}  {phase:<6} legal: {shown:<38} -> {action_name(action)}")
    env.step(action)

# %% [markdown]
# ## 3. The Gymnasium environment
#
# `gymnasium.make("skyjo_env/Skyjo-v0")` is a single-agent view: the *learner* takes one seat
# and policies play the others between its turns. `info["action_mask"]` (and the
# `action_masks()` method used by sb3-contrib's `MaskablePPO`) gives the legal actions.
#
# Every agent in this project is a *batched policy*: `policy(observations, masks)` maps `(N,
# obs)` observations and `(N, 26)` masks to `N` actions. For one game, pass a batch of one.
# Here the `threshold` heuristic plays the learner's seat against the `counting` heuristic.

# %%
genv = gymnasium.make(
    "skyjo_env/Skyjo-v0", num_players=2, seat=0, opponents=agents.make("counting"), render_mode="rgb_array"
)
learner = agents.make("threshold")
obs, info = genv.reset(seed=1)
print("observation space:", genv.observation_space.shape, "| action space:", genv.action_space)

steps, done, episode_return = 0, False, 0.0
while not done:
    action = int(learner(obs[None], info["action_mask"][None])[0])
    obs, reward, terminated, truncated, info = genv.step(action)
    episode_return += reward
    steps += 1
    done = terminated or truncated
print(
    f"{steps} learner steps; totals by seat {info['totals'].tolist()}; learner won: {info['winner']}; "
    f"return {episode_return:+.1f}"
)

# %% [markdown]
# ## 4. Pictures of a game
#
# `render_text` and `render_rgb` draw one game as a given seat sees it (`viewer=None` is a
# spectator). Face-down cards show as `##`, removed columns as `--`; in the image, cards are
# coloured by value band as in the published game. The environments return the same pictures
# with `render_mode="ansi"` or `"rgb_array"`. Here is the game above half-way through.

# %%
obs, info = genv.reset(seed=1)
for _ in range(12):
    action = int(learner(obs[None], info["action_mask"][None])[0])
    obs, reward, terminated, truncated, info = genv.step(action)
print(render_text(genv.unwrapped.engine, 0, viewer=0))

# %%
frame = genv.render()  # rgb_array: an (H, W, 3) uint8 image, from the learner's view
fig, ax = plt.subplots(figsize=(9, 9 * frame.shape[0] / frame.shape[1]))
ax.imshow(frame)
ax.set_axis_off()
ax.set_title(f"render_mode='rgb_array': a {frame.shape[1]} x {frame.shape[0]} image from seat 0's view")
plt.show()

# %% [markdown]
# ## 5. Agents and the batched engine
#
# `agents.names()` lists the built-in agents:
#
# * `random` picks a legal action uniformly,
# * `threshold` takes or keeps low cards and discards high ones,
# * `counting` plays the option with the best expected effect on its own score, counting the
#   cards it has not seen, building columns and judging when to end the round.
#
# The environments play one game; the engine underneath plays `B` games as numpy arrays. This
# loop is all there is to it: find the games still running, ask each seat's policy for the
# actions of the games where that seat is to act, and step them all at once.

# %%
print(agents.names())
seat_players = [agents.make("counting"), agents.make("threshold")]  # seat 0, seat 1
engine = SkyjoEngine(Rules(num_players=2), batch_size=BATCH_GAMES, seed=0, auto_reset=False)
while (engine.phase != OVER).any():
    games = np.flatnonzero(engine.phase != OVER)
    seats = engine.current[games]
    actions = np.empty(games.size, dtype=np.int64)
    for seat, policy in enumerate(seat_players):
        mine = np.flatnonzero(seats == seat)
        if mine.size:
            actions[mine] = policy(observe(engine, seat, games[mine]), engine.legal_mask(games[mine]))
    engine.step(actions, games)

totals = engine.totals.astype(int)
won = totals == totals.min(axis=1, keepdims=True)  # R20: every tied lowest total wins
for seat, policy in enumerate(seat_players):
    print(
        f"seat {seat} ({policy.name}): won {won[:, seat].mean():.1%} of {BATCH_GAMES} games, "
        f"mean total {totals[:, seat].mean():.1f}, {engine.round_index.mean():.1f} rounds per game"
    )

# %% [markdown]
# ## 6. A tournament
#
# `skyjo_env.evaluation.tournament.run_tournament` does the same for any list of agents, rotating them through
# the seats so no one profits from a seat. It reports each agent's win rate with a 95% interval,
# its round scores and a rating (OpenSkill).

# %%
pool = [agents.make("random", seed=1), agents.make("threshold"), agents.make("counting")]
result = run_tournament(pool, players=2, games=TOURNAMENT_GAMES, seed=0, progress=False)
display(Markdown(markdown_table(result)))


# %%
def win_errors(results):
    """Error bars (below, above) of the agents' win rates: their 95% intervals."""
    return np.array([[max(a.win_rate - a.win_ci[0], 0), max(a.win_ci[1] - a.win_rate, 0)] for a in results]).T


fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
names = [a.name for a in result.agents]
rates = np.array([a.win_rate for a in result.agents])
left.bar(names, rates, yerr=win_errors(result.agents), capsize=6, color=["tab:gray", "tab:orange", "tab:blue"])
left.axhline(0.5, color="black", linestyle=":", linewidth=1, label="1 / players")
left.set_ylabel("win rate (95% interval)")
left.set_ylim(0, 1)
left.set_title(f"{result.games} two-player games")
left.legend()

bins = np.arange(-10, 121, 4)
for a, colour in zip(result.agents, ["tab:gray", "tab:orange", "tab:blue"]):
    right.hist(
        np.clip(a.round_scores, bins[0], bins[-1]),
        bins=bins,
        density=True,
        histtype="step",
        linewidth=2,
        color=colour,
        label=f"{a.name} (mean {a.mean_round_score:.1f})",
    )
right.set_xlabel("round score (doubling included, clipped to -10..120; lower is better)")
right.set_ylabel("share of rounds")
right.set_title("Round scores")
right.legend()
plt.tight_layout()
plt.show()


# %% [markdown]
# ## 7. Export a game half-way, then continue or replay it
#
# `engine.export_game(g)` returns the full state of game `g` as plain JSON-ready data (see
# `skyjo_env/snapshot.py` for its keys), including the game's random-stream key, so the
# reshuffles of the discard pile (R12) come out the same after an import. `import_game` loads
# it into any slot of any engine with the same rules.
#
# Below, two deterministic heuristics play one game. We keep the state at the start and part-way
# through the second round, and every action taken. Then we check two things:
#
# * importing the half-way state and letting the same agents play on ends in exactly the same
#   final state;
# * importing the starting state and replaying the recorded actions does too.


# %%
def play(engine, players, max_actions=None, rounds=None):
    """Play game 0 of a one-game engine until it ends, or for `max_actions`, or until `rounds`
    rounds are complete; return the actions taken."""
    taken = []
    while (
        engine.phase[0] != OVER
        and (max_actions is None or len(taken) < max_actions)
        and (rounds is None or engine.round_index[0] < rounds)
    ):
        seat = int(engine.current[0])
        action = int(players[seat](observe(engine, seat), engine.legal_mask())[0])
        engine.step(np.array([action]))
        taken.append(action)
    return taken


two_rules = Rules(num_players=2)
players = [agents.make("counting"), agents.make("threshold")]
original = SkyjoEngine(two_rules, 1, seed=42, auto_reset=False)
start = original.export_game(0)
history = play(original, players, rounds=1)  # the whole first round
history += play(original, players, max_actions=30)  # and 30 actions into the second
halfway = json.dumps(original.export_game(0))  # a JSON string: save it anywhere
print(f"exported after {len(history)} actions: {len(halfway):,} characters of JSON")
print(render_text(original, 0))

# %%
history += play(original, players)
final = original.export_game(0)
print(f"the original game ended after {len(history)} actions with totals {final['totals']}")

continued = SkyjoEngine(two_rules, 1, auto_reset=False)
continued.import_game(0, json.loads(halfway))
play(continued, players)
print(
    "continued from the half-way export: totals",
    continued.export_game(0)["totals"],
    "| same final state:",
    continued.export_game(0) == final,
)

replayed = SkyjoEngine(two_rules, 1, auto_reset=False)
replayed.import_game(0, start)
for action in history:
    replayed.step(np.array([action]))
print(
    "replayed the recorded actions from the start: totals",
    replayed.export_game(0)["totals"],
    "| same final state:",
    replayed.export_game(0) == final,
)
assert continued.export_game(0) == final and replayed.export_game(0) == final

# %%
fig, axes = plt.subplots(1, 2, figsize=(14, 5))
images = {
    "half-way (the exported state)": SkyjoEngine(two_rules, 1, auto_reset=False),
    "end of the continued game": continued,
}
images["half-way (the exported state)"].import_game(0, json.loads(halfway))
for ax, (title, eng) in zip(axes, images.items()):
    ax.imshow(render_rgb(eng, 0))
    ax.set_title(title)
    ax.set_axis_off()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Where next
#
# * `training.ipynb` trains a PPO agent on the batched vector environment and measures it.
# * `strategy.ipynb` uses batched simulations to ask what matters in Skyjo: the value of each
#   card, the column and doubling rules, and the number of players.
