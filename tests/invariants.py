"""A vectorised checker of everything that must hold in every game of a ``SkyjoEngine`` batch.

Derived from RULES.md and the engine's documented state arrays, computed independently of the
engine's own helpers. Each failed check names the rule and the offending games. Grids are handled
as the engine stores them, 12-bit slot masks per player (slot k = bit k, column c = slots c, c+4,
c+8), with lookup tables so that one check costs a few numpy operations on the whole batch.
"""

from __future__ import annotations

import numpy as np

from skyjo_env import SkyjoEngine, StepResult
from skyjo_env.actions import DRAW, FLIP, REPLACE, TAKE
from skyjo_env.rewards import rewards as paid

SETUP, CHOOSE, DRAWN, TAKEN, OVER = range(5)
#: R1 counts of the values -2..12.
R1_COUNTS = np.array([5, 10, 15] + [10] * 12)
DECK_SIZE = 150
ALL_SLOTS = 0xFFF

_MASKS = np.arange(1 << 12)
#: ``SLOT_FLAGS[mask]``: the 12 slots of a mask as booleans.
SLOT_FLAGS = ((_MASKS[:, None] >> np.arange(12)) & 1).astype(bool)
#: ``FACE_UP_COUNT[mask]``: number of slots set.
FACE_UP_COUNT = SLOT_FLAGS.sum(axis=1)
_COLUMN_SLOTS = SLOT_FLAGS.reshape(-1, 3, 4)  # [mask, row, column]
#: ``FULL_COLUMNS[mask]``: 4-bit set of the columns whose three slots are all set.
FULL_COLUMNS = (_COLUMN_SLOTS.all(axis=1) * (1 << np.arange(4))).sum(axis=1)
#: ``PARTIAL_COLUMN[mask]``: some column has one or two of its three slots set.
PARTIAL_COLUMN = (_COLUMN_SLOTS.any(axis=1) & ~_COLUMN_SLOTS.all(axis=1)).any(axis=1)


def _require(ok: np.ndarray, what: str) -> None:
    if not ok.all():
        raise AssertionError(f"{what}: games {np.flatnonzero(~ok)[:10].tolist()}")


def check_invariants(engine: SkyjoEngine) -> None:
    """Assert every invariant in every game of ``engine`` (any phase, OVER included)."""
    e = engine
    B, P = e.batch_size, e.num_players
    rules = e.rules
    rows = np.arange(B)
    phase = e.phase.astype(np.int64)
    _require((phase >= SETUP) & (phase <= OVER), "phase out of range")
    playing = (phase >= CHOOSE) & (phase <= TAKEN)
    holding = (phase == DRAWN) | (phase == TAKEN)
    current = e.current.astype(np.int64)
    _require((current >= 0) & (current < P) & (e.starter >= 0) & (e.starter < P), "seat out of range")

    # Grids (R3, R13): removed slots are face up, in whole columns of three equal cards.
    up = e.face_up.astype(np.int64)
    removed = e.removed.astype(np.int64)
    hidden = ALL_SLOTS & ~up & ~removed
    _require(((up | removed) <= ALL_SLOTS).all(axis=1) & ((removed & ~up) == 0).all(axis=1), "bad slot masks")
    values = e.values
    _require(((values >= -2) & (values <= 12)).all(axis=(1, 2)), "grid card outside -2..12 (R1)")
    equal = (values[..., 0:4] == values[..., 4:8]) & (values[..., 4:8] == values[..., 8:12])
    equal_columns = (equal * np.array([1, 2, 4, 8])).sum(axis=2)
    removed_columns = FULL_COLUMNS[removed]
    _require(~PARTIAL_COLUMN[removed].any(axis=1), "column only partly removed (R13)")
    _require(((removed_columns & ~equal_columns) == 0).all(axis=1), "removed column of unequal cards (R13)")
    if rules.column_rule:
        left = ((FULL_COLUMNS[up] & ~removed_columns & equal_columns) != 0).any(axis=1)
        if not rules.column_rule_at_final_reveal:
            left &= phase != OVER
        _require(~left, "column of three equal face-up cards not removed (R13/R14)")
    else:
        _require((removed == 0).all(axis=1), "column removed with column_rule off (R13)")

    # Cards: all 150 accounted for (R1); the public unseen counts.
    draw_size = e.draw_size.astype(np.int64)
    discard_size = e.discard_size.astype(np.int64)
    _require((draw_size >= 0) & (discard_size >= 0) & (draw_size + discard_size <= DECK_SIZE), "pile size out of range")
    _require((discard_size >= 1) | (phase == TAKEN), "empty discard pile outside a take (R4, R9)")
    _require(~holding | ((e.held >= -2) & (e.held <= 12)), "held card outside -2..12")
    position = np.arange(DECK_SIZE)
    in_draw = position < draw_size[:, None]
    cards = np.concatenate([values.reshape(B, -1), e.draw_pile, e.discard_pile, e.held[:, None]], axis=1)
    index = (rows * 15 + 2)[:, None] + cards
    on_table = np.concatenate(
        [~SLOT_FLAGS[removed].reshape(B, -1), in_draw, position < discard_size[:, None], holding[:, None]], axis=1
    )
    counts = np.bincount(index[on_table], minlength=B * 15).reshape(B, 15)
    _require((counts == R1_COUNTS).all(axis=1), "cards are not the 150-card deck (R1)")
    not_seen = np.concatenate(
        [SLOT_FLAGS[hidden].reshape(B, -1), in_draw, np.zeros_like(in_draw), (phase == DRAWN)[:, None]], axis=1
    )
    unseen = np.bincount(index[not_seen], minlength=B * 15).reshape(B, 15)
    _require((e.unseen == unseen).all(axis=1), "public unseen counts differ from draw pile + face-down cards")

    # Setup (R4, R5): seats before the one to act have turned up two cards, later seats none.
    face_up_count = FACE_UP_COUNT[up]
    seats = np.arange(P)
    expected_up = np.where(seats < current[:, None], 2, 0)
    in_order = ((face_up_count == expected_up) | ((seats == current[:, None]) & (face_up_count == 1))).all(axis=1)
    untouched = (draw_size == DECK_SIZE - 12 * P - 1) & (discard_size == 1) & (e.ender == -1)
    _require((phase != SETUP) | (in_order & untouched), "setup out of order or cards moved (R4, R5)")

    # Play (R5, R15): everybody has two face-up cards; the round-ender's final turns are counted.
    _require(~playing | (face_up_count >= 2).all(axis=1), "a player with fewer than two face-up cards in play (R5)")
    ender = e.ender.astype(np.int64)
    final_turns = e.final_turns.astype(np.int64)
    ended = ender >= 0
    no_hidden = hidden == 0
    _require(ender < P, "ender out of range")
    _require(~playing | ~no_hidden[rows, current], "player to act has no face-down card (R15)")
    _require(~(playing & ended) | no_hidden[rows, ender % P], "round-ender has a face-down card (R15)")
    _require(
        ~(playing & ~ended) | ~no_hidden.any(axis=1), "a player without face-down cards did not end the round (R15)"
    )
    in_range = np.where(ended, (final_turns >= 1) & (final_turns <= P - 1), final_turns == 0)
    _require(~playing | in_range, "final turns out of range (R15)")
    _require(
        ~(playing & ended) | (current == (ender + P - final_turns) % P),
        "final turns not clockwise after the ender (R15)",
    )

    # Totals (R16..R19): plausible, and a game that goes on has not reached its end.
    totals = e.totals.astype(np.int64)
    rounds = e.round_index.astype(np.int64)[:, None]
    _require(((totals >= -24 * rounds) & (totals <= 288 * rounds)).all(axis=1), "implausible game totals")
    reached = (totals >= rules.end_score).any(axis=1) if rules.episode == "game" else rounds[:, 0] >= 1
    _require((phase == OVER) | ~reached, "game goes on after its end (R19)")
    finished = (e.face_up == ALL_SLOTS).all(axis=1) & (
        (totals >= rules.end_score).any(axis=1) | (rules.episode == "round")
    )
    _require((phase != OVER) | finished, "finished game not ended by R19 or not turned up (R16)")

    # Legal actions (R5, R8..R10, R12) as bit sets, derived from the state.
    mine_hidden = hidden[rows, current]
    mine_present = ALL_SLOTS & ~removed[rows, current]
    choose = phase == CHOOSE
    expected = (
        np.where((phase == SETUP) | (phase == DRAWN), mine_hidden << FLIP, 0)
        | np.where(holding, mine_present << REPLACE, 0)
        | np.where(choose, 1 << TAKE, 0)
        | np.where(choose & ((draw_size > 0) | (discard_size > 1)), 1 << DRAW, 0)
    )
    _require(e.legal_bits().astype(np.int64) == expected, "legal actions differ from R5, R8..R10, R12")
    _require((phase == OVER) | (expected != 0), "game in progress without a legal action")


def check_step_result(
    engine: SkyjoEngine, totals_before: np.ndarray, result: StepResult, reward: str = "result"
) -> None:
    """Assert what a step reports is consistent (R18..R20), and the rewards of mode ``reward``
    (`skyjo_env.rewards`) that follow from it, for the games it stepped.

    ``totals_before`` are the stepped games' totals just before the step, in the same order.
    """
    rules = engine.rules
    P = engine.num_players
    round_over, game_over = result.round_over, result.game_over
    if not round_over.any():  # the common case: nothing to score
        quiet = ~game_over & ~result.winners.any(axis=1) & (result.round_scores == 0).all(axis=1)
        quiet &= (paid(reward, result) == 0).all(axis=1) & (result.totals == totals_before).all(axis=1)
        _require(quiet, "a step without a round end reported scores, rewards or a game end")
        return
    scores, totals = result.round_scores.astype(np.int64), result.totals.astype(np.int64)
    _require(~game_over | round_over, "game over without a round being scored")
    _require(round_over | (scores == 0).all(axis=1), "round scores reported without a round end")
    added = np.where(round_over[:, None], totals_before + scores, totals_before)
    _require((totals == added).all(axis=1), "totals are not the sum of round scores (R18)")
    if rules.episode == "round":
        _require(game_over == round_over, "episode='round' must end with its first round")
    else:
        _require(game_over == (round_over & (totals >= rules.end_score).any(axis=1)), "game end differs from R19")
    lowest = totals == totals.min(axis=1, keepdims=True)
    _require(
        np.where(game_over[:, None], result.winners == lowest, ~result.winners).all(axis=1), "winners differ from R20"
    )
    rewards = paid(reward, result).astype(np.float64)
    if reward == "result":
        winners = lowest.sum(axis=1, keepdims=True)
        share = np.where(lowest, 1.0 / winners, -1.0 / np.maximum(P - winners, 1))
        expected = np.where(game_over[:, None] & (winners < P), share, 0.0)
    elif reward == "score":
        expected = np.where(round_over[:, None], (scores.sum(axis=1, keepdims=True) - scores) / (P - 1) - scores, 0.0)
    elif reward == "lead":

        def lead(t: np.ndarray) -> np.ndarray:  # lowest opponent total minus one's own
            return np.array([[np.delete(row, p).min() - row[p] for p in range(P)] for row in t], dtype=np.float64)

        expected = np.where(round_over[:, None], lead(totals) - lead(totals_before), 0.0)
    else:
        expected = np.zeros_like(rewards)
    _require(np.isclose(rewards, expected, atol=1e-5).all(axis=1), f"rewards differ from reward mode {reward!r}")
    if reward != "lead":  # a lead over the best opponent is not zero-sum
        _require(np.abs(rewards.sum(axis=1)) < 1e-4, "rewards are not zero-sum")
