"""Rendering: the text table and the RGB image show exactly what the viewer may see."""

from __future__ import annotations

import numpy as np
import pytest

from skyjo_env.render import card_colour, render_rgb, render_text

from scenarios import DRAW, FLIP, REPLACE, TAKE, act, build_deck, new_engine, rows, setup_flips


def column_removed_engine():
    """Seat 0 starts (5 + 5 beats 1 + 1, R6), takes the discarded 5 into slot 8: column 0 goes (R13)."""
    engine = new_engine(2)
    grids = [rows([5, 9, 12, -2], [5, 0, 3, 4], [7, 6, 2, 11]), rows([1, 8, 8, 8], [1, 10, 10, 10], [0, 0, 0, -1])]
    engine.deal_from(0, [build_deck(grids, discard=5, draw=[12, 3])])
    setup_flips(engine, [(0, 4), (0, 4)])
    act(engine, TAKE, REPLACE + 8)
    return engine


def test_text_shows_grids_piles_and_turn():
    engine = column_removed_engine()
    text = render_text(engine)
    lines = text.splitlines()
    assert "round 1" in lines[0] and "player_1 to act: choose" in lines[0]
    assert "draw pile: 125 cards" in lines[1] and "discard: 5" in lines[1] and "in hand: none" in lines[1]
    grid_rows = [line for line in lines if line.startswith(("--", "##", " 1", " 5"))]
    # Column 0 of seat 0 was removed; the rest of seat 0 and seat 1 are face down but slots 0 and 4.
    assert grid_rows[0].split() == ["--", "##", "##", "##", "1", "##", "##", "##"]
    assert grid_rows[1].split() == ["--", "##", "##", "##", "1", "##", "##", "##"]
    assert grid_rows[2].split() == ["--", "##", "##", "##", "##", "##", "##", "##"]
    assert "player_1 <" in text and "total 0, last round 0" in text


def test_drawn_card_shows_to_its_drawer_only():
    engine = column_removed_engine()
    act(engine, DRAW)  # seat 1 draws the 12
    assert "in hand: ?? (from the draw pile)" in render_text(engine)
    assert "in hand: ?? (from the draw pile)" in render_text(engine, viewer=0)
    assert "in hand: 12 (from the draw pile)" in render_text(engine, viewer=1)
    assert not np.array_equal(render_rgb(engine, viewer=1), render_rgb(engine, viewer=0))
    np.testing.assert_array_equal(render_rgb(engine, viewer=0), render_rgb(engine))


def test_taken_card_is_public():
    engine = column_removed_engine()
    act(engine, TAKE)  # seat 1 takes the top of the discard pile: a 5 from the removed column
    for viewer in (None, 0, 1):
        assert "in hand: 5 (from the discard pile)" in render_text(engine, viewer=viewer)


def test_hidden_cards_do_not_change_the_picture():
    engine = column_removed_engine()
    twin = new_engine(2)
    state = engine.export_game(0)
    state["values"][1][11], state["values"][1][10] = state["values"][1][10], state["values"][1][11]  # both face down
    state["draw_pile"] = state["draw_pile"][::-1]
    twin.import_game(0, state)
    assert twin.values[0, 1, 11] != engine.values[0, 1, 11]
    assert render_text(twin) == render_text(engine)
    np.testing.assert_array_equal(render_rgb(twin), render_rgb(engine))


def test_game_over_names_the_winner():
    engine = new_engine(3, end_score=20)
    rng = np.random.default_rng(0)
    while engine.phase[0] != 4:
        engine.step(np.array([rng.choice(np.flatnonzero(engine.legal_mask()[0]))]))
    text = render_text(engine)
    winner = int(np.argmin(engine.totals[0]))
    assert "game over" in text and f"lowest total wins: player_{winner}" in text
    assert "##" not in text  # every card is revealed at the end (R16)


def test_image_colours_cards_by_value_band():
    engine = column_removed_engine()
    act(engine, DRAW, FLIP + 11)  # seat 1 discards the 12 and reveals its -1
    img = render_rgb(engine)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    colours = {tuple(c) for c in img.reshape(-1, 3)}
    # Face up now: seat 1's 1, 1 and -1, the discarded 12 on the pile.
    for value in (1, -1, 12):
        assert card_colour(value) in colours
    for value in (0, 5):  # no card of these bands is visible
        assert card_colour(value) not in colours
    assert card_colour(-2) == card_colour(-1) and card_colour(1) == card_colour(4)
    assert card_colour(5) == card_colour(8) and card_colour(9) == card_colour(12)
    assert len({card_colour(v) for v in range(-2, 13)}) == 5


@pytest.mark.parametrize("num_players", [2, 5, 8])
def test_image_size_grows_with_players(num_players):
    engine = new_engine(num_players)
    img = render_rgb(engine)
    assert img.shape[1] >= 400 and img.shape[0] >= 300
    assert (num_players > 4) == (img.shape[0] > render_rgb(new_engine(2)).shape[0])


def test_bad_viewer_or_game_is_named():
    engine = new_engine(2)
    with pytest.raises(ValueError, match="viewer 2 is not a seat"):
        render_text(engine, viewer=2)
    with pytest.raises(ValueError, match="game 1 is out of range"):
        render_rgb(engine, game=1)


def test_the_text_layout_holds_three_digit_totals_and_eight_seats():
    engine = new_engine(8)
    engine.totals[0] = [123, -5, 99, 100, 7, 250, 31, 8]
    engine.round_scores[0] = [142, -12, 0, 88, 3, 288, 10, 1]
    lines = render_text(engine, 0, viewer=2).splitlines()
    for seats in (range(4), range(4, 8)):  # four grids abreast: every seat's line keeps a gap before the next
        row = next(line for line in lines if f"total {engine.totals[0][seats[0]]}," in line)
        texts = [f"total {engine.totals[0][p]}, last round {engine.round_scores[0][p]}" for p in seats]
        at = [row.index(text) for text in texts]
        assert at == sorted(at) and all(row[a + len(x) : a + len(x) + 2] == "  " for a, x in zip(at[:-1], texts))
