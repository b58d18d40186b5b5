"""The per-seat observation encoder: documented layout, no leak of hidden cards (RULES.md, last section)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.actions import DRAW, TAKE
from skyjo_env.observation import (
    PADDED_SIZE,
    by_player_count,
    layout,
    obs_size,
    observe,
    observe_as,
    pad,
    padded_layout,
    padded_players,
    size,
    unpad,
)
from skyjo_env.sampling import sample_bits

SETUP, CHOOSE, DRAWN, TAKEN, OVER = range(5)
R1_COUNTS = [5, 10, 15] + [10] * 12  # R1, cards of value -2..12


def reference(state: dict, seat: int, end_score: int) -> np.ndarray:
    """The observation of ``seat``, written out entry by entry from the documented table.

    ``state`` is ``SkyjoEngine.export_game`` output, so this reads nothing of the encoder.
    """
    P = len(state["values"])
    out: list[float] = []
    for r in range(P):
        p = (seat + r) % P
        up, gone, values = state["face_up"][p], state["removed"][p], state["values"][p]
        out += [values[k] / 12 if up[k] and not gone[k] else 0.0 for k in range(12)]
        out += [0.0 if up[k] else 1.0 for k in range(12)]
        out += [1.0 if gone[k] else 0.0 for k in range(12)]

    def one_hot(card: int | None) -> list[float]:
        return [1.0 if card == v else 0.0 for v in range(-2, 13)]

    phase = state["phase"]
    to_act = state["current"] == seat
    discard = state["discard_pile"]
    out += one_hot(discard[-1] if discard else None)
    visible = phase == "taken" or (phase == "drawn" and to_act)
    out += one_hot(state["held"] if visible else None)
    out += [float(phase == "drawn"), float(phase == "taken")]
    out += [float(phase == name) for name in ("setup", "choose", "drawn", "taken")]
    hidden = [
        v
        for p in range(P)
        for v, up, gone in zip(state["values"][p], state["face_up"][p], state["removed"][p])
        if not up and not gone
    ]
    unknown = state["draw_pile"] + hidden + ([state["held"]] if phase == "drawn" and not to_act else [])
    out += [unknown.count(v) / R1_COUNTS[v + 2] for v in range(-2, 13)]
    out += [len(state["draw_pile"]) / 150]
    out += [state["totals"][(seat + r) % P] / end_score for r in range(P)]
    out += [float(to_act)]
    ender = state["ender"]
    out += [float(ender is not None)]
    out += [1.0 if ender is not None and (ender - seat) % P == r else 0.0 for r in range(P)]
    return np.array(out, dtype=np.float32)


def played(num_players: int, batch: int, steps: int, seed: int = 0, **options) -> Iterator[SkyjoEngine]:
    """One engine of ``batch`` games, yielded after each of ``steps`` random legal steps (auto-reset on)."""
    engine = SkyjoEngine(Rules(num_players=num_players, **options), batch, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        engine.step(sample_bits(engine.legal_bits(), rng))
        yield engine


@pytest.mark.parametrize("num_players", [2, 3, 5, 8])
def test_layout_is_contiguous_and_sized(num_players):
    L = layout(num_players)
    names = [f"grid_{r}" for r in range(num_players)] + [
        "discard_top", "held", "held_source", "phase", "unseen", "draw_size", "totals", "to_act",
        "round_ending", "ender",
    ]  # fmt: skip
    assert list(L) == names
    starts = [s.start for s in L.values()]
    stops = [s.stop for s in L.values()]
    assert starts[0] == 0 and starts[1:] == stops[:-1] and stops[-1] == size(num_players) == 38 * num_players + 54
    L["held"] = slice(0, 1)  # the returned dict is the caller's own
    assert layout(num_players)["held"] != slice(0, 1)


@pytest.mark.parametrize("num_players, end_score", [(2, 100), (3, 100), (4, 40), (8, 100)])
def test_matches_the_documented_table_for_every_seat(num_players, end_score):
    seen_phases = set()
    for engine in played(num_players, 16, 200, seed=num_players, end_score=end_score):
        game = int(engine.steps.argmax()) % 16
        state = engine.export_game(game)
        seen_phases.add(state["phase"])
        for seat in range(num_players):
            expected = reference(state, seat, end_score)
            np.testing.assert_allclose(observe(engine, seat, [game])[0], expected, rtol=1e-6, atol=0)
            np.testing.assert_allclose(observe(engine, seat)[game], expected, rtol=1e-6, atol=0)  # batched
    assert seen_phases >= {"setup", "choose", "drawn", "taken"}


def _play_to_game_over(seed: int) -> tuple[SkyjoEngine, bool]:
    """A 3-player game to 30 points, checked against the table at every step until it is OVER."""
    engine = SkyjoEngine(Rules(num_players=3, end_score=30), 1, seed=seed, auto_reset=False)
    rng = np.random.default_rng(seed)
    ending_seen = False
    while True:
        engine.step(sample_bits(engine.legal_bits(), rng))
        if engine.phase[0] == OVER:
            return engine, ending_seen
        ending_seen |= bool(engine.ender[0] >= 0)
        for seat in range(3):
            expected = reference(engine.export_game(0), seat, 30)
            np.testing.assert_allclose(observe(engine, seat)[0], expected, rtol=1e-6, atol=0)


def test_round_ending_and_game_over_states_match_the_table():
    engine, ending_seen = _play_to_game_over(seed=1)
    assert ending_seen
    for seat in range(3):
        obs, expected = observe(engine, seat)[0], reference(engine.export_game(0), seat, 30)
        np.testing.assert_allclose(obs, expected, rtol=1e-6, atol=0)
        assert not obs[layout(3)["phase"]].any()  # OVER has no column


def test_batch_equals_per_game_and_any_subset_order():
    """One game is encoded from Python-int indices, several from index arrays: the floats are identical."""
    *_, engine = played(3, 32, 150, seed=3)
    seats = np.random.default_rng(0).integers(0, 3, 32)
    whole = observe(engine, seats)
    assert whole.shape == (32, size(3)) and whole.dtype == np.float32
    for g in range(32):
        np.testing.assert_array_equal(observe(engine, int(seats[g]), [g])[0], whole[g])
    subset = np.array([31, 4, 17, 0])
    np.testing.assert_array_equal(observe(engine, seats[subset], subset), whole[subset])
    assert observe(engine, 0, np.array([], dtype=np.int64)).shape == (0, size(3))


@pytest.mark.parametrize("num_players", [2, 5])
def test_one_game_and_a_batch_give_the_same_bits_and_no_negative_zero(num_players):
    """Bit for bit, with removed columns about; a -0.0 would tell a hidden card's sign."""
    removed_seen = False
    for engine in played(num_players, 16, 300, seed=20 + num_players):
        removed_seen |= bool(engine.removed.any())
        seats = engine.current.astype(np.int64)
        whole = observe(engine, seats)
        assert not np.signbit(whole).any(where=whole == 0)
        for g in (0, 7, 15):
            np.testing.assert_array_equal(observe(engine, seats[g], [g]).view(np.uint32), whole[[g]].view(np.uint32))
    assert removed_seen


def test_bad_seats_are_rejected():
    engine = SkyjoEngine(Rules(num_players=2), 4, seed=0)
    with pytest.raises(ValueError, match="0..1"):
        observe(engine, 2)
    with pytest.raises(ValueError, match="0..1"):
        observe(engine, np.array([0, 1, -1, 0]))
    with pytest.raises(ValueError, match="one per observed game"):
        observe(engine, np.array([0, 1]))
    with pytest.raises(ValueError, match="0..1"):
        observe(SkyjoEngine(Rules(num_players=2), 1, seed=0), 2)  # the one-game path checks too


def _reshuffle_hidden(state: dict, rng: np.random.Generator, *, drawn_is_hidden: bool) -> dict:
    """The same public state with the hidden cards (face-down values, draw pile order) permuted."""
    new = {
        **state,
        "values": [list(row) for row in state["values"]],
        "key": [int(x) for x in rng.integers(0, 2**32, 2)],
    }
    spots = [(p, k) for p, row in enumerate(state["face_up"]) for k, up in enumerate(row) if not up]
    pool = [state["values"][p][k] for p, k in spots] + list(state["draw_pile"])
    if drawn_is_hidden:
        pool.append(state["held"])
    pool = [int(c) for c in rng.permutation(pool)]
    for p, k in spots:
        new["values"][p][k] = pool.pop(0)
    if drawn_is_hidden:
        new["held"] = pool.pop()
    new["draw_pile"] = pool
    return new


@pytest.mark.parametrize(
    ("num_players", "obs_type"), [(2, "table"), (4, "table"), *((p, "padded") for p in range(2, 9))]
)
def test_hidden_cards_do_not_leak(num_players, obs_type):
    """Two states that differ only in face-down values and draw pile order look the same to every
    seat, in table observations and in padded ones at every count."""
    rng = np.random.default_rng(7)
    other = SkyjoEngine(Rules(num_players=num_players), 1, seed=0)
    changed = 0
    for engine in played(num_players, 8, 300, seed=11):
        game = int(rng.integers(8))
        state = engine.export_game(game)  # (an empty discard pile after taking its last card included)
        drawn = state["phase"] == "drawn"
        twin = _reshuffle_hidden(state, rng, drawn_is_hidden=drawn)
        other.import_game(0, twin)
        changed += twin["values"] != state["values"] or twin["draw_pile"] != state["draw_pile"]
        for seat in range(num_players):
            if drawn and seat == state["current"]:
                continue  # the drawer sees the drawn card, which was permuted too
            np.testing.assert_array_equal(
                observe_as(obs_type, other, seat)[0], observe_as(obs_type, engine, seat, [game])[0]
            )
    assert changed > 250


def _play_until(engine: SkyjoEngine, phase: int, first: int, rng: np.random.Generator) -> None:
    while not (engine.phase[0] == CHOOSE and engine.legal_mask()[0, first]):
        engine.step(sample_bits(engine.legal_bits(), rng))
    engine.step(np.array([first]))
    assert engine.phase[0] == phase


def test_drawn_card_is_seen_by_the_drawer_only():
    engine = SkyjoEngine(Rules(num_players=3), 1, seed=5)
    _play_until(engine, DRAWN, DRAW, np.random.default_rng(5))
    L = layout(3)
    drawer, card = int(engine.current[0]), int(engine.held[0])
    for seat in range(3):
        obs = observe(engine, seat)[0]
        np.testing.assert_array_equal(obs[L["held_source"]], [1, 0])  # everyone knows a card was drawn
        assert obs[L["held"]].sum() == (seat == drawer)
        if seat == drawer:
            assert obs[L["held"]][card + 2] == 1
    # The drawer's card counting already excludes the drawn card; the others' does not.
    unseen = {seat: observe(engine, seat)[0][L["unseen"]][card + 2] * R1_COUNTS[card + 2] for seat in range(3)}
    others = [unseen[s] for s in range(3) if s != drawer]
    assert others[0] == others[1] == pytest.approx(unseen[drawer] + 1)


def test_card_taken_from_the_discard_pile_is_public():
    engine = SkyjoEngine(Rules(num_players=3), 1, seed=6)
    _play_until(engine, TAKEN, TAKE, np.random.default_rng(6))
    L = layout(3)
    card = int(engine.held[0])
    for seat in range(3):
        obs = observe(engine, seat)[0]
        np.testing.assert_array_equal(obs[L["held_source"]], [0, 1])
        assert obs[L["held"]].sum() == 1 and obs[L["held"]][card + 2] == 1


def test_seats_are_in_relative_order():
    *_, engine = played(4, 1, 120, seed=9)
    engine.totals[0] = [10, 20, 30, 40]
    engine.ender[0] = 2
    L = layout(4)
    by_seat = [observe(engine, seat)[0] for seat in range(4)]
    for seat in range(4):
        obs = by_seat[seat]
        for r in range(4):
            # Block r of seat s's view is block 0 of seat (s + r) % 4's own view.
            np.testing.assert_array_equal(obs[L[f"grid_{r}"]], by_seat[(seat + r) % 4][L["grid_0"]])
        np.testing.assert_allclose(obs[L["totals"]], np.roll([0.1, 0.2, 0.3, 0.4], -seat))
        assert obs[L["ender"]].argmax() == (2 - seat) % 4 and obs[L["round_ending"]][0] == 1
        assert obs[L["to_act"]][0] == (seat == engine.current[0])


# ---------------------------------------------------------------------------- padded encoding
@pytest.mark.parametrize("num_players", range(2, 9))
def test_padded_layout_is_the_8_seat_one_then_the_player_count(num_players):
    """The documented padded layout: 8-seat blocks, absent seats 0, then a one-hot of the count."""
    P8 = layout(8)
    L = padded_layout()
    assert PADDED_SIZE == size(8) + 7 == 365 and list(L)[:-1] == list(P8) and L["players"] == slice(358, 365)
    for engine in played(num_players, 4, 40, seed=num_players):
        for seat in range(num_players):
            table = observe(engine, seat)
            padded = observe_as("padded", engine, seat)
            assert padded.shape == (4, PADDED_SIZE) and padded.dtype == np.float32
            for name, part in layout(num_players).items():
                start = P8[name].start
                np.testing.assert_array_equal(padded[:, start : start + part.stop - part.start], table[:, part])
            for r in range(num_players, 8):
                assert not padded[:, P8[f"grid_{r}"]].any()
            assert not padded[:, P8["totals"].start + num_players : P8["totals"].stop].any()
            assert not padded[:, P8["ender"].start + num_players : P8["ender"].stop].any()
            np.testing.assert_array_equal(padded[:, L["players"]], np.eye(7)[[num_players - 2] * 4])
            np.testing.assert_array_equal(unpad(padded, num_players), table)
            assert (padded_players(padded) == num_players).all()


def test_padded_batches_group_by_player_count_and_bad_input_is_named():
    mixed = np.concatenate([observe_as("padded", SkyjoEngine(Rules(num_players=p), 2, seed=p), 0) for p in (5, 2, 5)])
    groups = by_player_count(mixed)
    assert [(p, rows.tolist()) for p, rows in groups] == [(2, [2, 3]), (5, [0, 1, 4, 5])]
    with pytest.raises(ValueError, match="exactly one player count"):
        padded_players(np.zeros((1, PADDED_SIZE), dtype=np.float32))
    with pytest.raises(ValueError, match=r"observations of 3 players must have shape \(n, 168\)"):
        pad(np.zeros((1, 130), dtype=np.float32), 3)
    with pytest.raises(ValueError, match=r"obs_type='flat' is not allowed; use one of \['table', 'padded'\]"):
        obs_size("flat", 2)
