"""Export and import the full state of one game as a JSON-serialisable dict.

Keys of the dict (version 1):

key            | value
-------------- | -----
`format`       | `"skyjo-env/game"`
`version`      | `1`
`rules`        | [`Rules.to_dict()`][Rules.to_dict] of the engine that played it
`key`          | the game's two 32-bit random-stream words; `shuffles`: shuffles made so far
`values`       | P lists of 12 card values (every slot, face down ones included)
`face_up`      | P lists of 12 booleans; `removed`: likewise, for removed columns (R13)
`draw_pile`    | card values, bottom first (the last one is drawn next)
`discard_pile` | card values, bottom first (the last one is the visible top)
`held`         | the card in hand (phases `drawn`/`taken`), else `null`
`phase`        | `"setup"`, `"choose"`, `"drawn"`, `"taken"` or `"over"`
`current`      | seat to act; `starter`: seat that starts this round's play
`ender`        | seat that ended the round, or `null`; `final_turns`: final turns still owed
`round_index`  | rounds completed; `round_scores`, `totals`: per seat
`steps`        | actions taken in this game
`decks`        | deck orders still to deal from (see [`SkyjoEngine.deal_from()`][SkyjoEngine.deal_from]), or `[]`

The public card counts (`unseen`) are derived on import, not stored. This module is the format
alone: [`SkyjoEngine.export_game()`][skyjo_env.engine.SkyjoEngine.export_game] hands it one game
as a [`GameState`][] (the game's row of each of the engine's state arrays) and
[`import_game()`][skyjo_env.engine.SkyjoEngine.import_game] takes one back from [`decode()`][decode], which checks
everything first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from skyjo_env.cards import (
    ALL_SLOTS,
    COLS,
    COUNTS,
    DECK_SIZE,
    MAX_VALUE,
    MIN_VALUE,
    NUM_VALUES,
    ROWS,
    SETUP_FLIPS,
    SLOT_FLAGS,
    SLOTS,
    check_deck,
    value_counts,
)
from skyjo_env.checks import is_integer
from skyjo_env.phases import DRAWN, OVER, PHASE_NAMES, SETUP, TAKEN
from skyjo_env.rules import Rules

FORMAT = "skyjo-env/game"
VERSION = 1
KEYS = [
    "format",
    "version",
    "rules",
    "key",
    "shuffles",
    "values",
    "face_up",
    "removed",
    "draw_pile",
    "discard_pile",
    "held",
    "phase",
    "current",
    "starter",
    "ender",
    "final_turns",
    "round_index",
    "round_scores",
    "totals",
    "steps",
    "decks",
]


#: A round's lowest and highest score: twelve -2s; twelve 12s, doubled (R16, R17).
MIN_ROUND_SCORE, MAX_ROUND_SCORE = SLOTS * MIN_VALUE, 2 * SLOTS * MAX_VALUE
_INT16 = np.iinfo(np.int16)
_INT32 = np.iinfo(np.int32)
_UINT32 = np.iinfo(np.uint32)

GameState = dict[str, np.ndarray]
"""One game's state as the engine stores it: its row of each state array of
[`skyjo_env.engine.STATE`][skyjo_env.engine.STATE], by name (a 0-d array for a number): `values` (P, 12) int8,
`face_up` and `removed` (P,) uint32 slot bits, `draw_pile` (150,) int8 of which the first
`draw_size` cards are the pile (`discard_pile` likewise), `phase` a phase number, `ender`
-1 while nobody has ended the round, `keys` (2,) uint32, and so on."""


def encode(rules: Rules, state: GameState, decks: list[np.ndarray]) -> dict[str, Any]:
    """`state` of a game played under `rules`, with the deck orders of its rounds to come
    ([`SkyjoEngine.deal_from()`][skyjo_env.engine.SkyjoEngine.deal_from]), as plain,
    JSON-serialisable data."""
    holding = state["phase"] in (DRAWN, TAKEN)
    return {
        "format": FORMAT,
        "version": VERSION,
        "rules": rules.to_dict(),
        "key": [int(x) for x in state["keys"]],
        "shuffles": int(state["shuffles"]),
        "values": state["values"].tolist(),
        "face_up": SLOT_FLAGS[state["face_up"]].tolist(),
        "removed": SLOT_FLAGS[state["removed"]].tolist(),
        "draw_pile": state["draw_pile"][: state["draw_size"]].tolist(),
        "discard_pile": state["discard_pile"][: state["discard_size"]].tolist(),
        "held": int(state["held"]) if holding else None,
        "phase": PHASE_NAMES[state["phase"]],
        "current": int(state["current"]),
        "starter": int(state["starter"]),
        "ender": int(state["ender"]) if state["ender"] >= 0 else None,
        "final_turns": int(state["final_turns"]),
        "round_index": int(state["round_index"]),
        "round_scores": state["round_scores"].tolist(),
        "totals": state["totals"].tolist(),
        "steps": int(state["steps"]),
        "decks": [deck.tolist() for deck in decks],
    }


def public_unseen(
    values: np.ndarray,
    face_up: np.ndarray,
    removed: np.ndarray,
    draw_pile: np.ndarray,
    draw_size: np.ndarray,
    phase: np.ndarray,
    held: np.ndarray,
) -> np.ndarray:
    """`(n, 15)` int16 public count of each value not seen yet in n games (engine layout: `values`
    `(n, P, 12)`, slot bits `(n, P)`, piles `(n, L)` bottom first): the draw pile's first
    `draw_size` cards, the face-down cards, and a drawn card still in hand (seen by its drawer
    only, R10)."""
    hidden = ~SLOT_FLAGS[face_up] & ~SLOT_FLAGS[removed]
    in_pile = np.arange(draw_pile.shape[1]) < np.asarray(draw_size)[:, None]
    in_hand = np.asarray(phase) == DRAWN
    counts = value_counts(len(values), (values, hidden), (draw_pile, in_pile), (np.asarray(held), in_hand))
    return counts.astype(np.int16)


def decode(data: Any, rules: Rules) -> tuple[GameState, list[np.ndarray]]:
    """The [`GameState`][] of `data` (from [`encode()`][encode]), for an engine under `rules`, and
    the deck orders of its rounds to come; `ValueError` naming what is corrupt."""
    if not isinstance(data, dict):
        raise ValueError(f"a game state must be a dict, got {type(data).__name__}")
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise ValueError(f"game state is missing key(s) {missing}")
    if data["format"] != FORMAT or not is_integer(data["version"]) or data["version"] != VERSION:
        raise ValueError(
            f"unsupported game state format {data['format']!r} v{data['version']!r}; expected {FORMAT!r} v{VERSION}"
        )
    if not isinstance(data["rules"], dict):
        raise ValueError(f"rules must be a dict of rule options (Rules.to_dict()), got {data['rules']!r}")
    if Rules.from_dict(data["rules"]) != rules:
        raise ValueError(f"game state was played under {data['rules']}, but this engine uses {rules.to_dict()}")
    P = rules.num_players
    values = _ints(data["values"], "values", (P, SLOTS), MIN_VALUE, MAX_VALUE)
    up = _bools(data["face_up"], "face_up", P)
    removed = _bools(data["removed"], "removed", P)
    if np.any(removed & ~up):
        raise ValueError("game state has a removed slot that is not face up")
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
        raise ValueError(
            f"game state's cards are not the 150-card deck (R1): found {cards.size} cards, counts {counts.tolist()}"
        )
    if phase not in (OVER, TAKEN) and discard.size == 0:
        raise ValueError("game state has an empty discard pile during play (only taking its last card empties it)")
    if not isinstance(data["decks"], list):
        raise ValueError("decks must be a list of 150-card deck orders")
    weights = 1 << np.arange(SLOTS)
    state = {  # (checked in this order)
        "keys": _ints(data["key"], "key", (2,), 0, 2**32 - 1).astype(np.uint32),
        "shuffles": np.array(_int(data["shuffles"], "shuffles", 0, 2**32 - 1)),
        "values": values.astype(np.int8),
        "face_up": (up * weights).sum(axis=1).astype(np.uint32),
        "removed": (removed * weights).sum(axis=1).astype(np.uint32),
        "draw_pile": _pile(draw),
        "draw_size": np.array(draw.size),
        "discard_pile": _pile(discard),
        "discard_size": np.array(discard.size),
        "held": np.array(held),
        "phase": np.array(phase),
        "current": np.array(_int(data["current"], "current", 0, P - 1)),
        "starter": np.array(_int(data["starter"], "starter", 0, P - 1)),
        "ender": np.array(-1 if data["ender"] is None else _int(data["ender"], "ender", 0, P - 1)),
        "final_turns": np.array(_int(data["final_turns"], "final_turns", 0, P)),
        "round_index": np.array(_int(data["round_index"], "round_index", 0, 2**15 - 1)),
        "round_scores": _ints(data["round_scores"], "round_scores", (P,), -(2**15), 2**15 - 1).astype(np.int16),
        "totals": _ints(data["totals"], "totals", (P,), -(2**15), 2**15 - 1).astype(np.int16),
        "steps": np.array(_int(data["steps"], "steps", 0, 2**31 - 1)),
    }
    decks = [check_deck(d, f"decks[{i}]") for i, d in enumerate(data["decks"])]
    check_bounds({name: np.asarray(value)[None] for name, value in state.items()}, rules, lambda g: "game state")
    _check_reachable(state, up, removed, rules)
    return state, decks


def check_bounds(state: GameState, rules: Rules, game: Callable[[int], str]) -> None:
    """`ValueError` naming the first game (`game(i)` for row i) of the batch `state` (engine
    arrays, a row per game, integers) with a number that is out of range under `rules`, or that the
    next step or round would overflow: a phase, seat, card, pile size or round score that cannot
    be; in a game not over, a total at or above `end_score` (R19: the game would have ended) or
    without room in int16 for one more round, and a step or round count at the limit of its type."""
    P = rules.num_players
    running = state["phase"] != OVER
    top = _INT16.max - MAX_ROUND_SCORE
    if rules.episode == "game":
        top = min(rules.end_score - 1, top)
    cards = f"cards are {MIN_VALUE}..{MAX_VALUE}"
    bounds: list[tuple[str, Any, Any, str]] = [  # name, lowest, highest (per game where they differ), what is allowed
        ("phase", 0, OVER, f"phases are 0..{OVER} ({', '.join(PHASE_NAMES)})"),
        ("current", 0, P - 1, f"seats are 0..{P - 1}"),
        ("starter", 0, P - 1, f"seats are 0..{P - 1}"),
        ("ender", -1, P - 1, f"-1 (none yet) or a seat 0..{P - 1}"),
        ("final_turns", 0, P - 1, f"0..{P - 1}"),
        ("values", MIN_VALUE, MAX_VALUE, cards),
        ("face_up", 0, ALL_SLOTS, f"slot bits are 0..{ALL_SLOTS}"),
        ("removed", 0, ALL_SLOTS, f"slot bits are 0..{ALL_SLOTS}"),
        ("draw_size", 0, DECK_SIZE, f"0..{DECK_SIZE} cards"),
        ("discard_size", 0, DECK_SIZE, f"0..{DECK_SIZE} cards"),
        ("draw_pile", MIN_VALUE, MAX_VALUE, f"{cards} (in the first draw_size places)"),
        ("discard_pile", MIN_VALUE, MAX_VALUE, f"{cards} (in the first discard_size places)"),
        ("held", MIN_VALUE, MAX_VALUE, f"the card in hand (phases drawn and taken) is {MIN_VALUE}..{MAX_VALUE}"),
        ("round_scores", MIN_ROUND_SCORE, MAX_ROUND_SCORE, f"a round scores {MIN_ROUND_SCORE}..{MAX_ROUND_SCORE} (R16, R17)"),
        ("round_index", 0, np.where(running, _INT16.max - 1, _INT16.max),
         f"0..{_INT16.max - 1} in a game not over (one more round must fit in int16)"),
        ("totals", np.where(running, _INT16.min - MIN_ROUND_SCORE, _INT16.min), np.where(running, top, _INT16.max),
         f"a game not over has every total below end_score={rules.end_score} (R19: the game ends after the "
         "round in which a total reaches it)" if rules.episode == "game" else
         f"a game not over has totals {_INT16.min - MIN_ROUND_SCORE}..{top} (one more round must fit in int16)"),
        ("steps", 0, np.where(running, _INT32.max - 1, _INT32.max),
         f"0..{_INT32.max - 1} in a game not over (one more step must fit in int32)"),
        ("keys", 0, _UINT32.max, f"0..{_UINT32.max}"),
        ("shuffles", 0, _UINT32.max, f"0..{_UINT32.max}"),
    ]  # fmt: skip
    for name, low, high, allowed in bounds:
        values = np.asarray(state[name])
        if values.dtype.kind not in "iu":
            raise ValueError(f"{name} must hold integers, got {values.dtype} values")
        shape = (-1,) + (1,) * (values.ndim - 1)
        low, high = (np.reshape(np.asarray(bound), shape if np.ndim(bound) else ()) for bound in (low, high))
        wrong = (values < low) | (values > high)
        if name in ("draw_pile", "discard_pile"):  # the places past the pile's size hold nothing
            wrong &= np.arange(DECK_SIZE) < np.asarray(state[name.replace("pile", "size")])[:, None]
        elif name == "held":
            wrong &= (state["phase"] == DRAWN) | (state["phase"] == TAKEN)
        bad = np.flatnonzero(wrong.reshape(len(values), -1).any(axis=1))
        if bad.size:
            g = int(bad[0])
            shown = (
                f"{name}={values[g].tolist()}"
                if values[g].size <= 8
                else f"{name} holding {values[g][wrong[g]].tolist()}"
            )
            raise ValueError(f"{game(g)} has {shown}, which cannot be: {allowed}")


def _pile(cards: np.ndarray) -> np.ndarray:
    """`cards` (bottom first) as a pile row of the engine: `(150,)` int8, zeros after them."""
    pile = np.zeros(DECK_SIZE, dtype=np.int8)
    pile[: cards.size] = cards
    return pile


def _check_reachable(state: GameState, up: np.ndarray, removed: np.ndarray, rules: Rules) -> None:
    """`ValueError` naming the first way `state` is one the rules cannot reach; `up` and
    `removed` are its `(P, 12)` flags. A state that passes is over or has a legal action."""
    P = rules.num_players
    phase, current, ender, final = (int(state[name]) for name in ("phase", "current", "ender", "final_turns"))
    if removed.any():
        if not rules.column_rule:
            raise ValueError("game state has a removed column, but the column rule is off (R13)")
        columns = removed.reshape(P, ROWS, COLS)
        whole = columns.all(axis=1)
        if np.any(columns.any(axis=1) != whole):
            raise ValueError("game state has a removed slot whose column is not removed whole (R13: three cards leave)")
        values = state["values"].reshape(P, ROWS, COLS)
        if np.any(whole & ((values[:, 0] != values[:, 1]) | (values[:, 1] != values[:, 2]))):
            raise ValueError("game state has a removed column whose three cards are not equal (R13)")
    shown = up.sum(axis=1)
    if phase == SETUP:
        seats = np.arange(P)
        expected = np.where(seats < current, SETUP_FLIPS, 0)
        if removed.any() or np.any(np.where(seats == current, shown > 1, shown != expected)):
            raise ValueError(
                f"game state in phase 'setup' has face-up cards {shown.tolist()} by seat, but seat {current} "
                f"flips next: seats before it have {SETUP_FLIPS}, it has 0 or 1, later ones none (R5)"
            )
        if state["discard_size"] != 1 or ender >= 0 or final:
            raise ValueError("game state in phase 'setup' must have one discard, no ender and no final turns (R4, R5)")
        return
    if np.any(shown < SETUP_FLIPS):
        raise ValueError(
            f"game state has face-up cards {shown.tolist()} by seat after setup: each seat flipped {SETUP_FLIPS} (R5)"
        )
    everything = shown == SLOTS  # (P,) every card face up
    if ender < 0:
        if final:
            raise ValueError(f"game state has final_turns={final} but no ender (R15: only ending the round owes them)")
        if everything.any():
            seat = int(np.flatnonzero(everything)[0])
            raise ValueError(
                f"game state has seat {seat} with every card face up but no ender (R15: that ends the round)"
            )
    elif not everything[ender]:
        raise ValueError(f"game state has ender={ender}, whose cards are not all face up (R15)")
    if phase == OVER:
        if ender < 0 or final or not everything.all():
            raise ValueError(
                "game state is over in the middle of a round: a finished game has an ender, no final turns "
                "owed and every card face up (R15, R16)"
            )
        return
    if ender >= 0 and (not 1 <= final <= P - 1 or current != (ender + P - final) % P):
        raise ValueError(
            f"game state has ender={ender}, final_turns={final} and seat {current} to play: after seat "
            f"{ender} ended the round, each later seat owes one last turn (R15), so final_turns is 1..{P - 1} "
            f"and the seat to play is {ender} + {P} - final_turns (mod {P})"
        )
    if everything[current]:
        raise ValueError(
            f"game state has seat {current} to play with every card face up (R15: it would have ended "
            "the round, or played its last turn)"
        )


def _int(value: Any, name: str, lo: int, hi: int) -> int:
    if not is_integer(value) or not lo <= value <= hi:
        raise ValueError(f"{name}={value!r} must be an integer in {lo}..{hi}")
    return int(value)


def _ints(value: Any, name: str, shape: tuple | None, lo: int, hi: int) -> np.ndarray:
    try:
        given = np.asarray(value)
        arr = given.astype(np.int64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must hold integers") from None
    if given.size and given.dtype.kind not in "iu":  # 1.7 or True would pass as 1
        raise ValueError(f"{name} must hold integers, got {given.dtype} values")
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
