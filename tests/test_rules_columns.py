"""The column rule: RULES.md R13, R14 and example E2 (with R3's slot numbering)."""

from __future__ import annotations

from collections import Counter

import pytest

from skyjo_env import SkyjoEngine

from scenarios import (
    DRAW,
    FLIP,
    OVER,
    R1_COUNTS,
    REPLACE,
    TAKE,
    act,
    build_deck,
    discard_pile,
    draw_pile,
    flip_turn,
    hidden_slots,
    legal,
    new_engine,
    play_round,
    rows,
    seat,
    setup_flips,
)

COLUMN_1 = (1 << 1) | (1 << 5) | (1 << 9)  # R3: column c holds slots c, c+4, c+8
COLUMN_3 = (1 << 3) | (1 << 7) | (1 << 11)

# Seat 0's column 1 holds three 7s; setup turns up two of them (14, so seat 0 starts by R6).
SEVENS = rows([2, 7, 3, 4], [5, 7, 6, 8], [9, 7, 10, 11])
LOW = rows([1, 2, 3, 4], [5, 6, 8, 9], [10, 11, 12, 1])


def sevens_game(**options) -> SkyjoEngine:
    """Seat 0 to act with two face-up 7s in column 1 and a face-down 7 under them; discard [0]; next draw 4."""
    engine = new_engine(2, **options)
    engine.deal_from(0, [build_deck([SEVENS, LOW], discard=0, draw=[4])])
    setup_flips(engine, [(1, 5), (0, 1)])
    assert seat(engine) == 0
    return engine


def test_r13_two_face_up_equal_cards_and_a_face_down_one_are_not_removed() -> None:
    """R13: only three face-up cards of the same value complete a column."""
    engine = sevens_game()
    assert int(engine.removed[0, 0]) == 0


def test_r13_column_of_three_equal_face_up_cards_is_removed_onto_the_discard_pile() -> None:
    """R13: turning up the third 7 removes column 1; its cards go on top of the card discarded that turn."""
    engine = sevens_game()
    act(engine, DRAW, FLIP + 9)
    assert int(engine.removed[0, 0]) == COLUMN_1
    assert discard_pile(engine) == [0, 4, 7, 7, 7]
    assert seat(engine) == 1
    act(engine, TAKE)  # the next player may take one of the removed 7s
    assert int(engine.held[0]) == 7


def test_r13_column_completed_by_a_swap_is_removed() -> None:
    """R13: swapping a taken 4 into the face-down slot under two face-up 4s removes the column."""
    fours = rows([1, 2, 4, 3], [5, 6, 4, 8], [10, 11, 9, 12])  # column 2: 4, 4 and a face-down 9
    engine = new_engine(2)
    engine.deal_from(0, [build_deck([fours, LOW], discard=4)])
    setup_flips(engine, [(2, 6), (0, 1)])
    act(engine, TAKE, REPLACE + 10)
    assert int(engine.removed[0, 0]) == (1 << 2) | (1 << 6) | (1 << 10)
    assert discard_pile(engine) == [9, 4, 4, 4]


def test_r13_option_off_keeps_the_column() -> None:
    """R13 option column_rule=False: three face-up 7s stay on the table."""
    engine = sevens_game(column_rule=False)
    act(engine, DRAW, FLIP + 9)
    assert int(engine.removed[0, 0]) == 0
    assert discard_pile(engine) == [0, 4]


def test_r13_three_equal_cards_in_a_row_are_not_a_column() -> None:
    """R3 + R13: slots 0, 1, 2 form a row, not a column; three 7s there stay."""
    row = rows([7, 7, 7, 1], [2, 3, 4, 5], [6, 8, 9, 10])
    engine = new_engine(2)
    engine.deal_from(0, [build_deck([row, LOW], discard=0)])
    setup_flips(engine, [(0, 1), (0, 1)])
    act(engine, DRAW, FLIP + 2)
    assert int(engine.removed[0, 0]) == 0 and int(engine.face_up[0, 0]) == 0b111


def test_r13_removed_column_stays_empty_for_the_rest_of_the_round() -> None:
    """R13: after removal no action touches column 1 again, and its cards no longer count (R16)."""
    engine = sevens_game(episode="round")
    act(engine, DRAW, FLIP + 9)
    while engine.phase[0] != OVER:
        player = seat(engine)
        act(engine, DRAW)
        if player == 0:
            assert not legal(engine) & {REPLACE + 1, REPLACE + 5, REPLACE + 9, FLIP + 1, FLIP + 5, FLIP + 9}
        result = act(engine, FLIP + hidden_slots(engine, player)[0])
    assert int(engine.removed[0, 0]) == COLUMN_1
    assert result.round_scores[0, 0] == sum(SEVENS) - 21


# R14: seat 0 flips and ends the round; seat 1 never reveals more than slots 0 and 3 in play.
R14_ENDER = rows([6, 4, -1, 0], [0, -1, 1, -2], [1, 0, -1, 2])  # 9: strictly lowest, never doubled
R14_FIVES = rows([1, 2, 3, 5], [4, 6, 7, 5], [8, 9, 12, 5])  # 67; column 3 is three 5s
# Seat 1 puts each drawn card into slot 0; its last draw (the 20th card) is a 0, so it ends with 66.
R14_DRAW = [6] * 4 + [8] * 4 + [9] * 4 + [10] * 4 + [11] * 3 + [0]


def final_reveal_game(**options) -> tuple[SkyjoEngine, list[int]]:
    """Play the R14 round to its end (episode='round'); returns the engine and the round scores."""
    engine = new_engine(2, episode="round", **options)
    engine.deal_from(0, [build_deck([R14_ENDER, R14_FIVES], discard=12, draw=R14_DRAW)])
    setup_flips(engine, [(0, 1), (0, 3)])
    turns, result = play_round(engine, stallers=[1])
    assert turns == [0, 1] * 10
    assert engine.phase[0] == OVER
    return engine, result.round_scores[0].tolist()


@pytest.mark.parametrize(
    ("options", "removed", "score"),
    [
        ({}, COLUMN_3, 66 - 15),
        ({"column_rule_at_final_reveal": False}, 0, 66),
        ({"column_rule": False}, 0, 66),
        ({"column_rule": False, "column_rule_at_final_reveal": False}, 0, 66),
    ],
)
def test_r14_column_completed_by_the_final_reveal(options: dict, removed: int, score: int) -> None:
    """R14: the three 5s (one face up, two face down) are removed at the final reveal only if both options are on."""
    engine, scores = final_reveal_game(**options)
    assert int(engine.face_up[0, 1]) == 0xFFF  # R16: everything turned up
    assert int(engine.removed[0, 1]) == removed
    assert scores == [9, score]


def test_r14_columns_removed_at_the_final_reveal_go_onto_the_discard_pile() -> None:
    """R13/R14: the removed 5s go onto the discard pile, so the finished game still holds all 150 cards (R1)."""
    engine, _ = final_reveal_game()
    grids = [int(v) for p in range(2) for k, v in enumerate(engine.values[0, p]) if not engine.removed[0, p] >> k & 1]
    cards = grids + draw_pile(engine) + discard_pile(engine)
    assert Counter(cards) == Counter(R1_COUNTS)
    assert discard_pile(engine)[-3:] == [5, 5, 5]


# E2: a column of three 3s (9) and nine other cards worth 5. Seat 0 reveals 3 + 2 and starts.
E2_GRID = rows([3, 2, 0, 1], [3, -1, 1, 0], [3, 0, -2, 4])
E2_OTHER = rows([-2, -1, 12, 11], [10, 9, 8, 12], [11, 10, 9, 8])  # 97


@pytest.mark.parametrize(("column_rule", "score"), [(False, 14), (True, 5)])
def test_e2_column_of_three_3s_scores_14_without_and_5_with_the_column_rule(column_rule: bool, score: int) -> None:
    """E2: seat 0 turns up everything (removing the 3s when the rule is on) and ends the round."""
    assert sum(E2_GRID) == 14
    engine = new_engine(2, episode="round", column_rule=column_rule)
    engine.deal_from(0, [build_deck([E2_GRID, E2_OTHER], discard=12)])
    setup_flips(engine, [(0, 1), (0, 1)])
    turns, result = play_round(engine)
    assert turns == [0, 1] * 10
    assert result.round_scores[0].tolist() == [score, 97]  # seat 0 strictly lowest: not doubled (R17)


def test_r15_removed_column_counts_as_no_face_down_cards() -> None:
    """R15: seat 0 removes column 1 on the way; its 10th flip leaves no face-down card and ends the round."""
    engine = sevens_game(episode="round")
    for turn in range(19):
        assert seat(engine) == turn % 2 and int(engine.ender[0]) == -1
        flip_turn(engine)
    assert int(engine.removed[0, 0]) == COLUMN_1
    assert int(engine.ender[0]) == 0 and seat(engine) == 1
    assert flip_turn(engine).round_over[0]
