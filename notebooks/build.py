"""The single source of the notebooks in this folder: ``python notebooks/build.py`` rewrites them.

Each notebook is a list of markdown and code cells below. They are written without outputs and
with stable cell ids, so a rebuild of unchanged cells changes nothing and ``git diff`` shows real
edits only. ``tests/test_notebooks.py`` checks that the committed ``.ipynb`` files are what this
script writes, then executes each of them.

Every notebook reads ``SKYJO_NOTEBOOK_BUDGET`` (``"full"`` by default, ``"small"`` in the tests)
in its first code cell and sizes its simulations and its training run from it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from textwrap import dedent

import nbformat

FOLDER = Path(__file__).resolve().parent

_BUDGET = '''
# "full" (the default) gives figures worth reading; "small" runs in seconds (the tests use it).
BUDGET = os.environ.get("SKYJO_NOTEBOOK_BUDGET", "full")
if BUDGET not in ("small", "full"):
    raise ValueError(f"SKYJO_NOTEBOOK_BUDGET={BUDGET!r} is not allowed; use 'small' or 'full'")
SMALL = BUDGET == "small"
'''


def md(text: str) -> tuple[str, str]:
    return "markdown", dedent(text).strip()


def code(text: str) -> tuple[str, str]:
    return "code", dedent(text).strip().replace("%BUDGET%", _BUDGET.strip())


# ================================================================================= quickstart
QUICKSTART = [
    md("""
    # Skyjo quickstart

    This notebook walks through **skyjo-env** from the first `reset` to a tournament:

    1. the rules object and the two environments (PettingZoo AEC and Gymnasium),
    2. what an agent observes (the observation table) and may do (the action mask),
    3. pictures of a game (text and an RGB image),
    4. the built-in agents and the batched engine that plays thousands of games at once,
    5. a small tournament with plots,
    6. exporting a game half-way and continuing or replaying it exactly.

    The rules are in [`RULES.md`](../RULES.md) at the root of the repository; each rule has an id
    (R1, R2, ...) that the code and this notebook cite.
    """),
    code("""
    %matplotlib inline
    import json
    import os

    import gymnasium
    import matplotlib.pyplot as plt
    import numpy as np
    from IPython.display import Markdown, display

    from skyjo_env import agents
    import skyjo_env
    from skyjo_env import Rules, SkyjoEngine
    from skyjo_env.actions import action_name
    from skyjo_env.actions import names as action_names
    from skyjo_env.engine import OVER, PHASE_NAMES
    from skyjo_env.observation import layout, observe, size
    from skyjo_env.render import render_rgb, render_text
    from skyjo_env.train.report import markdown_table
    from skyjo_env.train.tournament import run_tournament

    %BUDGET%
    BATCH_GAMES = 64 if SMALL else 2000  # games played at once with the raw engine
    TOURNAMENT_GAMES = 60 if SMALL else 3000  # games of the tournament
    print(f"budget {BUDGET!r}: {BATCH_GAMES} batched games, {TOURNAMENT_GAMES} tournament games")
    """),
    md("""
    ## 1. Rules

    `Rules` is a frozen value object with every option of the rules. The defaults are the
    published game: 2 players, the column rule (R13) on, also at the final reveal (R14), the game
    ends when a total reaches 100 (R19). Every environment takes these options as keyword
    arguments.
    """),
    code("""
    rules = Rules(num_players=2)
    rules
    """),
    md("""
    ## 2. The PettingZoo AEC environment

    `skyjo_env.env()` is a standard PettingZoo *agent-environment-cycle* environment: one agent
    acts at a time and `env.agent_selection` says which. A turn takes one or two actions (draw,
    then replace or discard-and-flip; or take the discard, then replace), so the same agent can
    act twice in a row: always read `agent_selection`.

    Each agent's observation is a dict with a flat float32 `"observation"` vector and an int8
    `"action_mask"` of the 26 actions.
    """),
    code("""
    env = skyjo_env.env(num_players=2)
    env.reset(seed=7)
    obs, reward, termination, truncation, info = env.last()
    print("to act:          ", env.agent_selection)
    print("observation:     ", obs["observation"].shape, obs["observation"].dtype)
    print("action mask:     ", obs["action_mask"])
    print("legal actions:   ", action_names(obs["action_mask"]))
    """),
    md("""
    At the start of a round every player turns two cards face up (R5), so only `flip k` is
    legal. The 26 action ids are fixed for the whole game:

    | id | action | meaning |
    |---|---|---|
    | 0 | `draw` | draw the top card of the draw pile |
    | 1 | `take` | take the top card of the discard pile |
    | 2..13 | `replace k` | put the card in hand into slot `k = id - 2` (slot = row * 4 + column) |
    | 14..25 | `flip k` | turn slot `k = id - 14` face up (setup, or after discarding a drawn card) |

    ### The observation table

    `skyjo_env.observation.layout(P)` names every block of the vector. Seats are relative to
    the observer: `grid_0` is always the observer's own grid, `grid_1` the next seat clockwise.
    """),
    code("""
    L = layout(2)
    print(f"{'block':<14}{'entries':>8}   slice")
    for name, part in L.items():
        print(f"{name:<14}{part.stop - part.start:>8}   {part.start}:{part.stop}")
    print(f"{'total':<14}{size(2):>8}   (38 * P + 54 with P = 2)")
    """),
    md("""
    Reading it back: a grid block is 12 card values divided by 12 (0 where face down), 12
    face-down flags and 12 removed-column flags. One-hot blocks such as `discard_top` index the
    values -2..12, so value = index - 2. Face-down cards are never in the vector: not even their
    owner sees them.
    """),
    code("""
    vec = obs["observation"]
    grid = vec[L["grid_0"]].reshape(3, 12)  # rows: values / 12, face-down flags, removed flags
    print("my face-down slots:", np.flatnonzero(grid[1]).tolist())
    print("discard pile top:  ", int(np.flatnonzero(vec[L["discard_top"]])[0]) - 2)
    print("draw pile size:    ", round(float(vec[L["draw_size"]][0]) * 150))
    """),
    md("""
    ### Playing a game through the AEC API

    The usual PettingZoo loop: `agent_iter()` yields the agent to act, `last()` gives its
    observation, and a random *legal* action comes from sampling the action space under the mask.
    Each agent's `info` holds its game total and whether it won once the game is over.
    """),
    code("""
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
    """),
    md("""
    ### How the mask follows the phases

    The environment is a view over a one-game `SkyjoEngine` (`env.unwrapped.engine`), which
    knows the phase. Here are the first actions of a game: the setup flips, then turns of
    *choose* (draw or take) and *drawn*/*taken* (where to put the card).
    """),
    code("""
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
    """),
    md("""
    ## 3. The Gymnasium environment

    `gymnasium.make("skyjo_env/Skyjo-v0")` is a single-agent view: the *learner* takes one seat
    and policies play the others between its turns. `info["action_mask"]` (and the
    `action_masks()` method used by sb3-contrib's `MaskablePPO`) gives the legal actions.

    Every agent in this project is a *batched policy*: `policy(observations, masks)` maps `(N,
    obs)` observations and `(N, 26)` masks to `N` actions. For one game, pass a batch of one.
    Here the `threshold` heuristic plays the learner's seat against the `counting` heuristic.
    """),
    code("""
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
    print(f"{steps} learner steps; totals by seat {info['totals'].tolist()}; learner won: {info['winner']}; "
          f"return {episode_return:+.1f}")
    """),
    md("""
    ## 4. Pictures of a game

    `render_text` and `render_rgb` draw one game as a given seat sees it (`viewer=None` is a
    spectator). Face-down cards show as `##`, removed columns as `--`; in the image, cards are
    coloured by value band as in the published game. The environments return the same pictures
    with `render_mode="ansi"` or `"rgb_array"`. Here is the game above half-way through.
    """),
    code("""
    obs, info = genv.reset(seed=1)
    for _ in range(12):
        action = int(learner(obs[None], info["action_mask"][None])[0])
        obs, reward, terminated, truncated, info = genv.step(action)
    print(render_text(genv.unwrapped.engine, 0, viewer=0))
    """),
    code("""
    frame = genv.render()  # rgb_array: an (H, W, 3) uint8 image, from the learner's view
    fig, ax = plt.subplots(figsize=(9, 9 * frame.shape[0] / frame.shape[1]))
    ax.imshow(frame)
    ax.set_axis_off()
    ax.set_title(f"render_mode='rgb_array': a {frame.shape[1]} x {frame.shape[0]} image from seat 0's view")
    plt.show()
    """),
    md("""
    ## 5. Agents and the batched engine

    `agents.names()` lists the built-in agents:

    * `random` picks a legal action uniformly,
    * `threshold` takes or keeps low cards and discards high ones,
    * `counting` plays the option with the best expected effect on its own score, counting the
      cards it has not seen, building columns and judging when to end the round.

    The environments play one game; the engine underneath plays `B` games as numpy arrays. This
    loop is all there is to it: find the games still running, ask each seat's policy for the
    actions of the games where that seat is to act, and step them all at once.
    """),
    code("""
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
        print(f"seat {seat} ({policy.name}): won {won[:, seat].mean():.1%} of {BATCH_GAMES} games, "
              f"mean total {totals[:, seat].mean():.1f}, {engine.round_index.mean():.1f} rounds per game")
    """),
    md("""
    ## 6. A tournament

    `skyjo_env.train.tournament.run_tournament` does the same for any list of agents, rotating them through
    the seats so no one profits from a seat. It reports each agent's win rate with a 95% interval,
    its round scores and a rating (OpenSkill).
    """),
    code("""
    pool = [agents.make("random", seed=1), agents.make("threshold"), agents.make("counting")]
    result = run_tournament(pool, players=2, games=TOURNAMENT_GAMES, seed=0, progress=False)
    display(Markdown(markdown_table(result)))
    """),
    code("""
    def win_errors(results):
        \"\"\"Error bars (below, above) of the agents' win rates: their 95% intervals.\"\"\"
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
        right.hist(np.clip(a.round_scores, bins[0], bins[-1]), bins=bins, density=True, histtype="step",
                   linewidth=2, color=colour, label=f"{a.name} (mean {a.mean_round_score:.1f})")
    right.set_xlabel("round score (doubling included, clipped to -10..120; lower is better)")
    right.set_ylabel("share of rounds")
    right.set_title("Round scores")
    right.legend()
    plt.tight_layout()
    plt.show()
    """),
    md("""
    ## 7. Export a game half-way, then continue or replay it

    `engine.export_game(g)` returns the full state of game `g` as plain JSON-ready data (see
    `skyjo_env/snapshot.py` for its keys), including the game's random-stream key, so the
    reshuffles of the discard pile (R12) come out the same after an import. `import_game` loads
    it into any slot of any engine with the same rules.

    Below, two deterministic heuristics play one game. We keep the state at the start and part-way
    through the second round, and every action taken. Then we check two things:

    * importing the half-way state and letting the same agents play on ends in exactly the same
      final state;
    * importing the starting state and replaying the recorded actions does too.
    """),
    code("""
    def play(engine, players, max_actions=None, rounds=None):
        \"\"\"Play game 0 of a one-game engine until it ends, or for `max_actions`, or until `rounds`
        rounds are complete; return the actions taken.\"\"\"
        taken = []
        while (engine.phase[0] != OVER and (max_actions is None or len(taken) < max_actions)
               and (rounds is None or engine.round_index[0] < rounds)):
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
    """),
    code("""
    history += play(original, players)
    final = original.export_game(0)
    print(f"the original game ended after {len(history)} actions with totals {final['totals']}")

    continued = SkyjoEngine(two_rules, 1, auto_reset=False)
    continued.import_game(0, json.loads(halfway))
    play(continued, players)
    print("continued from the half-way export: totals", continued.export_game(0)["totals"],
          "| same final state:", continued.export_game(0) == final)

    replayed = SkyjoEngine(two_rules, 1, auto_reset=False)
    replayed.import_game(0, start)
    for action in history:
        replayed.step(np.array([action]))
    print("replayed the recorded actions from the start: totals", replayed.export_game(0)["totals"],
          "| same final state:", replayed.export_game(0) == final)
    assert continued.export_game(0) == final and replayed.export_game(0) == final
    """),
    code("""
    fig, axes = plt.subplots(1, 2, figsize=(14, 5))
    images = {"half-way (the exported state)": SkyjoEngine(two_rules, 1, auto_reset=False),
              "end of the continued game": continued}
    images["half-way (the exported state)"].import_game(0, json.loads(halfway))
    for ax, (title, eng) in zip(axes, images.items()):
        ax.imshow(render_rgb(eng, 0))
        ax.set_title(title)
        ax.set_axis_off()
    plt.tight_layout()
    plt.show()
    """),
    md("""
    ## Where next

    * `training.ipynb` trains a PPO agent on the batched vector environment and measures it.
    * `strategy.ipynb` uses batched simulations to ask what matters in Skyjo: the value of each
      card, the column and doubling rules, and the number of players.
    """),
]


# =================================================================================== training
TRAINING = [
    md("""
    # Training a PPO agent

    `skyjo_env.train.ppo.train` trains sb3-contrib's `MaskablePPO` on `SkyjoSB3VecEnv`, a stable-baselines3
    vector environment that steps hundreds of games in one engine. Each game seats the learner at
    a random seat against opponents drawn from a mixture: the heuristics and frozen snapshots of
    the learner itself (self-play). During training it measures the learner's win rate against each
    heuristic and appends it to `eval.jsonl`; at the end it exports the actor as a numpy policy
    (`agent.npz`) and plays a tournament.

    This notebook trains a small agent for a few minutes, plots its learning curve and measures
    it. A serious run (the shipped agents) takes millions of steps: `skyjo train --help`.
    """),
    code("""
    %matplotlib inline
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
    from skyjo_env.train.config import TrainConfig
    from skyjo_env.train.ppo import train
    from skyjo_env.train.report import markdown_table
    from skyjo_env.train.tournament import run_tournament

    %BUDGET%
    """),
    md("""
    ## 1. The configuration

    `TrainConfig` holds every hyper-parameter with a documented default (the README's main run).
    Here we shrink it: 1.5 million learner steps instead of millions more, a smaller network,
    short rollouts (128 games x 32 steps) cut into minibatches of 1024, which gives many updates
    per sample and so learns sooner, and an evaluation every 100,000 steps so the learning curve
    has points. The learner trains against a mixture of `counting`, `threshold` and its own
    snapshots. The reward is the round-score difference (`reward="score"`: each round, the
    opponents' mean round score minus one's own), which gives far more signal than win/loss at
    the end of a game.

    Before PPO starts, a warm start (`warm_start="counting"`) lets the counting heuristic play
    the learner's seat for a few hundred thousand turns and fits the networks to its moves and
    returns (behaviour cloning, `train/imitation.py`); PPO then improves on that instead of
    starting from random play. `warm_start=None` trains from scratch.

    The networks also read the counting heuristic's *advice* (`advice="counting"`,
    `agents/advice.py`): after the observation, how many points worse counting rates each action
    than its favourite, and which one that is. The clone then matches counting move for move within
    an epoch, and PPO learns where to depart from it. `advice=None` gives the observation alone.

    The run writes into `runs/notebook-ppo` under the notebook's working folder.
    """),
    code("""
    OUT = Path("runs/notebook-ppo")
    if SMALL:
        FINAL_GAMES = 8
        config = TrainConfig(total_timesteps=2_048, num_envs=32, n_steps=32, batch_size=512, net_arch=[64, 64],
                             eval_every=1_024, eval_games=4, snapshot_every=1_024, checkpoint_every=0,
                             warm_start_samples=4_096, warm_start_epochs=1, final_games=FINAL_GAMES, out_dir=str(OUT))
    else:
        FINAL_GAMES = 2_000
        config = TrainConfig(total_timesteps=1_500_000, num_envs=128, n_steps=32, batch_size=1_024, net_arch=[128, 128],
                             eval_every=100_000, eval_games=200, snapshot_every=100_000, checkpoint_every=0,
                             warm_start_samples=300_000, warm_start_epochs=4, time_limit_minutes=10,  # on a slow machine, stop learning at 10 minutes
                             final_games=FINAL_GAMES, out_dir=str(OUT))
    print(f"budget {BUDGET!r}: {config.total_timesteps:,} learner steps, {FINAL_GAMES} games in the final tournament")
    print({k: v for k, v in config.to_dict().items() if k in (
        "players", "total_timesteps", "num_envs", "n_steps", "batch_size", "net_arch", "opponents", "reward",
        "advice", "warm_start", "warm_start_samples", "eval_every", "eval_games")})
    """),
    md("""
    ## 2. Train

    One call. On two CPU cores the full budget takes a few minutes (five to six on a busy
    machine); most of it is PPO's gradient steps and the evaluations, the environment itself steps
    thousands of games per second.
    """),
    code("""
    started = time.perf_counter()
    outcome = train(config, overwrite=True, progress=False)  # overwrite: a second run of this cell starts afresh
    print(f"trained {outcome.timesteps:,} learner steps in {time.perf_counter() - started:.0f} s")
    print("files:", sorted(p.name for p in OUT.iterdir()))
    """),
    md("""
    ## 3. The learning curve

    Each line of `eval.jsonl` holds, at some number of learner steps, the greedy learner's win
    rate (with a 95% interval) and mean game total against each heuristic, measured over
    `eval_games` complete games with the heuristic in every other seat. The dotted line is what a
    player as good as its opponents would win: 1 / players.

    What to expect at the full budget: with the advice and the warm start, the first evaluation
    already plays like `counting`: it beats `random` and `threshold` by far and wins about half its
    games against `counting`; PPO then looks for moves where it can do better than its teacher.
    Without the advice (`advice=None`) the clone agrees with counting on about 90% of its moves and
    starts near 25% against it; from scratch (`warm_start=None`) beating `threshold` alone took
    about a million steps in our runs.
    """),
    code("""
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
        line, = left.plot(steps, rate, marker="o", label=f"vs {name}")
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
    """),
    md("""
    ## 4. The agent in a tournament

    At the end `train` put the exported agent into a tournament with the heuristics, every agent
    taking every seat in turn. `outcome.tournament` is that result. In two-player games among
    four agents each one meets all three others, so a win rate mixes easy and hard opponents;
    the next section takes them one at a time.
    """),
    code("""
    def plot_win_rates(result, colors, title, width=7):
        \"\"\"Bar chart of a tournament's win rates with their 95% intervals as error bars.\"\"\"
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
    plot_win_rates(result, ["tab:green", "tab:gray", "tab:orange", "tab:blue"],
                   f"Tournament: {result.games} games, {result.players} players")
    """),
    md("""
    ## 5. Using the trained agent

    `agent.npz` is a plain numpy file: `MLPPolicy.load` needs neither torch nor stable-baselines3.
    It is a batched policy like the heuristics, so it plays anywhere they do. Here it meets each
    heuristic head-to-head (new deals), and we look at how its round scores compare.
    """),
    code("""
    mine = MLPPolicy.load(outcome.agent_path)
    print(f"{mine.name}: {mine.metadata.get('timesteps'):,} learner steps")
    mine.name = "this notebook's ppo"  # to tell it from the shipped agent of the same name below
    fig, ax = plt.subplots(figsize=(8, 4))
    bins = np.arange(-10, 121, 4)
    for name, colour in [("threshold", "tab:orange"), ("counting", "tab:blue")]:
        duel = run_tournament([mine, agents.make(name)], players=2, games=FINAL_GAMES, seed=1, progress=False)
        me = duel.agents[0]
        print(f"vs {name}: won {me.win_rate:.1%} [{me.win_ci[0]:.1%}, {me.win_ci[1]:.1%}] of {duel.games} games; "
              f"mean round score {me.mean_round_score:.1f} vs {duel.agents[1].mean_round_score:.1f}")
        ax.hist(np.clip(me.round_scores, bins[0], bins[-1]), bins=bins, density=True, histtype="step", linewidth=2,
                color=colour, label=f"{mine.name} vs {name} (mean {me.mean_round_score:.1f})")
    ax.set_xlabel("the agent's round score (lower is better)")
    ax.set_ylabel("share of rounds")
    ax.set_title("Round scores of the trained agent")
    ax.legend()
    plt.show()
    """),
    md("""
    ## 6. The shipped agent

    The package ships agents trained for much longer; `skyjo_env.agents.pretrained.available()` lists them
    and `skyjo_env.agents.pretrained.load(name)` loads one. If the two-player agent is there, we compare
    it with the agent trained above and with the heuristics.
    """),
    code("""
    shipped_name = f"ppo-{config.players}p"
    print("shipped agents:", pretrained.available() or "none")
    if shipped_name in pretrained.available():
        shipped = pretrained.load(shipped_name)
        shipped.name = f"{shipped_name} (shipped)"
        pool = [shipped, mine, agents.make("threshold"), agents.make("counting")]
        compared = run_tournament(pool, players=config.players, games=FINAL_GAMES, seed=2, progress=False)
        display(Markdown(markdown_table(compared)))
        plot_win_rates(compared, ["tab:purple", "tab:green", "tab:orange", "tab:blue"],
                       f"Shipped agent vs this notebook's agent: {compared.games} games", width=9)
    else:
        print(f"No shipped agent {shipped_name!r} in this installation (agents/weights/ has none yet): "
              "skipping the comparison.")
    """),
]


# =================================================================================== strategy
STRATEGY = [
    md("""
    # What the data says about Skyjo

    The engine plays thousands of games per second, so questions about the game can be answered
    by simulation instead of argument. This notebook asks:

    1. What is each card worth: how much does being dealt a 12 (or a -2) cost (or gain) you, and
       which cards are left in the grids at the end?
    2. What do the column rule (R13, R14) and the doubling rule (R17) change?
    3. How do scores, game length and the edge of a better player change from 2 to 8 players?

    The players are the heuristics (`counting`, the strongest; `threshold`, a simple baseline)
    and, where installed, the shipped PPO agents. All numbers are for *these* players: a
    different strategy gives different numbers. Every figure has its sample size in the title.
    """),
    code("""
    %matplotlib inline
    import os

    import matplotlib.pyplot as plt
    import numpy as np

    from skyjo_env import agents
    from skyjo_env.agents import pretrained
    from skyjo_env import Rules, SkyjoEngine
    from skyjo_env.cards import COUNTS, DECK, VALUES
    from skyjo_env.engine import OVER
    from skyjo_env.observation import observe
    from skyjo_env.train.tournament import run_tournament

    %BUDGET%
    ROUNDS = 100 if SMALL else 6_000  # single rounds simulated per configuration
    GAMES = 8 if SMALL else 1_500  # complete games per tournament
    PLAYER_COUNTS = [2, 4, 8] if SMALL else list(range(2, 9))
    VALUES = VALUES.astype(int)  # -2..12
    DECK_MEAN = DECK.mean()
    SHIPPED = {n: pretrained.load(n) for n in pretrained.available()}
    print(f"budget {BUDGET!r}: {ROUNDS} rounds per configuration, {GAMES} games per tournament")
    print("shipped agents:", ", ".join(SHIPPED) or "none installed: the heuristics only")
    """),
    md("""
    ## A round simulator

    A round is the natural unit for most questions. With `Rules(episode="round")` a game is a
    single round, and with `auto_reset=False` each game stays in its final state, so after the
    batch is done the engine still holds every final grid. We also copy the dealt cards before
    the first action. `policies[s]` plays seat `s`.
    """),
    code("""
    def play_rounds(policies, rounds=ROUNDS, seed=0, **rule_options):
        \"\"\"Play `rounds` single rounds at once; return what each one dealt, how it ended and how long it took.\"\"\"
        P = len(policies)
        engine = SkyjoEngine(Rules(num_players=P, episode="round", **rule_options), rounds, seed=seed,
                             auto_reset=False)
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
        \"\"\"Error bars (below, above) of the agents' win rates: their 95% intervals.\"\"\"
        return np.array([[max(a.win_rate - a.win_ci[0], 0), max(a.win_ci[1] - a.win_rate, 0)] for a in results]).T


    def by_value(cards, keep=None):
        \"\"\"Count each value -2..12 in grids `cards` (..., 12), optionally only where `keep`.\"\"\"
        hits = cards[..., None] == VALUES
        if keep is not None:
            hits &= keep[..., None]
        return hits.sum(axis=-2)


    self_play = {"counting": agents.make("counting"), "threshold": agents.make("threshold")}
    if "ppo-2p" in SHIPPED:
        self_play["ppo-2p"] = SHIPPED["ppo-2p"]
    two_player = {name: play_rounds([p, p]) for name, p in self_play.items()}  # self-play, 2 players
    for name, d in two_player.items():
        print(f"{name:>9} self-play: mean round score {d['scores'].mean():5.1f}, "
              f"{d['turns'].mean():4.1f} turns per player per round")
    """),
    md("""
    ## 1. The value of each card

    ### What being dealt a card costs

    The deal is random, so the dealt grid is a fair experiment: regress each player's round score
    on how many cards of each value they were dealt (12 cards: no intercept needed), and the
    coefficient of value `v` is what one dealt `v` adds to the round score. Relative to an
    average dealt card, it would be `v - 5.07` if every dealt card stayed until the end (grey
    line). The gap between the bars and the line is what play recovers: high cards are swapped out,
    low cards are kept, but the face-down ones are not known until they are turned up. Error bars
    are 95% intervals (treating every seat as an independent sample).
    """),
    code("""
    share = COUNTS / COUNTS.sum()
    VERSUS_AVERAGE = np.eye(VALUES.size) - share  # row v: one card v instead of an average dealt card


    def card_effects(X, y):
        \"\"\"Least-squares effect of one dealt card of each value vs an average one, and its 95% half-width.\"\"\"
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
        print(f"{name:>9}: a dealt 12 costs {cost[-1] - cost[0]:.1f} points more than a dealt -2 "
              f"(14 if both stayed to the end) and {gain[0] - gain[-1]:.1f} points of % of round-win chance")
    left.plot(VALUES, VALUES - DECK_MEAN, color="gray", marker="_", markersize=12, linestyle="none",
              label="if kept to the end: v - 5.07")
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
    """),
    md("""
    ### Which cards are left at the end

    Every grid is dealt 12 cards in the deck's proportions (grey). At the end of the round, the
    bars show how many cards of each value are still on the table (cards in removed columns do not
    count). Good play keeps the negative cards and zeros, and sheds the high ones.
    """),
    code("""
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / (len(two_player) + 1)
    ax.bar(VALUES - width * len(two_player) / 2, 12 * share, width=width, color="lightgray", label="dealt (deck share x 12)")
    for i, (name, d) in enumerate(two_player.items(), start=1):
        left_over = by_value(d["final"], ~d["removed"]).reshape(-1, VALUES.size).mean(axis=0)
        columns = d["removed"].reshape(-1, 12).sum(axis=1).mean() / 3
        ax.bar(VALUES + width * (i - len(two_player) / 2), left_over, width=width,
               label=f"{name}: at the end ({columns:.2f} columns removed per grid)")
    ax.set_xticks(VALUES)
    ax.set_xlabel("card value")
    ax.set_ylabel("cards per grid")
    ax.set_title(f"Cards dealt and cards left in the final grids ({ROUNDS} rounds x 2 players)")
    ax.legend()
    plt.show()
    """),
    md("""
    ## 2. The column rule

    `Rules` can switch the column rule (R13) off, or keep it during play but not when the last
    cards are turned up for scoring (R14, `column_rule_at_final_reveal`). We play the same deals
    (same seed) under each variant. Note that the heuristics do not know which rules are in force:
    `counting` builds columns even when the rule is off, which costs it a little there.
    The tournament panel plays complete games of `counting` against `threshold`.
    """),
    code("""
    variants = {
        "column rule (default)": {},
        "not at final reveal": {"column_rule_at_final_reveal": False},
        "no column rule": {"column_rule": False},
    }
    column_rounds = {v: {n: play_rounds([p, p], seed=1, **opts) for n, p in self_play.items() if n != "ppo-2p"}
                     for v, opts in variants.items()}
    duels = {v: run_tournament([agents.make("counting"), agents.make("threshold")], players=2, games=GAMES,
                               rules=Rules(**opts), seed=1, progress=False)
             for v, opts in variants.items()}

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
    axes[3].bar(x, [a.win_rate for a in counting_rates], color="tab:blue",
                yerr=win_errors(counting_rates), capsize=6)
    for ax, label in zip(axes, ["mean round score", "turns per player per round", "columns removed per grid",
                                "counting's win rate vs threshold"]):
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
        print(f"{v:>22}: counting wins {d.agents[0].win_rate:.1%} of {d.games} games against threshold, "
              f"{d.agents[0].mean_rounds:.2f} rounds per game")
    """),
    md("""
    ## 3. The doubling rule

    The player who ends a round (turns up their last card first) has their round score doubled
    unless it is strictly the lowest (R17; a score of zero or less is never doubled). `Rules` has
    no switch for it, but the final grids tell us everything: we compare the ender's score
    before doubling with the best opponent's, count how often the ender was doubled and what it
    cost, and recompute every round score without doubling (the play itself unchanged).
    """),
    code("""
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
        print(f"{name:>9}: the ender wins {np.mean(margin < 0):.0%} of rounds outright; doubled in {doubled.mean():.1%}, "
              f"costing {(d['scores'][rows, d['ender']] - own)[doubled].mean() if doubled.any() else 0:.1f} points "
              f"when it happens; mean round score {d['scores'].mean():.2f} with doubling, {d['raw'].mean():.2f} without")
    plt.tight_layout()
    plt.show()
    """),
    md("""
    ## 4. From 2 to 8 players

    Skyjo takes 2 to 8 players (R2). For each count we play single rounds of `counting` against
    itself, and complete games of one `counting` player against `threshold` players in every
    other seat (the tournament rotates the seats). With more players, more of the deck is dealt
    (96 of the 150 cards at 8 players), so the draw pile runs out sooner and the discard pile is
    shuffled into a new one (R12); we count those reshuffles too. A better player's edge is
    measured against the 1 / players share that a player as good as the others would win. (The
    `"small"` budget plays 2, 4 and 8 players only.)
    """),
    code("""
    counts = PLAYER_COUNTS
    per_count = {}
    for P in counts:
        counting = agents.make("counting")
        d = play_rounds([counting] * P, seed=P)
        rows = np.arange(len(d["ender"]))
        duel = run_tournament([agents.make("counting")] + [agents.make("threshold") for _ in range(P - 1)],
                              players=P, games=GAMES, seed=P, progress=False)
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
            ppo = run_tournament([SHIPPED[f"ppo-{P}p"]] + [agents.make("threshold") for _ in range(P - 1)],
                                 players=P, games=GAMES, seed=P, progress=False)
            per_count[P]["ppo win"] = ppo.agents[0]
        print(f"P={P}: round score {per_count[P]['round score']:.1f}, {per_count[P]['turns']:.1f} turns, "
              f"{per_count[P]['reshuffles']:.2f} reshuffles per round, "
              f"ender doubled {per_count[P]['doubled']:.0%}, {per_count[P]['rounds per game']:.2f} rounds per game, "
              f"counting wins {per_count[P]['win'].win_rate:.1%} vs 1/P = {1 / P:.1%}")
    """),
    code("""
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    (a, b), (c, e) = axes
    a.plot(counts, [per_count[P]["round score"] for P in counts], marker="o")
    a.set_ylabel("mean round score (counting self-play)")
    a.set_title(f"Round score ({ROUNDS} rounds per point)")
    b.plot(counts, [per_count[P]["turns"] for P in counts], marker="o", label="turns per player per round")
    b.plot(counts, [per_count[P]["rounds per game"] for P in counts], marker="s", label="rounds per game (vs threshold)")
    b.plot(counts, [per_count[P]["reshuffles"] for P in counts], marker="^", label="reshuffles of the discard pile per round")
    b.set_ylabel("count")
    b.set_title("How long rounds and games last")
    b.legend()
    c.plot(counts, [100 * per_count[P]["doubled"] for P in counts], marker="o", color="tab:red")
    c.set_ylabel("rounds where the ender is doubled (%)")
    c.set_ylim(0, None)
    c.set_title("How often the round-ender is doubled (R17)")
    wins = [per_count[P]["win"] for P in counts]
    e.errorbar(counts, [w.win_rate for w in wins], capsize=4, marker="o", label="one counting vs threshold players",
               yerr=win_errors(wins))
    shipped_counts = [P for P in counts if "ppo win" in per_count[P]]
    if shipped_counts:
        e.plot(shipped_counts, [per_count[P]["ppo win"].win_rate for P in shipped_counts], marker="D",
               linestyle="none", color="tab:purple", label="one shipped PPO agent vs threshold players")
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
    """),
    md("""
    ## Reading the results

    The numbers printed above come from the budget this notebook ran with; at the `"small"`
    budget they are noise. Run it with the default `"full"` budget (a few minutes) to read them.
    In the full-budget run made when this notebook was written (the heuristics of that time; the
    figures above are the ones to trust if the agents have changed since), the data said:

    * **Cards.** Play recovers most of a bad deal: for `counting`, a dealt 12 instead of a dealt
      -2 cost about 3 round points, not 14, and about 8.5 points of % of the chance to win the
      round. For the simpler `threshold` player the same swap cost about twice as much. At the
      end of a round the grids hold mostly -2..3; cards of 6 and more are nearly all gone.
    * **Columns.** The column rule is worth about 6 points a round to `counting` (mean round score
      14 with it, 20 without in self-play; about 0.6 columns removed per grid). Applying it at the
      final reveal too (R14) barely matters. Much of `counting`'s edge is column building: it
      beat `threshold` in 97% of games with the rule and lost more often than not without it.
    * **Doubling.** Knowing when to end a round is a large part of good play: `counting`'s enders
      were doubled in about 14% of rounds, `threshold`'s in about half, which added almost 6
      points to `threshold`'s mean round score and under 1 to `counting`'s.
    * **Players.** Round scores rose slowly from 2 to 6 players, then jumped at 7 and 8, where
      nearly every round reshuffles the discard pile. Games got shorter (about 5 rounds with 2
      players, 2 with 8), since with more players someone reaches 100 sooner. The lone
      `counting` player's win rate fell from 96% to 38%, yet stayed two to three times the
      1 / players of an equal player. Round-enders were doubled more often as opponents were
      added, from 14% of rounds with 2 players to about 29% with 5 and 6, and a little less
      with 7 and 8.
    """),
]


NOTEBOOKS = {"quickstart": QUICKSTART, "training": TRAINING, "strategy": STRATEGY}


def build(name: str) -> nbformat.NotebookNode:
    """The notebook ``name`` without outputs, with cell ids ``name-01``, ``name-02``..."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for i, (kind, source) in enumerate(NOTEBOOKS[name], start=1):
        cell = nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_code_cell(source)
        cell.id = f"{name}-{i:02d}"
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def text(name: str) -> str:
    """The file content of notebook ``name``, as :func:`main` writes it."""
    return nbformat.writes(build(name)) + "\n"


def main(argv: list[str] | None = None) -> int:
    for name in NOTEBOOKS:
        path = FOLDER / f"{name}.ipynb"
        path.write_text(text(name))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
