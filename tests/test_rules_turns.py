"""A turn and the end of a round's play: RULES.md R8..R12 and R15."""

from __future__ import annotations

from collections import Counter

import pytest

from skyjo_env import SkyjoEngine

from scenarios import (
    CHOOSE,
    DRAW,
    DRAWN,
    FLIP,
    OVER,
    REPLACE,
    TAKE,
    TAKEN,
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
    stall_turn,
)

# Seat 0 reveals 5 + 6 in setup and starts (R6); seat 1 reveals 1 + 2.
SEAT0 = rows([5, 6, 1, 2], [3, 4, 7, 8], [9, 10, 11, 12])
SEAT1 = rows([1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12])
ALL_REPLACES = {REPLACE + k for k in range(12)}


def two_player_game(**options) -> SkyjoEngine:
    """Seat 0 to act; discard pile [7]; the draw pile's top cards are 9 then 4."""
    engine = new_engine(2, **options)
    engine.deal_from(0, [build_deck([SEAT0, SEAT1], discard=7, draw=[9, 4])])
    setup_flips(engine, [(0, 1), (0, 1)])
    assert seat(engine) == 0 and engine.phase[0] == CHOOSE
    return engine


def test_r8_a_turn_starts_with_take_or_draw() -> None:
    """R8: the only choices are the discard pile's top card or the draw pile's top card."""
    engine = two_player_game()
    assert legal(engine) == {DRAW, TAKE}
    size = int(engine.draw_size[0])
    act(engine, DRAW)
    assert engine.phase[0] == DRAWN and int(engine.held[0]) == 9
    assert int(engine.draw_size[0]) == size - 1 and discard_pile(engine) == [7]


def test_r8_take_picks_up_the_discard_top() -> None:
    """R8: take holds the discard pile's top card and leaves the draw pile alone."""
    engine = two_player_game()
    pile = draw_pile(engine)
    act(engine, TAKE)
    assert engine.phase[0] == TAKEN and int(engine.held[0]) == 7
    assert discard_pile(engine) == [] and draw_pile(engine) == pile


def test_r9_taken_card_must_be_swapped_with_any_grid_card() -> None:
    """R9: after a take only swaps are legal, with face-up or face-down cards; no discard-and-flip."""
    engine = two_player_game()
    act(engine, TAKE)
    assert legal(engine) == ALL_REPLACES


@pytest.mark.parametrize(("slot", "old"), [(11, 12), (0, 5)])
def test_r9_swap_puts_old_card_face_up_on_discard_pile(slot: int, old: int) -> None:
    """R9: the taken 7 lies face up in the slot; the card that was there (face down or up) tops the discard pile."""
    engine = two_player_game()
    act(engine, TAKE, REPLACE + slot)
    assert int(engine.values[0, 0, slot]) == 7
    assert int(engine.face_up[0, 0]) >> slot & 1
    assert discard_pile(engine) == [old]
    assert seat(engine) == 1 and engine.phase[0] == CHOOSE  # R11


def test_r10_drawn_card_may_be_swapped_or_discarded_for_a_flip() -> None:
    """R10: after a draw: swap with any card, or discard and turn up a face-down card (not a face-up one)."""
    engine = two_player_game()
    act(engine, DRAW)
    assert legal(engine) == ALL_REPLACES | {FLIP + k for k in range(2, 12)}


def test_r10_drawn_card_swapped_like_r9() -> None:
    """R10: the drawn 9 replaces face-down slot 3 (a 2); the 2 goes face up onto the discard pile."""
    engine = two_player_game()
    act(engine, DRAW, REPLACE + 3)
    assert int(engine.values[0, 0, 3]) == 9 and int(engine.face_up[0, 0]) >> 3 & 1
    assert discard_pile(engine) == [7, 2]
    assert seat(engine) == 1


def test_r10_drawn_card_discarded_and_a_face_down_card_turned_up() -> None:
    """R10: the drawn 9 goes onto the discard pile; slot 4 (a 3) is turned up and stays a 3."""
    engine = two_player_game()
    act(engine, DRAW, FLIP + 4)
    assert discard_pile(engine) == [7, 9]
    assert int(engine.values[0, 0, 4]) == 3 and int(engine.face_up[0, 0]) == 0b10011
    assert seat(engine) == 1


def test_r11_turn_ends_after_the_second_action_and_play_goes_clockwise() -> None:
    """R11 and 'play goes clockwise': seat 2 starts (R6), then seats 0, 1, 2, 0 follow."""
    engine = new_engine(3)
    grids = [
        rows([1, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]),
        rows([2, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]),
        rows([12, 12, 3, 4], [5, 6, 7, 8], [9, 10, 11, 1]),
    ]
    engine.deal_from(0, [build_deck(grids, discard=0)])
    setup_flips(engine, [(0, 1)] * 3)
    seats = []
    for _ in range(5):
        seats.append(seat(engine))
        act(engine, DRAW)
        assert seat(engine) == seats[-1]  # still this player's turn
        act(engine, FLIP + hidden_slots(engine, seats[-1])[0])
        assert engine.phase[0] == CHOOSE
    assert seats == [2, 0, 1, 2, 0]


def stall_until_draw_pile_is_empty() -> tuple[SkyjoEngine, list[int]]:
    """Two players put every drawn card into face-up slot 0 until the 125-card draw pile is empty."""
    engine = two_player_game()
    assert int(engine.draw_size[0]) == 150 - 24 - 1
    for _ in range(125):
        stall_turn(engine)
    assert int(engine.draw_size[0]) == 0  # no reshuffle before a card must be drawn
    discards = discard_pile(engine)
    assert len(discards) == 126
    return engine, discards


def test_r12_empty_draw_pile_is_rebuilt_from_the_discards_but_the_top() -> None:
    """R12: drawing from an empty pile shuffles the discard pile except its top into a new draw pile."""
    engine, discards = stall_until_draw_pile_is_empty()
    assert DRAW in legal(engine)
    act(engine, DRAW)
    new_pile = draw_pile(engine) + [int(engine.held[0])]  # the held card was the new pile's top
    assert discard_pile(engine) == discards[-1:]
    assert Counter(new_pile) == Counter(discards[:-1])
    assert new_pile != discards[:-1]  # shuffled: keeping all 125 cards in order has chance 1/125!
    act(engine, REPLACE + 0)
    assert int(engine.draw_size[0]) == 124 and len(discard_pile(engine)) == 2


def test_r12_no_reshuffle_when_the_player_takes() -> None:
    """R12: the discard pile is only reshuffled when a card must be drawn; a take leaves it alone."""
    engine, discards = stall_until_draw_pile_is_empty()
    act(engine, TAKE, REPLACE + 0)
    assert int(engine.draw_size[0]) == 0
    assert discard_pile(engine)[:-1] == discards[:-1] and len(discard_pile(engine)) == 126


def test_r12_draw_is_illegal_when_no_card_can_be_drawn() -> None:
    """R12: empty draw pile and a discard pile of one card: drawing is not legal, taking still is.

    With 150 cards and at most 96 in grids this cannot arise in play, so the state is set directly.
    """
    engine = two_player_game()
    engine.draw_size[0] = 0
    engine.discard_size[0] = 1
    assert legal(engine) == {TAKE}
    with pytest.raises(ValueError, match="draw"):
        act(engine, DRAW)


@pytest.mark.parametrize("players", [2, 4, 8])
def test_r15_ender_does_not_play_again_and_others_get_one_more_turn(players: int) -> None:
    """R15: all flip; seat 0 starts, is first with no face-down card (its 10th turn), then each other seat plays once."""
    grids = [rows([12, 11, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10])] + [
        rows([p % 3 - 2, 0, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10]) for p in range(1, players)
    ]
    engine = new_engine(players, episode="round")
    engine.deal_from(0, [build_deck(grids, discard=12)])
    setup_flips(engine, [(0, 1)] * players)
    for turn in range(10 * players):
        assert seat(engine) == turn % players
        result = flip_turn(engine)
        if turn == 9 * players:
            assert int(engine.ender[0]) == 0 and not hidden_slots(engine, 0)
        assert bool(result.round_over[0]) == (turn == 10 * players - 1)
    assert engine.phase[0] == OVER


def test_r15_other_players_keep_their_face_down_cards_for_one_turn_only() -> None:
    """R15: seat 0 ends; seats 1 and 2, who never reveal, each play exactly one more turn."""
    grids = [rows([12, 11, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10])] + [rows([1, 0, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10])] * 2
    engine = new_engine(3, episode="round")
    engine.deal_from(0, [build_deck(grids, discard=12)])
    setup_flips(engine, [(0, 1)] * 3)
    turns, result = play_round(engine, stallers=[1, 2])
    assert turns == [0, 1, 2] * 10
    assert result.game_over[0] and engine.phase[0] == OVER


def test_r15_round_ends_when_the_last_face_down_card_is_swapped_away() -> None:
    """R15: a take-and-swap into the last face-down slot also leaves no face-down card: the round ends."""
    engine = two_player_game(episode="round")
    for _ in range(9):
        flip_turn(engine)  # seat 0 turns up slots 2..10
        stall_turn(engine)  # seat 1
    assert hidden_slots(engine, 0) == [11]
    act(engine, TAKE)
    assert int(engine.ender[0]) == -1  # the turn is not over yet
    act(engine, REPLACE + 11)
    assert int(engine.ender[0]) == 0 and seat(engine) == 1 and engine.phase[0] == CHOOSE
    result = stall_turn(engine)
    assert result.round_over[0] and engine.phase[0] == OVER


def test_r15_final_turns_are_counted_from_the_ender_clockwise() -> None:
    """R15: seat 2 of 4 ends; seats 3, 0, 1 follow once each, in clockwise order, then the round is over."""
    grids = [rows([0, 0, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10])] * 2 + [rows([12, 11, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10])]
    grids.append(rows([1, 0, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10]))
    engine = new_engine(4, episode="round")
    engine.deal_from(0, [build_deck(grids, discard=12)])
    setup_flips(engine, [(0, 1)] * 4)
    assert seat(engine) == 2
    turns, _ = play_round(engine, stallers=[0, 1, 3])
    assert turns == [2, 3, 0, 1] * 10  # seat 2's 10th turn ends the round, then 3, 0 and 1 play once
