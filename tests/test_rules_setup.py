"""Material and setting up a round: RULES.md R1..R7 and example E1."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine

from scenarios import (
    CHOOSE,
    FLIP,
    R1_COUNTS,
    SETUP,
    act,
    build_deck,
    discard_pile,
    draw_pile,
    flip_turn,
    legal,
    new_engine,
    play_round,
    rows,
    seat,
    setup_flips,
)


def revealing(a: int, b: int) -> list[int]:
    """A grid whose slots 0 and 1 (the ones turned up in setup below) hold ``a`` and ``b``."""
    return [a, b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


def starter_after_setup(grids: list[list[int]]) -> int:
    """Deal ``grids``, let every seat turn up slots 0 and 1 (R5), return who acts first."""
    engine = new_engine(len(grids))
    engine.deal_from(0, [build_deck(grids, discard=11)])
    setup_flips(engine, [(0, 1)] * len(grids))
    assert engine.phase[0] == CHOOSE
    assert int(engine.starter[0]) == seat(engine)
    return seat(engine)


@pytest.mark.parametrize("players", range(2, 9))
def test_r1_every_deal_uses_the_150_card_deck(players: int) -> None:
    """R1: grids, discard pile and draw pile hold five -2, ten -1, fifteen 0 and ten of each 1..12."""
    engine = SkyjoEngine(Rules(num_players=players), 8, seed=players)
    for b in range(8):
        cards = engine.values[b].ravel().tolist() + discard_pile(engine, b) + draw_pile(engine, b)
        assert len(cards) == 150
        assert Counter(cards) == Counter(R1_COUNTS)


def test_r1_deal_from_rejects_a_deck_that_is_not_the_skyjo_deck() -> None:
    """R1: a 150-card order with one 12 replaced by a 0 is not the deck."""
    deck = build_deck([revealing(0, 0)] * 2, discard=3)
    deck[deck.index(12)] = 0
    with pytest.raises(ValueError, match="R1"):
        new_engine(2).deal_from(0, [deck])


@pytest.mark.parametrize("players", [1, 9, 0, -2])
def test_r2_fewer_than_two_or_more_than_eight_players_is_an_error(players: int) -> None:
    """R2: 2 to 8 players."""
    with pytest.raises(ValueError, match="num_players"):
        Rules(num_players=players)


@pytest.mark.parametrize("players", range(2, 9))
def test_r2_two_to_eight_players_each_get_a_grid(players: int) -> None:
    """R2, R3: every player count from 2 to 8 is playable, one 12-card grid per player."""
    engine = SkyjoEngine(Rules(num_players=players), 3, seed=1)
    assert engine.num_players == players
    assert engine.values.shape == (3, players, 12)
    assert (engine.phase == SETUP).all()


def test_r3_deal_order_fills_seat_grids_slot_by_slot_face_down() -> None:
    """R3: deck cards 0..11 go to seat 0 slots 0..11, the next 12 to seat 1, ...; all face down."""
    deck = np.random.default_rng(3).permutation(build_deck([], discard=0)).tolist()
    engine = new_engine(3)
    engine.deal_from(0, [deck])
    for player in range(3):
        assert engine.values[0, player].tolist() == deck[12 * player : 12 * player + 12]
    assert engine.face_up[0].tolist() == [0, 0, 0]
    assert engine.removed[0].tolist() == [0, 0, 0]


def test_r4_next_card_starts_the_discard_pile_and_the_rest_is_the_draw_pile() -> None:
    """R4: card 36 (3 players) starts the discard pile; card 37 is the top of the draw pile."""
    deck = np.random.default_rng(4).permutation(build_deck([], discard=0)).tolist()
    engine = new_engine(3)
    engine.deal_from(0, [deck])
    assert discard_pile(engine) == [deck[36]]
    assert draw_pile(engine) == deck[37:][::-1]  # bottom first: the first remaining card is on top
    setup_flips(engine, [(0, 1)] * 3)
    flip_turn(engine)
    assert discard_pile(engine)[-1] == deck[37]  # the first draw was card 37
    flip_turn(engine)
    assert discard_pile(engine)[-1] == deck[38]


def test_r5_setup_flips_are_made_in_seat_order_on_own_face_down_cards() -> None:
    """R5: each player in turn turns up two of their own face-down cards, of their choice."""
    grids = [revealing(1, 2), revealing(3, 4), revealing(5, 6)]
    engine = new_engine(3)
    engine.deal_from(0, [build_deck(grids, discard=11)])
    piles = (discard_pile(engine), draw_pile(engine))
    for player, (a, b) in enumerate([(5, 11), (0, 7), (3, 4)]):
        assert engine.phase[0] == SETUP and seat(engine) == player
        assert legal(engine) == {FLIP + k for k in range(12)}  # no draw or take during setup
        act(engine, FLIP + a)
        assert seat(engine) == player  # a player makes both flips
        assert legal(engine) == {FLIP + k for k in range(12) if k != a}
        act(engine, FLIP + b)
        assert int(engine.face_up[0, player]) == (1 << a) | (1 << b)
    assert engine.phase[0] == CHOOSE
    assert (discard_pile(engine), draw_pile(engine)) == piles  # setup moves no card


@pytest.mark.parametrize(
    ("reveals", "starter"),
    [
        ([(3, 4), (6, 5), (1, 1)], 1),  # highest sum: 11
        ([(3, 4), (6, 5), (12, -1)], 2),  # 11 ties 11: the highest single card, 12, decides
        ([(-2, 12), (9, 0), (4, 4)], 0),  # -2 + 12 = 10 beats 9 and 8
        ([(5, 5), (10, 0), (2, 2)], 1),  # tie on 10: highest single card 10 wins
        ([(10, 0), (5, 5), (2, 2)], 0),
        ([(1, 1), (6, 4), (4, 6)], 1),  # tie on sum and on highest card: lowest seat index
        ([(7, 3), (6, 4), (4, 6)], 0),  # 10 (highest card 7) beats 10 (highest 6)
    ],
)
def test_r6_first_round_starter_has_highest_revealed_sum_with_tie_breaks(
    reveals: list[tuple[int, int]], starter: int
) -> None:
    """R6: highest sum of the two revealed cards; tie: highest single card; then lowest seat."""
    assert starter_after_setup([revealing(a, b) for a, b in reveals]) == starter


@pytest.mark.parametrize(("other", "starter"), [((6, 5), 0), ((7, 6), 1)])
def test_e1_a_revealed_12_and_0_sum_to_12(other: tuple[int, int], starter: int) -> None:
    """E1: 12 and 0 count 12 for R6: they beat a sum of 11 and lose to a sum of 13."""
    assert starter_after_setup([revealing(12, 0), revealing(*other)]) == starter


# Three grids for R7: seat 1 reveals the highest pair (R6 starter) and, flipping first, ends round 1.
R7_SEAT0 = rows([1, 0, 2, -1], [0, 1, -1, 2], [1, -2, 0, 2])  # sum 5
R7_SEAT1 = rows([6, 5, 1, 0], [2, 1, 0, 1], [3, 2, -1, 0])  # sum 20: the ender, doubled to 40 (R17)
R7_SEAT2_TIED = rows([2, -1, 0, 1], [1, 0, 2, -1], [0, 1, -2, 2])  # sum 5
R7_SEAT2_HIGHER = rows([2, -1, 0, 1], [1, 0, 2, -1], [0, 1, -2, 3])  # sum 6


def round2_deck(r6_pick: int) -> list[int]:
    """A deck for round 2 in which seat ``r6_pick`` reveals 12 + 12: R6 would pick it, R7 must not."""
    grids = [revealing(0, 1), revealing(1, 0), revealing(0, 0)]
    grids[r6_pick] = rows([12, 12, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10])
    return build_deck(grids, discard=11)


def second_round_starter(seat2: list[int], r6_pick: int, **options) -> tuple[int, list[int]]:
    """Play round 1 by flipping (seat 1 starts and ends it); return round 2's starter and round 1's scores."""
    engine = new_engine(3, **options)
    decks = [build_deck([R7_SEAT0, R7_SEAT1, seat2], discard=11), round2_deck(r6_pick)]
    engine.deal_from(0, decks)
    setup_flips(engine, [(0, 1)] * 3)
    assert seat(engine) == 1  # R6: 6 + 5 is the highest pair
    turns, result = play_round(engine)
    assert turns[-3:] == [1, 2, 0]  # seat 1 ended the round; 2 and 0 played their last turns (R15)
    assert engine.round_index[0] == 1 and engine.phase[0] == SETUP
    setup_flips(engine, [(0, 1)] * 3)  # R5 again, in seat order, in the new round
    assert int(engine.starter[0]) == seat(engine)
    return seat(engine), result.round_scores[0].tolist()


def test_r7_round_winner_starts_the_next_round() -> None:
    """R7: the lowest round score (seat 0 with 5) starts round 2, not R6's choice."""
    starter, scores = second_round_starter(R7_SEAT2_HIGHER, r6_pick=2)
    assert scores == [5, 40, 6]
    assert starter == 0


def test_r7_tie_goes_to_first_tied_seat_clockwise_from_previous_starter() -> None:
    """R7 tie (decision): seats 0 and 2 tie on 5; round 1's starter was seat 1, so seat 2 starts."""
    starter, scores = second_round_starter(R7_SEAT2_TIED, r6_pick=0)
    assert scores == [5, 40, 5]
    assert starter == 2


def test_r7_tie_break_counts_from_the_previous_starter_not_the_ender() -> None:
    """R7 tie: seat 1 starts round 1 but stalls, seat 2 ends it; seats 0 and 1 tie, seat 1 starts next.

    Seat 1 puts every card it draws into its face-up slot 0 and reveals nothing.
    """
    seat0 = rows([1, 0, 2, 3], [0, 1, -1, 2], [1, -1, 2, 0])  # 10
    seat1 = rows([12, 11, -1, 0], [0, -1, 1, -2], [1, 0, 0, 1])  # 22; 10 once slot 0 holds a 0
    seat2 = rows([4, 3, 2, 1], [2, 1, 0, 1], [2, 3, 2, 3])  # 24
    # Every turn draws once; turns go 1, 2, 0, ...; seat 2 ends on turn 29, then 0 and 1 play (turn 31):
    # seat 1's last draw, the one left in its slot 0, is the 31st card of the draw pile.
    draw = [v for v in range(3, 13) for _ in range(3)] + [0]
    decks = [build_deck([seat0, seat1, seat2], discard=8, draw=draw), round2_deck(r6_pick=0)]
    engine = new_engine(3)
    engine.deal_from(0, decks)
    setup_flips(engine, [(0, 1)] * 3)
    assert seat(engine) == 1
    turns, result = play_round(engine, stallers=[1])
    assert turns[-3:] == [2, 0, 1]  # seat 2 ended the round (R15)
    assert result.round_scores[0].tolist() == [10, 10, 48]  # ender 24 doubled (R17)
    setup_flips(engine, [(0, 1)] * 3)
    assert seat(engine) == 1


@pytest.mark.parametrize("seat2", [R7_SEAT2_TIED, R7_SEAT2_HIGHER])
def test_r7_option_round_ender_makes_the_ender_start(seat2: list[int]) -> None:
    """R7 option next_starter="round_ender": seat 1 ended round 1, so it starts round 2."""
    starter, _ = second_round_starter(seat2, r6_pick=0, next_starter="round_ender")
    assert starter == 1
