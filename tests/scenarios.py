"""Helpers that build exact rule scenarios with ``SkyjoEngine.deal_from`` and scripted actions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from skyjo_env import Rules, SkyjoEngine, StepResult
from skyjo_env.actions import DRAW, FLIP, REPLACE, TAKE

SETUP, CHOOSE, DRAWN, TAKEN, OVER = range(5)

#: R1, written out from the rules text: five -2, ten -1, fifteen 0, ten each of 1..12.
R1_COUNTS: dict[int, int] = {-2: 5, -1: 10, 0: 15, **{v: 10 for v in range(1, 13)}}


def rows(top: Sequence[int], middle: Sequence[int], bottom: Sequence[int]) -> list[int]:
    """A grid written as its three rows of four (R3: slot = row * 4 + column)."""
    assert len(top) == len(middle) == len(bottom) == 4
    return [*top, *middle, *bottom]


def build_deck(grids: Sequence[Sequence[int]], discard: int, draw: Sequence[int] = ()) -> list[int]:
    """A 150-card deck order for ``deal_from``.

    Seat p is dealt ``grids[p]``, ``discard`` starts the discard pile (R4) and ``draw`` are the
    next cards of the draw pile, top first; the remaining cards follow in ascending order.
    """
    chosen = [card for grid in grids for card in grid] + [discard] + list(draw)
    assert all(len(grid) == 12 for grid in grids)
    left = Counter(R1_COUNTS)
    left.subtract(chosen)
    assert min(left.values()) >= 0, f"scenario uses more cards than R1 allows: {left}"
    return chosen + sorted(left.elements())


def new_engine(num_players: int, *, batch: int = 1, **options) -> SkyjoEngine:
    """An engine without auto-reset, so finished games stay in phase OVER."""
    return SkyjoEngine(Rules(num_players=num_players, **options), batch, seed=0, auto_reset=False)


def act(engine: SkyjoEngine, *actions: int, game: int = 0) -> StepResult:
    """Step game ``game`` alone with each action in turn; returns the last step's result."""
    assert actions
    for action in actions:
        result = engine.step(np.array([action]), np.array([game]))
    return result


def setup_flips(engine: SkyjoEngine, flips: Sequence[tuple[int, int]], game: int = 0) -> None:
    """R5: seat p turns up slots ``flips[p]``, in seat order."""
    for seat, (a, b) in enumerate(flips):
        assert engine.phase[game] == SETUP and engine.current[game] == seat
        act(engine, FLIP + a, FLIP + b, game=game)


def seat(engine: SkyjoEngine, game: int = 0) -> int:
    """The seat to act."""
    return int(engine.current[game])


def hidden_slots(engine: SkyjoEngine, player: int, game: int = 0) -> list[int]:
    """Face-down slots of ``player``."""
    up = int(engine.face_up[game, player])
    return [k for k in range(12) if not up >> k & 1]


def is_removed(engine: SkyjoEngine, player: int, slot: int, game: int = 0) -> bool:
    """Whether ``slot`` of ``player`` belongs to a removed column (R13)."""
    return bool(int(engine.removed[game, player]) >> slot & 1)


def discard_pile(engine: SkyjoEngine, game: int = 0) -> list[int]:
    """The discard pile, bottom first."""
    return engine.discard_pile[game, : engine.discard_size[game]].tolist()


def draw_pile(engine: SkyjoEngine, game: int = 0) -> list[int]:
    """The draw pile, bottom first (the last card is drawn next)."""
    return engine.draw_pile[game, : engine.draw_size[game]].tolist()


def legal(engine: SkyjoEngine, game: int = 0) -> set[int]:
    """The legal action ids of game ``game``."""
    return set(np.flatnonzero(engine.legal_mask(np.array([game]))[0]).tolist())


def flip_turn(engine: SkyjoEngine, game: int = 0) -> StepResult:
    """A turn that changes no grid value: draw, discard the drawn card, turn up the lowest face-down slot (R10)."""
    return act(engine, DRAW, FLIP + hidden_slots(engine, seat(engine, game), game)[0], game=game)


def stall_turn(engine: SkyjoEngine, game: int = 0) -> StepResult:
    """A turn that reveals nothing: draw and put the drawn card into slot 0 (face up from setup)."""
    return act(engine, DRAW, REPLACE + 0, game=game)


def play_round(engine: SkyjoEngine, stallers: Sequence[int] = (), game: int = 0) -> tuple[list[int], StepResult]:
    """Play turns until the round is scored: seats in ``stallers`` stall, the others flip.

    Returns the seats in the order they took their turns, and the result of the last step.
    """
    turns: list[int] = []
    while True:
        turns.append(seat(engine, game))
        result = stall_turn(engine, game) if turns[-1] in stallers else flip_turn(engine, game)
        if result.round_over[0]:
            return turns, result
        assert len(turns) < 1000, "round does not end"


__all__ = [
    "CHOOSE",
    "DRAW",
    "DRAWN",
    "FLIP",
    "OVER",
    "R1_COUNTS",
    "REPLACE",
    "SETUP",
    "TAKE",
    "TAKEN",
    "act",
    "build_deck",
    "discard_pile",
    "draw_pile",
    "flip_turn",
    "hidden_slots",
    "is_removed",
    "legal",
    "new_engine",
    "play_round",
    "rows",
    "seat",
    "setup_flips",
    "stall_turn",
]
