"""SkyjoEngine.load / from_states: a batch of games set at once from arrays plays on as the originals."""

from __future__ import annotations

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.engine import STATE
from skyjo_env.phases import OVER
from skyjo_env.sampling import sample_bits
from skyjo_env.snapshot import public_unseen


def played(rules: Rules, games: int, steps: int, seed: int) -> SkyjoEngine:
    """An engine of ``games`` random games, each stopped after up to ``steps`` random actions."""
    rng = np.random.default_rng(seed)
    engine = SkyjoEngine(rules, games, seed=seed, auto_reset=False)
    stop = rng.integers(0, steps, size=games)
    for t in range(steps):
        running = np.flatnonzero((engine.phase != OVER) & (stop > t))
        if running.size:
            engine.step(sample_bits(engine.legal_bits(running), rng), running)
    return engine


def arrays(engine: SkyjoEngine) -> dict[str, np.ndarray]:
    return {name: getattr(engine, name).copy() for name in STATE}


@pytest.mark.parametrize("players", [2, 5, 8])
def test_loaded_games_equal_their_originals_and_play_on_identically(players: int) -> None:
    """Every state array, the derived public counts (R1) and the legal actions are equal after a load,
    and both engines then give the same results (rounds, reshuffles R12, game ends R19) step by step."""
    rules = Rules(num_players=players, end_score=40)
    original = played(rules, 24, 400, seed=players)
    copy = SkyjoEngine.from_states(rules, arrays(original), seed=1)
    for name in (*STATE, "unseen"):
        assert np.array_equal(getattr(copy, name), getattr(original, name)), name
    rng = np.random.default_rng(0)
    for _ in range(600):
        running = np.flatnonzero(original.phase != OVER)
        if not running.size:
            break
        assert np.array_equal(copy.legal_bits(running), original.legal_bits(running))
        actions = sample_bits(original.legal_bits(running), rng)
        expected, got = original.step(actions, running), copy.step(actions, running)
        assert np.array_equal(expected.round_scores, got.round_scores)
        assert np.array_equal(expected.game_over, got.game_over)
        for name in (*STATE, "unseen"):
            assert np.array_equal(getattr(copy, name), getattr(original, name)), name


def test_a_load_checks_names_shapes_and_the_deck() -> None:
    engine = played(Rules(), 3, 50, seed=3)
    state = arrays(engine)
    target = SkyjoEngine(Rules(), 3, seed=4, auto_reset=False)
    before = arrays(target)
    with pytest.raises(ValueError, match="missing"):
        target.load({k: v for k, v in state.items() if k != "held"})
    with pytest.raises(ValueError, match="shape"):
        target.load({**state, "totals": state["totals"][:2]})
    state["draw_pile"][1, 0] = 12 if state["draw_pile"][1, 0] != 12 else 11
    with pytest.raises(ValueError, match="game 1's cards are not the 150-card deck"):
        target.load(state)
    for name, array in before.items():
        assert np.array_equal(getattr(target, name), array), name


def test_an_unchecked_load_still_checks_names_and_shapes_and_plays_on_as_a_checked_one() -> None:
    """`check=False` (simulators' copies of the engine's own states) skips only the checks of numbers and
    cards: a copy so made equals a checked one; missing or misshapen arrays are still refused."""
    rules = Rules(num_players=3)
    state = arrays(played(rules, 6, 80, seed=5))
    fast, checked = SkyjoEngine.from_states(rules, state, check=False), SkyjoEngine.from_states(rules, state)
    for name in (*STATE, "unseen"):
        assert np.array_equal(getattr(fast, name), getattr(checked, name)), name
    running = np.flatnonzero(checked.phase != OVER)
    actions = sample_bits(checked.legal_bits(running), np.random.default_rng(0))
    fast.step(actions, running)
    checked.step(actions, running)
    for name in (*STATE, "unseen"):
        assert np.array_equal(getattr(fast, name), getattr(checked, name)), name
    with pytest.raises(ValueError, match="missing"):
        SkyjoEngine.from_states(rules, {k: v for k, v in state.items() if k != "phase"}, check=False)
    with pytest.raises(ValueError, match="shape"):
        SkyjoEngine.from_states(rules, {**state, "values": state["values"][:, :2]}, check=False)
    state["draw_pile"][1, 0] = 12 if state["draw_pile"][1, 0] != 12 else 11
    SkyjoEngine.from_states(rules, state, check=False)  # the caller's to get right
    with pytest.raises(ValueError, match="game 1's cards are not the 150-card deck"):
        SkyjoEngine.from_states(rules, state)


# ---------------------------------------------------------------------------------------- numbers out of range
def with_value(state: dict[str, np.ndarray], name: str, game: int, value: int, index: tuple = ()) -> dict:
    changed = {k: v.copy() for k, v in state.items()}
    changed[name][(game, *index)] = value
    return changed


@pytest.mark.parametrize(
    ("name", "index", "value", "message"),
    [
        ("current", (), 2, r"game 1 has current=2, which cannot be: seats are 0..1"),
        ("current", (), -1, r"game 1 has current=-1, which cannot be: seats are 0..1"),
        ("phase", (), 7, r"game 1 has phase=7, which cannot be: phases are 0..4 \(setup, choose, drawn, taken, over\)"),
        ("starter", (), 5, r"game 1 has starter=5"),
        ("ender", (), -2, r"game 1 has ender=-2"),
        ("values", (0, 3), 13, r"game 1 has values holding \[13\], which cannot be: cards are -2..12"),
        ("draw_size", (), 151, r"game 1 has draw_size=151"),
        ("steps", (), 2**31 - 1, r"game 1 has steps=2147483647, .* \(one more step must fit in int32\)"),
        ("round_index", (), 2**15 - 1, r"game 1 has round_index=32767, .* \(one more round must fit in int16\)"),
        ("totals", (0,), 100, r"game 1 has totals=\[100, .*below end_score=100 \(R19"),
        ("round_scores", (1,), 289, r"game 1 has round_scores=\[.*289\].* a round scores -24..288 \(R16, R17\)"),
    ],
)
def test_a_load_refuses_numbers_out_of_range_or_about_to_overflow(name: str, index: tuple, value: int, message: str):
    """Seats, phases and cards that cannot be, and in a game not over a total at end_score (R19: the
    game would have ended; the next round would wrap int16) or a step count at the int32 limit."""
    engine = played(Rules(), 3, 30, seed=5)
    assert not (engine.phase == OVER).any()
    target = SkyjoEngine(Rules(), 3, seed=4, auto_reset=False)
    before = arrays(target)
    with pytest.raises(ValueError, match=message):
        target.load(with_value(arrays(engine), name, 1, value, index))
    for field, array in before.items():
        assert np.array_equal(getattr(target, field), array), field  # nothing changed
    with pytest.raises(ValueError, match="draw_pile must hold integers, got float64 values"):
        target.load({**arrays(engine), "draw_pile": arrays(engine)["draw_pile"].astype(float)})


def test_a_load_takes_the_largest_numbers_that_can_still_play_on():
    engine = played(Rules(end_score=50), 2, 30, seed=6)
    state = with_value(with_value(arrays(engine), "steps", 0, 2**31 - 2), "totals", 1, 49, (1,))
    copy = SkyjoEngine.from_states(Rules(end_score=50), state)
    copy.step(sample_bits(copy.legal_bits(), np.random.default_rng(0)))
    assert copy.steps[0] == 2**31 - 1  # then it is at the limit: no longer loadable while running


def exported(rules: Rules, until: str) -> dict:
    """A game played by random legal actions until its phase is ``until``."""
    engine = SkyjoEngine(rules, 1, seed=3, auto_reset=False)
    rng = np.random.default_rng(3)
    for _ in range(100_000):
        if engine.export_game(0)["phase"] == until:
            return engine.export_game(0)
        engine.step(sample_bits(engine.legal_bits(), rng))
    raise AssertionError(f"no phase {until!r} in 100,000 steps")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"totals": [100, 3]}, r"game state has totals=\[100, 3\], .*below end_score=100 \(R19: the game ends after"),
        ({"totals": [250, 3]}, r"game state has totals=\[250, 3\]"),
        ({"steps": 2**31 - 1}, r"game state has steps=2147483647, .*one more step must fit in int32"),
        ({"round_index": 2**15 - 1}, r"game state has round_index=32767, .*one more round must fit in int16"),
        ({"round_scores": [300, 0]}, r"game state has round_scores=\[300, 0\], .*a round scores -24..288"),
        ({"current": 2}, r"current=2 must be an integer in 0..1"),
        ({"version": True}, r"unsupported game state format 'skyjo-env/game' vTrue; expected 'skyjo-env/game' v1"),
        ({"version": 1.0}, r"unsupported game state format .* v1.0"),
    ],
)
def test_an_import_refuses_a_game_that_could_not_arise_or_would_overflow(change: dict, message: str):
    """of_game and import_game name the user's game ("game state"), never the engine's internal game 0."""
    data = {**exported(Rules(), "choose"), **change}
    for load in (
        lambda: SkyjoEngine.of_game(data),
        lambda: SkyjoEngine(Rules(), 4, seed=0, auto_reset=False).import_game(2, data),
    ):
        with pytest.raises(ValueError, match=message) as caught:
            load()
        assert "game 0" not in str(caught.value) and "game 2" not in str(caught.value)


def test_a_finished_game_keeps_the_total_that_ended_it():
    """R19: a game over has a total at or above end_score, and imports as it was."""
    data = exported(Rules(end_score=10), "over")
    assert max(data["totals"]) >= 10
    assert SkyjoEngine.of_game(data).export_game(0) == data
    with pytest.raises(ValueError, match="below end_score=10"):
        SkyjoEngine.of_game({**exported(Rules(end_score=10), "choose"), "totals": [10, 0]})
    in_a_round = SkyjoEngine.of_game({**exported(Rules(episode="round"), "choose"), "totals": [500, -300]})
    assert in_a_round.totals[0].tolist() == [500, -300]  # one round to go: no end score to be under


@pytest.mark.parametrize("players", [2, 5, 8])
def test_the_unseen_counts_recounted_from_the_cards_are_the_engine_s_own(players: int) -> None:
    """`public_unseen` (what a load sets) counts, per game, the draw pile, the face-down cards and a
    drawn card in hand (R10) as the engine keeps them step by step; an empty batch has no rows."""
    rules = Rules(num_players=players)
    rng = np.random.default_rng(players)
    engine = SkyjoEngine(rules, 64, seed=players, auto_reset=False)
    names = ("values", "face_up", "removed", "draw_pile", "draw_size", "phase", "held")
    for _ in range(60 * players):
        running = np.flatnonzero(engine.phase != OVER)
        if not running.size:
            break
        engine.step(sample_bits(engine.legal_bits(running), rng), running)
        assert np.array_equal(public_unseen(*(getattr(engine, k) for k in names)), engine.unseen)
    assert np.any(engine.phase == OVER)  # the counts were compared up to the end of a game
    empty = public_unseen(*(getattr(engine, k)[:0] for k in names))
    assert empty.shape == (0, engine.unseen.shape[1]) and empty.dtype == np.int16
