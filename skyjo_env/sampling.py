"""Uniform sampling of legal actions from packed masks, without a Python loop over games.

A legal mask of `NUM_ACTIONS` (26) bits is split into two 13-bit halves; a precomputed table gives
the position of each half's r-th set bit, so sampling costs a few array operations and one lookup.
"""

from __future__ import annotations

import numpy as np

from skyjo_env.actions import NUM_ACTIONS

_HALF = 13
_HALF_MASK = (1 << _HALF) - 1


def _select_table() -> np.ndarray:
    """The action of the r-th set bit of every 13-bit half of a mask.

    The table is flat: entry `h * 13 + r` for the low half `h` and, after
    `_HIGH_OFFSET`, entry `h * 13 + r` for the high half (actions 13..25).
    """
    masks = np.arange(1 << _HALF)
    bits = (masks[:, None] >> np.arange(_HALF)) & 1
    select = np.zeros((1 << _HALF, _HALF), dtype=np.int8)
    rank = np.cumsum(bits, axis=1) - 1  # rank of each set bit
    rows, cols = np.nonzero(bits)
    select[rows, rank[rows, cols]] = cols
    flat = select.reshape(-1)
    return np.concatenate([flat, flat + _HALF])


_SELECT = _select_table()
_HIGH_OFFSET = np.int32((1 << _HALF) * _HALF)


# Packing works on rows padded to 32 flags, flattened: numpy packs one long row much faster than
# many short ones. A padded row's first NUM_ACTIONS flags are copied out as one void scalar.
_WORD = 32
_MASK_ROW = np.dtype((np.void, NUM_ACTIONS))


def pack_mask(mask: np.ndarray) -> np.ndarray:
    """Boolean masks `(n, NUM_ACTIONS)` to uint32 bit sets `(n,)` (bit a = action a)."""
    mask = np.asarray(mask, dtype=bool)
    padded = np.zeros((mask.shape[0], _WORD), dtype=bool)
    padded[:, : mask.shape[1]] = mask
    return np.packbits(padded.reshape(-1), bitorder="little").view("<u4")


def unpack_bits(bits: np.ndarray) -> np.ndarray:
    """Inverse of [`pack_mask()`][pack_mask]: uint32 bit sets `(n,)` to booleans `(n, NUM_ACTIONS)`."""
    as_bytes = np.ascontiguousarray(bits, dtype="<u4").view(np.uint8)
    if as_bytes.size == 4:  # one bit set: no padding to drop
        return np.unpackbits(as_bytes, count=NUM_ACTIONS, bitorder="little").view(bool).reshape(1, NUM_ACTIONS)
    padded = np.unpackbits(as_bytes, bitorder="little")
    rows = np.ndarray((as_bytes.size // 4,), dtype=_MASK_ROW, buffer=padded, strides=(_WORD,))
    return rows.copy().view(bool).reshape(-1, NUM_ACTIONS)


def sample_bits(bits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random set bit of each uint32 in `bits` (each must have one set)."""
    bits = np.asarray(bits)
    if bits.shape == (1,):
        return _sample_one(bits.item(), rng)
    bits = bits.astype(np.int32)
    low = bits & _HALF_MASK
    high = bits >> _HALF
    n_low = np.bitwise_count(low)
    total = n_low + np.bitwise_count(high)
    if np.count_nonzero(total) < total.size:  # (cheaper than total.all())
        raise ValueError(f"no legal action in game(s) {np.flatnonzero(total == 0).tolist()}")
    r = (rng.random(bits.shape[0], dtype=np.float32) * total).astype(np.int32)
    # The r-th set bit lies in the low half (rank r) or the high half (rank r - n_low).
    start = low * _HALF + r
    start += ((high - low) * _HALF + _HIGH_OFFSET - n_low) * (r >= n_low)
    return _SELECT.take(start).astype(np.int64)


def _sample_one(bits: int, rng: np.random.Generator) -> np.ndarray:
    """[`sample_bits()`][sample_bits] of a single bit set in Python ints (numpy's per-call cost dominates for one).

    The same random draw, the same float32 product and the same table, so the same action.
    """
    low, high = bits & _HALF_MASK, bits >> _HALF
    n_low = low.bit_count()
    total = n_low + high.bit_count()
    if not total:
        raise ValueError("no legal action in game(s) [0]")
    r = int((rng.random(1, dtype=np.float32) * total)[0])
    start = low * _HALF + r if r < n_low else int(_HIGH_OFFSET) + high * _HALF + r - n_low
    return np.array([_SELECT[start]], dtype=np.int64)


def sample_mask(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of a boolean mask `(n, NUM_ACTIONS)`."""
    return sample_bits(pack_mask(mask), rng)
