"""SkyjoEngine.load / from_states: a batch of games set at once from arrays plays on as the originals."""

from __future__ import annotations

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.engine import STATE
from skyjo_env.phases import OVER
from skyjo_env.sampling import sample_bits


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
