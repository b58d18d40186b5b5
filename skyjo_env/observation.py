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

[`layout`][] gives the slices by name. The encoder works on the whole batch at once.

Padded encoding (`obs_type="padded"` of every view): one layout for every table of 2 to 8 players,
so that one network can play them all. It is the observation of an 8-player table, with the seats a
table of `P` lacks left at 0 (`grid_r`, `totals` and `ender` entries for `r >= P`), followed
by `players`, a one-hot of the player count over 2..8: [`PADDED_SIZE`][] = 38 * 8 + 54 + 7 = 365
entries ([`padded_layout()`][padded_layout]). It holds exactly what the table observation holds ([`pad()`][pad],
[`unpad()`][unpad]), so it is as leak-free.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from skyjo_env.cards import ALL_SLOTS, COUNTS, DECK_SIZE, MAX_VALUE, MIN_VALUE, NUM_VALUES, SLOT_FLAGS, SLOTS
from skyjo_env.engine import SkyjoEngine
from skyjo_env.phases import DRAWN, TAKEN

GRID_FEATURES = 3 * SLOTS  # 36 per seat
# 12 slots as one scalar (12 int8 or 12 float32): gathers and strided writes copy whole rows.
_ROW = np.dtype((np.void, SLOTS))
_FLOAT_ROW = np.dtype((np.void, SLOTS * 4))
_SHOWN = SLOT_FLAGS.astype(np.int8).view(_ROW)[:, 0]  # slot bit set -> 12 flags of the set bits
_SHOWN_FLOAT = SLOT_FLAGS.astype(np.float32).view(_FLOAT_ROW)[:, 0]  # the same flags as float32
_HIDDEN_FLOAT = _SHOWN_FLOAT[ALL_SLOTS ^ np.arange(ALL_SLOTS + 1)]  # face_up bits -> face-down flags
_VALUE_SCALE = np.float32(1 / MAX_VALUE)
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


@cache
def _scale(num_players: int, end_score: int) -> np.ndarray:
    """Per entry, the factor that turns the integer feature into the observed float."""
    L = layout(num_players)
    scale = np.ones(size(num_players), dtype=np.float32)
    scale[: num_players * GRID_FEATURES].reshape(num_players, 3, SLOTS)[:, 0] = _VALUE_SCALE
    scale[L["unseen"]] = (1.0 / COUNTS).astype(np.float32)
    scale[L["draw_size"]] = np.float32(1 / DECK_SIZE)
    scale[L["totals"]] = np.float32(1 / end_score)
    scale.setflags(write=False)
    return scale


def observe(engine: SkyjoEngine, seats: np.ndarray | int, games: np.ndarray | None = None) -> np.ndarray:
    """Observations of `seats` (one observer per game, or one for all) in `games` (default all).

    Returns `(len(games), size(P))` float32.
    """
    P = engine.num_players
    if games is None and engine.batch_size == 1 and isinstance(seats, (int, np.integer)) and 0 <= seats < P:
        return _observe_one(engine, int(seats), 0)  # a single game: the common case of one-game envs
    g = engine.all_games if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
    n = g.size
    observer = np.asarray(seats)
    if observer.ndim == 0:
        observer = np.full(n, observer, dtype=np.int64)
    elif observer.shape != (n,):
        raise ValueError(f"seats must be one seat or one per observed game ({n}), got shape {observer.shape}")
    if n and (observer.min() < 0 or observer.max() >= P):
        raise ValueError(f"observer seats must be in 0..{P - 1}")
    if n == 1:
        return _observe_one(engine, int(observer[0]), int(g[0]))
    L = dict(_layout(P))
    S = size(P)
    # Every feature is an integer times a fixed per-entry factor (see _scale). Flags and one-hots
    # are written as floats directly, the grids from float tables, and the counts are scaled.
    # Work on flat arrays and whole-row scalars: numpy is slow on many short rows.
    out = np.zeros((n, S), dtype=np.float32)
    flat = out.reshape(-1)
    base = np.arange(0, n * S, S)  # flat index of each row's first entry

    # State row of (game, relative seat r) is game * P + (observer + r) % P, flattened over (n, P).
    cell = np.repeat(g * P, P) + _take_rows(_rotations(P), observer).reshape(-1)
    up = engine.face_up.reshape(-1)[cell]
    removed = engine.removed.reshape(-1)[cell]
    values = _take_rows(engine.values.reshape(-1, SLOTS), cell)
    values *= np.take(_SHOWN, up & ~removed).view(np.int8).reshape(-1, SLOTS)  # 0 unless shown
    # Per (game, seat): the 12-entry blocks shown values, face-down flags, removed flags.
    blocks = np.ndarray((n, P, 3), dtype=_FLOAT_ROW, buffer=out, strides=(4 * S, 4 * GRID_FEATURES, 4 * SLOTS))
    shown = values.astype(np.float32)
    shown *= _VALUE_SCALE
    blocks[:, :, 0] = shown.view(_FLOAT_ROW).reshape(n, P)
    blocks[:, :, 1] = np.take(_HIDDEN_FLOAT, up).reshape(n, P)
    gone = np.flatnonzero(removed)  # most grids have no removed column: their flags stay 0
    blocks[gone // P, gone % P, 2] = np.take(_SHOWN_FLOAT, removed[gone])

    size_ = engine.discard_size[g]
    top = engine.discard_pile.reshape(-1)[g * DECK_SIZE + np.maximum(size_ - 1, 0)]
    flat[base + (L["discard_top"].start - MIN_VALUE) + top] = size_ > 0

    phase = engine.phase[g]
    to_act = engine.current[g] == observer
    drawn = phase == DRAWN
    taken = phase == TAKEN
    seen_drawn = drawn & to_act  # a drawn card is seen by the drawer only (R10)
    holding = np.flatnonzero(taken | seen_drawn)
    flat[base[holding] + (L["held"].start - MIN_VALUE) + engine.held[g[holding]]] = 1
    out[:, L["held_source"].start] = drawn
    out[:, L["held_source"].start + 1] = taken
    in_play = np.flatnonzero(phase < _PHASE_COLUMNS)
    flat[base[in_play] + L["phase"].start + phase[in_play]] = 1

    unseen = _take_rows(engine.unseen, g)
    mine = np.flatnonzero(seen_drawn)
    unseen[mine, engine.held[g[mine]].astype(np.intp) - MIN_VALUE] -= 1
    scale = _scale(P, engine.rules.end_score)
    np.multiply(unseen, scale[L["unseen"]], out=out[:, L["unseen"]])

    out[:, L["to_act"].start] = to_act
    ender = engine.ender[g].astype(np.int64)
    ending = np.flatnonzero(ender >= 0)
    out[ending, L["round_ending"].start] = 1
    flat[base[ending] + L["ender"].start + (ender[ending] - observer[ending]) % P] = 1
    np.multiply(engine.draw_size[g], scale[L["draw_size"].start], out=out[:, L["draw_size"].start])
    totals = np.maximum(engine.totals.reshape(-1)[cell].reshape(n, P), _totals_floor(engine))
    np.multiply(totals, scale[L["totals"].start], out=out[:, L["totals"]])
    return out


def _observe_one(engine: SkyjoEngine, seat: int, game: int) -> np.ndarray:
    """[`observe()`][observe] of one game in plain Python (numpy's per-call cost dominates for one row).

    The same integers times the same factors, so the result is identical to the batched one.
    """
    P = engine.num_players
    L = dict(_layout(P))
    ints = [0] * size(P)
    values = engine.values[game].tolist()
    ups = engine.face_up[game].tolist()
    gone = engine.removed[game].tolist()
    for r in range(P):
        p = (seat + r) % P
        up, removed = ups[p], gone[p]
        start = r * GRID_FEATURES
        ints[start : start + SLOTS] = [v * f for v, f in zip(values[p], _flags(up & ~removed))]
        ints[start + SLOTS : start + 2 * SLOTS] = _flags(ALL_SLOTS & ~up)
        ints[start + 2 * SLOTS : start + GRID_FEATURES] = _flags(removed)
    size_ = int(engine.discard_size[game])
    if size_:
        ints[L["discard_top"].start + int(engine.discard_pile[game, size_ - 1]) - MIN_VALUE] = 1
    phase = int(engine.phase[game])
    to_act = int(engine.current[game]) == seat
    held = int(engine.held[game]) - MIN_VALUE
    if phase == TAKEN or (phase == DRAWN and to_act):
        ints[L["held"].start + held] = 1
    ints[L["held_source"].start] = int(phase == DRAWN)
    ints[L["held_source"].start + 1] = int(phase == TAKEN)
    if phase < _PHASE_COLUMNS:
        ints[L["phase"].start + phase] = 1
    unseen = engine.unseen[game].tolist()
    if phase == DRAWN and to_act:
        unseen[held] -= 1
    ints[L["unseen"]] = unseen
    ints[L["draw_size"].start] = int(engine.draw_size[game])
    totals = engine.totals[game].tolist()
    ints[L["totals"]] = [max(totals[(seat + r) % P], _totals_floor(engine)) for r in range(P)]
    ints[L["to_act"].start] = int(to_act)
    ender = int(engine.ender[game])
    if ender >= 0:
        ints[L["round_ending"].start] = 1
        ints[L["ender"].start + (ender - seat) % P] = 1
    return np.multiply(np.array([ints], dtype=np.int16), _scale(P, engine.rules.end_score), dtype=np.float32)


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


def _totals_floor(engine: SkyjoEngine) -> int:
    """[`TOTALS_FLOOR`][] as a total of the engine's games (within the int16 totals)."""
    return -min(engine.rules.end_score, 2**15)


@cache
def _flags(bits: int) -> tuple[int, ...]:
    """The 12 slot flags of a bit set, as ints."""
    return tuple(bits >> k & 1 for k in range(SLOTS))


@cache
def _rotations(num_players: int) -> np.ndarray:
    """Row o: the absolute seats of relative seats 0..P-1 seen from observer o."""
    seats = np.arange(num_players)
    return (seats[:, None] + seats) % num_players


def _take_rows(array: np.ndarray, index: np.ndarray) -> np.ndarray:
    """`array[index]` for a C-contiguous 2-D array, each row gathered as one scalar (fast for short rows)."""
    rows = array.view(np.dtype((np.void, array.dtype.itemsize * array.shape[1])))[:, 0]
    return np.take(rows, index).view(array.dtype).reshape(*index.shape, array.shape[1])
