"""The engine's state said once: its declared fields make every state array, a snapshot holds each
stored one; the speed devices of `skyjo_env.batch.Batch` do what the plain numpy they stand
for does, copies included; and the report of a step in which no round ends follows the totals
however they changed, with nothing reset by hand."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine, snapshot
from skyjo_env.actions import FLIP
from skyjo_env.batch import PLAYERS, Batch
from skyjo_env.engine import FIELDS, STATE
from skyjo_env.phases import DRAWN, TAKEN
from skyjo_env.sampling import sample_bits

COPIES = {"deepcopy": copy.deepcopy, "pickle": lambda obj: pickle.loads(pickle.dumps(obj))}


def played(players: int, games: int, steps: int, seed: int) -> SkyjoEngine:
    engine = SkyjoEngine(Rules(num_players=players), games, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        engine.step(sample_bits(engine.legal_bits(), rng))
    return engine


@pytest.mark.parametrize("players", [2, 5])
def test_the_declared_fields_are_every_state_array(players: int) -> None:
    """Each field is an attribute of its dtype and shape, and the engine holds no other array with
    a row per game; what load and export move is every field but the derived counts."""
    engine = SkyjoEngine(Rules(num_players=players), 7, seed=0)
    for field in FIELDS:
        array = getattr(engine, field.name)
        assert array.dtype == field.dtype, field.name
        assert array.shape == (7, *(players if n == PLAYERS else n for n in field.shape)), field.name
    per_game = {name for name, value in vars(engine).items() if isinstance(value, np.ndarray) and len(value) == 7}
    assert per_game == {field.name for field in FIELDS}
    assert tuple(field.name for field in FIELDS if field.name != "unseen") == STATE


def test_a_snapshot_holds_each_stored_field_of_its_game() -> None:
    engine = played(3, 4, 150, seed=2)
    for game in range(4):
        state, decks = snapshot.decode(engine.export_game(game), engine.rules)
        assert set(state) == set(STATE) and decks == []
        for name in STATE:
            expected = getattr(engine, name)[game]
            if name in ("draw_pile", "discard_pile"):  # cards beyond the pile's size are not state
                size = int(getattr(engine, name.replace("pile", "size"))[game])
                assert np.array_equal(state[name][:size], expected[:size]) and not state[name][size:].any()
            elif name == "held" and engine.phase[game] not in (DRAWN, TAKEN):  # no card in hand: 0
                assert state[name] == 0
            else:
                assert np.array_equal(state[name], expected), name


def arrays(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "seats": rng.integers(-100, 100, size=(6, 3), dtype=np.int16),
        "pile": rng.integers(-2, 13, size=(6, 150), dtype=np.int8),
        "number": rng.integers(0, 9, size=6, dtype=np.int8),
    }


@pytest.mark.parametrize("every", [True, False], ids=["all", "some"])
def test_batch_devices_equal_plain_numpy(every: bool) -> None:
    plain = arrays(0)
    batch = Batch(arrays(0))
    games = batch.all if every else np.array([4, 1, 5])
    assert batch.rows(games) == slice(None) if every else batch.rows(games) is games
    flags = np.array([True, False, True, True, False, True])[: games.size]
    assert np.array_equal(batch.select(games, flags), games[flags])
    for name, array in plain.items():
        rows = array.reshape(6, -1)
        for element in range(min(2, rows.shape[1])):
            index = batch.flat_index(name, games, element)
            assert np.array_equal(batch.flat[name][index], rows[games, element])
        assert np.array_equal(batch.take(name, games), array[games])
    new = np.arange(games.size * 3, dtype=np.int16).reshape(-1, 3)
    batch.put("seats", games, new)
    plain["seats"][games] = new
    batch.fill("pile", games, 7)
    plain["pile"][games] = 7
    for name, array in plain.items():
        assert np.array_equal(batch.arrays[name], array)
    assert not batch.all.flags.writeable and not batch.flat_index("seats", batch.all).flags.writeable


@pytest.mark.parametrize("how", COPIES)
def test_a_copied_batch_works_on_the_copied_arrays(how: str) -> None:
    original = arrays(1)
    batch = Batch(original)
    batch.flat_index("pile", batch.all, 2)  # made once, kept
    twin_arrays, twin = COPIES[how]((original, batch))
    assert twin.arrays is twin_arrays and not twin.all.flags.writeable
    twin.put("seats", twin.all, np.zeros((6, 3), dtype=np.int16))
    twin.flat["number"][:] = 1
    assert not twin_arrays["seats"].any() and (twin_arrays["number"] == 1).all()
    assert original["seats"].any() and not np.array_equal(original["number"], twin_arrays["number"])
    assert np.array_equal(twin.flat_index("pile", twin.all, 2), np.arange(6) * 150 + 2)


def test_a_quiet_step_reports_the_totals_however_they_changed() -> None:
    """A step in which no round ends reports the current totals read-only, after a direct write,
    an import or a load as after play; earlier reports keep theirs."""
    engine = SkyjoEngine(Rules(num_players=2), 1, seed=0, auto_reset=False)
    flip = iter(range(FLIP, FLIP + 12))  # setup flips: no round ends
    first = engine.step(np.array([next(flip)]))
    assert not first.round_over.any() and first.totals.tolist() == [[0, 0]]
    engine.totals[0] = [7, 9]
    second = engine.step(np.array([next(flip)]))
    assert second.totals.tolist() == [[7, 9]] and first.totals.tolist() == [[0, 0]]
    state = engine.export_game(0)
    engine.import_game(0, {**state, "totals": [3, 4]})
    assert engine.step(np.array([next(flip)])).totals.tolist() == [[3, 4]]
    engine.load({name: getattr(engine, name) for name in STATE} | {"totals": np.array([[5, 6]])})
    assert engine.step(np.array([next(flip)])).totals.tolist() == [[5, 6]]
    for report in (first, second):
        assert not any(array.flags.writeable for array in vars(report).values())


@pytest.mark.parametrize("how", COPIES)
def test_a_copied_engine_reports_quiet_steps_read_only(how: str) -> None:
    engine = SkyjoEngine(Rules(num_players=3), 2, seed=1)
    engine.step(np.array([FLIP, FLIP]))
    twin = COPIES[how](engine)
    report = twin.step(np.array([FLIP + 1, FLIP + 1]))
    assert not report.round_over.any()
    assert not any(array.flags.writeable for array in vars(report).values())
    assert np.array_equal(report.totals, twin.totals)
