"""Scoring and the end of the game: RULES.md R16..R20, example E3, and the engine's reward modes.

In every scenario the players flip (draw, discard, turn up a card) so grids keep their dealt values;
seat 0 reveals the highest pair in setup, starts (R6) and is the first to have no face-down card,
so it ends the round (R15) and a round score is simply the sum of a grid.
"""

from __future__ import annotations

import numpy as np
import pytest

from skyjo_env import SkyjoEngine, StepResult
from skyjo_env.rewards import rewards as paid

from scenarios import OVER, SETUP, build_deck, new_engine, play_round, rows, setup_flips

# (grid, sum). The first two cards are the ones turned up in setup.
TEN_HIGH = rows([6, 5, -1, 0], [0, -1, 1, -2], [1, 0, -1, 2])  # 10, reveals 11
TEN_LOW = rows([1, 0, 2, 3], [0, 1, -1, 2], [1, -1, 2, 0])  # 10, reveals 1
ELEVEN_LOW = rows([1, 0, 2, 3], [0, 1, -1, 2], [1, -1, 2, 1])  # 11, reveals 1
FIFTEEN_LOW = rows([1, 0, 3, 4], [2, 3, -1, 2], [0, 1, 2, -2])  # 15, reveals 1
MINUS3_HIGH = rows([1, 0, -2, -1], [-1, 0, -2, 1], [0, -1, 2, 0])  # -3, reveals 1
MINUS5_LOW = rows([-1, -1, 0, -2], [0, -1, 1, 0], [-1, 0, 0, 0])  # -5, reveals -2
MINUS2_HIGH = rows([1, 0, -2, -1], [-1, 0, -2, 1], [0, -1, 2, 1])  # -2, reveals 1
MINUS2_LOW = rows([-1, -1, 0, -2], [0, -1, 1, 0], [-1, 0, 2, 1])  # -2, reveals -2
FIVE_HIGH = rows([4, 3, 0, -1], [0, -1, 1, 0], [-1, 0, 0, 0])  # 5, reveals 7
SIX_LOW = rows([1, 0, 2, 0], [1, 0, 1, 1], [0, 1, 0, -1])  # 6, reveals 1
TWELVE_HIGH = rows([6, 6, 0, 1], [1, -1, 0, 0], [-1, 1, -1, 0])  # 12, reveals 12
SEVEN_LOW = rows([2, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 0])  # 7, reveals 3
FOUR_HIGH = rows([3, 2, 0, -1], [0, -1, 1, 0], [-1, 0, 1, 0])  # 4, reveals 5
MINUS2_LOWER = rows([-1, 0, -1, 0], [0, 1, 0, -1], [0, -1, 1, 0])  # -2, reveals -1
TWENTY = rows([6, 5, 1, 0], [2, 1, 0, 1], [3, 2, -1, 0])  # 20
# Round 1 of TEN_HIGH vs TEN_LOW scores [20, 10]; seat 1 then starts (R7) and, flipping first, ends
# every later round. With TWENTY vs TEN_LOW it is strictly lowest: every later round scores [20, 10].
STEADY = [[TEN_HIGH, TEN_LOW]] + [[TWENTY, TEN_LOW]] * 2


def play(rounds: list[list[list[int]]], **engine_options) -> tuple[SkyjoEngine, list[StepResult]]:
    """Deal ``rounds[r]`` (one grid per seat) in round r and play each by flipping; returns each round's last result."""
    engine = new_engine(len(rounds[0]), **engine_options)
    engine.deal_from(0, [build_deck(grids, discard=12) for grids in rounds])
    results = []
    for grids in rounds:
        setup_flips(engine, [(0, 1)] * len(grids))
        _, result = play_round(engine)
        results.append(result)
    return engine, results


@pytest.mark.parametrize(
    ("grids", "scores"),
    [
        ([TEN_HIGH, TEN_LOW], [20, 10]),  # E3: an equal score doubles the ender's
        ([MINUS3_HIGH, MINUS5_LOW], [-3, -5]),  # E3: a negative score is never doubled
        ([MINUS2_HIGH, MINUS2_LOW], [-2, -2]),  # not lowest, but not positive
        ([FIVE_HIGH, SIX_LOW], [5, 6]),  # strictly lowest: not doubled
        ([TWELVE_HIGH, SEVEN_LOW], [24, 7]),  # higher and positive: doubled
        ([FOUR_HIGH, MINUS2_LOWER], [8, -2]),  # positive, another player lower
        ([TEN_HIGH, FIFTEEN_LOW, TEN_LOW], [20, 15, 10]),  # one of two others ties
        ([TEN_HIGH, FIFTEEN_LOW, ELEVEN_LOW], [10, 15, 11]),  # strictly lowest of three
    ],
)
def test_r17_e3_ender_score_doubled_unless_strictly_lowest_or_not_positive(
    grids: list[list[int]], scores: list[int]
) -> None:
    """R17, E3: seat 0 ends; its sum is doubled iff another score is equal or lower and it is positive."""
    _, (result,) = play([grids], episode="round")
    assert result.round_scores[0].tolist() == scores


def test_r16_face_down_cards_are_turned_up_and_counted() -> None:
    """R16: seat 1 never reveals a card in play; at the end all its cards are face up and all count.

    Seat 1 puts each drawn card into its face-up slot 0; its last draw (the 20th card) is a 1.
    """
    hidden = rows([3, 2, 5, 6], [7, 8, 9, 10], [11, 12, 4, 3])  # 80, 78 once slot 0 holds a 1
    draw = [6] * 4 + [8] * 4 + [9] * 4 + [10] * 4 + [11] * 3 + [1]
    engine = new_engine(2, episode="round")
    engine.deal_from(0, [build_deck([TEN_HIGH, hidden], discard=12, draw=draw)])
    setup_flips(engine, [(0, 1), (0, 1)])
    turns, result = play_round(engine, stallers=[1])
    assert turns == [0, 1] * 10
    assert engine.face_up[0].tolist() == [0xFFF, 0xFFF]
    assert engine.values[0, 1].tolist() == [1] + hidden[1:]
    assert result.round_scores[0].tolist() == [10, 78]


def test_r18_round_scores_add_up_to_game_totals() -> None:
    """R18: round 1 scores [20, 10]; seat 1 wins it, starts round 2 (R7) and ends it strictly lowest: [6, 5]."""
    engine = new_engine(2)
    engine.deal_from(0, [build_deck([TEN_HIGH, TEN_LOW], discard=12), build_deck([SIX_LOW, FIVE_HIGH], discard=12)])
    setup_flips(engine, [(0, 1), (0, 1)])
    _, first = play_round(engine)
    assert first.round_scores[0].tolist() == [20, 10] and first.totals[0].tolist() == [20, 10]
    assert engine.totals[0].tolist() == [20, 10]
    setup_flips(engine, [(0, 1), (0, 1)])
    turns, second = play_round(engine)
    assert turns[0] == 1 and turns[-2:] == [1, 0]
    assert second.round_scores[0].tolist() == [6, 5]
    assert second.totals[0].tolist() == [26, 15] and engine.totals[0].tolist() == [26, 15]


@pytest.mark.parametrize(("end_score", "rounds_played"), [(20, 1), (21, 2), (40, 2), (41, 3)])
def test_r19_game_ends_after_the_round_in_which_a_total_reaches_end_score(end_score: int, rounds_played: int) -> None:
    """R19 (option end_score): seat 0's totals go 20, 40, 60; the game ends once one is >= end_score."""
    engine, results = play(STEADY[:rounds_played], end_score=end_score)
    assert [bool(r.game_over[0]) for r in results] == [False] * (rounds_played - 1) + [True]
    assert results[-1].totals[0].tolist() == [20 * rounds_played, 10 * rounds_played]
    assert engine.phase[0] == OVER


def test_r19_a_new_round_is_dealt_from_the_whole_deck() -> None:
    """R19, R3, R4: after round 1 (totals below 100) all 150 cards are dealt again from the next deck order."""
    second = np.random.default_rng(19).permutation(build_deck([], discard=0)).tolist()
    engine = new_engine(2)
    engine.deal_from(0, [build_deck([TEN_HIGH, TEN_LOW], discard=12), second])
    setup_flips(engine, [(0, 1), (0, 1)])
    _, result = play_round(engine)
    assert not result.game_over[0]
    assert engine.phase[0] == SETUP and int(engine.round_index[0]) == 1
    assert engine.values[0].ravel().tolist() == second[:24]
    assert engine.discard_pile[0, : engine.discard_size[0]].tolist() == [second[24]]
    assert engine.draw_pile[0, : engine.draw_size[0]].tolist() == second[25:][::-1]


def test_r19_option_episode_round_ends_the_game_after_one_round() -> None:
    """Option episode='round': the game (episode) is over after one round, far below end_score."""
    engine, (result,) = play([[TEN_HIGH, TEN_LOW]], episode="round")
    assert result.game_over[0] and engine.phase[0] == OVER
    assert result.totals[0].tolist() == [20, 10]


@pytest.mark.parametrize(
    ("grids", "winners", "rewards"),
    [
        ([TEN_HIGH, FIFTEEN_LOW, TEN_LOW], [False, False, True], [-0.5, -0.5, 1.0]),  # totals 20, 15, 10
        ([TEN_HIGH, TEN_LOW, TEN_LOW], [False, True, True], [-1.0, 0.5, 0.5]),  # 20, 10, 10: both lowest win
        ([MINUS2_HIGH, MINUS2_LOW], [True, True], [0.0, 0.0]),  # -2, -2: everyone wins, nothing to share
    ],
)
def test_r20_lowest_total_wins_ties_all_win_and_result_rewards_sum_to_zero(
    grids: list[list[int]], winners: list[bool], rewards: list[float]
) -> None:
    """R20 and reward='result': winners share +1, losers share -1."""
    _, (result,) = play([grids], episode="round")
    assert result.winners[0].tolist() == winners
    assert paid("result", result)[0].tolist() == pytest.approx(rewards)
    assert float(paid("result", result)[0].sum()) == pytest.approx(0.0)


def test_r20_winner_is_decided_by_game_totals_not_the_last_round() -> None:
    """R20: round 1 [20, 10]; round 2 (seat 1 ends, 5 doubled) [4, 10]: seat 0 won round 2, seat 1 wins 20 to 24."""
    _, (first, second) = play([[TEN_HIGH, TEN_LOW], [FOUR_HIGH, FIVE_HIGH]], end_score=24)
    assert not first.game_over[0] and second.game_over[0]
    assert second.round_scores[0].tolist() == [4, 10]
    assert second.totals[0].tolist() == [24, 20]
    assert second.winners[0].tolist() == [False, True]
    assert paid("result", second)[0].tolist() == [-1.0, 1.0]


def test_result_rewards_are_zero_until_the_game_ends() -> None:
    """reward='result': a round that does not end the game gives no reward."""
    _, (first, last) = play(STEADY[:2], end_score=40)
    assert first.round_over[0] and not first.game_over[0]
    assert paid("result", first)[0].tolist() == [0.0, 0.0]
    assert paid("result", last)[0].tolist() == [-1.0, 1.0]


def test_score_rewards_are_opponents_mean_minus_own_round_score() -> None:
    """reward='score': at each round end, the opponents' mean round score minus one's own (zero-sum)."""
    _, (result,) = play([[TEN_HIGH, FIFTEEN_LOW, TEN_LOW]], episode="round")
    # Round scores 20, 15, 10.
    assert paid("score", result)[0].tolist() == pytest.approx([12.5 - 20, 15 - 15, 17.5 - 10])
    assert float(paid("score", result)[0].sum()) == pytest.approx(0.0)


def test_score_rewards_are_given_at_every_round_end() -> None:
    """reward='score': round 1 ([20, 10]) and round 2 ([20, 10] again) each pay [-10, +10]."""
    _, results = play(STEADY[:2], end_score=40)
    assert [paid("score", r)[0].tolist() for r in results] == [[-10.0, 10.0], [-10.0, 10.0]]


def test_lead_rewards_are_the_change_in_lead_over_the_best_opponent() -> None:
    """reward='lead' (R18): round scores [20, 15, 10] from totals 0 give leads of
    min(15, 10) - 20, min(20, 10) - 15 and min(20, 15) - 10; not zero-sum."""
    _, (result,) = play([[TEN_HIGH, FIFTEEN_LOW, TEN_LOW]], episode="round")
    assert paid("lead", result)[0].tolist() == [-10.0, -5.0, 5.0]


def test_lead_rewards_of_a_game_add_up_to_its_final_lead() -> None:
    """reward='lead' (R18..R20): two rounds of [20, 10] pay -10 / +10 each; the sum is the final lead."""
    _, results = play(STEADY[:2], end_score=40)
    assert [paid("lead", r)[0].tolist() for r in results] == [[-10.0, 10.0], [-10.0, 10.0]]
    final = results[-1].totals[0]
    assert results[-1].game_over[0] and final.tolist() == [40, 20]
    assert sum(paid("lead", r)[0] for r in results).tolist() == [20.0 - 40.0, 40.0 - 20.0]


def test_a_mapping_of_modes_pays_their_weighted_sum() -> None:
    """reward={'score': 1, 'result': 20} (R18..R20): the score reward each round, and 20 points more
    to the winner and 20 less to the loser when the game ends ([20, 10] twice, end score 40)."""
    _, (first, last) = play(STEADY[:2], end_score=40)
    mix = {"score": 1, "result": 20}
    assert not first.game_over[0] and paid(mix, first)[0].tolist() == [-10.0, 10.0]
    assert last.game_over[0] and paid(mix, last)[0].tolist() == [-10.0 - 20.0, 10.0 + 20.0]
    assert paid({"lead": 0.5, "none": 3}, last)[0].tolist() == [-5.0, 5.0]
    assert paid({"score": 1}, last).dtype == np.float32


def test_no_rewards_in_mode_none() -> None:
    """reward='none': nothing is paid at round or game end."""
    _, (result,) = play([[TEN_HIGH, FIFTEEN_LOW, TEN_LOW]], episode="round")
    assert result.game_over[0] and paid("none", result)[0].tolist() == [0.0, 0.0, 0.0]
