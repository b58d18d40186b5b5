"""The one discrete action space shared by the engine and every environment.

id     | name        | meaning
------ | ----------- | -------
0      | `draw`      | draw the top card of the draw pile (R8, R10)
1      | `take`      | take the top card of the discard pile (R8, R9)
2..13  | `replace k` | put the held card into slot `k = id - 2`; the card that was there goes face up onto the discard pile (R9, R10)
14..25 | `flip k`    | turn slot `k = id - 14` face up: one of the two setup flips (R5), or after a draw, discard the drawn card and flip (R10)

Slots are numbered `row * 4 + column` (R3). Which actions are legal depends on the phase; the
engine's [`legal_mask()`][skyjo_env.engine.SkyjoEngine.legal_mask] gives them for every game.
"""

from __future__ import annotations

import numpy as np

from skyjo_env.cards import SLOTS

DRAW = 0
TAKE = 1
REPLACE = 2  # REPLACE + k replaces slot k
FLIP = REPLACE + SLOTS  # FLIP + k flips slot k
NUM_ACTIONS = FLIP + SLOTS  # 26


def replace(slot: int) -> int:
    """Action id that puts the held card into `slot`."""
    _check_slot(slot)
    return REPLACE + slot


def flip(slot: int) -> int:
    """Action id that turns `slot` face up."""
    _check_slot(slot)
    return FLIP + slot


def action_name(action: int | np.integer) -> str:
    """Human-readable name of an action id, e.g. `"replace 5"`."""
    a = int(action)
    if a == DRAW:
        return "draw"
    if a == TAKE:
        return "take"
    if REPLACE <= a < FLIP:
        return f"replace {a - REPLACE}"
    if FLIP <= a < NUM_ACTIONS:
        return f"flip {a - FLIP}"
    raise ValueError(f"action {action!r} is not an action id; legal ids are 0..{NUM_ACTIONS - 1}")


def parse_action(text: str) -> int:
    """Inverse of [`action_name()`][action_name]: `"draw"`, `"take"`, `"replace 3"`, `"flip 11"` (ASCII digits)."""
    words = text.strip().lower().split()
    if words == ["draw"]:
        return DRAW
    if words == ["take"]:
        return TAKE
    if len(words) == 2 and words[0] in ("replace", "flip") and words[1].isascii() and words[1].isdigit():
        slot = int(words[1])
        return replace(slot) if words[0] == "replace" else flip(slot)
    raise ValueError(f"cannot parse action {text!r}; write 'draw', 'take', 'replace K' or 'flip K' (K in 0..11)")


def names(mask: np.ndarray) -> list[str]:
    """Names of the actions set in a boolean mask of shape `(NUM_ACTIONS,)`."""
    return [action_name(a) for a in np.flatnonzero(mask)]


def _check_slot(slot: int) -> None:
    if not 0 <= int(slot) < SLOTS:
        raise ValueError(f"slot {slot!r} is out of range; slots are 0..{SLOTS - 1}")
