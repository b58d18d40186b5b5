"""Properties of the engine over random games (hypothesis): invariants, determinism, snapshots.

Each example plays whole random games, so shrinking (which would replay many of them, and has no
simpler seed to find) is off; a failure reports the drawn rules and seed as they are.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from skyjo_env import Rules, SkyjoEngine, StepResult
from skyjo_env.rules import EPISODES, NEXT_STARTERS
from skyjo_env.sampling import sample_bits

from invariants import DRAWN, OVER, TAKEN, check_invariants, check_step_result
from scenarios import build_deck, new_engine, stall_turn

GAMES = settings(max_examples=25, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
RULES = st.builds(
    Rules,
    num_players=st.integers(2, 8),
    column_rule=st.booleans(),
    column_rule_at_final_reveal=st.booleans(),
    next_starter=st.sampled_from(NEXT_STARTERS),
    episode=st.sampled_from(EPISODES),
)
SEEDS = st.integers(0, 2**32 - 1)
STATE_ARRAYS = [
    "values",
    "face_up",
    "removed",
    "draw_pile",
    "draw_size",
    "discard_pile",
    "discard_size",
    "held",
    "phase",
    "current",
    "ender",
    "final_turns",
    "starter",
    "round_index",
    "round_scores",
    "totals",
    "unseen",
    "steps",
    "keys",
    "shuffles",
]

#: Everything a step reports (rewards follow from it: skyjo_env.rewards).
REPORTED = [f.name for f in dataclasses.fields(StepResult)]


def random_decks(rng: np.random.Generator, rounds: int) -> list[list[int]]:
    """``rounds`` random orders of the R1 deck, for ``deal_from``."""
    deck = np.array(build_deck([], discard=0))
    return [rng.permutation(deck).tolist() for _ in range(rounds)]


def state_of(engine: SkyjoEngine, game: int) -> dict:
    """Everything about one game: its export, its public unseen counts and its legal actions."""
    return {
        **engine.export_game(game),
        "unseen": engine.unseen[game].tolist(),
        "legal": int(engine.legal_bits(np.array([game]))[0]),
    }


def step_random(engine: SkyjoEngine, rng: np.random.Generator, games: np.ndarray, reward: str = "result") -> None:
    """One random legal step of ``games``, with every invariant and the step's report checked."""
    totals = engine.totals[games].astype(np.int64)
    result = engine.step(sample_bits(engine.legal_bits(games), rng), games)
    check_invariants(engine)
    check_step_result(engine, totals, result, reward)


@GAMES
@given(rules=RULES, seed=SEEDS, scripted=st.booleans())
def test_invariants_hold_after_every_step_of_play(rules: Rules, seed: int, scripted: bool) -> None:
    """150 cards accounted for (R1), a legal action in every running game, unseen counts, R5..R20 bookkeeping.

    Random subsets of a batch of 3 are stepped; finished games are re-dealt (auto-reset).
    """
    rng = np.random.default_rng(seed)
    reward = str(rng.choice(["result", "score", "lead", "none"]))
    engine = SkyjoEngine(rules, 3, seed=seed)
    if scripted:
        engine.deal_from(1, random_decks(rng, 2))
    check_invariants(engine)
    for _ in range(200):
        games = np.flatnonzero(rng.random(3) < 0.7)
        if games.size:
            step_random(engine, rng, games, reward)


@GAMES
@given(rules=RULES, seed=SEEDS)
def test_finished_games_keep_the_invariants(rules: Rules, seed: int) -> None:
    """auto_reset=False: games played to the end (phase OVER) are still consistent states.

    In particular all 150 cards are still there (R1, R13/R14) and, everything being face up (R16),
    the public unseen counts are those of the draw pile.
    """
    rng = np.random.default_rng(seed)
    engine = SkyjoEngine(rules, 4, seed=seed, auto_reset=False)
    while (engine.phase != OVER).any():
        step_random(engine, rng, np.flatnonzero(engine.phase != OVER))
    check_invariants(engine)


@GAMES
@given(rules=RULES, seed=SEEDS)
def test_same_seed_and_actions_give_the_same_games(rules: Rules, seed: int) -> None:
    """Determinism: same rules, seed and actions give identical states and reports, step after step."""
    engines = [SkyjoEngine(rules, 2, seed=seed) for _ in range(2)]
    rngs = [np.random.default_rng(seed) for _ in range(2)]
    for step in range(200):
        results = [e.step(sample_bits(e.legal_bits(), r)) for e, r in zip(engines, rngs)]
        for name in REPORTED:
            assert np.array_equal(getattr(results[0], name), getattr(results[1], name)), name
        if step % 10 == 0:  # a difference in state soon shows in the legal actions and reports, too
            for name in STATE_ARRAYS:
                assert np.array_equal(getattr(engines[0], name), getattr(engines[1], name)), name
    engines[0].reset(seed)
    fresh = SkyjoEngine(rules, 2, seed=seed)
    assert [state_of(engines[0], b) for b in range(2)] == [state_of(fresh, b) for b in range(2)]
    other = SkyjoEngine(rules, 2, seed=seed ^ 1)
    assert not np.array_equal(other.values, fresh.values)  # another seed deals other games


def about_to_end_a_round(engine: SkyjoEngine, game: int) -> bool:
    """The next action of ``game`` is the last turn's second action (R15): it scores the round."""
    return engine.ender[game] >= 0 and engine.final_turns[game] == 1 and engine.phase[game] in (DRAWN, TAKEN)


@GAMES
@given(rules=RULES, seed=SEEDS, steps=st.integers(0, 400), scripted=st.booleans())
def test_export_import_then_continue_equals_continuing(rules: Rules, seed: int, steps: int, scripted: bool) -> None:
    """A running game exported at any point, sent through JSON and imported into another slot of another
    engine plays on exactly as the original (same states, reports, deals, R12 reshuffles) to the game's end.

    The export is made after ``steps`` random steps, or earlier, just before an action that scores a
    round (which may end the game): so the exported game is always still running.
    """
    rng = np.random.default_rng(seed)
    original = SkyjoEngine(rules, 3, seed=seed, auto_reset=False)
    game = int(rng.integers(3))
    if scripted:
        original.deal_from(game, random_decks(rng, 3))
    for _ in range(steps):
        if about_to_end_a_round(original, game):
            break
        running = np.flatnonzero(original.phase != OVER)
        original.step(sample_bits(original.legal_bits(running), rng), running)
    state = original.export_game(game)
    copy = SkyjoEngine(rules, 5, seed=seed + 1, auto_reset=False)
    slot = 4 - game  # never the same index
    copy.import_game(slot, json.loads(json.dumps(state)))
    assert state_of(copy, slot) == state_of(original, game)
    for _ in range(5000):
        if original.phase[game] == OVER:
            break
        action = sample_bits(original.legal_bits(np.array([game])), rng)
        expected = original.step(action, np.array([game]))
        got = copy.step(action, np.array([slot]))
        for name in REPORTED:
            assert np.array_equal(getattr(expected, name), getattr(got, name)), name
        if original.phase[game] != OVER:  # finished games: see test_export_import_of_finished_games
            assert state_of(copy, slot) == state_of(original, game)
    assert original.phase[game] == OVER


@GAMES
@given(rules=RULES, seed=SEEDS, steps=st.integers(0, 300))
def test_export_is_plain_json_data(rules: Rules, seed: int, steps: int) -> None:
    """export_game gives JSON-serialisable data that survives a json round trip unchanged."""
    rng = np.random.default_rng(seed)
    engine = SkyjoEngine(rules, 2, seed=seed)
    for _ in range(steps):
        engine.step(sample_bits(engine.legal_bits(), rng))
    for game in range(2):
        state = engine.export_game(game)
        assert json.loads(json.dumps(state)) == state


def test_export_import_across_a_reshuffle() -> None:
    """R12 after an import: the copy reshuffles the discard pile exactly as the original does."""
    original = new_engine(2)
    original.deal_from(0, [build_deck([], discard=0)])
    original.step(np.array([14]))  # setup flips: slots 0 and 1 for both seats
    for action in (15, 14, 15):
        original.step(np.array([action]))
    while original.draw_size[0] > 1:
        stall_turn(original)
    copy = SkyjoEngine(original.rules, 3, seed=99, auto_reset=False)
    copy.import_game(2, original.export_game(0))
    rng = np.random.default_rng(0)
    for _ in range(60):
        action = sample_bits(original.legal_bits(np.array([0])), rng)
        original.step(action, np.array([0]))
        copy.step(action, np.array([2]))
        assert state_of(copy, 2) == state_of(original, 0)
    assert original.shuffles[0] > 1  # the deal, then at least one reshuffle


def test_export_import_of_finished_games() -> None:
    """Games in phase OVER (auto_reset=False) round-trip through export and import like any other state."""
    rng = np.random.default_rng(7)
    engine = SkyjoEngine(Rules(num_players=8, episode="round"), 16, seed=7, auto_reset=False)
    while (engine.phase != OVER).any():
        games = np.flatnonzero(engine.phase != OVER)
        engine.step(sample_bits(engine.legal_bits(games), rng), games)
    copy = SkyjoEngine(engine.rules, 16, seed=8, auto_reset=False)
    for game in range(16):
        copy.import_game(15 - game, engine.export_game(game))
        assert state_of(copy, 15 - game) == state_of(engine, game), f"game {game}"
