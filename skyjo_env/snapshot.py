"""Export and import the full state of one game as a JSON-serialisable dict.

Keys of the dict (version 1):

================  ==============================================================================
key               value
================  ==============================================================================
``format``        ``"skyjo-env/game"``
``version``       ``1``
``rules``         :meth:`Rules.to_dict` of the engine that played it
``key``           the game's two 32-bit random-stream words; ``shuffles``: shuffles made so far
``values``        P lists of 12 card values (every slot, face down ones included)
``face_up``       P lists of 12 booleans; ``removed``: likewise, for removed columns (R13)
``draw_pile``     card values, bottom first (the last one is drawn next)
``discard_pile``  card values, bottom first (the last one is the visible top)
``held``          the card in hand (phases ``drawn``/``taken``), else ``null``
``phase``         ``"setup"``, ``"choose"``, ``"drawn"``, ``"taken"`` or ``"over"``
``current``       seat to act; ``starter``: seat that starts this round's play
``ender``         seat that ended the round, or ``null``; ``final_turns``: final turns still owed
``round_index``   rounds completed; ``round_scores``, ``totals``: per seat
``steps``         actions taken in this game
``decks``         deck orders still to deal from (see :meth:`SkyjoEngine.deal_from`), or ``[]``
================  ==============================================================================

The public card counts (``unseen``) are derived on import, not stored.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from skyjo_env.cards import COUNTS, DECK_SIZE, MAX_VALUE, MIN_VALUE, NUM_VALUES, SLOTS
from skyjo_env.engine import DRAWN, OVER, PHASE_NAMES, TAKEN, SkyjoEngine
from skyjo_env.rules import Rules

FORMAT = "skyjo-env/game"
VERSION = 1
_KEYS = (
    "format version rules key shuffles values face_up removed draw_pile discard_pile held phase "
    "current starter ender final_turns round_index round_scores totals steps decks"
).split()


def export_game(engine: SkyjoEngine, game: int) -> dict[str, Any]:
    """The full state of game ``game`` of ``engine`` as plain Python data."""
    g = int(engine._as_indices(np.array([game]))[0])
    bits = np.arange(SLOTS)
    phase = int(engine.phase[g])
    scripted = engine._scripted.get(g, {})
    later = sorted(r for r in scripted if r > engine.round_index[g])
    return {
        "format": FORMAT,
        "version": VERSION,
        "rules": engine.rules.to_dict(),
        "key": [int(x) for x in engine.keys[g]],
        "shuffles": int(engine.shuffles[g]),
        "values": engine.values[g].tolist(),
        "face_up": ((engine.face_up[g][:, None] >> bits) & 1).astype(bool).tolist(),
        "removed": ((engine.removed[g][:, None] >> bits) & 1).astype(bool).tolist(),
        "draw_pile": engine.draw_pile[g, : engine.draw_size[g]].tolist(),
        "discard_pile": engine.discard_pile[g, : engine.discard_size[g]].tolist(),
        "held": int(engine.held[g]) if phase in (DRAWN, TAKEN) else None,
        "phase": PHASE_NAMES[phase],
        "current": int(engine.current[g]),
        "starter": int(engine.starter[g]),
        "ender": int(engine.ender[g]) if engine.ender[g] >= 0 else None,
        "final_turns": int(engine.final_turns[g]),
        "round_index": int(engine.round_index[g]),
        "round_scores": engine.round_scores[g].tolist(),
        "totals": engine.totals[g].tolist(),
        "steps": int(engine.steps[g]),
        "decks": [scripted[r].tolist() for r in later],
    }


def import_game(engine: SkyjoEngine, game: int, data: dict[str, Any]) -> None:
    """Load ``data`` (from :func:`export_game`) into slot ``game``; raises ``ValueError`` if corrupt."""
    g = int(engine._as_indices(np.array([game]))[0])
    state = _parse(data, engine.rules)
    engine.keys[g] = state["key"]
    engine.shuffles[g] = state["shuffles"]
    engine.values[g] = state["values"]
    engine.face_up[g] = state["face_up"]
    engine.removed[g] = state["removed"]
    engine.draw_pile[g] = 0
    engine.draw_pile[g, : state["draw_pile"].size] = state["draw_pile"]
    engine.draw_size[g] = state["draw_pile"].size
    engine.discard_pile[g] = 0
    engine.discard_pile[g, : state["discard_pile"].size] = state["discard_pile"]
    engine.discard_size[g] = state["discard_pile"].size
    engine.held[g] = state["held"]
    engine.phase[g] = state["phase"]
    engine.current[g] = state["current"]
    engine.starter[g] = state["starter"]
    engine.ender[g] = state["ender"]
    engine.final_turns[g] = state["final_turns"]
    engine.round_index[g] = state["round_index"]
    engine.round_scores[g] = state["round_scores"]
    engine.totals[g] = state["totals"]
    engine.steps[g] = state["steps"]
    engine.unseen[g] = state["unseen"]
    engine._quiet = None  # cached step result holds the old totals
    first = state["round_index"] + 1
    engine._scripted.pop(g, None)
    if state["decks"]:
        engine._scripted[g] = {first + i: deck for i, deck in enumerate(state["decks"])}


def _parse(data: Any, rules: Rules) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"a game state must be a dict, got {type(data).__name__}")
    missing = [k for k in _KEYS if k not in data]
    if missing:
        raise ValueError(f"game state is missing key(s) {missing}")
    if data["format"] != FORMAT or data["version"] != VERSION:
        raise ValueError(f"unsupported game state format {data['format']!r} v{data['version']!r}; expected {FORMAT!r} v{VERSION}")
    if Rules.from_dict(data["rules"]) != rules:
        raise ValueError(f"game state was played under {data['rules']}, but this engine uses {rules.to_dict()}")
    P = rules.num_players
    out: dict[str, Any] = {}
    out["key"] = _ints(data["key"], "key", (2,), 0, 2**32 - 1).astype(np.uint32)
    out["shuffles"] = _int(data["shuffles"], "shuffles", 0, 2**32 - 1)
    values = _ints(data["values"], "values", (P, SLOTS), MIN_VALUE, MAX_VALUE)
    out["values"] = values.astype(np.int8)
    up = _bools(data["face_up"], "face_up", P)
    removed = _bools(data["removed"], "removed", P)
    if np.any(removed & ~up):
        raise ValueError("game state has a removed slot that is not face up")
    weights = 1 << np.arange(SLOTS)
    out["face_up"] = (up * weights).sum(axis=1).astype(np.uint32)
    out["removed"] = (removed * weights).sum(axis=1).astype(np.uint32)
    draw = _ints(data["draw_pile"], "draw_pile", None, MIN_VALUE, MAX_VALUE).astype(np.int8)
    discard = _ints(data["discard_pile"], "discard_pile", None, MIN_VALUE, MAX_VALUE).astype(np.int8)
    if data["phase"] not in PHASE_NAMES:
        raise ValueError(f"phase {data['phase']!r} is not one of {PHASE_NAMES}")
    phase = PHASE_NAMES.index(data["phase"])
    holding = phase in (DRAWN, TAKEN)
    if holding != (data["held"] is not None):
        raise ValueError(f"held must be a card in phases drawn/taken and null otherwise (phase {data['phase']!r})")
    held = _int(data["held"], "held", MIN_VALUE, MAX_VALUE) if holding else 0
    cards = np.concatenate([values[~removed], draw, discard, [held] if holding else []]).astype(np.int64)
    counts = np.bincount(cards - MIN_VALUE, minlength=NUM_VALUES)
    if cards.size != DECK_SIZE or not np.array_equal(counts, COUNTS):
        raise ValueError(f"game state's cards are not the 150-card deck (R1): found {cards.size} cards, counts {counts.tolist()}")
    if phase not in (OVER, TAKEN) and discard.size == 0:
        raise ValueError("game state has an empty discard pile during play (only taking its last card empties it)")
    out.update(draw_pile=draw, discard_pile=discard, held=held, phase=phase)
    out["current"] = _int(data["current"], "current", 0, P - 1)
    out["starter"] = _int(data["starter"], "starter", 0, P - 1)
    out["ender"] = -1 if data["ender"] is None else _int(data["ender"], "ender", 0, P - 1)
    out["final_turns"] = _int(data["final_turns"], "final_turns", 0, P)
    out["round_index"] = _int(data["round_index"], "round_index", 0, 2**15 - 1)
    out["round_scores"] = _ints(data["round_scores"], "round_scores", (P,), -(2**15), 2**15 - 1)
    out["totals"] = _ints(data["totals"], "totals", (P,), -(2**15), 2**15 - 1)
    out["steps"] = _int(data["steps"], "steps", 0, 2**31 - 1)
    hidden = ~up & ~removed
    unseen = np.bincount(np.concatenate([draw, values[hidden]]).astype(np.int64) - MIN_VALUE, minlength=NUM_VALUES)
    if phase == DRAWN:
        unseen[held - MIN_VALUE] += 1
    out["unseen"] = unseen.astype(np.int16)
    if not isinstance(data["decks"], list):
        raise ValueError("decks must be a list of 150-card deck orders")
    out["decks"] = [SkyjoEngine._check_deck(d, f"decks[{i}]") for i, d in enumerate(data["decks"])]
    return out


def _int(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{name}={value!r} must be an integer in {lo}..{hi}")
    return int(value)


def _ints(value: Any, name: str, shape: tuple | None, lo: int, hi: int) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must hold integers") from None
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if shape is None and arr.ndim != 1:
        raise ValueError(f"{name} must be a flat list of integers")
    if arr.size and (arr.min() < lo or arr.max() > hi):
        raise ValueError(f"{name} holds a value outside {lo}..{hi}")
    return arr


def _bools(value: Any, name: str, players: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.shape != (players, SLOTS) or arr.dtype != bool:
        raise ValueError(f"{name} must be {players} lists of {SLOTS} booleans")
    return arr
