"""The standard benchmark: one command, one report card, one rating on a fixed scale.

`skyjo benchmark SPEC` ([`run_benchmark()`][run_benchmark]) plays any agent spec against a fixed suite of
reference agents and rates it on a scale on which `random` is 0 and `counting` is 1000.
`docs/leaderboard.md` explains the card and lists every shipped agent.

**Matches.** At each table size P of the suite the agent plays one match against each reference
X: `games` complete games with the agent in one seat and P - 1 copies of X in the others, seats
rotated by the tournament's line-ups ([`run_tournament()`][run_tournament]), so the
agent holds every seat equally often. The references at P players are `random`, `threshold`,
`counting` and the registered agent `ppo-{P}p` where there is one. An agent trained for another
player count is skipped at that table size, with a note on the card.

**Rating model.** A game counts once, as the choice of its winner (Luce's choice model, the first
stage of Plackett-Luce): an agent of strength `a` against P - 1 copies of strength `b` wins
with probability `exp(a) / (exp(a) + (P - 1) exp(b))`, so a win is a win over each of the P - 1
others and a loss is a loss to the table; at P = 2 this is Bradley-Terry. R20 lets all tied lowest
totals win; here they split the game's one win (win shares: k tied winners get 1/k each).
Strengths are maximum-likelihood fits in which every match also counts `prior_share` (0.1%) more
games, won at the even share 1/P: a prior that keeps 0% and 100% win rates finite, and that grows
with the match, so a match reads the same at any number of games (quick and full suites, and the
reference matches, agree but for noise).

**The scale** ([`Scale`][]). The references' strengths are fitted from reference-vs-reference
matches (each pair at each table size; both ways round where P > 2), with `random` fixed at 0:
each one is the maximum-likelihood strength of its own results in the seat it held alone, the
others held at theirs ([`fit_strengths()`][fit_strengths]). This self-consistent fit gives a reference
benchmarked like any agent its own value back, although one seat against P - 1 copies is not
exactly what Luce's model says (threshold alone against three counting does worse than counting
alone against three threshold does better). They are fitted once per scale version and stored in
[`STORED_SCALE`][], not replayed each run: the scale is then one published set of numbers, the
same for the quick and full suites, on every run and machine, and a quick run does not pay for
the reference matches. (If the stored scale is for another version, a reference has changed: the
run plays the reference matches itself.) The agent's strength is then fitted alone, the references held fixed, and mapped linearly so that the
two anchors keep their values (random 0, counting 1000). Its 95% interval (Wald, on the strength)
is the agent's own sampling error; the references are fixed by definition.

**Versions.** A suite's version hashes its whole definition: games and seed, and its scale's table
sizes, references, rules, games, seed, prior, anchors, rating model and every reference's identity
(policy type, shipped weights' sha256, and a fingerprint of its play: a hash of the actions it
chooses in 9,600 positions of seeded random play, which any change of the agent, the engine or the
observations alters). The same agent on the same version gets the same card, timings aside.
Each match of a card has a version of its own ([`Scale.match_version()`][Scale.match_version]): its
table, rules, games, seed, opponent's identity and the agent's own play fingerprint. A saved card
whose matches all have their current versions holds the games a run would play, so
[`Benchmark.rerate()`][Benchmark.rerate] rates it on the current scale instead of playing it.

**Seeds.** The match against the k-th reference (from 0) at P players has seed
`suite.seed + 100 * P + k`; the reference match of the i-th against the j-th,
`scale.seed + 100 * P + 10 * i + j`. The seed deals the games and draws the line-ups; the agents at the table get
seeds from `numpy.random.SeedSequence(seed)`, the one-seat agent first.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import multiprocessing
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from skyjo_env import __version__, agents
from skyjo_env.agents import pretrained, registry
from skyjo_env.agents.specs import check_fits
from skyjo_env.engine import SkyjoEngine
from skyjo_env.evaluation.progress import Progress, duration
from skyjo_env.evaluation.report import figure_cells, markdown_rows, rules_text, text_rows
from skyjo_env.evaluation.stats import Z95
from skyjo_env.evaluation.tournament import AgentResult, TournamentResult, run_tournament
from skyjo_env.files import write_file, write_files
from skyjo_env.limits import MAX_GAMES, MAX_WORKERS, check_limit
from skyjo_env.observation import observe
from skyjo_env.opponents import call_policy, check_move_timeout, policy_name
from skyjo_env.rules import Rules
from skyjo_env.sampling import sample_mask

#: Id of the rating model; part of every version, so change it whenever the fit changes meaning.
RATING_MODEL = "luce-winner-v1"
#: The references at every table size, before the shipped PPO agent for that size.
HEURISTICS = ("random", "threshold", "counting")
#: Where the fitted reference strengths of the current scale version are kept.
STORED_SCALE = Path(__file__).with_name("benchmark_scale.json")
#: The benchmarked agent's name in matches and fits (`:` is in no agent name).
CANDIDATE = ":candidate"
#: Games and steps of seeded random play whose positions fingerprint a reference's play.
FINGERPRINT_POSITIONS = (64, 150)
#: Figures of the benchmarked agent that a card keeps per match (see [`AgentResult`][]).
MATCH_FIELDS = (
    "seats", "wins", "win_rate", "win_ci_low", "win_ci_high", "win_shares", "rounds", "mean_round_score",
    "round_score_ci_low", "round_score_ci_high", "mean_game_total", "mean_rounds",
)  # fmt: skip


def _check_games(games: int, players: Sequence[int], what: str) -> None:
    if isinstance(games, bool) or not isinstance(games, int) or games < 1 or any(games % p for p in players):
        raise ValueError(f"{what} games={games!r}: use a positive multiple of every table size {tuple(players)}")
    check_limit(f"{what} games", games, MAX_GAMES)


@dataclass(frozen=True)
class Match:
    """`agent` in one seat against `players - 1` copies of `opponent`: `games` games from `seed`."""

    players: int
    agent: str  #: an agent spec, or [`CANDIDATE`][]
    opponent: str
    games: int
    seed: int


@dataclass(frozen=True)
class Outcome:
    """What a match tells the fit: `agent`'s win shares in `games` finished games."""

    players: int
    agent: str
    opponent: str
    games: int
    win_shares: float
    seed: int  #: the match's seed (a record; the fit does not use it)

    @classmethod
    def of(cls, match: Match, result: TournamentResult) -> Outcome:
        """The outcome of `match`, played as `result` (the one-seat agent listed first)."""
        return cls(match.players, match.agent, match.opponent, result.games, result.agents[0].win_shares, match.seed)


@dataclass(frozen=True)
class Scale:
    """The fixed rating scale: references, table sizes, rules, reference matches, prior, anchors."""

    players: tuple[int, ...] = (2, 3, 4, 6)
    heuristics: tuple[str, ...] = HEURISTICS
    rules: Rules = Rules()  #: every option but `num_players`, which each table sets
    games: int = 12_000  #: per reference-vs-reference match
    seed: int = 10_000
    prior_share: float = 0.001  #: virtual games per match, as a share of its games, won at the even share 1/P
    anchors: tuple[tuple[str, float], tuple[str, float]] = (("random", 0.0), ("counting", 1000.0))

    def __post_init__(self) -> None:
        if (
            not self.players
            or len(set(self.players)) != len(self.players)
            or not all(2 <= p <= 8 for p in self.players)
        ):
            raise ValueError(f"players={self.players!r}: use distinct table sizes from 2 to 8 (R2)")
        _check_games(self.games, self.players, "scale")
        if not self.prior_share > 0:
            raise ValueError(f"prior_share={self.prior_share!r}: use a positive number (it keeps ratings finite)")
        (low, low_value), (high, high_value) = self.anchors
        if low == high or not {low, high} <= set(self.heuristics) or low_value == high_value:
            raise ValueError(f"anchors={self.anchors!r}: use two different heuristics with different values")

    def table(self, players: int) -> Rules:
        """The rules at a table of `players` seats."""
        return self.rules.replace(num_players=players)

    def rule_options(self) -> dict[str, Any]:
        """The rules, JSON-ready, without `num_players`."""
        return {k: v for k, v in self.rules.to_dict().items() if k != "num_players"}

    def references(self, players: int) -> tuple[str, ...]:
        """The references at `players` seats: the heuristics, then `ppo-{players}p` if registered."""
        shipped = f"ppo-{players}p"
        return self.heuristics + ((shipped,) if shipped in agents.names() else ())

    def match_version(self, match: Match, play: str) -> str:
        """A hash of everything the games of `match` depend on, given `play`, the fingerprint of its
        one-seat agent's play at that table ([`play_fingerprint()`][play_fingerprint]): the table size,
        rules, games and seed, and the opponent's identity. Two matches of one version are the same games."""
        rules = self.table(match.players)
        return _digest({
            "players": match.players, "rules": self.rule_options(), "games": match.games, "seed": match.seed,
            "agent": play, "opponent": identity(match.opponent, rules),
        })  # fmt: skip

    def reference_version(self, match: Match) -> str:
        """The [`match_version()`][match_version] of one of the reference matches, its one-seat reference by its identity."""
        return self.match_version(match, _digest(identity(match.agent, self.table(match.players))))

    def matches(self) -> list[Match]:
        """The reference-vs-reference matches that fix the references' strengths."""
        out = []
        for p in self.players:
            names = self.references(p)
            for i, a in enumerate(names):
                for j, b in enumerate(names):
                    if i != j and (p > 2 or i < j):  # at 2 players, a against b is b against a
                        out.append(Match(p, a, b, self.games, self.seed + 100 * p + 10 * i + j))
        return out

    def definition(self) -> dict[str, Any]:
        """Everything the scale's numbers depend on, JSON-ready."""
        return {
            "players": list(self.players),
            "references": {str(p): {n: identity(n, self.table(p)) for n in self.references(p)} for p in self.players},
            "rules": self.rule_options(),
            "games": self.games,
            "seed": self.seed,
            "prior_share": self.prior_share,
            "anchors": dict(self.anchors),
            "rating_model": RATING_MODEL,
        }

    @property
    def version(self) -> str:
        """A hash of [`definition()`][definition]."""
        return _digest(self.definition())


@dataclass(frozen=True)
class Suite:
    """A benchmark suite: `games` per match against every reference of `scale`, from `seed`."""

    id: str
    games: int  #: per match, a multiple of every table size (whole seat rotations)
    seed: int
    scale: Scale = Scale()

    def __post_init__(self) -> None:
        _check_games(self.games, self.scale.players, f"suite {self.id!r}")

    def matches(self, players: Sequence[int]) -> list[Match]:
        """The benchmarked agent's matches at the table sizes `players`."""
        return [
            Match(p, CANDIDATE, name, self.games, self.seed + 100 * p + k)
            for p in players
            for k, name in enumerate(self.scale.references(p))
        ]

    def definition(self) -> dict[str, Any]:
        """Everything a card on this suite depends on, but the agent; JSON-ready."""
        return {"id": self.id, "games": self.games, "seed": self.seed, "scale": self.scale.definition()}

    @property
    def version(self) -> str:
        """A hash of [`definition()`][definition]."""
        return _digest(self.definition())


QUICK = Suite("quick", games=1200, seed=0)
FULL = Suite("full", games=6000, seed=1000)
SUITES = {s.id: s for s in (QUICK, FULL)}


def _digest(definition: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(definition, sort_keys=True).encode()).hexdigest()[:12]


def identity(name: str, rules: Rules) -> dict[str, str]:
    """What pins the registered agent `name` down at a table under `rules`: its policy type, the
    sha256 of its shipped weights where it has them, and a fingerprint of its play."""
    return dict(_identity(registry.factory(name), name, rules))


@functools.cache
def _identity(factory: Any, name: str, rules: Rules) -> tuple[tuple[str, str], ...]:
    """[`identity()`][identity], cached per registered object (re-registering a name is a new identity)."""
    policy = agents.make(name, rules=rules, seed=0)
    found = {"type": f"{type(policy).__module__}.{type(policy).__qualname__}", "play": _fingerprint(policy, rules)}
    if name in pretrained.available():
        found["weights_sha256"] = hashlib.sha256(pretrained.path(name).read_bytes()).hexdigest()[:16]
    return tuple(found.items())


def play_fingerprint(spec: str, rules: Rules) -> str:
    """A hash of the play of the agent `spec` (built with seed 0) at a table under `rules`: the actions
    it chooses in [`FINGERPRINT_POSITIONS`][] positions of seeded random play."""
    return _fingerprint(agents.make(spec, rules=rules, seed=0), rules)


def _fingerprint(policy: Any, rules: Rules) -> str:
    """A hash of the actions `policy` chooses in [`FINGERPRINT_POSITIONS`][] positions of seeded
    random play (any change of the agent, the engine or the observations alters it)."""
    games, steps = FINGERPRINT_POSITIONS
    engine = SkyjoEngine(rules, games, seed=0)
    rng = np.random.default_rng(0)
    digest = hashlib.sha256()
    for _ in range(steps):
        masks = engine.legal_mask()
        shown = masks.copy()  # the policy's own: what it writes cannot change the positions played
        actions = call_policy(
            policy, observe(engine, engine.current), shown, moves=games, names=[policy_name(policy)], role="agent"
        )
        digest.update(np.asarray(actions).astype("<i8").tobytes())
        engine.step(sample_mask(masks, rng))
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------------------- the fit
_FIT_MAX_STEP = 1.0  #: the longest Newton step, in units of strength (a step beyond it overshoots into saturation)
_FIT_ITERATIONS = 1000
_FIT_MAX_GAP = 700.0  #: log-odds beyond it are certainty in floats: a fit that runs to them has no finite solution


def fit_strengths(
    outcomes: Sequence[Outcome], fixed: Mapping[str, float], prior_share: float
) -> dict[str, tuple[float, float]]:
    """Strengths, with standard errors, of the agents of `outcomes` not in `fixed`: each one the
    maximum-likelihood strength of its own results in the seat it held alone, the others held at
    theirs (the module's model; at 2 players both seats are held alone).

    For one free agent this is its maximum-likelihood fit; for several (the references) it is the
    self-consistent solution, so that a reference rated like any other agent gets its own strength
    back, although Luce's model does not fit the one-against-copies asymmetry of Skyjo exactly.
    Every outcome also counts `prior_share` times its games more, won at the even share 1/P.
    The standard error is that of each agent's own fit.
    """
    views = [*outcomes, *(Outcome(2, o.opponent, o.agent, o.games, o.games - o.win_shares, o.seed)
                          for o in outcomes if o.players == 2)]  # fmt: skip
    views = [v for v in views if v.agent not in fixed]
    free = sorted({v.agent for v in views})
    unseated = {v.opponent for v in views} - set(free) - set(fixed)
    if unseated:
        raise ValueError(f"no outcome seats {sorted(unseated)} alone, and no strength is fixed for them")
    index = {name: i for i, name in enumerate(free)}
    solo = np.array([index[v.agent] for v in views], dtype=np.int64)
    against = np.array([index.get(v.opponent, -1) for v in views], dtype=np.int64)  # -1: a fixed opponent
    offset = np.array([fixed.get(v.opponent, 0.0) + math.log(v.players - 1) for v in views])  # P - 1 copies
    games = np.array([v.games * (1 + prior_share) for v in views])
    wins = np.array([v.win_shares + v.games * prior_share / v.players for v in views])

    def gaps(s: np.ndarray) -> np.ndarray:
        """Each outcome's log-odds of a win for its agent alone."""
        return s[solo] - np.where(against >= 0, s[against], 0.0) - offset

    def equations(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each free agent's score (observed minus expected wins in its seats alone) and their Jacobian."""
        z = gaps(s)
        p, q = np.exp(-np.logaddexp(0, -z)), np.exp(-np.logaddexp(0, z))  # win and loss probability, stable
        weight = games * p * q
        jacobian = np.zeros((len(free), len(free)))
        np.add.at(jacobian, (solo, solo), -weight)
        np.add.at(jacobian, (solo[against >= 0], against[against >= 0]), weight[against >= 0])
        # wins over expected, exact near certainty too (where p rounds to 1)
        surplus = np.where(z > 0, wins - games + games * q, wins - games * p)
        return np.bincount(solo, surplus, minlength=len(free)), jacobian

    s = np.zeros(len(free))
    for _ in range(_FIT_ITERATIONS):  # Newton's method, steps of at most _FIT_MAX_STEP, halved while the scores grow
        score, jacobian = equations(s)
        try:
            step = np.linalg.solve(jacobian, -score)
        except np.linalg.LinAlgError:
            break  # the strengths ran off to where every game's result is certain
        step *= min(1.0, _FIT_MAX_STEP / max(np.abs(step).max(), 1e-300))
        while np.linalg.norm(equations(s + step)[0]) > np.linalg.norm(score) and np.abs(step).max() > 1e-12:
            step /= 2
        s += step
        if np.abs(step).max() < 1e-10:
            break
    score, jacobian = equations(s)
    if not (np.abs(score).max() < 1e-6 * games.max() and np.abs(gaps(s)).max() < _FIT_MAX_GAP):
        raise ValueError(
            f"no finite strengths of {free} fit these outcomes (too few games, won or lost nearly all):"
            f" play more games or raise prior_share (now {prior_share})"
        )
    se = 1 / np.sqrt(-np.diag(jacobian))
    return {name: (float(s[i]), float(se[i])) for i, name in enumerate(free)}


@dataclass(frozen=True)
class Rating:
    """A rating on the fixed scale, its 95% interval, and the strength it comes from."""

    value: float
    low: float
    high: float
    strength: float
    strength_se: float

    def text(self) -> str:
        """`value (low–high)`, rounded to whole points."""
        return f"{self.value:.0f} ({self.low:.0f}–{self.high:.0f})"


@dataclass
class Calibration:
    """A scale's reference strengths, fitted from its reference matches, and the map to ratings."""

    scale: Scale
    outcomes: list[Outcome]
    seconds: float  #: how long playing the reference matches took (not those kept from an earlier version)
    #: each outcome's [`Scale.reference_version()`][Scale.reference_version] where known, so that a later scale
    #: can keep the matches it shares with this one
    versions: Sequence[str | None] | None = None
    strengths: dict[str, float] = field(init=False)  #: fitted strengths, the first anchor at 0

    def __post_init__(self) -> None:
        origin = self.scale.anchors[0][0]
        fitted = fit_strengths(self.outcomes, {origin: 0.0}, self.scale.prior_share)
        self.strengths = {origin: 0.0} | {name: s for name, (s, _) in fitted.items()}

    def rating(self, strength: float) -> float:
        """`strength` on the scale: linear, through the two anchors' strengths and values."""
        (low, low_value), (high, high_value) = self.scale.anchors
        s0, s1 = self.strengths[low], self.strengths[high]
        return low_value + (high_value - low_value) * ((strength - s0) / (s1 - s0))  # exact at the anchors

    @property
    def points_per_strength(self) -> float:
        """Rating points per unit of strength: `d` points above an opponent win a share
        `1 / (1 + (P - 1) exp(-d / points_per_strength))` of the games against P - 1 copies of it."""
        return self.rating(1.0) - self.rating(0.0)

    def ratings(self) -> dict[str, float]:
        """Every reference's rating."""
        return {name: self.rating(s) for name, s in self.strengths.items()}

    def rate(self, outcomes: Sequence[Outcome]) -> Rating:
        """The rating of the agent of `outcomes` ([`CANDIDATE`][]), the references held fixed."""
        ((strength, se),) = fit_strengths(outcomes, self.strengths, self.scale.prior_share).values()
        low, high = self.rating(strength - Z95 * se), self.rating(strength + Z95 * se)
        return Rating(self.rating(strength), low, high, strength, se)

    def to_dict(self) -> dict[str, Any]:
        """The version, its definition, the fitted strengths and ratings, and every reference match."""
        return {
            "version": self.scale.version,
            "definition": self.scale.definition(),
            "strengths": self.strengths,
            "ratings": self.ratings(),
            "seconds": self.seconds,
            "outcomes": [asdict(o) | {"version": v} for o, v in zip(self.outcomes, self._versions(), strict=True)],
        }

    def _versions(self) -> Sequence[str | None]:
        return self.versions if self.versions is not None else [None] * len(self.outcomes)

    def save(self, path: str | Path | None = None) -> Path:
        """Write the calibration as JSON (by default to [`STORED_SCALE`][], where [`calibrate()`][calibrate] looks)."""
        return write_file(path or STORED_SCALE, json.dumps(self.to_dict(), indent=1) + "\n")


def stored_calibration(scale: Scale, path: str | Path | None = None) -> Calibration | None:
    """The calibration saved at `path` (default [`STORED_SCALE`][]) if it is for this version of
    `scale`, else `None`."""
    path = Path(path or STORED_SCALE)
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if data["version"] != scale.version:
        return None
    outcomes, versions = zip(*_stored_outcomes(data), strict=True)
    return Calibration(scale, list(outcomes), data["seconds"], list(versions))


def stored_outcomes(path: str | Path | None = None) -> dict[str, Outcome]:
    """The reference matches saved at `path` (default [`STORED_SCALE`][]), of any scale version, by
    their [`Scale.reference_version()`][Scale.reference_version] (those saved with one)."""
    path = Path(path or STORED_SCALE)
    if not path.is_file():
        return {}
    return {v: o for o, v in _stored_outcomes(json.loads(path.read_text())) if v is not None}


def _stored_outcomes(data: dict[str, Any]) -> list[tuple[Outcome, str | None]]:
    """The outcomes of a saved calibration, each with its version (`None` if saved without)."""
    names = [f.name for f in fields(Outcome)]
    return [(Outcome(**{k: o[k] for k in names}), o.get("version")) for o in data["outcomes"]]


def play_calibration(scale: Scale, progress: bool = True, kept: Mapping[str, Outcome] | None = None) -> Calibration:
    """Play the scale's reference matches and fit the references' strengths; a match whose
    [`Scale.reference_version()`][Scale.reference_version] is in `kept` (say, [`stored_outcomes()`][stored_outcomes]
    of an earlier version) is not played again: its outcome is those very games'."""
    matches = scale.matches()
    versions = [scale.reference_version(m) for m in matches]
    kept = kept or {}
    started = time.perf_counter()
    total = sum(m.games for m, v in zip(matches, versions, strict=True) if v not in kept)
    with Progress(total, f"reference matches (scale {scale.version})", "games", enabled=progress) as bar:
        outcomes = [kept[v] if v in kept else Outcome.of(m, play_match(m, scale, bar))
                    for m, v in zip(matches, versions, strict=True)]  # fmt: skip
    return Calibration(scale, outcomes, time.perf_counter() - started, versions)


def calibrate(scale: Scale, progress: bool = True) -> Calibration:
    """The scale's reference strengths: the stored ones when they are for this version, else played
    now, keeping the stored matches that are still current ([`stored_outcomes()`][stored_outcomes])."""
    return stored_calibration(scale) or play_calibration(scale, progress, stored_outcomes())


def play_match(
    match: Match,
    scale: Scale,
    progress: bool | Progress = False,
    candidate: Any = None,
    move_timeout: float | None = None,
) -> TournamentResult:
    """Play `match` under the scale's rules (`candidate`: the agent spec or policy [`CANDIDATE`][] stands for;
    `move_timeout`: every agent's time budget, see [`run_tournament()`][run_tournament])."""
    rules = scale.table(match.players)
    seeds = np.random.SeedSequence(match.seed).generate_state(match.players).tolist()
    pool = [agents.make(candidate if match.agent == CANDIDATE else match.agent, rules=rules, seed=seeds[0])]
    pool += [agents.make(match.opponent, rules=rules, seed=seed) for seed in seeds[1:]]
    return run_tournament(
        pool, match.players, match.games, rules=rules, seed=match.seed, progress=progress, move_timeout=move_timeout
    )


# ---------------------------------------------------------------------------- a run
@dataclass
class MatchResult:
    """One match of a card, as played."""

    match: Match
    result: TournamentResult
    version: str | None = None  #: see [`Scale.match_version()`][Scale.match_version]; `None` for a policy object

    @property
    def agent(self) -> AgentResult:
        """The benchmarked agent's figures."""
        return self.result.agents[0]

    def to_dict(self) -> dict[str, Any]:
        """The match and the agent's figures ([`MATCH_FIELDS`][]), JSON-ready."""
        figures = self.agent.to_dict()
        return {
            "players": self.match.players, "against": self.match.opponent, "seed": self.match.seed,
            "games": self.result.games, "unfinished": self.result.unfinished,
            **{k: figures[k] for k in MATCH_FIELDS}, "version": self.version, "seconds": self.result.seconds,
        }  # fmt: skip


@dataclass
class ReportCard:
    """What [`run_benchmark()`][run_benchmark] measured: the matches, the rating overall and per table size."""

    agent: str
    spec: str | None  #: the agent spec, if one was given as text
    suite: Suite
    version: str  #: the suite's version
    players: tuple[int, ...]  #: the table sizes played
    skipped: dict[int, str]  #: table size -> why it was not played
    matches: list[MatchResult]
    rating: Rating
    by_players: dict[int, Rating]
    calibration: Calibration
    seconds: float
    workers: int = 1  #: processes that played the matches

    def to_dict(self) -> dict[str, Any]:
        """Every figure, JSON-ready; only the `seconds` fields and `workers` differ between two runs of one version."""
        return {
            "agent": self.agent,
            "spec": self.spec,
            "suite": _suite_record(self.suite),
            "scale": _scale_record(self.calibration),
            "players": list(self.players),
            "skipped": {str(p): note for p, note in self.skipped.items()},
            "rating": asdict(self.rating),
            "by_players": {str(p): asdict(r) for p, r in self.by_players.items()},
            "matches": [m.to_dict() for m in self.matches],
            "skyjo_env_version": __version__,
            "seconds": self.seconds,
            "workers": self.workers,
        }


def _suite_record(suite: Suite) -> dict[str, Any]:
    """A card's record of its suite."""
    return {
        "id": suite.id,
        "version": suite.version,
        "games": suite.games,
        "seed": suite.seed,
        "players": list(suite.scale.players),
        "references": {str(p): list(suite.scale.references(p)) for p in suite.scale.players},
        "rules": suite.scale.rule_options(),
    }


def _scale_record(calibration: Calibration) -> dict[str, Any]:
    """A card's record of the scale it is rated on."""
    scale = calibration.scale
    return {
        "version": scale.version,
        "games": scale.games,
        "seed": scale.seed,
        "prior_share": scale.prior_share,
        "anchors": dict(scale.anchors),
        "rating_model": RATING_MODEL,
        "ratings": calibration.ratings(),
        "points_per_strength": calibration.points_per_strength,
        "seconds": calibration.seconds,
    }


class Benchmark:
    """A checked benchmark run: the agent, the suite, the table sizes to play and those it skips.

    `workers` processes play the matches (each match whole in one of them, so the card is the same
    at any number); more than one needs the agent as a spec in text, which each process builds.
    `ValueError` (one line) for an unknown suite, a table size the suite does not have, a spec
    that does not build, an agent that fits none of the table sizes, or a bad `workers`.
    `move_timeout` is every agent's time budget in seconds a move (see [`run_tournament()`][run_tournament]);
    a run whose agent fails (it raises, runs over the budget, or finishes no game of a match) ends
    with an [`AgentError`][skyjo_env.opponents.AgentError] and no card (with several workers, the
    matches not started are cancelled; those under way end first).
    """

    def __init__(
        self,
        spec: Any,
        suite: Suite | str = "quick",
        players: Sequence[int] | None = None,
        workers: int = 1,
        move_timeout: float | None = None,
    ) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers={workers!r}: give a whole number of processes, 1 or more")
        check_limit("workers", workers, MAX_WORKERS, "processes")
        check_move_timeout(move_timeout)
        self.move_timeout = move_timeout
        if workers > 1 and not isinstance(spec, str):
            raise ValueError(
                f"workers={workers} needs the agent as a spec in text (a registered name, a file, module:attr); "
                "a policy object plays in this process alone: use workers=1"
            )
        self.workers = workers
        if not isinstance(suite, Suite):
            if suite not in SUITES:
                raise ValueError(f"unknown suite {suite!r}; suites: {', '.join(SUITES)}")
            suite = SUITES[suite]
        sizes = suite.scale.players
        if players is not None:
            missing = [p for p in players if p not in sizes]
            if missing:
                known = ", ".join(map(str, sizes))
                raise ValueError(f"suite {suite.id!r} has no table size {missing[0]}; its sizes: {known}")
            if not players:
                raise ValueError("players=[]: name at least one table size, or pass None for all of them")
            sizes = tuple(p for p in sizes if p in players)
        probe = agents.make(spec, seed=suite.seed)
        self.spec, self.suite, self.name = spec, suite, policy_name(probe)
        self.skipped: dict[int, str] = {}
        for p in sizes:
            try:
                check_fits(probe, p, spec)
            except ValueError as exc:
                self.skipped[p] = str(exc)
        self.players = tuple(p for p in sizes if p not in self.skipped)
        if not self.players:
            raise ValueError(f"nothing to play: {'; '.join(self.skipped.values())}")

    def run(self, progress: bool = True) -> ReportCard:
        """Play the matches and rate the agent."""
        started = time.perf_counter()
        calibration = calibrate(self.suite.scale, progress)
        matches = self.suite.matches(self.players)
        total = sum(m.games for m in matches)
        versions = self.match_versions(progress)
        with Progress(total, f"benchmark {self.name} ({self.suite.id})", "games", enabled=progress) as bar:
            results = self._play(matches, bar)
        played = [MatchResult(*x) for x in zip(matches, results, versions, strict=True)]
        outcomes = [Outcome.of(m.match, m.result) for m in played]
        return ReportCard(
            agent=self.name,
            spec=self.spec if isinstance(self.spec, str) else None,
            suite=self.suite,
            version=self.suite.version,
            players=self.players,
            skipped=self.skipped,
            matches=played,
            rating=calibration.rate(outcomes),
            by_players=self._by_players(calibration, outcomes),
            calibration=calibration,
            seconds=time.perf_counter() - started,
            workers=min(self.workers, len(matches)),  # the processes that played: one match each at most
        )

    def match_versions(self, progress: bool = False) -> list[str | None]:
        """The version of each of the run's matches ([`Scale.match_version()`][Scale.match_version]);
        `None` for an agent given as a policy object, whose play cannot be fingerprinted afresh.
        (Fingerprinting takes milliseconds for a heuristic or a network, about a minute a table size for `search`.)"""
        matches = self.suite.matches(self.players)
        if not isinstance(self.spec, str):
            return [None] * len(matches)
        plays = {}
        with Progress(len(self.players), f"fingerprint of {self.name}'s play", "table sizes", enabled=progress) as bar:
            for p in self.players:
                plays[p] = play_fingerprint(self.spec, self.suite.scale.table(p))
                bar.update()
        return [self.suite.scale.match_version(m, plays[m.players]) for m in matches]

    def rerate(self, card: Mapping[str, Any], progress: bool = True) -> dict[str, Any] | None:
        """A saved card (its `to_dict()`) rated on the suite's current scale, if its matches are this
        run's, each of the same version: then the run would play the very games the card holds, and only
        the scale can have changed (a reference at another table size, say). `None` if any match differs."""
        versions = self.match_versions(progress)
        if None in versions or [m.get("version") for m in card["matches"]] != versions:
            return None
        calibration = calibrate(self.suite.scale, progress)
        outcomes = [Outcome(m["players"], CANDIDATE, m["against"], m["games"], m["win_shares"], m["seed"])
                    for m in card["matches"]]  # fmt: skip
        by_players = self._by_players(calibration, outcomes)
        return {
            **card,
            "suite": _suite_record(self.suite),
            "scale": _scale_record(calibration),
            "rating": asdict(calibration.rate(outcomes)),
            "by_players": {str(p): asdict(r) for p, r in by_players.items()},
        }

    def _by_players(self, calibration: Calibration, outcomes: list[Outcome]) -> dict[int, Rating]:
        """The rating from each table size's outcomes alone."""
        return {p: calibration.rate([o for o in outcomes if o.players == p]) for p in self.players}

    def _play(self, matches: list[Match], bar: Progress) -> list[TournamentResult]:
        """The matches' results, in order: here game by game, or whole matches in `workers` processes."""
        if self.workers == 1:
            return [play_match(m, self.suite.scale, bar, self.spec, self.move_timeout) for m in matches]
        games = multiprocessing.get_context().Value("q", 0)  # finished games, counted by every process
        with ProcessPoolExecutor(min(self.workers, len(matches)), initializer=_count_into, initargs=(games,)) as pool:
            futures = [pool.submit(_play_counted, m, self.suite.scale, self.spec, self.move_timeout) for m in matches]
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=1.0, return_when=FIRST_EXCEPTION)
                bar.set(games.value)
                failed = [f for f in done if f.exception() is not None]
                if failed:  # a failing agent fails every match: the others are not started
                    pool.shutdown(wait=False, cancel_futures=True)
                    failed[0].result()
            return [future.result() for future in futures]


class _SharedGames(Progress):
    """A worker's progress: each finished game adds to the count the parent process shows."""

    def __init__(self, count: Any) -> None:
        super().__init__(None, "games", "games", enabled=False)
        self.count = count

    def set(self, done: float) -> None:
        with self.count.get_lock():
            self.count.value += int(done - self.done)
        self.done = done


_GAMES: Any = None  #: in a worker process: the parent's shared count of finished games


def _count_into(count: Any) -> None:
    """Initialise a worker process with the shared count."""
    global _GAMES
    _GAMES = count


def _play_counted(match: Match, scale: Scale, candidate: Any, move_timeout: float | None) -> TournamentResult:
    """[`play_match()`][play_match] in a worker process, its finished games counted for the parent."""
    return play_match(match, scale, _SharedGames(_GAMES), candidate, move_timeout)


def run_benchmark(
    spec_or_policy: Any,
    suite: Suite | str = "quick",
    players: Sequence[int] | None = None,
    progress: bool = True,
    workers: int = 1,
    move_timeout: float | None = None,
) -> ReportCard:
    """Benchmark an agent (any agent spec, or a policy) on `suite` at the table sizes `players`
    (default: all of the suite's), its matches played by `workers` processes, each agent's moves
    within `move_timeout` seconds; see [`Benchmark`][] for the errors."""
    return Benchmark(spec_or_policy, suite, players, workers, move_timeout).run(progress)


# ---------------------------------------------------------------------------- the card
def title(card: ReportCard) -> str:
    """One line: the agent, its rating, the suite and its version."""
    return f"{card.agent}: rating {card.rating.text()} on suite {card.suite.id} (version {card.version})"


def match_rows(card: ReportCard) -> list[list[str]]:
    """Header and one row per match."""
    rows = [["players", "against", "games", "seed", "win rate", "95% CI", "round score", "95% CI", "even"]]
    for m in card.matches:
        games = str(m.result.games) + (f" ({m.result.unfinished} unfinished)" if m.result.unfinished else "")
        rows.append([str(m.match.players), m.match.opponent, games, str(m.match.seed), *figure_cells(m.agent),
                     f"{1 / m.match.players:.3f}"])  # fmt: skip
    return rows


def rating_rows(card: ReportCard) -> list[list[str]]:
    """Header, one row per table size played, one for all of them."""
    rows = [["table size", "rating", "95% CI", "strength ± se"]]
    named = [(f"{p} players", r) for p, r in card.by_players.items()] + [("all", card.rating)]
    for name, r in named:
        rows.append([name, f"{r.value:.0f}", f"{r.low:.0f}–{r.high:.0f}", f"{r.strength:.3f} ± {r.strength_se:.3f}"])
    return rows


def notes(card: ReportCard) -> list[str]:
    """What a reader needs besides the tables: the scale, the rules, the counts, skipped sizes, time."""
    scale = card.calibration.scale
    references = ", ".join(f"{n} {r:.0f}" for n, r in sorted(card.calibration.ratings().items(), key=lambda x: x[1]))
    return [
        f"suite {card.suite.id} version {card.version}: {card.suite.games} games per match, match seeds from "
        f"{card.suite.seed} (listed above), rules {rules_text(scale.rules)}; skyjo-env {__version__}",
        f"scale version {scale.version} ({RATING_MODEL}, {scale.games} games per reference match, "
        f"prior {scale.prior_share:.1%} of the games): {references}; {card.calibration.points_per_strength:.0f} "
        "points per unit of strength",
        *(f"{p} players skipped: {note}" for p, note in card.skipped.items()),
        f"time: {duration(card.seconds)} ({card.seconds:.0f} s)"
        + (f", matches played by {card.workers} processes" if card.workers > 1 else ""),
    ]


MATCH_CAPTION = (
    "one seat against P - 1 copies of the reference, seats rotated; win rate with a Wilson 95% CI "
    "(R20: tied lowest totals all win); mean round score after R17 doubling; even: 1/P"
)
RATING_CAPTION = "Luce model of each game's winner, references fixed; random = 0, counting = 1000"


def print_card(card: ReportCard) -> None:
    """Print the card: the matches, the ratings and the notes."""
    print(text_rows(match_rows(card), title(card), MATCH_CAPTION), end="\n\n")
    print(text_rows(rating_rows(card), "rating on the fixed scale", RATING_CAPTION), end="\n\n")
    print("\n".join(notes(card)))


def markdown_card(card: ReportCard) -> str:
    """The card as Markdown."""
    return "\n\n".join([
        f"# {title(card)}", markdown_rows(match_rows(card)), MATCH_CAPTION + ".",
        markdown_rows(rating_rows(card)), RATING_CAPTION + ".", "\n".join(f"- {line}" for line in notes(card)),
    ]) + "\n"  # fmt: skip


#: The files [`save_card()`][save_card] writes.
FILES = ("benchmark.json", "benchmark.md")


def save_card(card: ReportCard, out_dir: str | Path) -> dict[str, Path]:
    """Write `benchmark.json` and `benchmark.md` into `out_dir`, both whole or neither new
    ([`write_files()`][skyjo_env.files.write_files])."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, markdown_path = (out / name for name in FILES)
    written = write_files({json_path: json.dumps(card.to_dict(), indent=2) + "\n", markdown_path: markdown_card(card)})
    return dict(zip(("json", "markdown"), written, strict=True))
