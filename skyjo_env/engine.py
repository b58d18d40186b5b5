"""The batched Skyjo engine: B games stepped at once as numpy arrays (RULES.md R1..R20).

This module is the single source of truth for the rules. It imports numpy only; the PettingZoo,
Gymnasium and vector environments are views over it. A single game is a batch of one.

State: the arrays that [`SkyjoEngine`][] declares in its class body, each
`Annotated[np.ndarray, StateField(dtype, *shape)]` with a row per game (`B` games, `P`
players, slots numbered `row * 4 + column`). That one list ([`FIELDS`][]) makes them and is
what [`export_game()`][SkyjoEngine.export_game], [`import_game()`][SkyjoEngine.import_game] and
[`load()`][SkyjoEngine.load] move. The rules reach their rows through a
[`Batch`][skyjo_env.batch.Batch], which keeps the speed devices (whole-batch slices, flat views,
rows moved as one item).

Setup flips (R5) are made in seat order 0..P-1 at the start of every round; then the starter
(R6 in the first round, R7 later) takes the first turn.

`copy.deepcopy` and pickle give an independent twin: the copy, stepped with the same actions,
plays exactly as the original (its random streams are copied too), and neither affects the other.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields
from typing import Annotated, Any

import numpy as np

from skyjo_env import random_streams, snapshot
from skyjo_env.actions import DRAW, FLIP, NUM_ACTIONS, REPLACE, TAKE, action_name, names
from skyjo_env.arrays import all_set, any_set, over_seats, row_items
from skyjo_env.batch import PLAYERS, Batch, StateField, state_fields
from skyjo_env.cards import (
    ALL_SLOTS,
    COLS,
    COLUMN_MASK,
    COUNTS,
    DECK,
    DECK_SIZE,
    MIN_VALUE,
    NUM_VALUES,
    ROWS,
    SETUP_FLIPS,
    SLOT_FLAGS,
    SLOTS,
    check_deck,
    value_counts,
)
from skyjo_env.checks import illegal_rows, is_integer
from skyjo_env.limits import MAX_BATCH, check_limit
from skyjo_env.phases import CHOOSE, DRAWN, OVER, PHASE_NAMES, SETUP, TAKEN
from skyjo_env.rules import Rules
from skyjo_env.sampling import unpack_bits

if sys.byteorder != "little":  # _equal_columns reads a grid row of four int8 cards as one uint32
    raise ImportError("skyjo_env's engine needs a little-endian machine (x86-64 and ARM64 are)")


# Legal-action bit sets are the union of three tables, masked by the phase's open actions:
# the flips of the face-down slots (by face-up bits), the replaces of the slots still present (by
# removed bits), and draw / take (by cards in both piles: a draw needs the draw pile or a second
# discard, as the top discard is always there in phase CHOOSE).
_SLOT_BITS = np.arange(ALL_SLOTS + 1, dtype=np.uint32)
_FLIPS = (_SLOT_BITS ^ ALL_SLOTS) << FLIP
_REPLACES = (_SLOT_BITS ^ ALL_SLOTS) << REPLACE
_DRAW_TAKE = np.where(np.arange(2 * DECK_SIZE + 1) > 1, 1 << DRAW | 1 << TAKE, 1 << TAKE).astype(np.uint32)
_FLIP_FIELD, _REPLACE_FIELD = _FLIPS[0], _REPLACES[0]
_OPEN = np.array([_FLIP_FIELD, _DRAW_TAKE[-1], _FLIP_FIELD | _REPLACE_FIELD, _REPLACE_FIELD, 0], dtype=np.uint32)
# Per action id: the slot it names, its slot's bit, and its column's bits (0 for draw/take).
_ACTION_SLOT = np.concatenate([[0, 0], np.arange(SLOTS), np.arange(SLOTS)])
_ACTION_BIT = np.where(np.arange(NUM_ACTIONS) >= REPLACE, 1 << _ACTION_SLOT, 0).astype(np.uint32)
_ACTION_COLUMN_BITS = (COLUMN_MASK << (_ACTION_SLOT % COLS)).astype(np.uint32)
_ACTION_COLUMN = _ACTION_SLOT % COLS
# 0-d operands: numpy casts a Python int operand on every call, which costs a batch of one dearly
# (and sends ufunc.at down a slow path).
_ONE16, _ONE32 = np.ones((), dtype=np.int16), np.ones((), dtype=np.int32)
_DECK_CODES = (DECK - MIN_VALUE).astype(np.uint32)  # cards as byte codes 0..14 for shuffling
# Slot masks -> the 12 bytes of a grid with 0xFF where the slot is kept, 0 where removed: one
# 12-byte scalar per mask, so a gather copies whole rows.
_KEPT_BYTES = np.where(SLOT_FLAGS, 0, 0xFF).astype(np.uint8).view(np.dtype((np.void, SLOTS)))[:, 0]
# The slot of the lowest and of the highest bit of every slot mask.
_LOW_SLOT = np.array([(m & -m).bit_length() - 1 for m in range(ALL_SLOTS + 1)], dtype=np.intp)
_HIGH_SLOT = np.array([m.bit_length() - 1 for m in range(ALL_SLOTS + 1)], dtype=np.intp)
# Row c (one item of 15 int16): the unseen counts of a full deck (R1) less one card of value c + MIN_VALUE.
_UNSEEN_AFTER_DEAL = row_items(COUNTS - np.eye(NUM_VALUES, dtype=np.int16))


@dataclass
class StepResult:
    """What one [`SkyjoEngine.step()`][SkyjoEngine.step] reports, per game (and seat).

    With `auto_reset` the games that ended are already re-dealt in the engine; these arrays hold
    the finished game's figures.
    """

    round_over: np.ndarray  #: (B,) bool: a round was scored in this step
    game_over: np.ndarray  #: (B,) bool: the game (episode) ended in this step
    round_scores: np.ndarray  #: (B, P) int16: scores of the round scored here (0 elsewhere)
    totals: np.ndarray  #: (B, P) int16: game totals after this step, before any auto-reset
    winners: np.ndarray  #: (B, P) bool: lowest totals of games that ended here (R20)


class SkyjoEngine:
    """`batch_size` independent Skyjo games under one [`Rules`][].

    Args:
        rules: the rule options (R2..R19).
        batch_size: number of games B.
        seed: seeds the engine's `numpy.random.Generator`; it draws each new game's key.
        auto_reset: start a new game in a slot as soon as its game ends. Otherwise the game stays
            in phase OVER, where no action is legal, until [`reset_games()`][reset_games].
    """

    # The state: an array per field, `(B, *shape)` with a row per game (PLAYERS: one per seat).
    values: Annotated[np.ndarray, StateField(np.int8, PLAYERS, SLOTS)]
    """Card in every grid slot (hidden or not; never observed raw)."""
    face_up: Annotated[np.ndarray, StateField(np.uint32, PLAYERS)]
    """Bit k set: slot k is face up (removed slots stay set)."""
    removed: Annotated[np.ndarray, StateField(np.uint32, PLAYERS)]
    """Bit k set: slot k's column was removed (R13)."""
    draw_pile: Annotated[np.ndarray, StateField(np.int8, DECK_SIZE)]
    """Draw pile, bottom first; its top is `draw_pile[b, draw_size[b] - 1]`."""
    draw_size: Annotated[np.ndarray, StateField(np.int16)]
    """Cards in the draw pile."""
    discard_pile: Annotated[np.ndarray, StateField(np.int8, DECK_SIZE)]
    """Discard pile, bottom first."""
    discard_size: Annotated[np.ndarray, StateField(np.int16)]
    """Cards in the discard pile (at least 1 during play)."""
    held: Annotated[np.ndarray, StateField(np.int8)]
    """Card in hand in phases DRAWN and TAKEN."""
    phase: Annotated[np.ndarray, StateField(np.int8)]
    """SETUP, CHOOSE, DRAWN, TAKEN or OVER."""
    current: Annotated[np.ndarray, StateField(np.int8)]
    """Seat to act."""
    ender: Annotated[np.ndarray, StateField(np.int8)]
    """Seat that ended the round (R15), -1 if none yet."""
    final_turns: Annotated[np.ndarray, StateField(np.int8)]
    """Final turns still owed after the round was ended."""
    starter: Annotated[np.ndarray, StateField(np.int8)]
    """Seat that starts (or started) this round's play (R6, R7)."""
    round_index: Annotated[np.ndarray, StateField(np.int16)]
    """Rounds completed in this game."""
    round_scores: Annotated[np.ndarray, StateField(np.int16, PLAYERS)]
    """Scores of the last completed round (after R17)."""
    totals: Annotated[np.ndarray, StateField(np.int16, PLAYERS)]
    """Game totals (R18)."""
    unseen: Annotated[np.ndarray, StateField(np.int16, NUM_VALUES, derived=True)]
    """Public count of each value in the draw pile or face down (derived from the others)."""
    steps: Annotated[np.ndarray, StateField(np.int32)]
    """Actions taken in this game."""
    keys: Annotated[np.ndarray, StateField(np.uint32, 2)]
    """The game's random-stream key ([`skyjo_env.random_streams`][skyjo_env.random_streams])."""
    shuffles: Annotated[np.ndarray, StateField(np.uint32)]
    """Shuffles the game has made (the stream's counter)."""

    def __init__(
        self,
        rules: Rules | None = None,
        batch_size: int = 1,
        *,
        seed: int | None = None,
        auto_reset: bool = True,
    ) -> None:
        self._allocate(rules, batch_size, seed, auto_reset)
        self.reset_games(self._batch.all)

    def _allocate(self, rules: Rules | None, batch_size: int, seed: int | None, auto_reset: bool) -> None:
        """Check the options and make the arrays of `batch_size` games (not dealt yet)."""
        self.rules = rules if rules is not None else Rules()
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules must be a skyjo_env.Rules, not {type(self.rules).__name__}")
        if not is_integer(batch_size) or batch_size < 1:
            raise ValueError(f"batch_size={batch_size!r} is not allowed; use a positive integer")
        check_limit("batch_size", batch_size, MAX_BATCH, "games")
        self.batch_size = B = int(batch_size)
        self.num_players = P = self.rules.num_players
        self.auto_reset = bool(auto_reset)
        for field in FIELDS:
            setattr(self, field.name, field.new(B, P))
        self._batch = Batch({field.name: getattr(self, field.name) for field in FIELDS})
        self._scripted: dict[int, dict[int, np.ndarray]] = {}  # game -> round index -> deck order
        self._quiet = _QuietResults(B, P)
        self._next_seat = np.roll(np.arange(P, dtype=np.int8), -1)  # seat p -> seat p + 1 (mod P)
        self._seat_distance = (np.arange(P) - np.arange(P)[:, None]) % P  # [s, p]: seats from s on to p
        self._rng = np.random.default_rng(seed)

    # ------------------------------------------------------------------ starting games
    def reset(self, seed: int | None = None) -> None:
        """Start new games in every slot; a seed re-seeds the engine's generator first."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._scripted.clear()
        self.reset_games(self._batch.all)

    def reset_games(self, games: np.ndarray) -> None:
        """Start new games in the given slots (indices or a boolean mask over the batch)."""
        games = self.game_indices(games)
        self._forget_scripts(games)
        self._new_games(games)

    def _forget_scripts(self, games: np.ndarray) -> None:
        """Drop the deck orders given to [`deal_from()`][deal_from] for games that start anew."""
        if self._scripted:
            for g in games.tolist():
                self._scripted.pop(g, None)

    def deal_from(self, game: int, decks: list) -> None:
        """Start a new game in slot `game` dealt from given 150-card deck orders, one per round.

        In deck order, cards 0..11 go to seat 0's slots 0..11, the next 12 to seat 1 and so on;
        the next card starts the discard pile (R4) and the rest form the draw pile, the first of
        them on top. Rounds beyond `len(decks)`, and reshuffles (R12), use the game's key.
        """
        game = self.game_indices(np.array([game]))[0]
        orders = [check_deck(d, f"decks[{i}]") for i, d in enumerate(decks)]
        if not orders:
            raise ValueError("decks is empty; give at least one 150-card deck order")
        self._scripted[int(game)] = dict(enumerate(orders))
        self._new_games(np.array([game]))

    def _new_games(self, games: np.ndarray) -> None:
        if games.size:
            self._new_game_state(games)
            self._deal(games)

    def _new_game_state(self, games: np.ndarray) -> None:
        """Fresh key, scores and counters for new games (dealt separately)."""
        self._batch.put("keys", games, self._rng.bit_generator.random_raw(games.size))  # a key is 64 bits
        self.shuffles[games] = 0
        self._batch.fill("totals", games, 0)
        self._batch.fill("round_scores", games, 0)
        self.round_index[games] = 0
        self.starter[games] = 0
        self.steps[games] = 0

    def _deal(self, games: np.ndarray) -> None:
        """Deal a new round (R3, R4) in the given games."""
        n, dealt = games.size, self.num_players * SLOTS
        rest = DECK_SIZE - dealt - 1  # cards left for the draw pile
        # The shuffled deck is dealt from its end: the grids get its last cards, last first, the
        # discard pile the card before them, and the draw pile the rest, in order (top last).
        codes = random_streams.shuffle(self._next_seeds(games), _DECK_CODES)
        cards = codes.view(np.int8) + np.int8(MIN_VALUE)
        if self._scripted:
            for row, g in enumerate(games.tolist()):
                scripted = self._scripted.get(g, {}).get(int(self.round_index[g]))
                if scripted is not None:
                    cards[row] = scripted[::-1]
        self.values[games] = cards[:, :rest:-1].reshape(n, self.num_players, SLOTS)
        self.discard_pile[games, 0] = cards[:, rest]
        self.discard_size[games] = 1
        self.draw_pile[games, :rest] = cards[:, :rest]
        self.draw_size[games] = rest
        self._batch.fill("face_up", games, 0)
        self._batch.fill("removed", games, 0)
        self.held[games] = 0
        self.phase[games] = SETUP
        self.current[games] = 0
        self.ender[games] = -1
        self.final_turns[games] = 0
        # Everything is unseen but the first discard (one row of counts per game, not a sum).
        self._batch.put("unseen", games, _UNSEEN_AFTER_DEAL.take(cards[:, rest] - np.int8(MIN_VALUE)))

    def _next_seeds(self, games: np.ndarray) -> np.ndarray:
        seeds = random_streams.shuffle_seeds(self._batch.take("keys", games), self.shuffles[games])
        self.shuffles[games] += 1
        return seeds

    # ------------------------------------------------------------------ legal actions
    def legal_bits(self, games: np.ndarray | None = None) -> np.ndarray:
        """Legal actions as uint32 bit sets (bit a set = action a legal), for `games` (default all)."""
        batch = self._batch
        if games is None:
            cell = batch.flat_index("face_up", batch.all) + self.current  # the seat to act's row of (B * P)
            stock = self.draw_size + self.discard_size
            ph = self.phase
        else:
            g = self.game_indices(games)
            cell = batch.flat_index("face_up", g) + self.current[g]
            stock = self.draw_size[g] + self.discard_size[g]
            ph = self.phase[g]
        legal = _FLIPS.take(batch.flat["face_up"][cell])
        legal |= _REPLACES.take(batch.flat["removed"][cell])
        legal |= _DRAW_TAKE.take(stock)
        legal &= _OPEN.take(ph)
        return legal

    def legal_mask(self, games: np.ndarray | None = None) -> np.ndarray:
        """Legal actions as booleans `(len(games), NUM_ACTIONS)`, for `games` (default all)."""
        return unpack_bits(self.legal_bits(games))

    # ------------------------------------------------------------------ stepping
    def step(self, actions: np.ndarray, games: np.ndarray | None = None, *, check: bool = True) -> StepResult:
        """Apply one action in each of `games` (default: all B) and advance them at once.

        Args:
            actions: action ids (see [`skyjo_env.actions`][]), one per stepped game.
            games: distinct game indices to step (or a boolean mask); the others do not move.
            check: validate that every action is legal and raise `ValueError` otherwise.
                `check=False` is the unchecked fast path: an illegal action then leaves that
                game in an undefined state, so use it only with actions drawn from the mask.

        Returns:
            a [`StepResult`][] whose arrays cover the stepped games, in order. Arrays that
            report nothing this step are shared read-only zeros.
        """
        a = np.asarray(actions)
        g = self._batch.all if games is None else self.game_indices(games)
        if a.shape != g.shape:
            raise ValueError(f"actions must have shape {g.shape} (one per stepped game), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers (action ids 0..{NUM_ACTIONS - 1}), got dtype {a.dtype}")
        given = a  # (uint64 ids of 2**63 and above wrap in intp: messages name them as given)
        if a.dtype != np.intp:
            a = a.astype(np.intp)
        if check:
            if games is not None and np.unique(g).size != g.size:
                raise ValueError("games must not repeat a game index")
            self._check_actions(a, g, given)
        if games is None:
            self.steps += _ONE32
        else:
            self.steps[g] += _ONE32
        on_slot = a >= REPLACE
        result = None
        if all_set(on_slot):
            result = self._slot_actions(g, a)
        else:
            draw = self._batch.select(g, a == DRAW)
            if draw.size:
                self._draw(draw)
            take = self._batch.select(g, a == TAKE)
            if take.size:
                self._take(take)
            if any_set(on_slot):
                result = self._slot_actions(g[on_slot], a[on_slot])
        if result is None:
            return self._quiet.of(self.totals, None if games is None else g)
        if games is not None:
            result = StepResult(*(getattr(result, f.name)[g] for f in fields(StepResult)))
        return result

    def _check_actions(self, a: np.ndarray, games: np.ndarray, given: np.ndarray) -> None:
        """`ValueError` for the first illegal action of `a` (the actions `given`, as intp)."""
        bits = self.legal_bits(games)
        bad = illegal_rows(given, bits)
        if not bad.size:
            return
        i = int(bad[0])
        g = int(games[i])
        if self.phase[g] == OVER:
            raise ValueError(f"game {g} is over; no action is legal until it is reset (reset_games)")
        name = action_name(a[i]) if 0 <= given[i] < NUM_ACTIONS else "out of range"
        raise ValueError(
            f"illegal action {name} (id {int(given[i])}) in game {g}, phase {PHASE_NAMES[self.phase[g]]}, "
            f"seat {int(self.current[g])}; legal actions: {names(unpack_bits(bits[i : i + 1])[0])}"
        )

    def _draw(self, games: np.ndarray) -> None:
        """R8: draw the top card of the draw pile (R12: reshuffled first if it is empty)."""
        empty = self.draw_size[games] == 0
        if any_set(empty):
            self._reshuffle(games[empty])
        n = self.draw_size[games] - _ONE16
        self.held[games] = self._batch.flat["draw_pile"][self._batch.flat_index("draw_pile", games) + n]
        self.draw_size[games] = n
        self.phase[games] = DRAWN

    def _take(self, games: np.ndarray) -> None:
        """R8: take the top card of the discard pile (R9: to swap it into the grid)."""
        n = self.discard_size[games] - _ONE16
        self.held[games] = self._batch.flat["discard_pile"][self._batch.flat_index("discard_pile", games) + n]
        self.discard_size[games] = n
        self.phase[games] = TAKEN

    def _reshuffle(self, games: np.ndarray) -> None:
        """R12: all discards but the top become the new draw pile, shuffled."""
        m = self.discard_size[games].astype(np.int64) - 1
        top = self.discard_pile[games, m]
        codes = (self.discard_pile[games] - MIN_VALUE).astype(np.uint32)
        cards = random_streams.shuffle(self._next_seeds(games), codes, valid=m).view(np.int8) + np.int8(MIN_VALUE)
        self.draw_pile[games] = cards
        self.draw_size[games] = m
        self.discard_pile[games, 0] = top
        self.discard_size[games] = 1
        moved = cards[np.arange(DECK_SIZE)[None, :] < m[:, None]]
        np.add.at(self.unseen, (np.repeat(games, m), moved.astype(np.intp) - MIN_VALUE), _ONE16)

    def _slot_actions(self, g: np.ndarray, a: np.ndarray) -> StepResult | None:
        """Replace or flip a slot (actions 2..25) in games `g`, then end the turn or the setup flip;
        the step's result if a round ended."""
        flat = self._batch.flat
        rows = self._batch.rows(g)
        cell = self._batch.flat_index("face_up", g) + self.current[rows]  # the seat to act's row of (B * P)
        at = cell * SLOTS + _ACTION_SLOT.take(a)  # the named slot in the flat values
        old = flat["values"][at]
        up = flat["face_up"][cell]
        bit = _ACTION_BIT.take(a)
        face_down = (up & bit) == 0  # the named slot's card was face down
        up |= bit
        flat["face_up"][cell] = up
        phase = self.phase[rows]
        # Public card counting: a face-down card turned up, and a drawn card put down, are seen.
        self._see(g, old, face_down)
        drawn = phase == DRAWN
        if any_set(drawn):
            self._see(g, self.held[rows], drawn)
        in_turn = phase != SETUP
        if not all_set(in_turn):
            setup = ~in_turn
            self._setup_progress(g[setup], up[setup])
            if not any_set(in_turn):
                return None
            keep = in_turn.nonzero()[0]  # found once, then taken from each array
            g, a, cell, at, old, up = (x.take(keep) for x in (g, a, cell, at, old, up))
            rows = g
        held = self.held[rows]
        replace = a < FLIP
        flat["values"][at] = np.where(replace, held, old)
        # The card that goes onto the discard pile: the replaced one, or the drawn one (R9, R10).
        self._push_discard(g, np.where(replace, old, held))
        if self.rules.column_rule:
            self._remove_columns(g, cell, a, up)
        return self._end_turn(g, up)

    def _push_discard(self, games: np.ndarray, cards: np.ndarray) -> None:
        """Put `cards` (one per game) on top of the discard piles of `games`."""
        rows = self._batch.rows(games)
        n = self.discard_size[rows]
        self._batch.flat["discard_pile"][self._batch.flat_index("discard_pile", games) + n] = cards
        self.discard_size[rows] = n + _ONE16

    def _see(self, games: np.ndarray, cards: np.ndarray, seen: np.ndarray | None = None) -> None:
        """Public card counting: `cards` (one per game, games distinct) were just seen by everyone.

        With `seen` (one bool per game) only the flagged cards count: masking is cheaper than
        gathering the flagged games first.
        """
        # Each game appears once, so no index repeats and a plain fancy-index update is exact.
        at = self._batch.flat_index("unseen", games, -MIN_VALUE) + cards  # the count of the card's value
        self._batch.flat["unseen"][at] -= _ONE16 if seen is None else seen

    def _remove_columns(self, g: np.ndarray, cell: np.ndarray, a: np.ndarray, up: np.ndarray) -> None:
        """R13: a column of three equal face-up cards leaves; its cards go onto the discard pile."""
        colbits = _ACTION_COLUMN_BITS.take(a)
        same = (up & colbits) == colbits
        if not any_set(same):
            return
        values = self._batch.flat["values"]
        base = cell * SLOTS + _ACTION_COLUMN.take(a)  # the column's top slot in the flat values
        card = values[base]
        same &= card == values[base + COLS]
        same &= card == values[base + 2 * COLS]
        if not any_set(same):
            return
        # (A legal action never names a removed slot, so the column is not removed yet.)
        g, cell, colbits, card = g[same], cell[same], colbits[same], card[same]
        self._batch.flat["removed"][cell] |= colbits
        for _ in range(3):
            self._push_discard(g, card)

    def _end_turn(self, g: np.ndarray, up: np.ndarray) -> StepResult | None:
        """R11, R15: end the turn of the current players of games `g` (`up`: their face-up bits);
        the step's result if a round ended."""
        P = self.num_players
        rows = self._batch.rows(g)
        current = self.current[rows]
        ender = self.ender[rows]
        ends_now = up == ALL_SLOTS  # every card face up ends the round, unless it was ended
        if any_set(ends_now):
            ends_now &= ender < 0
            ender = np.where(ends_now, current, ender)
            self.ender[rows] = ender
            final = np.where(ends_now, P, self.final_turns[rows])
        else:
            final = self.final_turns[rows]
        ending = ender >= 0
        over = ending
        if any_set(ending):
            final = final - ending
            self.final_turns[rows] = final
            over = ending & (final == 0)
        self.current[rows] = self._next_seat.take(current)
        self.phase[rows] = CHOOSE
        return self._end_round(g[over]) if any_set(over) else None

    def _setup_progress(self, g: np.ndarray, up: np.ndarray) -> None:
        """R5, R6: after two flips the next seat flips; after the last seat, play starts."""
        done = np.bitwise_count(up) == SETUP_FLIPS
        if not any_set(done):
            return
        done = g[done]
        self.current[done] += 1
        last = done[self.current[done] == self.num_players]
        if last.size:
            first = last[self.round_index[last] == 0]
            if first.size:
                self.starter[first] = self._first_starter(first)
            self.current[last] = self.starter[last]
            self.phase[last] = CHOOSE

    def _first_starter(self, g: np.ndarray) -> np.ndarray:
        """R6: highest sum of the two revealed cards; ties: highest single card, then lowest seat."""
        up = self._batch.take("face_up", g)  # (n, P): each seat's two setup flips
        values = self._batch.flat["values"]
        grid = (self._batch.flat_index("face_up", g)[:, None] + np.arange(self.num_players)) * SLOTS
        first = values[grid + _LOW_SLOT.take(up)]
        second = values[grid + _HIGH_SLOT.take(up)]
        key = (first + second) * np.int16(32) + np.maximum(first, second)
        return np.argmax(key, axis=1).astype(np.int8)  # argmax: lowest seat on ties

    # ------------------------------------------------------------------ end of a round
    def _end_round(self, g: np.ndarray) -> StepResult:
        """R14, R16..R20 for the games `g` whose round just ended; then deal or start anew. The
        step's result."""
        rules, batch = self.rules, self._batch
        rows = np.arange(g.size)
        vals = batch.take("values", g)
        removed = old_removed = batch.take("removed", g)
        if rules.column_rule and rules.column_rule_at_final_reveal:
            # R14: with every card up, a column of three equal values leaves (removed ones stay so).
            removed = removed | _equal_columns(vals)
            batch.put("removed", g, removed)
        old_up = batch.take("face_up", g)
        batch.fill("face_up", g, ALL_SLOTS)
        score = _kept_sums(vals, removed)  # R16
        ender = self.ender[g].astype(np.intp)
        own = score[rows, ender]
        at_most_own = over_seats(np.add, (score <= own[:, None]).view(np.uint8))  # (bools would add as "or")
        doubled = (own > 0) & (at_most_own > 1)  # R17: not strictly lowest
        score[rows, ender] = np.where(doubled, own * 2, own)
        new_totals = batch.take("totals", g) + score  # R18
        batch.put("totals", g, new_totals)
        batch.put("round_scores", g, score)

        result = self._new_result()  # its totals are the new ones
        result.round_scores[g] = score
        result.round_over[g] = True
        if rules.episode == "round":
            finished = np.ones(g.size, dtype=bool)
        else:
            finished = over_seats(np.maximum, new_totals) >= rules.end_score  # R19
        going = g
        if any_set(finished):
            done = g[finished]
            going = g[~finished]
            score = score[~finished]
            t = new_totals[finished]
            win = t == over_seats(np.minimum, t)[:, None]  # R20
            result.winners[done] = win
            result.game_over[done] = True
            if self.auto_reset:
                self._forget_scripts(done)
                self._new_game_state(done)
            else:
                self.phase[done] = OVER
                self.round_index[done] += 1  # every round of a finished game is completed
                self._see_final_reveal(done, old_up[finished])
                self._discard_final_columns(done, self.removed[done] & ~old_removed[finished])
        if going.size:
            self._pick_next_starter(going, score)
            self.round_index[going] += 1
        if self.auto_reset and going is not g:
            going = np.concatenate((going, done))
        if going.size:
            self._deal(going)
        return result

    def _see_final_reveal(self, g: np.ndarray, up_before: np.ndarray) -> None:
        """R16: the cards turned up for scoring of a finished game leave the public unseen counts.

        (Rounds that go on are re-dealt, which resets the counts, so only a finished game needs this.)
        """
        row, seat, slot = np.nonzero(~SLOT_FLAGS[up_before])  # face down until the final reveal
        games = g[row]
        cards = self.values[games, seat, slot].astype(np.intp)
        np.subtract.at(self.unseen, (games, cards - MIN_VALUE), _ONE16)

    def _discard_final_columns(self, g: np.ndarray, new_removed: np.ndarray) -> None:
        """R13/R14: columns removed at the final reveal of a finished game go onto its discard pile.

        (Rounds that go on are re-dealt with the whole deck, so only a finished game needs this.)
        """
        # (row of g, seat, column) of every removed column, in that order: the order of the discards.
        row, seat, col = np.nonzero((new_removed[:, :, None] >> np.arange(COLS, dtype=np.uint32)) & 1)
        if not row.size:
            return
        games = g[row]
        card = self.values[games, seat, col]
        rank = np.arange(row.size) - np.searchsorted(row, row)  # k-th removed column of its game
        at = self.discard_size[games] + 3 * rank  # where the column's three cards go
        for i in range(3):
            self.discard_pile[games, at + i] = card
        self.discard_size[g] += (3 * np.bincount(row, minlength=g.size)).astype(np.int16)

    def _pick_next_starter(self, g: np.ndarray, score: np.ndarray) -> None:
        """R7: the round's winner (ties: first at or after the last starter) or its ender starts."""
        P = self.num_players
        if self.rules.next_starter == "round_ender":
            self.starter[g] = self.ender[g]
        else:
            best = score == over_seats(np.minimum, score)[:, None]
            distance = self._seat_distance[self.starter[g]]
            self.starter[g] = np.argmin(np.where(best, distance, P), axis=1)

    def _new_result(self) -> StepResult:
        """Zeroed results and a copy of the current totals, for the whole batch."""
        return _zeros(self.batch_size, self.num_players, totals=self.totals.copy())

    # ------------------------------------------------------------------ replay
    def export_game(self, game: int) -> dict[str, Any]:
        """The full state of one game as a JSON-serialisable dict (keys: [`skyjo_env.snapshot`][])."""
        g = int(self.game_indices(np.array([game]))[0])
        scripted = self._scripted.get(g, {})
        decks = [scripted[r] for r in sorted(r for r in scripted if r > self.round_index[g])]
        return snapshot.encode(self.rules, {name: getattr(self, name)[g, ...] for name in STATE}, decks)

    @classmethod
    def from_states(
        cls, rules: Rules, state: dict[str, np.ndarray], *, seed: int | None = None, check: bool = True
    ) -> SkyjoEngine:
        """An engine without auto-reset whose games hold `state` (see [`load()`][load], and its `check`);
        its batch size is the length of the arrays. No game is dealt before: `seed` seeds the games that
        [`reset()`][reset] starts."""
        if "phase" not in state:
            raise ValueError("state is missing array(s) ['phase']")
        engine = cls.__new__(cls)
        engine._allocate(rules, len(state["phase"]), seed, auto_reset=False)
        engine.load(state, check=check)
        return engine

    def load(self, state: dict[str, np.ndarray], *, check: bool = True) -> None:
        """Set every game of the batch at once from arrays named and shaped as the attributes of
        [`STATE`][] (the state fields but the derived `unseen`), which it derives.

        The batched counterpart of [`import_game()`][import_game], for simulators that start many games from
        given positions. `ValueError` for a missing or misshapen array, a number out of range or
        one that the next step or round would overflow
        ([`check_bounds()`][skyjo_env.snapshot.check_bounds]: a phase, seat or card that cannot be,
        a total at or above `end_score` in a game not over, a step count at the int32 limit), or a
        game whose cards are not the 150-card deck (R1); nothing changes then. `check=False` skips the
        checks of numbers and cards (not of names and shapes), as [`step()`][step]'s does: for simulators
        whose states come from this engine's own (a copy, a card swapped with another hidden one), where a
        wrong state is the caller's defect.
        """
        missing = [name for name in STATE if name not in state]
        if missing:
            raise ValueError(f"state is missing array(s) {missing}")
        arrays = {name: np.asarray(state[name]) for name in STATE}
        for name, array in arrays.items():
            if array.shape != getattr(self, name).shape:
                raise ValueError(f"state[{name!r}] must have shape {getattr(self, name).shape}, got {array.shape}")
        if check:
            self._check_cards(arrays)
        self._set_games(self._batch.all, arrays)

    def _check_cards(self, a: dict[str, np.ndarray]) -> None:
        """`ValueError` for a batch of states with a number out of range or cards that are not the deck."""
        snapshot.check_bounds(a, self.rules, lambda g: f"game {g}")
        kept = ~SLOT_FLAGS[a["removed"]]
        in_hand = (a["phase"] == DRAWN) | (a["phase"] == TAKEN)
        draw = np.arange(DECK_SIZE) < a["draw_size"][:, None]
        discard = np.arange(DECK_SIZE) < a["discard_size"][:, None]
        counts = value_counts(
            self.batch_size,
            (a["values"], kept), (a["draw_pile"], draw), (a["discard_pile"], discard), (a["held"], in_hand),
        )  # fmt: skip
        wrong = np.flatnonzero((counts != COUNTS).any(axis=1))
        if wrong.size:
            raise ValueError(f"game {int(wrong[0])}'s cards are not the 150-card deck (R1)")

    @classmethod
    def of_game(cls, data: dict[str, Any], rules: Rules | None = None) -> SkyjoEngine:
        """A one-game engine without auto-reset holding the game `data` (from [`export_game()`][export_game]),
        under its own rules or, to play it on under other options, under `rules`."""
        rules = Rules.from_dict(data["rules"]) if rules is None else rules
        engine = cls(rules, 1, seed=0, auto_reset=False)
        engine.import_game(0, {**data, "rules": rules.to_dict()})
        return engine

    def import_game(self, game: int, data: dict[str, Any]) -> None:
        """Load a dict from [`export_game()`][export_game] into slot `game`; `ValueError` if it is corrupt
        (nothing changes then)."""
        g = self.game_indices(np.array([game]))
        state, decks = snapshot.decode(data, self.rules)
        self._set_games(g, state)
        if decks:
            self._scripted[int(g[0])] = {int(state["round_index"]) + 1 + i: deck for i, deck in enumerate(decks)}

    def _set_games(self, g: np.ndarray, state: dict[str, np.ndarray]) -> None:
        """Set the games `g` (distinct, or [`all_games`][]) to `state`: the arrays of [`STATE`][]
        for them, by name; derive their public counts and forget their [`deal_from()`][deal_from] decks."""
        rows = self._batch.rows(g)
        for name in STATE:
            getattr(self, name)[rows] = state[name]
        self.unseen[rows] = snapshot.public_unseen(
            self.values[rows], self.face_up[rows], self.removed[rows], self.draw_pile[rows], self.draw_size[rows],
            self.phase[rows], self.held[rows],
        )  # fmt: skip
        self._forget_scripts(g)

    # ------------------------------------------------------------------ helpers
    @property
    def all_games(self) -> np.ndarray:
        """The indices `0..B-1` of every game (read-only)."""
        return self._batch.all

    def game_indices(self, games: Any) -> np.ndarray:
        """Game indices (int64) from indices or a boolean mask over the batch; `ValueError` naming
        what is wrong otherwise."""
        games = np.asarray(games)
        if games.dtype == bool:
            if games.shape != (self.batch_size,):
                raise ValueError(f"a boolean game mask must have shape ({self.batch_size},), got {games.shape}")
            return np.flatnonzero(games)
        if games.dtype.kind not in "iu" or games.ndim > 1:
            raise ValueError(
                f"games must be integer game indices (0..{self.batch_size - 1}) or a boolean mask, "
                f"as a 1-D array; got dtype {games.dtype} and shape {games.shape}"
            )
        games = games.astype(np.int64, copy=False).reshape(-1)
        if games.size and (games.min() < 0 or games.max() >= self.batch_size):
            bad = games[(games < 0) | (games >= self.batch_size)]
            raise ValueError(f"game index {int(bad[0])} is out of range; games are 0..{self.batch_size - 1}")
        return games


#: The engine's state fields, in their order.
FIELDS = state_fields(SkyjoEngine)
#: The state arrays [`SkyjoEngine.load()`][SkyjoEngine.load] takes, by attribute name (every one but the derived `unseen`).
STATE = tuple(field.name for field in FIELDS if not field.derived)


class _QuietResults:
    """The results of steps in which no round ends: shared read-only zeros, and the totals.

    The whole batch's result is made once for each value of the totals: it keeps a read-only copy
    of the totals it reports, and a call with other totals makes it anew, so that nothing has to
    reset it by hand. A copy (`copy.deepcopy`, pickle) starts afresh, read-only again.
    """

    def __init__(self, batch_size: int, players: int) -> None:
        self._size = batch_size, players
        self._zeros = _read_only(_zeros(batch_size, players, totals=np.zeros((batch_size, players), dtype=np.int16)))
        self._whole = self._zeros
        self._totals = b""  # the bytes of the totals that `_whole` reports

    def __reduce__(self) -> tuple[type[_QuietResults], tuple[int, int]]:
        """A copy is made anew, its zeros read-only and nothing kept."""
        return _QuietResults, self._size

    def of(self, totals: np.ndarray, games: np.ndarray | None) -> StepResult:
        """The result for `games` (None: the whole batch) of a step in a batch with `totals`."""
        z = self._zeros
        if games is not None:
            n = games.size  # the first n rows of the shared zeros
            return StepResult(z.round_over[:n], z.game_over[:n], z.round_scores[:n], totals[games], z.winners[:n])
        key = totals.tobytes()
        if key != self._totals:
            copy = np.frombuffer(key, dtype=totals.dtype).reshape(totals.shape)  # read-only, as bytes are
            self._whole = StepResult(z.round_over, z.game_over, z.round_scores, copy, z.winners)
            self._totals = key
        return self._whole


def _zeros(batch_size: int, players: int, totals: np.ndarray) -> StepResult:
    """A result reporting nothing for `batch_size` games, with `totals`."""
    return StepResult(
        round_over=np.zeros(batch_size, dtype=bool),
        game_over=np.zeros(batch_size, dtype=bool),
        round_scores=np.zeros((batch_size, players), dtype=np.int16),
        totals=totals,
        winners=np.zeros((batch_size, players), dtype=bool),
    )


def _read_only(result: StepResult) -> StepResult:
    """`result` with every array made read-only."""
    for f in fields(StepResult):
        getattr(result, f.name).setflags(write=False)
    return result


def _equal_columns(values: np.ndarray) -> np.ndarray:
    """The slot bits of the columns of three equal cards in grids `values` `(..., 12)` int8."""
    rows = values.view(np.uint32)  # a grid row's 4 cards as one word, column c in byte c
    differ = (rows[..., 0] ^ rows[..., 1]) | (rows[..., 1] ^ rows[..., 2])  # byte c: 0 iff column c equal
    equal = (differ.view(np.uint8) == 0).view(np.uint32)  # byte c: 1 iff column c equal
    # Byte c's 1 (bit 8c) times 0x10204080 lands on bit 28 + c, and no other product bit reaches 28..31.
    columns = (equal * np.uint32(0x10204080)) >> np.uint32(28)
    return columns * np.uint32(COLUMN_MASK)


def _kept_sums(values: np.ndarray, removed: np.ndarray) -> np.ndarray:
    """Sum of the cards not in removed slots of grids `values` `(..., 12)` int8, as int16."""
    kept = np.take(_KEPT_BYTES, removed).view(np.uint32).reshape(values.shape[:-1] + (ROWS,))
    return (values.view(np.uint32) & kept).view(np.int8).sum(axis=-1, dtype=np.int16)
