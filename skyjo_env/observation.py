"""Per-seat observations: a flat float32 vector with only what that seat may see (RULES.md, last section).

Seats are ordered relative to the observer: block `r` describes seat `(observer + r) % P`, so
block 0 is always the observer's own. With `P` players the vector has `38 * P + 54` entries:

slice               | size    | range                | meaning
------------------- | ------- | -------------------- | -------
`grid` (per seat r) | 36 each | [-1/6, 1] and {0, 1} | 12 card values / 12 where face up (else 0), then 12 face-down flags, then 12 removed-column flags (R13)
`discard_top`       | 15      | {0, 1}               | one-hot of the discard pile's top card (-2..12)
`held`              | 15      | {0, 1}               | one-hot of the card in hand, if the observer may see it: a taken discard is public, a drawn card is seen only by the drawer (R10)
`held_source`       | 2       | {0, 1}               | card in hand came from [draw pile, discard pile]
`phase`             | 4       | {0, 1}               | one-hot [setup, choose, drawn, taken]
`unseen`            | 15      | [0, 1]               | per value -2..12: cards not yet seen by the observer (in the draw pile or face down), / that value's count in the deck (R1); public card counting
`draw_size`         | 1       | [0, 1]               | cards in the draw pile / 150
`totals`            | P       | [-1, 1 + 288/end]    | game totals / end_score, relative seat order, clipped below at -1 (see [`totals_ceiling()`][totals_ceiling])
`to_act`            | 1       | {0, 1}               | 1 if the observer is the seat to act
`round_ending`      | 1       | {0, 1}               | 1 once a player has ended the round (R15)
`ender`             | P       | {0, 1}               | one-hot relative seat of the round-ender

[`layout`][] gives the slices by name. One encoder serves a batch of games and a single game alike.

Padded encoding (`obs_type="padded"` of every view): one layout for every table of 2 to 8 players,
so that one network can play them all. It is the observation of an 8-player table, with the seats a
table of `P` lacks left at 0 (`grid_r`, `totals` and `ender` entries for `r >= P`), followed
by `players`, a one-hot of the player count over 2..8: [`PADDED_SIZE`][] = 38 * 8 + 54 + 7 = 365
entries ([`padded_layout()`][padded_layout]). It holds exactly what the table observation holds ([`pad()`][pad],
[`unpad()`][unpad]), so it is as leak-free.
"""

from __future__ import annotations

import itertools
from functools import cache, lru_cache
from typing import Any, NamedTuple

import numpy as np

from skyjo_env.cards import ALL_SLOTS, COUNTS, DECK_SIZE, MAX_VALUE, MIN_VALUE, NUM_VALUES, SLOT_FLAGS, SLOTS
from skyjo_env.engine import SkyjoEngine
from skyjo_env.phases import DRAWN, OVER, TAKEN

GRID_FEATURES = 3 * SLOTS  # 36 per seat
# 12 float32 as one scalar: gathers and strided writes move a block of a grid as one item.
_FLOAT_ROW = np.dtype((np.void, SLOTS * 4))
_SHOWN = SLOT_FLAGS.astype(np.int8)  # slot bits -> 12 flags, 1 where set
_SHOWN_FLOAT = SLOT_FLAGS.astype(np.float32).view(_FLOAT_ROW)[:, 0]  # the same flags as float32
_HIDDEN_FLOAT = _SHOWN_FLOAT[ALL_SLOTS ^ np.arange(ALL_SLOTS + 1)]  # face_up bits -> face-down flags
_VALUE_SCALE = np.float32(1 / MAX_VALUE)
_DRAW_SCALE = np.float32(1 / DECK_SIZE)
_PHASE_COLUMNS = 4  # engine phases setup, choose, drawn, taken; OVER has no column
#: The lowest observed game total, in units of `end_score`: a total below `-end_score` reads as
#: `-end_score` (no real game gets there; the bound keeps the observation space finite).
TOTALS_FLOOR = -1.0
#: The highest round score: twelve 12s, doubled (R16, R17).
MAX_ROUND_SCORE = 2 * SLOTS * MAX_VALUE


def totals_ceiling(end_score: int) -> float:
    """An upper bound of the observed game totals: a total before the last round is below
    `end_score` (R19), and the last round adds at most [`MAX_ROUND_SCORE`][]."""
    return 1.0 + MAX_ROUND_SCORE / end_score


def size(num_players: int) -> int:
    """Length of the observation vector for `num_players` players (the end of its [`layout()`][layout])."""
    return _layout(num_players)[-1][1].stop


def num_players(obs_size: int) -> int:
    """The player count P whose observation has `obs_size` entries (the inverse of [`size()`][size])."""
    for players in range(2, 9):
        if size(players) == obs_size:
            return players
    raise ValueError(
        f"an observation of {obs_size} entries fits no player count; {[size(p) for p in range(2, 9)]} fit 2..8"
    )


def layout(num_players: int) -> dict[str, slice]:
    """Name -> slice of every block of the observation vector (`grid_r` for relative seat r)."""
    return dict(_layout(num_players))


@cache
def _layout(num_players: int) -> tuple[tuple[str, slice], ...]:
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
    out, start = [], 0
    for name, width in parts:
        out.append((name, slice(start, start + width)))
        start += width
    return tuple(out)


def observe(engine: SkyjoEngine, seats: np.ndarray | int, games: np.ndarray | None = None) -> np.ndarray:
    """Observations of `seats` (one observer per game, or one for all) in `games` (default all).

    Returns `(len(games), size(P))` float32.
    """
    P = engine.num_players
    g = engine.all_games if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
    observer = _observers(seats, g.size, P)
    t = _tables(P, engine.rules.end_score)
    out = np.zeros((g.size, t.size), dtype=np.float32)
    if g.size == 1:  # one game (the one-game views' case) as Python ints, see _encode
        _encode(t, out[0], engine, int(g[0]), observer if isinstance(observer, int) else int(observer[0]), 0)
    elif g.size:
        seat = np.full(g.size, observer) if isinstance(observer, int) else observer
        _encode(t, out, engine, g, seat, np.arange(g.size))
    return out


def _observers(seats: np.ndarray | int, n: int, num_players: int) -> int | np.ndarray:
    """`seats` checked for `n` games: one seat as an int, or one per game as `(n,)` int64."""
    if type(seats) is int and 0 <= seats < num_players:
        return seats
    observer = np.asarray(seats)
    if observer.ndim == 0:
        seat = int(observer)
        if not 0 <= seat < num_players:
            raise ValueError(f"observer seats must be in 0..{num_players - 1}")
        return seat
    if observer.shape != (n,):
        raise ValueError(f"seats must be one seat or one per observed game ({n}), got shape {observer.shape}")
    if n and (observer.min() < 0 or observer.max() >= num_players):
        raise ValueError(f"observer seats must be in 0..{num_players - 1}")
    return observer.astype(np.int64, copy=False)


def _encode(
    t: _Tables,
    out: np.ndarray,
    engine: SkyjoEngine,
    g: int | np.ndarray,
    observer: int | np.ndarray,
    row: int | np.ndarray,
) -> None:
    """Write the observations of seats `observer` in games `g` into `out` (zeros).

    The one encoder, for a batch and for one game: a batch comes as `(n,)` arrays (`row` is
    `arange(n)`, `out` `(n, S)`), one game as Python ints (`row` 0, `out` `(S,)`). The
    same expressions then index views and scalars, which keeps one game to a few cheap numpy
    calls. Flags and one-hots are written as floats, from the tables `t`; counts are scaled.
    """
    P = engine.num_players
    # Grids, per relative seat: shown values, face-down flags, removed flags, each 12 float32 as
    # one item (numpy is slow on many short rows). Removed slots stay face up (engine state).
    cell = _cells(t.rotations, g, observer)
    up = engine.face_up.ravel()[cell]
    removed = engine.removed.ravel()[cell]
    shown = engine.values.reshape(-1, SLOTS).take(cell, 0)
    shown *= _SHOWN.take(up ^ removed, 0)  # 0 unless face up and not removed
    blocks = out[..., : t.grid].view(_FLOAT_ROW).reshape(cell.shape + (3,))
    blocks[..., 0] = (shown * _VALUE_SCALE).view(_FLOAT_ROW)[..., 0]
    blocks[..., 1] = _HIDDEN_FLOAT.take(up)
    if np.count_nonzero(removed):  # most grids have no removed column: their flags stay 0
        gone = np.flatnonzero(removed)
        blocks[..., 2][np.unravel_index(gone, removed.shape)] = _SHOWN_FLOAT.take(removed.ravel()[gone])

    size_ = _at(engine.discard_size, g)
    # The top card, or for an empty pile any card, whose one-hot entry is then written 0.
    top = _at(engine.discard_pile.ravel(), g * DECK_SIZE + size_ - (size_ > 0))
    out.reshape(-1)[row * t.size + t.discard_top - MIN_VALUE + top] = size_ > 0
    current = _at(engine.current, g)
    hand = _hand_key(_at(engine.phase, g), current == observer, _at(engine.held, g))
    out[..., t.hand] = _rows(t.hand_rows, hand)
    unseen = _rows(engine.unseen, g) - _rows(t.seen_rows, hand)
    np.multiply(unseen, t.unseen_scale, out=out[..., t.unseen])
    out[..., t.draw_size] = _rows(engine.draw_size, g) * _DRAW_SCALE
    np.multiply(np.maximum(engine.totals.ravel()[cell], t.totals_floor), t.totals_scale, out=out[..., t.totals])
    out[..., t.ending] = _rows(t.ending_rows, _ending_key(_at(engine.ender, g), current, observer, P))


class _Tables(NamedTuple):
    """What `_encode()` needs for P players and an end score: layout columns, factors, blocks by key."""

    size: int  #: length of the observation
    grid: int  #: end of the grid blocks
    discard_top: int  #: first column of `discard_top`
    hand: slice  #: `held`, `held_source`, `phase`
    unseen: slice
    draw_size: int
    totals: slice
    ending: slice  #: `to_act`, `round_ending`, `ender`
    unseen_scale: np.ndarray  #: per value, 1 / its count in the deck
    totals_scale: np.float32  #: 1 / end score
    totals_floor: np.ndarray  #: [`TOTALS_FLOOR`][] as an int16 game total
    rotations: np.ndarray  #: [observer, r]: the absolute seat of relative seat r
    hand_rows: np.ndarray  #: [_hand_key]: the `hand` block
    seen_rows: np.ndarray  #: [_hand_key]: per value, the drawn card that the observer saw (not unseen)
    ending_rows: np.ndarray  #: [_ending_key]: the `ending` block


@lru_cache(maxsize=64)
def _tables(num_players: int, end_score: int) -> _Tables:
    """The `_Tables` of a table of `num_players` playing to `end_score`, kept for the 64 tables used
    last (20 to 40 kB each: a server playing games to every end score keeps a bounded memory)."""
    P = num_players
    L = dict(_layout(P))
    hand, ending = slice(L["held"].start, L["phase"].stop), slice(L["to_act"].start, L["ender"].stop)
    source = L["held_source"].start - hand.start
    hand_rows = np.zeros(((OVER + 1) * 2 * NUM_VALUES, hand.stop - hand.start), dtype=np.float32)
    seen_rows = np.zeros((len(hand_rows), NUM_VALUES), dtype=np.int16)
    for phase, to_act, card in itertools.product(range(OVER + 1), (False, True), range(MIN_VALUE, MAX_VALUE + 1)):
        key = _hand_key(phase, to_act, card)
        # A taken discard is public; a drawn card is seen by the drawer only (R10).
        hand_rows[key, card - MIN_VALUE] = phase == TAKEN or (phase == DRAWN and to_act)
        hand_rows[key, source : source + 2] = phase == DRAWN, phase == TAKEN
        if phase < _PHASE_COLUMNS:
            hand_rows[key, L["phase"].start - hand.start + phase] = 1
        seen_rows[key, card - MIN_VALUE] = phase == DRAWN and to_act
    ending_rows = np.zeros(((P + 1) * P * P, ending.stop - ending.start), dtype=np.float32)
    for ender, current, observer in itertools.product(range(-1, P), range(P), range(P)):
        row = ending_rows[_ending_key(ender, current, observer, P)]
        row[0] = current == observer
        if ender >= 0:
            row[L["round_ending"].start - ending.start] = 1
            row[L["ender"].start - ending.start + (ender - observer) % P] = 1
    seats = np.arange(P)
    rotations = (seats[:, None] + seats) % P
    unseen_scale = (1.0 / COUNTS).astype(np.float32)
    totals_floor = np.array(-min(end_score, 2**15), dtype=np.int16)  # (within the int16 totals)
    for table in (rotations, hand_rows, seen_rows, ending_rows, unseen_scale, totals_floor):
        table.setflags(write=False)
    return _Tables(
        size=size(P),
        grid=L[f"grid_{P - 1}"].stop,
        discard_top=L["discard_top"].start,
        hand=hand,
        unseen=L["unseen"],
        draw_size=L["draw_size"].start,
        totals=L["totals"],
        ending=ending,
        unseen_scale=unseen_scale,
        totals_scale=np.float32(1 / end_score),
        totals_floor=totals_floor,
        rotations=rotations,
        hand_rows=hand_rows,
        seen_rows=seen_rows,
        ending_rows=ending_rows,
    )


def _hand_key(phase: Any, to_act: Any, held: Any) -> Any:
    """Row of `_Tables.hand_rows` for (arrays of) a phase, whether the observer acts, the card in hand."""
    return (phase * 2 + to_act) * NUM_VALUES + held - MIN_VALUE


def _ending_key(ender: Any, current: Any, observer: Any, num_players: int) -> Any:
    """Row of `_Tables.ending_rows` (an ender of -1, none, counts from the end)."""
    return (ender * num_players + current) * num_players + observer


def _cells(rotations: np.ndarray, g: int | np.ndarray, observer: int | np.ndarray) -> np.ndarray:
    """Rows `game * P + seat` of relative seats 0..P-1: `(P,)` for an int game, else `(n, P)`."""
    P = len(rotations)
    if isinstance(g, int):
        return rotations[observer] + g * P if g else rotations[observer]
    return rotations.take(observer, 0) + (g * P)[:, None]


def _at(array: np.ndarray, index: int | np.ndarray) -> Any:
    """`array[index]` of a 1-D array: a Python int for an int index, else int64 values."""
    return array.item(index) if type(index) is int else array[index].astype(np.int64)


def _rows(table: np.ndarray, key: int | np.ndarray) -> np.ndarray:
    """`table[key]`: a view for an int key, else the rows gathered."""
    return table[key] if type(key) is int else table.take(key, 0)


#: Seats of the padded encoding, and the player counts it covers.
PADDED_SEATS = 8
PLAYER_COUNTS = tuple(range(2, PADDED_SEATS + 1))
#: The observation types of the views: `"table"` (sized to the table) and `"padded"` (every table alike).
OBS_TYPES = ("table", "padded")


def count_range(counts: tuple[int, ...]) -> str:
    """Player counts as a reader writes them: `2`, `3, 5`, `2-8`."""
    if len(counts) > 2 and list(counts) == list(range(counts[0], counts[-1] + 1)):
        return f"{counts[0]}-{counts[-1]}"
    return ", ".join(map(str, counts))


def check_obs_type(obs_type: object) -> None:
    """`ValueError` unless `obs_type` is one of [`OBS_TYPES`][]."""
    if obs_type not in OBS_TYPES:
        raise ValueError(f"obs_type={obs_type!r} is not allowed; use one of {list(OBS_TYPES)}")


def padded_layout() -> dict[str, slice]:
    """Name -> slice of the padded encoding: [`layout()`][layout] of 8 seats, then `players`."""
    return dict(_padded_layout())


@cache
def _padded_layout() -> tuple[tuple[str, slice], ...]:
    end = size(PADDED_SEATS)
    return (*_layout(PADDED_SEATS), ("players", slice(end, end + len(PLAYER_COUNTS))))


#: Length of the padded encoding.
PADDED_SIZE = _padded_layout()[-1][1].stop


def obs_size(obs_type: str, num_players: int) -> int:
    """Length of the observations of type `obs_type` at a table of `num_players`."""
    check_obs_type(obs_type)
    return size(num_players) if obs_type == "table" else PADDED_SIZE


@cache
def _padded_columns(num_players: int) -> np.ndarray:
    """Column of the padded encoding of each entry of the `num_players` table observation."""
    padded = dict(_layout(PADDED_SEATS))
    columns = [np.arange(s.stop - s.start) + padded[name].start for name, s in _layout(num_players)]
    out = np.concatenate(columns)
    out.setflags(write=False)
    return out


def pad(observations: np.ndarray, num_players: int) -> np.ndarray:
    """Table observations `(n, size(P))` of `num_players` as padded ones `(n, PADDED_SIZE)`."""
    obs = np.asarray(observations, dtype=np.float32)
    if obs.ndim != 2 or obs.shape[1] != size(num_players):
        raise ValueError(
            f"observations of {num_players} players must have shape (n, {size(num_players)}), got {obs.shape}"
        )
    out = np.zeros((len(obs), PADDED_SIZE), dtype=np.float32)
    out[:, _padded_columns(num_players)] = obs
    out[:, _padded_layout()[-1][1].start + num_players - PLAYER_COUNTS[0]] = 1
    return out


def padded_players(padded: np.ndarray) -> np.ndarray:
    """`(n,)` player count of each padded observation; `ValueError` for rows without exactly one."""
    block = np.asarray(padded)[:, _padded_layout()[-1][1]]
    if not np.all(block.sum(axis=1) == 1):
        raise ValueError("padded observations must have exactly one player count set in their 'players' block")
    return block.argmax(axis=1) + PLAYER_COUNTS[0]


def unpad(padded: np.ndarray, num_players: int) -> np.ndarray:
    """Padded observations of `num_players` tables as table observations `(n, size(P))` ([`pad()`][pad]'s inverse)."""
    return np.ascontiguousarray(np.asarray(padded, dtype=np.float32)[:, _padded_columns(num_players)])


def by_player_count(padded: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The rows of a batch of padded observations grouped by player count: `[(P, rows), ...]`."""
    players = padded_players(padded)
    return [(int(P), np.flatnonzero(players == P)) for P in np.unique(players)]


def observe_as(
    obs_type: str, engine: SkyjoEngine, seats: np.ndarray | int, games: np.ndarray | None = None
) -> np.ndarray:
    """[`observe()`][observe], as table observations or padded ones (`obs_type`, see [`OBS_TYPES`][])."""
    obs = observe(engine, seats, games)
    return obs if obs_type == "table" else pad(obs, engine.num_players)
