"""Tournaments: balanced seat rotation, complete games, figures, ratings, reports."""

from __future__ import annotations

import csv
import io
import json
import math
from itertools import combinations

import numpy as np
import pytest

from skyjo_env import Rules, agents
from skyjo_env.actions import FLIP, REPLACE, TAKE
from skyjo_env.evaluation.progress import Progress
from skyjo_env.evaluation.report import CSV_FIELDS, markdown_table, save
from skyjo_env.evaluation.stats import mean_interval, wilson_interval
from skyjo_env.evaluation.tournament import labels, lineups, run_tournament


@pytest.mark.parametrize("num_agents", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("players", [2, 3, 4, 8])
def test_every_agent_sits_in_every_seat_equally(num_agents, players):
    seats = lineups(num_agents, players, games=9 * num_agents + 1, rng=np.random.default_rng(0))
    assert seats.shape == (10 * num_agents, players)  # rounded up to whole blocks
    counts = np.stack([(seats == a).sum(axis=0) for a in range(num_agents)])
    assert (counts == 10).all()  # each agent 10 times in each seat


def test_with_more_agents_than_seats_every_pair_meets():
    seats = lineups(4, 2, games=400, rng=np.random.default_rng(1))
    met = {tuple(sorted(row)) for row in seats.tolist()}
    assert met == set(combinations(range(4), 2))
    assert (seats[:, 0] != seats[:, 1]).all()


def test_with_fewer_agents_than_seats_an_agent_holds_several_seats():
    seats = lineups(3, 4, games=3, rng=np.random.default_rng(2))
    for row in seats.tolist():
        assert sorted(np.bincount(row, minlength=3).tolist()) == [1, 1, 2]


def test_wilson_interval_known_values():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(10, 10)
    assert low == pytest.approx(0.7225, abs=1e-4) and high == pytest.approx(1.0)
    for wins, n in [(1, 3), (97, 100), (5000, 10000)]:
        low, high = wilson_interval(wins, n)
        assert low < wins / n < high
    for n in range(1, 300):  # no rounding leaves 0 or n successes outside their interval
        assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0
    for bad in [(1, 0), (-1, 5), (6, 5)]:
        with pytest.raises(ValueError):
            wilson_interval(*bad)


def test_mean_interval():
    low, high = mean_interval(np.array([1.0, 3.0] * 50))
    assert (low + high) / 2 == pytest.approx(2.0)
    assert high - low == pytest.approx(2 * 1.959964 * np.std([1.0, 3.0] * 50, ddof=1) / 10)
    with pytest.raises(ValueError):
        mean_interval(np.array([1.0]))


@pytest.fixture(scope="module")
def small_result():
    pool = [agents.make("random", seed=1), agents.make("threshold"), agents.make("counting")]
    return run_tournament(pool, players=3, games=29, seed=5, progress=False)


def test_tournament_plays_complete_balanced_games(small_result):
    r = small_result
    assert r.games == 30 and r.unfinished == 0 and r.players == 3  # 29 rounded up to whole rotations
    assert [a.name for a in r.agents] == ["random", "threshold", "counting"]
    for a in r.agents:
        assert a.seat_counts == [10, 10, 10]
        assert a.seats == 30
        assert a.rounds == pytest.approx(a.mean_rounds * a.seats)
        assert a.round_scores.size == a.rounds
        assert a.mean_round_score == pytest.approx(a.round_scores.mean())
        assert a.win_ci[0] <= a.win_rate <= a.win_ci[1]
        assert a.rating_sigma > 0
    # games end at the end score (R19), and every game has at least one winner (R20)
    assert all(a.mean_game_total > 0 for a in r.agents)
    assert sum(a.wins for a in r.agents) >= r.games
    assert r.by_name("counting").rating_mu > r.by_name("random").rating_mu


def test_tournament_is_reproducible():
    def play(seed):
        pool = [agents.make("random", seed=2), agents.make("threshold")]
        return run_tournament(pool, 2, 8, seed=seed, progress=False).to_dict()["agents"]

    assert play(3) == play(3)
    assert play(3) != play(4)


def test_tournament_honours_rules():
    r = run_tournament([agents.make("threshold"), agents.make("counting")], 2, 6,
                       rules=Rules(end_score=30, column_rule=False), seed=0, progress=False)  # fmt: skip
    assert r.rules.end_score == 30 and not r.rules.column_rule and r.rules.num_players == 2
    assert all(a.mean_game_total < 100 for a in r.agents)


def test_repeated_names_are_numbered():
    assert labels([agents.make("counting"), agents.make("random"), agents.make("counting")]) == [
        "counting", "random", "counting#2",
    ]  # fmt: skip


class _Illegal:
    name = "cheater"

    def __call__(self, observations, action_masks):
        return np.full(len(observations), TAKE)  # not legal during setup


class _Stubborn:
    """Never turns a card after setup: takes the discard and puts it over slot 0, forever."""

    name = "stubborn"

    def __call__(self, observations, action_masks):
        first_flip = FLIP + np.argmax(action_masks[:, FLIP:], axis=1)
        return np.where(action_masks[:, TAKE], TAKE, np.where(action_masks[:, REPLACE], REPLACE, first_flip))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="'cheater' chose illegal action 1"):
        run_tournament([_Illegal(), agents.make("random")], 2, 2, progress=False)
    with pytest.raises(ValueError, match="num_players=9"):
        run_tournament([agents.make("random")], 9, 2, progress=False)
    with pytest.raises(ValueError, match="games=0"):
        run_tournament([agents.make("random")], 2, 0, progress=False)
    with pytest.raises(ValueError, match="at least one agent"):
        run_tournament([], 2, 2, progress=False)
    same = agents.make("random")
    with pytest.raises(ValueError, match="twice"):
        run_tournament([same, same], 2, 2, progress=False)


def test_games_that_never_end_are_abandoned():
    with pytest.raises(RuntimeError, match="abandoned"):
        run_tournament([_Stubborn(), _Stubborn()], 2, 4, max_steps=200, progress=False)


def test_reports_are_written(small_result, tmp_path):
    paths = save(small_result, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["games"] == 30 and data["players"] == 3
    assert data["rating_model"] == "OpenSkill Plackett-Luce"
    assert data["rules"]["end_score"] == 100
    by_name = {a["name"]: a for a in data["agents"]}
    assert by_name["counting"]["win_rate"] == small_result.by_name("counting").win_rate
    with paths["csv"].open() as f:
        rows = list(csv.DictReader(f))
    assert [r["name"] for r in rows] == ["random", "threshold", "counting"]
    assert tuple(rows[0]) == CSV_FIELDS
    assert math.isclose(float(rows[2]["mean_round_score"]), small_result.agents[2].mean_round_score)
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = markdown_table(small_result)
    assert table.count("\n") == 1 + 1 + 2 and "counting" in table.splitlines()[2]  # best rating first


def test_tied_winners_share_one_win():
    """R20: all tied lowest totals win; their win shares split that one win, so every game hands out exactly 1."""
    r = run_tournament([agents.make("counting"), agents.make("counting")], 2, 400, seed=0, progress=False)
    a, b = r.agents
    ties = a.wins + b.wins - r.games  # with 2 players, a game both seats win is a tie
    assert ties > 0
    assert a.win_shares == a.wins - ties / 2 and b.win_shares == b.wins - ties / 2
    assert a.to_dict()["win_shares"] == a.win_shares


def test_one_progress_bar_can_span_several_tournaments():
    stream = io.StringIO()
    with Progress(8, "two tournaments", "games", stream=stream) as bar:
        for seed in (0, 1):
            run_tournament([agents.make("threshold"), agents.make("counting")], 2, 4, seed=seed, progress=bar)
        assert bar.done == 8
    lines = stream.getvalue().splitlines()
    assert lines[0] == "two tournaments: started (8 games)"
    assert lines[-1].startswith("two tournaments: 8/8 games (100%)")
    assert not any("player games" in line for line in lines)  # no bar of their own
