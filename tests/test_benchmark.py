"""The standard benchmark: the rating fit, the fixed scale, versions, report cards, and bad input."""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from skyjo_env import Rules, agents
from skyjo_env.agents import pretrained
from skyjo_env.agents.counting import CountingPolicy
from skyjo_env.agents.threshold import ThresholdPolicy
from skyjo_env.apps.cli import main
from skyjo_env.evaluation import benchmark
from skyjo_env.evaluation.benchmark import (
    CANDIDATE,
    FULL,
    HEURISTICS,
    QUICK,
    Calibration,
    Outcome,
    Scale,
    Suite,
    fit_strengths,
    run_benchmark,
    stored_calibration,
)  # fmt: skip

#: A test-only scale and suite: 2 and 3 players, 6 games per match.
TINY_SCALE = Scale(players=(2, 3), games=6, seed=7, prior_share=0.05)  # six games: a prior that keeps 6-0 fits finite
TINY = Suite("tiny", games=6, seed=3, scale=TINY_SCALE)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """As the command does: batched numpy work is many small matrix products, BLAS threads only contend."""
    with threadpool_limits(1):
        yield


def luce(strength: float, opponent: float, players: int) -> float:
    """The model's win probability of one agent against ``players - 1`` copies of another."""
    return math.exp(strength) / (math.exp(strength) + (players - 1) * math.exp(opponent))


def expected(agent: str, opponent: str, players: int, games: int, truth: dict[str, float]) -> Outcome:
    """An outcome whose win shares are exactly what the model expects under ``truth``."""
    return Outcome(players, agent, opponent, games, games * luce(truth[agent], truth[opponent], players), seed=0)


# ---------------------------------------------------------------------------- the fit
def test_the_fit_recovers_the_strengths_that_made_the_data():
    truth = {"a": 0.0, "b": 1.3, "c": -0.7, "d": 2.1}
    outcomes = [expected(x, y, p, 1000, truth) for p in (2, 3, 6) for x in truth for y in truth if x != y]
    fitted = fit_strengths(outcomes, {"a": 0.0}, prior_share=0)
    assert sorted(fitted) == ["b", "c", "d"]
    for name, (strength, se) in fitted.items():
        assert strength == pytest.approx(truth[name], abs=1e-8) and 0 < se < 0.1


def test_a_win_against_copies_is_a_win_over_each():
    # Equal strengths win 1/P of the games at every table size; winning half of 4-player games
    # against three copies of b means exp(a) = 3 exp(b).
    for p in (2, 3, 4, 6):
        ((even, _),) = fit_strengths([Outcome(p, "a", "b", 600, 600 / p, 0)], {"b": 0.0}, 0).values()
        assert even == pytest.approx(0.0, abs=1e-9)
    ((half, _),) = fit_strengths([Outcome(4, "a", "b", 600, 300, 0)], {"b": 0.5}, 0).values()
    assert half == pytest.approx(0.5 + math.log(3))


def test_the_standard_error_is_the_fisher_information_s():
    ((strength, se),) = fit_strengths([Outcome(2, "a", "b", 400, 300, 0)], {"b": 0.0}, 0).values()
    assert strength == pytest.approx(math.log(3))  # p = 3/4
    assert se == pytest.approx(1 / math.sqrt(400 * 0.75 * 0.25))


@pytest.mark.parametrize("players", [2, 4])
def test_the_prior_keeps_zero_and_full_win_rates_finite_at_any_number_of_games(players):
    # A share q more games at the even share 1/P: n wins of n read as (1 + q/P) / (1 + q), none as (q/P) / (1 + q).
    q = 0.001
    best = math.log((1 + q / players) / (q - q / players)) + math.log(players - 1)  # odds over P - 1 copies
    worst = math.log((q / players) / (1 + q - q / players)) + math.log(players - 1)
    for games in (12, 1200, 120_000):
        ((won, _),) = fit_strengths([Outcome(players, "a", "b", games, games, 0)], {"b": 0.0}, q).values()
        ((lost, _),) = fit_strengths([Outcome(players, "a", "b", games, 0, 0)], {"b": 0.0}, q).values()
        assert won == pytest.approx(best) and lost == pytest.approx(worst)


def test_the_fit_recovers_strengths_so_far_apart_that_a_loss_is_near_impossible():
    # Gaps of up to 36 units: 1 - p is about 1e-16, below what 1 - p in floats can hold.
    truth = {"a": 0.0, "b": 9.0, "c": 18.0, "d": -9.0, "e": 27.0}
    outcomes = [expected(x, y, p, 1000, truth) for p in (2, 3) for x in truth for y in truth if x != y]
    fitted = fit_strengths(outcomes, {"a": 0.0}, prior_share=0)
    assert {name: s for name, (s, _) in fitted.items()} == pytest.approx({n: truth[n] for n in "bcde"}, abs=1e-6)


@pytest.mark.parametrize(
    "outcomes",
    [
        [Outcome(2, "a", "b", 12, 12, 0)],  # no prior: a won every game, its strength runs off
        # a prior, but a and b each won every game alone against the other: the model cannot have both
        [Outcome(3, "a", "b", 6, 6, 0), Outcome(3, "b", "a", 6, 6, 0), Outcome(3, "a", "r", 6, 3, 0),
         Outcome(3, "b", "r", 6, 3, 0)],
    ],
)  # fmt: skip
def test_outcomes_that_no_finite_strengths_fit_are_refused_with_the_remedy(outcomes):
    fixed, prior = ({"r": 0.0}, 0.001) if outcomes[0].players == 3 else ({"b": 0.0}, 0)
    with pytest.raises(ValueError, match=r"no finite strengths of \['a'.*play more games or raise prior_share"):
        fit_strengths(outcomes, fixed, prior)


# ---------------------------------------------------------------------------- the scale
def calibration_from(truth: dict[str, float], games: int) -> Calibration:
    """A calibration of the heuristics (a negligible prior) whose reference matches gave exactly ``truth``'s expectations."""
    names = ["random", "threshold", "counting"]
    outcomes = [expected(x, y, p, games, truth) for p in (2, 4) for x in names for y in names if x != y]
    return Calibration(Scale(prior_share=1e-9), outcomes, 0.0)


@pytest.mark.parametrize("truth", [{"random": -3.0, "threshold": 1.0, "counting": 2.0},
                                   {"random": 5.0, "threshold": 6.5, "counting": 9.0}])  # fmt: skip
def test_the_anchors_keep_their_values_and_an_agent_like_counting_rates_1000(truth):
    calibration = calibration_from(truth, games=10**6)
    ratings = calibration.ratings()
    assert ratings["random"] == 0 and ratings["counting"] == pytest.approx(1000)
    shift = truth["random"]  # strengths are fitted with random at 0
    assert ratings["threshold"] == pytest.approx(
        1000 * (truth["threshold"] - shift) / (truth["counting"] - shift), abs=0.01
    )
    like_counting = {**truth, CANDIDATE: truth["counting"]}
    card = calibration.rate([expected(CANDIDATE, n, p, 10**6, like_counting) for p in (2, 4) for n in truth])
    assert card.value == pytest.approx(1000, abs=0.5) and card.low < card.value < card.high


def test_a_reference_rated_like_any_agent_gets_its_own_rating_back():
    """Even where the data do not follow Luce's model (at 4 players here, made-up win shares), the
    references' strengths are self-consistent: rated from its own seats alone, each gets its rating."""
    names = ["random", "threshold", "counting"]
    outcomes = [Outcome(2, "random", "threshold", 1000, 3, 0), Outcome(2, "random", "counting", 1000, 1, 0),
                Outcome(2, "threshold", "counting", 1000, 60, 0)]  # fmt: skip
    rng = np.random.default_rng(0)
    outcomes += [Outcome(4, a, b, 1000, float(rng.uniform(5, 400)), 0) for a in names for b in names if a != b]
    calibration = Calibration(Scale(), outcomes, 0.0)
    for name in ("threshold", "counting"):  # random is the origin, fixed rather than fitted
        alone = [replace(o, agent=CANDIDATE) for o in outcomes if o.agent == name]
        alone += [Outcome(2, CANDIDATE, o.agent, o.games, o.games - o.win_shares, 0) for o in outcomes
                  if o.players == 2 and o.opponent == name]  # fmt: skip
        assert calibration.rate(alone).value == pytest.approx(calibration.ratings()[name], abs=1e-6)
    with pytest.raises(ValueError, match=r"no outcome seats \['threshold'\] alone"):
        fit_strengths([Outcome(4, "counting", "threshold", 10, 1, 0)], {"random": 0.0}, 0.001)


def test_the_stored_scale_is_current_and_anchored():
    """A reference that changes (weights, code, engine) changes the scale's version: regenerate the
    stored scale with ``python benchmarks/leaderboard.py``."""
    assert QUICK.scale == FULL.scale  # one scale for both suites
    calibration = stored_calibration(QUICK.scale)
    assert calibration is not None, "evaluation/benchmark_scale.json is stale: run python benchmarks/leaderboard.py"
    ratings = calibration.ratings()
    assert ratings["random"] == 0 and ratings["counting"] == pytest.approx(1000)
    assert ratings["random"] < ratings["threshold"] < ratings["counting"]
    stored = json.loads(benchmark.STORED_SCALE.read_text())
    assert stored["ratings"] == pytest.approx(ratings)  # what the file shows is what it fits to
    assert {o.games for o in calibration.outcomes} == {QUICK.scale.games}
    assert len(calibration.outcomes) == len(QUICK.scale.matches())


@functools.cache
def leaderboard_script():
    """benchmarks/leaderboard.py as a module."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "leaderboard.py"
    spec = importlib.util.spec_from_file_location("leaderboard_script", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def leaderboard_section(suite: Suite) -> str:
    """The part of docs/leaderboard.md that ``benchmarks/leaderboard.py --suite SUITE`` writes."""
    script = leaderboard_script()
    start, end = script.markers(suite)
    page = script.PAGE.read_text()
    assert page.count(start) == 1 and page.count(end) == 1, f"docs/leaderboard.md needs one {start} ... {end}"
    return page.split(start)[1].split(end)[0]


@pytest.mark.parametrize("suite", [FULL, QUICK], ids=["full", "quick"])
def test_each_leaderboard_section_is_for_the_current_suite(suite):
    section = leaderboard_section(suite)
    assert f"Suite **{suite.id}**, version `{suite.version}`" in section, (
        f"the {suite.id} section of docs/leaderboard.md is for another suite version: "
        f"run python {leaderboard_script().command(suite)}"
    )
    assert f"scale version `{suite.scale.version}`" in section


def test_the_quick_section_rates_search_with_its_time():
    """Issue 36: the search agent, too slow for the full suite, is listed on the quick one, with its time."""
    rows = [line for line in leaderboard_section(QUICK).splitlines() if line.startswith("| `search` |")]
    assert rows, "docs/leaderboard.md's quick section has no search row"
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert re.fullmatch(r"\*\*\d+\*\*", cells[1]) and re.search(r"\d", cells[-1]), cells  # a rating and a time


def test_a_new_scale_plays_only_the_reference_matches_that_changed(tmp_path, monkeypatch):
    saved = benchmark.play_calibration(TINY_SCALE, progress=False).save(tmp_path / "scale.json")
    kept = benchmark.stored_outcomes(saved)
    assert sorted(kept) == sorted(TINY_SCALE.reference_version(m) for m in TINY_SCALE.matches())
    assert stored_calibration(TINY_SCALE, saved).versions == [
        TINY_SCALE.reference_version(m) for m in TINY_SCALE.matches()
    ]
    played = []
    play = benchmark.play_match
    monkeypatch.setattr(benchmark, "play_match", lambda m, *args, **kw: played.append(m) or play(m, *args, **kw))
    assert benchmark.play_calibration(TINY_SCALE, progress=False, kept=kept).outcomes == list(kept.values())
    assert played == []  # nothing changed
    agents.register("threshold", lambda: ThresholdPolicy(take_max=2), replace=True)
    try:
        again = benchmark.play_calibration(TINY_SCALE, progress=False, kept=kept)
        assert played and all("threshold" in (m.agent, m.opponent) for m in played)
        assert len(played) == sum("threshold" in (m.agent, m.opponent) for m in TINY_SCALE.matches())
        assert (
            again.outcomes == benchmark.play_calibration(TINY_SCALE, progress=False).outcomes
        )  # as if all were played
    finally:
        agents.register("threshold", ThresholdPolicy, replace=True)


# ---------------------------------------------------------------------------- versions
@pytest.mark.parametrize(
    "changed",
    [
        replace(TINY, id="other"),
        replace(TINY, games=12),
        replace(TINY, seed=4),
        replace(TINY, scale=replace(TINY_SCALE, players=(2, 6))),
        replace(TINY, scale=replace(TINY_SCALE, heuristics=("random", "counting"))),
        replace(TINY, scale=replace(TINY_SCALE, rules=Rules(end_score=50))),
        replace(TINY, scale=replace(TINY_SCALE, games=12)),
        replace(TINY, scale=replace(TINY_SCALE, seed=8)),
        replace(TINY, scale=replace(TINY_SCALE, prior_share=0.01)),
        replace(TINY, scale=replace(TINY_SCALE, anchors=(("random", 0.0), ("counting", 100.0)))),
    ],
    ids=["id", "games", "seed", "players", "references", "rules", "scale games", "scale seed", "prior", "anchors"],
)
@pytest.mark.filterwarnings("ignore:agent 'ppo-[23]p' was trained under")  # other rules, fingerprinted all the same
def test_changing_any_field_changes_the_version(changed):
    assert changed.version != TINY.version
    assert TINY.version == Suite("tiny", games=6, seed=3, scale=TINY_SCALE).version  # equal definitions, equal versions


def test_a_changed_or_new_reference_agent_changes_the_version():
    before = TINY.version
    agents.register("threshold", lambda: ThresholdPolicy(take_max=2), replace=True)
    try:
        assert TINY.version != before  # the same name plays differently
    finally:
        agents.register("threshold", ThresholdPolicy, replace=True)
    assert TINY.version == before
    assert TINY_SCALE.references(3)[-1] == "ppo-3p"  # a shipped agent for 3 players joins the references
    agents.register("ppo-3p", agents.make("counting"), replace=True)
    try:
        assert TINY.version != before  # another ppo-3p: another scale
    finally:
        agents.register("ppo-3p", functools.partial(pretrained.load, "ppo-3p"), replace=True)
    assert TINY.version == before


# ---------------------------------------------------------------------------- cards
@pytest.fixture(scope="module")
def tiny_scale_file(tmp_path_factory):
    """The tiny scale's calibration, played once and stored where `calibrate()` looks."""
    path = tmp_path_factory.mktemp("scale") / "benchmark_scale.json"
    return benchmark.play_calibration(TINY_SCALE, progress=False).save(path)


@pytest.fixture
def tiny(monkeypatch, tiny_scale_file):
    """The tiny suite, known to the command, with its scale stored."""
    monkeypatch.setattr(benchmark, "STORED_SCALE", tiny_scale_file)
    monkeypatch.setitem(benchmark.SUITES, "tiny", TINY)
    return TINY


def without_timings(value):
    """A card's dict (or part of one) without what depends on the machine: the timings and the processes that played."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in ("seconds", "workers")}
    return [without_timings(v) for v in value] if isinstance(value, list) else value


def card_without_timings(card: benchmark.ReportCard) -> dict:
    """The card's figures without the timings and the processes that played."""
    return without_timings(card.to_dict())


def test_the_same_agent_on_the_same_version_gets_the_same_card(tiny):
    first, second = (run_benchmark("counting", tiny, progress=False) for _ in range(2))
    assert card_without_timings(first) == card_without_timings(second)
    assert first.to_dict()["seconds"] > 0
    other = run_benchmark("counting", replace(tiny, seed=4), progress=False)
    assert other.version != first.version
    assert card_without_timings(other)["matches"] != card_without_timings(first)["matches"]


def test_matches_played_by_several_processes_give_the_same_card(tiny, capsys):
    alone = run_benchmark("threshold", tiny, progress=False)
    shared = run_benchmark("threshold", tiny, workers=3)
    progress = capsys.readouterr().err.splitlines()
    assert progress[0] == "fingerprint of threshold's play: started (2 table sizes)"
    assert progress[2] == "benchmark threshold (tiny): started (48 games)"
    assert progress[-1].startswith("benchmark threshold (tiny): 48/48 games (100%)")  # each worker's games counted
    assert card_without_timings(shared) == card_without_timings(alone)
    assert (alone.to_dict()["workers"], shared.to_dict()["workers"]) == (1, 3)
    assert benchmark.notes(shared)[-1].endswith(", matches played by 3 processes")
    assert "processes" not in benchmark.notes(alone)[-1]


def test_a_card_reports_the_processes_that_played_not_more_workers_than_matches(tiny):
    card = run_benchmark("threshold", tiny, players=[2], workers=64, progress=False)
    played = len(card.matches)
    assert played < 64 and card.to_dict()["workers"] == played
    assert benchmark.notes(card)[-1].endswith(f", matches played by {played} processes")


def test_a_leaderboard_section_has_a_column_for_each_table_size_played(tiny):
    cards = [run_benchmark(name, tiny, players=[2], progress=False).to_dict() for name in ("threshold", "counting")]
    section = leaderboard_script().leaderboard(cards, tiny)
    header = next(line for line in section.splitlines() if line.startswith("| agent | rating"))
    assert header == "| agent | rating | 95% CI | 2 players | time |"  # no column for 3 players: none played there
    assert section.index("| `counting` |") < section.index("| `threshold` |")  # best first
    assert "Generated by `python benchmarks/leaderboard.py --suite tiny`" in section


def test_a_card_holds_every_match_and_the_rating(tiny):
    card = run_benchmark("threshold", tiny, progress=False)
    data = card.to_dict()
    assert data["suite"]["id"] == "tiny" and data["suite"]["version"] == TINY.version and data["suite"]["games"] == 6
    assert data["suite"]["references"] == {"2": [*HEURISTICS, "ppo-2p"], "3": [*HEURISTICS, "ppo-3p"]}
    assert data["suite"]["rules"]["end_score"] == 100 and data["scale"]["version"] == TINY_SCALE.version
    assert [(m["players"], m["against"], m["seed"]) for m in data["matches"]] == [
        (2, "random", 203), (2, "threshold", 204), (2, "counting", 205), (2, "ppo-2p", 206),
        (3, "random", 303), (3, "threshold", 304), (3, "counting", 305), (3, "ppo-3p", 306),
    ]  # fmt: skip
    for m in data["matches"]:
        assert m["games"] + m["unfinished"] == 6 and m["seats"] == m["games"]  # one seat per game
        assert m["win_ci_low"] <= m["win_rate"] <= m["win_ci_high"] and m["win_shares"] <= m["wins"]
    assert data["by_players"].keys() == {"2", "3"} and data["skipped"] == {}
    rating = data["rating"]
    assert rating["low"] < rating["value"] < rating["high"]
    assert data["scale"]["ratings"]["random"] == 0 and data["scale"]["ratings"]["counting"] == pytest.approx(1000)
    assert card.matches[0].agent.win_rate == 1.0  # threshold never loses to random (baselines.md)


def test_a_card_whose_matches_are_current_is_rated_again_as_played(tiny):
    """A scale that changed elsewhere (here its own seed, so other reference strengths) leaves the card's
    games as they were: rated again on it, the card is the one a run on it plays."""
    old = run_benchmark("threshold", tiny, players=[2], progress=False).to_dict()
    assert all(re.fullmatch(r"[0-9a-f]{12}", m["version"]) for m in old["matches"])
    moved = replace(tiny, scale=replace(TINY_SCALE, seed=8))
    plan = benchmark.Benchmark("threshold", moved, players=[2])
    assert plan.match_versions() == [m["version"] for m in old["matches"]]
    rerated = plan.rerate(old)
    played = plan.run(progress=False).to_dict()
    assert without_timings(rerated) == without_timings(played)
    assert rerated["scale"]["version"] == moved.scale.version != old["scale"]["version"] == tiny.scale.version
    assert rerated["suite"]["version"] == moved.version and rerated["rating"] != old["rating"]
    assert rerated["matches"] == old["matches"]  # the games as played, timings and all


@pytest.mark.filterwarnings("ignore:agent 'ppo-[23]p' was trained under")  # other rules, fingerprinted all the same
def test_a_card_with_any_other_match_is_not_rated_again(tiny):
    old = run_benchmark("threshold", tiny, players=[2], progress=False).to_dict()
    assert benchmark.Benchmark("counting", tiny, players=[2]).rerate(old) is None  # another agent
    assert benchmark.Benchmark("threshold", replace(tiny, seed=4), players=[2]).rerate(old) is None  # other deals
    assert benchmark.Benchmark("threshold", replace(tiny, games=12), players=[2]).rerate(old) is None
    assert benchmark.Benchmark("threshold", tiny).rerate(old) is None  # 3 players too
    ruled = replace(tiny, scale=replace(TINY_SCALE, rules=Rules(end_score=50)))
    assert benchmark.Benchmark("threshold", ruled, players=[2]).rerate(old) is None
    agents.register("counting", lambda: ThresholdPolicy(take_max=2), replace=True)  # an opponent plays otherwise
    try:
        assert benchmark.Benchmark("threshold", tiny, players=[2]).rerate(old) is None
    finally:
        agents.register("counting", CountingPolicy, replace=True)
    unversioned = {**old, "matches": [{k: v for k, v in m.items() if k != "version"} for m in old["matches"]]}
    assert benchmark.Benchmark("threshold", tiny, players=[2]).rerate(unversioned) is None  # a card from before
    assert benchmark.Benchmark(agents.make("threshold"), tiny, players=[2]).rerate(old) is None  # no spec to rebuild
    assert benchmark.Benchmark("threshold", tiny, players=[2]).rerate(old)["rating"] == old["rating"]


def test_the_leaderboard_keeps_a_current_card_and_plays_a_stale_one(tiny, tmp_path, monkeypatch, capsys):
    script = leaderboard_script()
    monkeypatch.setattr(script, "ROOT", tmp_path)
    monkeypatch.setattr(script, "CARDS", tmp_path / "cards")
    plan = benchmark.Benchmark("threshold", tiny, players=[2])
    first = script.card(plan, replay=False)
    path = tmp_path / "cards" / "tiny" / "threshold.json"
    assert json.loads(path.read_text()) == first and "wrote cards/tiny/threshold.json" in capsys.readouterr().out
    assert script.card(plan, replay=False) == first
    assert "cards/tiny/threshold.json: its matches are current" in capsys.readouterr().out
    assert without_timings(script.card(plan, replay=True)) == without_timings(first)
    assert "wrote cards/tiny/threshold.json" in capsys.readouterr().out  # --replay plays it again
    stale = {**first, "matches": [{**m, "version": "0" * 12} for m in first["matches"]]}
    path.write_text(json.dumps(stale))
    assert without_timings(script.card(plan, replay=False)) == without_timings(first)  # played again
    assert json.loads(path.read_text())["matches"][0]["version"] == first["matches"][0]["version"]


def test_an_agent_for_another_table_size_is_skipped_there(tiny):
    card = run_benchmark("ppo-2p", tiny, progress=False)
    assert card.players == (2,) and list(card.by_players) == [2]
    assert card.skipped == {3: "agent 'ppo-2p' was trained for 2 players; this table has 3"}
    assert card.rating == card.by_players[2]  # rated on its own table size alone
    assert "3 players skipped: agent 'ppo-2p' was trained for 2 players" in benchmark.markdown_card(card)


def test_the_command_prints_the_card_and_writes_it(tiny, capsys, tmp_path):
    code = main(["benchmark", "counting", "--suite", "tiny", "--players", "3", "--out", str(tmp_path / "card")])
    out, err = capsys.readouterr()
    assert code == 0
    assert "counting: rating" in out and "win rate" in out and "rating on the fixed scale" in out and "time:" in out
    data = json.loads((tmp_path / "card" / "benchmark.json").read_text())
    assert data["players"] == [3] and len(data["matches"]) == 4 and data["agent"] == "counting"  # 3 heuristics, ppo-3p
    assert (tmp_path / "card" / "benchmark.md").read_text().startswith("# counting: rating ")
    # one progress bar over all the suite's games, none per tournament
    assert "benchmark counting (tiny): started (24 games)" in err and "player games" not in err


# ---------------------------------------------------------------------------- bad input
def test_bad_input_raises_value_errors():
    with pytest.raises(ValueError, match="unknown agent 'wizard'"):
        benchmark.Benchmark("wizard")
    with pytest.raises(ValueError, match="unknown suite 'huge'; suites: quick, full"):
        benchmark.Benchmark("counting", "huge")
    with pytest.raises(ValueError, match="suite 'quick' has no table size 5; its sizes: 2, 3, 4, 6"):
        benchmark.Benchmark("counting", "quick", players=[2, 5])
    with pytest.raises(ValueError, match="nothing to play: agent 'ppo-2p' was trained for 2 players; this table has 4"):
        benchmark.Benchmark("ppo-2p", "quick", players=[4])
    for workers in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match=f"workers={workers!r}: give a whole number of processes, 1 or more"):
            benchmark.Benchmark("counting", workers=workers)
    with pytest.raises(ValueError, match="workers=2 needs the agent as a spec in text .*use workers=1"):
        benchmark.Benchmark(agents.make("counting"), workers=2)
    with pytest.raises(ValueError, match="multiple of every table size"):
        Suite("odd", games=7, seed=0)
    with pytest.raises(ValueError, match="anchors"):
        Scale(anchors=(("random", 0.0), ("ppo-2p", 1000.0)))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["wizard"], "skyjo benchmark: unknown agent 'wizard'; known agents: counting, "),
        (["counting", "--suite", "huge"], "skyjo benchmark: unknown suite 'huge'; suites: quick, full"),
        (["counting", "--players", "5"], "skyjo benchmark: suite 'quick' has no table size 5; its sizes: 2, 3, 4, 6"),
        (["counting", "--workers", "0"], "skyjo benchmark: workers=0: give a whole number of processes, 1 or more"),
        (["ppo-2p", "--players", "3", "6"], "skyjo benchmark: nothing to play: agent 'ppo-2p' was trained for 2 players; "
                                            "this table has 3; agent 'ppo-2p' was trained for 2 players; this table has 6"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_status_2(capsys, argv, message):
    code = main(["benchmark", *argv, "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err


def test_the_output_folder_is_checked_before_any_game(capsys, tmp_path, monkeypatch):
    def no_games(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(benchmark, "play_match", no_games)
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    code = main(["benchmark", "counting", "--out", str(blocker), "--no-progress"])
    _, err = capsys.readouterr()
    assert code == 2 and err == f"skyjo benchmark: --out {blocker} is a file, not a folder\n"


def test_an_earlier_benchmark_is_not_replaced_without_overwrite(tiny, capsys, tmp_path, monkeypatch):
    real = benchmark.play_match

    def no_games(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(benchmark, "play_match", no_games)
    out = tmp_path / "card"
    out.mkdir()
    (out / "benchmark.md").write_text("an earlier card")
    argv = ["benchmark", "counting", "--suite", "tiny", "--players", "3", "--out", str(out), "--no-progress"]
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 2 and err == (
        f"skyjo benchmark: --out {out} already holds a benchmark (benchmark.md); replace it with --overwrite "
        "or choose another --out\n"
    )
    assert [p.name for p in out.iterdir()] == ["benchmark.md"] and (
        out / "benchmark.md"
    ).read_text() == "an earlier card"
    monkeypatch.setattr(benchmark, "play_match", real)
    assert main([*argv, "--overwrite"]) == 0
    assert (out / "benchmark.md").read_text().startswith("# counting: rating ")
    assert json.loads((out / "benchmark.json").read_text())["agent"] == "counting"


def test_a_full_disk_while_the_card_is_saved_leaves_no_card(tiny, tmp_path, monkeypatch):
    import errno

    from skyjo_env import files

    card = run_benchmark("counting", tiny, players=[2], progress=False)

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(OSError, match="No space left on device"):
        benchmark.save_card(card, tmp_path / "card")
    assert list((tmp_path / "card").iterdir()) == []


def test_the_console_script_shows_no_traceback():
    done = subprocess.run([sys.executable, "-m", "skyjo_env.apps.cli", "benchmark", "ppo-4p", "--players", "2"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        done.stderr == "skyjo benchmark: nothing to play: agent 'ppo-4p' was trained for 4 players; this table has 2\n"
    )


def test_a_policy_object_is_benchmarked_as_it_is(tiny):
    policy = agents.make("threshold")
    card = run_benchmark(policy, tiny, players=[2], progress=False)
    assert card.agent == "threshold" and card.spec is None
    assert [m.agent.win_rate for m in card.matches] == pytest.approx(
        [m.agent.win_rate for m in run_benchmark("threshold", tiny, players=[2], progress=False).matches]
    )  # a deterministic agent plays the same games as its spec
    assert np.isfinite(card.rating.value)


def test_the_guide_s_own_agent_file_benchmarks(tiny, tmp_path):
    """docs/leaderboard.md's example agent, saved as my_agent.py and named by its FILE:ATTR spec."""
    guide = (Path(__file__).resolve().parents[1] / "docs" / "leaderboard.md").read_text()
    (example,) = re.findall(r"```python\n(.*?)```", guide, flags=re.S)
    (tmp_path / "my_agent.py").write_text(example)
    card = run_benchmark(f"{tmp_path / 'my_agent.py'}:make_agent", tiny, players=[2], progress=False)
    assert card.agent == "keep-low" and card.matches[0].result.unfinished == 0
    assert card.matches[0].agent.win_rate > 0.5  # it beats random
    assert card.calibration.ratings()["random"] < card.rating.value < card.calibration.ratings()["counting"]
