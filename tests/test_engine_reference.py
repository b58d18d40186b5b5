"""Cross-check: the batched engine against the one-game reference implementation (``reference.py``).

Each game of a batch is dealt from generated deck orders (``deal_from``, one per round) and a
reference game is stepped alongside it with the same random legal actions. After every step the
legal action sets, the step's report and the full states are compared. An R12 reshuffle is the
one thing the reference cannot know: it checks the engine's new draw pile holds exactly the
discards but the top, and adopts the engine's order.

A finished game (phase OVER) is compared on everything the rules define for it: not on a seat to
act (there is none), nor on the order in which columns removed at the final reveal (R14) went onto
the discard pile (only on which cards did), nor on its public unseen counts, which
``test_finished_games_keep_the_invariants`` checks.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine, StepResult
from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.rewards import rewards as paid
from skyjo_env.rules import EPISODES, NEXT_STARTERS
from skyjo_env.sampling import pack_mask, sample_bits

from invariants import SLOT_FLAGS
from reference import DRAW, FLIP, REPLACE, Outcome, ReferenceGame
from scenarios import build_deck

PHASES = ("setup", "choose", "drawn", "taken", "over")
DECK = np.array(build_deck([], discard=0))
DECKS_PER_GAME = 12  # random games last 1..6 rounds, even with end_score 300
BATCH = 4
OPTIONS = list(itertools.product([True, False], [True, False], NEXT_STARTERS, EPISODES))
# Every player count with four option combinations each: all 16 combinations come up.
CASES = [(players, *OPTIONS[(4 * (players - 2) + j) % 16]) for players in range(2, 9) for j in range(4)]


def engine_state(engine: SkyjoEngine, game: int) -> dict:
    """One game of the engine, keyed like ``ReferenceGame.state``."""
    phase = PHASES[engine.phase[game]]
    return {
        "values": engine.values[game].tolist(),
        "face_up": SLOT_FLAGS[engine.face_up[game]].tolist(),
        "removed": SLOT_FLAGS[engine.removed[game]].tolist(),
        "draw_pile": engine.draw_pile[game, : engine.draw_size[game]].tolist(),
        "discard_pile": engine.discard_pile[game, : engine.discard_size[game]].tolist(),
        "held": int(engine.held[game]) if phase in ("drawn", "taken") else None,
        "phase": phase,
        "current": int(engine.current[game]),
        "starter": int(engine.starter[game]),
        "ender": int(engine.ender[game]) if engine.ender[game] >= 0 else None,
        "final_turns": int(engine.final_turns[game]),
        "round_index": int(engine.round_index[game]),
        "round_scores": engine.round_scores[game].tolist(),
        "totals": engine.totals[game].tolist(),
        "steps": int(engine.steps[game]),
        "unseen": engine.unseen[game].tolist(),
    }


def engine_order(engine: SkyjoEngine, game: int) -> Callable[[list[int]], list[int]]:
    """R12 for the reference: check the engine's reshuffled pile against the discards, then adopt it."""

    def shuffle(cards: list[int]) -> list[int]:
        # The engine has already drawn from its new pile: that card is in hand and was its top.
        pile = engine.draw_pile[game, : engine.draw_size[game]].tolist() + [int(engine.held[game])]
        assert sorted(pile) == sorted(cards), "R12: the new draw pile is not the discard pile without its top"
        return pile

    return shuffle


def compare_outcome(result: StepResult, row: int, outcome: Outcome, reward: str) -> None:
    """The engine's report for one game (and the rewards of mode ``reward`` that follow from it) equals the reference's."""
    rewards = paid(reward, result)[row].tolist()
    assert all(abs(a - b) <= 1e-5 * max(1.0, abs(b)) for a, b in zip(rewards, outcome.rewards)), (
        rewards,
        outcome,
    )  # float32
    assert bool(result.round_over[row]) == outcome.round_over
    assert bool(result.game_over[row]) == outcome.game_over
    assert result.round_scores[row].tolist() == outcome.round_scores
    assert result.totals[row].tolist() == outcome.totals
    assert result.winners[row].tolist() == outcome.winners


def compare_state(engine: SkyjoEngine, game: int, legal_bits: int, reference: ReferenceGame) -> None:
    """Full state and legal actions (``legal_bits``, from the engine) of one game equal the reference's."""
    expected, got = reference.state(), engine_state(engine, game)
    if expected["phase"] == "over":
        n = reference.discards_before_reveal
        for state in (expected, got):
            pile = state.pop("discard_pile")
            state["discard_pile"] = (pile[:n], sorted(pile[n:]))
            del state["current"], state["unseen"]
    assert got == expected
    assert {a for a in range(NUM_ACTIONS) if legal_bits >> a & 1} == reference.legal_actions()


def hoarding(engine: SkyjoEngine, games: np.ndarray, rng: np.random.Generator, keep: float) -> np.ndarray:
    """Random legal actions that draw and swap into face-up slots with probability ``keep``.

    With a high ``keep`` rounds get long and the draw pile runs out again and again (R12).
    """
    if keep == 0:
        return sample_bits(engine.legal_bits(games), rng)
    mask = engine.legal_mask(games)
    up = ((engine.face_up[games, engine.current[games]].astype(np.int64)[:, None] >> np.arange(12)) & 1).astype(bool)
    preferred = np.zeros_like(mask)
    preferred[:, DRAW] = True
    preferred[:, REPLACE:FLIP] = up
    narrowed = mask & preferred
    use = narrowed.any(axis=1) & (rng.random(games.size) < keep)
    return sample_bits(pack_mask(np.where(use[:, None], narrowed, mask)), rng)


def cross_check(rules: Rules, seed: int, reward: str, keep: float = 0.0) -> list[ReferenceGame]:
    """Play a batch of games to their end alongside reference games; returns the reference games."""
    rng = np.random.default_rng(seed)
    engine = SkyjoEngine(rules, BATCH, seed=seed, auto_reset=False)
    references = []
    for game in range(BATCH):
        decks = [rng.permutation(DECK).tolist() for _ in range(DECKS_PER_GAME)]
        engine.deal_from(game, decks)
        references.append(ReferenceGame(rules, decks, reward, engine_order(engine, game)))
        compare_state(engine, game, int(engine.legal_bits(np.array([game]))[0]), references[game])
    while True:
        running = np.array([g for g in range(BATCH) if references[g].phase != "over"])
        if running.size == 0:
            return references
        actions = hoarding(engine, running, rng, keep)
        result = engine.step(actions, running)
        legal = engine.legal_bits(running).tolist()
        for row, game in enumerate(running.tolist()):
            outcome = references[game].step(int(actions[row]))
            compare_outcome(result, row, outcome, reward)
            compare_state(engine, game, legal[row], references[game])
            assert references[game].round_index < DECKS_PER_GAME - 1


@pytest.mark.parametrize(("players", "column_rule", "at_final_reveal", "next_starter", "episode"), CASES)
def test_engine_matches_reference(
    players: int, column_rule: bool, at_final_reveal: bool, next_starter: str, episode: str
) -> None:
    """R1..R20: random legal games, every step identical in the engine and the reference."""
    case = CASES.index((players, column_rule, at_final_reveal, next_starter, episode))
    rules = Rules(
        num_players=players,
        column_rule=column_rule,
        column_rule_at_final_reveal=at_final_reveal,
        next_starter=next_starter,
        episode=episode,
        end_score=(100, 300)[case // 2 % 2],  # 300: longer games, more rounds (R7, R18, R19)
    )
    cross_check(rules, seed=case, reward=("result", "score", "lead", "none")[case % 4])


@pytest.mark.parametrize(("players", "column_rule"), [(2, True), (3, False), (6, True)])
def test_engine_matches_reference_through_reshuffles(players: int, column_rule: bool) -> None:
    """R12: players who mostly draw and swap into face-up slots exhaust the draw pile again and again."""
    rules = Rules(num_players=players, column_rule=column_rule, episode="round")
    references = cross_check(rules, seed=100 + players, reward="score", keep=0.9)
    assert sum(game.reshuffles for game in references) >= BATCH
