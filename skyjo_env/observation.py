"""Per-seat observations: a flat float32 vector with only what that seat may see (RULES.md, last section).

Seats are ordered relative to the observer: block ``r`` describes seat ``(observer + r) % P``, so
block 0 is always the observer's own. With ``P`` players the vector has ``38 * P + 54`` entries:

=====================  ==========  ======================================================  ==========
slice                  size        meaning                                                 range
=====================  ==========  ======================================================  ==========
``grid`` (per seat r)  36 each     12 card values / 12 where face up (else 0), then 12     [-1/6, 1]
                                   face-down flags, then 12 removed-column flags (R13)     and {0, 1}
``discard_top``        15          one-hot of the discard pile's top card (-2..12)         {0, 1}
``held``               15          one-hot of the card in hand, if the observer may see    {0, 1}
                                   it: a taken discard is public, a drawn card is seen
                                   only by the drawer (R10)
``held_source``        2           card in hand came from [draw pile, discard pile]        {0, 1}
``phase``              4           one-hot [setup, choose, drawn, taken]                   {0, 1}
``unseen``             15          per value -2..12: cards not yet seen by the observer    [0, 1]
                                   (in the draw pile or face down), / that value's count
                                   in the deck (R1); public card counting
``draw_size``          1           cards in the draw pile / 150                            [0, 1]
``totals``             P           game totals / end_score, relative seat order            about
                                                                                           [-0.5, 2]
``to_act``             1           1 if the observer is the seat to act                    {0, 1}
``round_ending``       1           1 once a player has ended the round (R15)               {0, 1}
``ender``              P           one-hot relative seat of the round-ender                {0, 1}
=====================  ==========  ======================================================  ==========

:data:`layout` gives the slices by name. The encoder works on the whole batch at once.
"""

from __future__ import annotations

import numpy as np

from skyjo_env.cards import COUNTS, DECK_SIZE, MAX_VALUE, MIN_VALUE, NUM_VALUES, SLOT_FLAGS, SLOTS
from skyjo_env.engine import DRAWN, TAKEN, SkyjoEngine

GRID_FEATURES = 3 * SLOTS  # 36 per seat
_INV_COUNTS = (1.0 / COUNTS).astype(np.float32)
_PHASE_COLUMN = np.array([0, 1, 2, 3, -1])  # engine phase -> column of the phase one-hot, -1: none


def size(num_players: int) -> int:
    """Length of the observation vector for ``num_players`` players."""
    return 38 * num_players + 54


def layout(num_players: int) -> dict[str, slice]:
    """Name -> slice of every block of the observation vector (``grid_r`` for relative seat r)."""
    parts = [(f"grid_{r}", GRID_FEATURES) for r in range(num_players)]
    parts += [
        ("discard_top", NUM_VALUES),
        ("held", NUM_VALUES),
        ("held_source", 2),
        ("phase", 4),
        ("unseen", NUM_VALUES),
        ("draw_size", 1),
        ("totals", num_players),
        ("to_act", 1),
        ("round_ending", 1),
        ("ender", num_players),
    ]
    out, start = {}, 0
    for name, width in parts:
        out[name] = slice(start, start + width)
        start += width
    assert start == size(num_players)
    return out


def observe(engine: SkyjoEngine, seats: np.ndarray | int, games: np.ndarray | None = None) -> np.ndarray:
    """Observations of ``seats`` (one observer per game, or one for all) in ``games`` (default all).

    Returns ``(len(games), size(P))`` float32.
    """
    P = engine.num_players
    g = engine._all if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
    n = g.size
    observer = np.broadcast_to(np.asarray(seats, dtype=np.int64), (n,))
    if n and (observer.min() < 0 or observer.max() >= P):
        raise ValueError(f"observer seats must be in 0..{P - 1}")
    L = layout(P)
    out = np.zeros((n, size(P)), dtype=np.float32)
    rows = np.arange(n)

    order = (observer[:, None] + np.arange(P)[None, :]) % P  # relative -> absolute seat
    up = SLOT_FLAGS[engine.face_up[g[:, None], order]]  # (n, P, 12)
    removed = SLOT_FLAGS[engine.removed[g[:, None], order]]
    values = engine.values[g[:, None], order]
    grids = out[:, : P * GRID_FEATURES].reshape(n, P, 3, SLOTS)
    grids[:, :, 0] = np.where(up & ~removed, values, 0) * np.float32(1 / MAX_VALUE)
    grids[:, :, 1] = ~up
    grids[:, :, 2] = removed

    top = engine.discard_pile[g, np.maximum(engine.discard_size[g] - 1, 0)]
    out[rows, L["discard_top"].start + top - MIN_VALUE] = engine.discard_size[g] > 0

    phase = engine.phase[g]
    to_act = engine.current[g] == observer
    holding = (phase == TAKEN) | ((phase == DRAWN) & to_act)
    held = g[holding]
    out[rows[holding], L["held"].start + engine.held[held] - MIN_VALUE] = 1.0
    out[rows, L["held_source"].start] = phase == DRAWN
    out[rows, L["held_source"].start + 1] = phase == TAKEN
    column = _PHASE_COLUMN[phase]
    in_play = column >= 0
    out[rows[in_play], L["phase"].start + column[in_play]] = 1.0

    unseen = engine.unseen[g].astype(np.float32)
    seen_drawn = (phase == DRAWN) & to_act
    unseen[rows[seen_drawn], engine.held[g[seen_drawn]] - MIN_VALUE] -= 1
    out[:, L["unseen"]] = unseen * _INV_COUNTS

    out[:, L["draw_size"].start] = engine.draw_size[g] * np.float32(1 / DECK_SIZE)
    out[:, L["totals"]] = engine.totals[g[:, None], order] * np.float32(1 / engine.rules.end_score)
    out[:, L["to_act"].start] = to_act
    ender = engine.ender[g].astype(np.int64)
    ending = ender >= 0
    out[:, L["round_ending"].start] = ending
    out[rows[ending], L["ender"].start + (ender[ending] - observer[ending]) % P] = 1.0
    return out

