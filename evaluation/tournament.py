"""Tournaments: complete games among any list of agents, all batched in one engine.

Line-ups (who sits where) are built in blocks of `n = len(agents)` games. Each block draws a
random order `pi` of the agents; game `j` of the block seats `pi[(j + s) % n]` at seat `s`.
So within every block each agent sits in every seat exactly once, whatever `n` and the number
of seats: with more agents than seats each game holds a window of `players` agents of the
block's order (different pairings from block to block), with fewer agents than seats an agent
holds several seats of one game. The number of games is rounded up to a whole number of blocks.

Every step, for each agent, the games where one of its seats is to act are gathered, observed and
passed to the agent in one call; then all those games step at once
([`skyjo_env.opponents.play_policies()`][skyjo_env.opponents.play_policies]). An illegal action raises `ValueError`
naming the agent.

A game still running after `max_steps` actions (agents that never end a round) is abandoned,
counted in `unfinished` and left out of every figure.

An agent that fails ends the tournament with an [`AgentError`][skyjo_env.opponents.AgentError] naming it, and
no result: one that raises, one that takes more than `move_timeout` seconds a move (checked when
each of its calls returns), one that finished no game (all its games abandoned). The games are
played together, so those finished before the failure are the shortest ones, a biased sample:
they are not reported (`skyjo tournament` writes nothing).

Figures are per seat taken (a game in which an agent holds two seats counts twice): win rate
(R20: all tied lowest totals win) with a Wilson 95% interval, win shares (a win shared by k tied
seats counts 1/k, so every game hands out one win in all), mean round score with a 95%
interval, mean game total, mean rounds per game. The pool is rated with OpenSkill's
Plackett-Luce model, fed every game's ranking of the agents in it, in game order; an agent holding
several seats is ranked by the mean total of its seats.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skyjo_env.agents.base import Policy
from skyjo_env.checks import MAX_STEPS, check_max_steps, is_integer
from skyjo_env.engine import SkyjoEngine
from skyjo_env.evaluation.progress import Progress
from skyjo_env.evaluation.stats import mean_interval, wilson_interval
from skyjo_env.limits import MAX_GAMES, check_limit
from skyjo_env.opponents import AgentError, check_move_timeout, play_policies, policy_name
from skyjo_env.phases import OVER
from skyjo_env.rules import Rules

RATING_MODEL = "OpenSkill Plackett-Luce"


@dataclass
class AgentResult:
    """One agent's figures in a tournament (per seat it took)."""

    name: str
    seats: int  #: seats taken over all games (games x seats per game)
    wins: int
    win_rate: float
    win_ci: tuple[float, float]  #: Wilson 95% interval
    rounds: int  #: round scores recorded
    mean_round_score: float
    round_score_ci: tuple[float, float]  #: 95% interval of the mean round score
    mean_game_total: float
    mean_rounds: float  #: rounds per game, over the games it played
    rating_mu: float
    rating_sigma: float
    rating_ordinal: float  #: mu - 3 sigma, the conservative rating
    seat_counts: list[int]  #: seats taken at each seat index
    win_shares: float  #: wins, one shared by k tied seats (R20) counted 1/k: a game's shares sum to 1
    round_scores: np.ndarray = field(repr=False)  #: every round score, for plots

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures (without the raw round scores)."""
        return {
            "name": self.name,
            "seats": self.seats,
            "wins": self.wins,
            "win_rate": self.win_rate,
            "win_ci_low": self.win_ci[0],
            "win_ci_high": self.win_ci[1],
            "rounds": self.rounds,
            "mean_round_score": self.mean_round_score,
            "round_score_ci_low": self.round_score_ci[0],
            "round_score_ci_high": self.round_score_ci[1],
            "mean_game_total": self.mean_game_total,
            "mean_rounds": self.mean_rounds,
            "rating_mu": self.rating_mu,
            "rating_sigma": self.rating_sigma,
            "rating_ordinal": self.rating_ordinal,
            "seat_counts": self.seat_counts,
            "win_shares": self.win_shares,
        }


@dataclass
class TournamentResult:
    """What [`run_tournament()`][run_tournament] measured."""

    agents: list[AgentResult]  #: in the order the agents were given
    players: int
    games: int
    rules: Rules
    seed: int | None
    seconds: float
    unfinished: int = 0  #: games abandoned after `max_steps` actions, left out of the figures
    rating_model: str = RATING_MODEL

    def to_dict(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "seconds": self.seconds,
            "unfinished": self.unfinished,
            "rules": self.rules.to_dict(),
            "rating_model": self.rating_model,
            "agents": [a.to_dict() for a in self.agents],
        }

    def by_name(self, name: str) -> AgentResult:
        """The result of the agent labelled `name`."""
        for a in self.agents:
            if a.name == name:
                return a
        raise KeyError(f"no agent {name!r} in this result; agents: {[a.name for a in self.agents]}")


def games_played(games: int, num_agents: int) -> int:
    """The games a tournament of `num_agents` plays when asked for `games`: whole line-up blocks."""
    return -(-games // num_agents) * num_agents


def lineups(num_agents: int, players: int, games: int, rng: np.random.Generator) -> np.ndarray:
    """`(G, players)` agent index per game and seat, `G` = [`games_played()`][games_played]."""
    if num_agents < 1:
        raise ValueError("a tournament needs at least one agent")
    blocks = games_played(games, num_agents) // num_agents
    order = np.argsort(rng.random((blocks, num_agents)), axis=1)  # one random agent order per block
    window = (np.arange(num_agents)[:, None] + np.arange(players)[None, :]) % num_agents  # (n, P)
    return order[:, window].reshape(blocks * num_agents, players)


def labels(agents: Sequence[Policy]) -> list[str]:
    """Agent names, with `#2`, `#3`... appended to repeated names."""
    seen: dict[str, int] = {}
    out = []
    for agent in agents:
        name = policy_name(agent)
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def run_tournament(
    agents: Sequence[Policy],
    players: int,
    games: int,
    rules: Rules | None = None,
    seed: int | None = 0,
    progress: bool | Progress = True,
    max_steps: int = MAX_STEPS,
    move_timeout: float | None = None,
) -> TournamentResult:
    """Play `games` complete games (rounded up to whole line-up blocks) among `agents`.

    Args:
        agents: the policies; the same object may appear once only, repeated names get `#2`...
        players: seats per game, 2..8 (R2).
        games: 1 to [`MAX_GAMES`][skyjo_env.limits.MAX_GAMES].
        rules: rule options; `num_players` is set to `players`.
        seed: seeds the deals and the line-ups.
        progress: report finished games on a new [`Progress`][] (on
            stderr), or on the one given (one bar over several tournaments; left open).
        max_steps: abandon a game after this many actions (see `unfinished`), 1 to
            [`MAX_GAME_STEPS`][skyjo_env.limits.MAX_GAME_STEPS].
        move_timeout: each agent's time budget, seconds per move (`None`: none); see
            [`call_policy()`][skyjo_env.opponents.call_policy].

    Raises:
        ValueError: bad input, or an illegal action (naming the agent).
        AgentError: an agent raised, ran over `move_timeout`, or finished no game.
    """
    agents = list(agents)
    if not agents:
        raise ValueError("a tournament needs at least one agent")
    if len({id(a) for a in agents}) != len(agents):
        raise ValueError("the same agent object is listed twice; build one object per entry")
    if not is_integer(games) or games < 1:
        raise ValueError(f"games={games!r} is not allowed; use a positive integer")
    check_limit("games", games, MAX_GAMES)
    check_max_steps(max_steps)
    check_move_timeout(move_timeout)
    base = rules if rules is not None else Rules()
    rules = base.replace(num_players=players)
    rng = np.random.default_rng(seed)
    seats = lineups(len(agents), players, int(games), rng)
    started = time.perf_counter()
    play = _play(agents, seats, rules, int(rng.integers(1 << 63)), progress, max_steps, move_timeout)
    seconds = time.perf_counter() - started
    return _summarise(labels(agents), seats, play, rules, seed, seconds, max_steps)


@dataclass
class _Play:
    totals: np.ndarray  # (G, P) final game totals
    winners: np.ndarray  # (G, P) bool
    rounds: np.ndarray  # (G,) rounds played
    finished: np.ndarray  # (G,) bool, False for games abandoned after max_steps
    round_game: np.ndarray  # (R,) game of each recorded round score
    round_score: np.ndarray  # (R,) round scores


def _play(
    agents: list[Policy],
    seats: np.ndarray,
    rules: Rules,
    seed: int,
    progress: bool | Progress,
    max_steps: int,
    move_timeout: float | None,
) -> _Play:
    G, P = seats.shape
    engine = SkyjoEngine(rules, G, seed=seed, auto_reset=False)
    totals = np.zeros((G, P), dtype=np.int64)
    winners = np.zeros((G, P), dtype=bool)
    rounds = np.zeros(G, dtype=np.int64)
    finished = np.zeros(G, dtype=bool)
    round_game: list[np.ndarray] = []
    round_score: list[np.ndarray] = []
    active = np.arange(G)
    with contextlib.ExitStack() as opened:  # a bar of its own is closed at the end, a given one left open
        bar = (
            progress
            if isinstance(progress, Progress)
            else opened.enter_context(Progress(G, f"{P}-player games", "games", enabled=progress))
        )
        while active.size:
            who = seats[active, engine.current[active].astype(np.int64)]
            result = play_policies(engine, active, agents, who, role="agent", move_timeout=move_timeout)
            ended = np.flatnonzero(result.round_over)
            if ended.size:
                g = active[ended]
                rounds[g] += 1
                round_game.append(np.repeat(g, P))
                round_score.append(result.round_scores[ended].reshape(-1))
            over = np.flatnonzero(result.game_over)
            if over.size:
                g = active[over]
                totals[g] = result.totals[over]
                winners[g] = result.winners[over]
                finished[g] = True
            going = (engine.phase[active] != OVER) & (engine.steps[active] < max_steps)
            bar.update(active.size - int(going.sum()))
            active = active[going]
    game = np.concatenate(round_game) if round_game else np.zeros(0, dtype=np.int64)
    score = np.concatenate(round_score).astype(np.int64) if round_score else np.zeros(0, dtype=np.int64)
    return _Play(totals, winners, rounds, finished, game, score)


def _summarise(
    names: list[str], seats: np.ndarray, play: _Play, rules: Rules, seed: int | None, seconds: float, max_steps: int
) -> TournamentResult:
    G, P = seats.shape
    done = play.finished
    seats_done, totals, winners, rounds = seats[done], play.totals[done], play.winners[done], play.rounds[done]
    keep = done[play.round_game]
    round_agent = seats[play.round_game, np.arange(play.round_game.size) % P][keep]
    round_score = play.round_score[keep]
    ratings = _ratings(len(names), seats_done, totals)
    shares = winners / winners.sum(axis=1, keepdims=True)  # R20: tied winners split the game's one win
    results = []
    for i, name in enumerate(names):
        sat = seats_done == i  # (games, P)
        taken = int(sat.sum())
        if taken == 0:
            raise AgentError(
                name,
                f"agent {name!r} finished no game: all its {int((seats == i).any(axis=1).sum()):,} games were "
                f"abandoned after max_steps={max_steps:,} actions (a round no seat ends, R15)",
            )
        wins = int((sat & winners).sum())
        scores = round_score[round_agent == i]
        mu, sigma = ratings[i]
        results.append(
            AgentResult(
                name=name,
                seats=taken,
                wins=wins,
                win_rate=wins / taken,
                win_ci=wilson_interval(wins, taken),
                rounds=int(scores.size),
                mean_round_score=float(scores.mean()),
                round_score_ci=mean_interval(scores),
                mean_game_total=float(totals[sat].mean()),
                mean_rounds=float((rounds[:, None] * sat).sum() / taken),
                rating_mu=mu,
                rating_sigma=sigma,
                rating_ordinal=mu - 3 * sigma,
                seat_counts=sat.sum(axis=0).tolist(),
                win_shares=float(shares[sat].sum()),
                round_scores=scores,
            )
        )
    return TournamentResult(results, P, int(done.sum()), rules, seed, seconds, unfinished=int(G - done.sum()))


def _ratings(num_agents: int, seats: np.ndarray, totals: np.ndarray) -> list[tuple[float, float]]:
    """OpenSkill Plackett-Luce (mu, sigma) per agent from every game's ranking, in game order."""
    from openskill.models import PlackettLuce

    G, P = seats.shape
    # Mean total of each agent's seats in each game (NaN where it has none).
    held = np.zeros((G, num_agents))
    summed = np.zeros((G, num_agents))
    np.add.at(held, (np.repeat(np.arange(G), P), seats.reshape(-1)), 1)
    np.add.at(summed, (np.repeat(np.arange(G), P), seats.reshape(-1)), totals.reshape(-1))
    with np.errstate(invalid="ignore"):
        score = summed / held
    model = PlackettLuce()
    ratings = [model.rating() for _ in range(num_agents)]
    for row in score:
        present = np.flatnonzero(~np.isnan(row))
        if present.size < 2:
            continue
        s = row[present]
        ranks = (s[:, None] > s[None, :]).sum(axis=1) + 1  # 1 = lowest total; ties share a rank
        new = model.rate([[ratings[a]] for a in present], ranks=ranks.tolist())
        for a, (rating,) in zip(present.tolist(), new):
            ratings[a] = rating
    return [(r.mu, r.sigma) for r in ratings]
