"""The phases of a game, as the engine stores them (`SkyjoEngine.phase`) and snapshots name them."""

from __future__ import annotations

SETUP, CHOOSE, DRAWN, TAKEN, OVER = range(5)
#: Names by phase number: setup flips (R5), choosing to draw or take (R8), holding a drawn card
#: (R10) or a taken one (R9), and a finished game.
PHASE_NAMES = ("setup", "choose", "drawn", "taken", "over")
