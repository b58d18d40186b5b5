"""Uniform sampling of legal actions from packed masks, without a Python loop over games.

A legal mask of ``NUM_ACTIONS`` (26) bits is split into two 13-bit halves; precomputed tables give
each half's popcount and the position of its r-th set bit, so sampling costs a few array lookups.
"""

from __future__ import annotations

import numpy as np

from skyjo_env.actions import NUM_ACTIONS

_HALF = 13
_HALF_MASK = (1 << _HALF) - 1


def _tables() -> tuple[np.ndarray, np.ndarray]:
    masks = np.arange(1 << _HALF)
    bits = (masks[:, None] >> np.arange(_HALF)) & 1
    popcount = bits.sum(axis=1).astype(np.int64)
    select = np.zeros((1 << _HALF, _HALF), dtype=np.int64)
    rank = np.cumsum(bits, axis=1) - 1  # rank of each set bit
    rows, cols = np.nonzero(bits)
    select[rows, rank[rows, cols]] = cols
    return popcount, select


_POPCOUNT, _SELECT = _tables()
_SELECT_FLAT = _SELECT.reshape(-1)  # r-th set bit of half h: _SELECT_FLAT[h * 13 + r]


def pack_mask(mask: np.ndarray) -> np.ndarray:
    """Boolean masks ``(n, NUM_ACTIONS)`` to uint32 bit sets ``(n,)`` (bit a = action a)."""
    packed = np.packbits(np.asarray(mask, dtype=bool), axis=1, bitorder="little")
    padded = np.zeros((packed.shape[0], 4), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view("<u4")[:, 0]


def unpack_bits(bits: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pack_mask`: uint32 bit sets ``(n,)`` to booleans ``(n, NUM_ACTIONS)``."""
    as_bytes = np.ascontiguousarray(bits, dtype="<u4").view(np.uint8).reshape(-1, 4)
    return np.unpackbits(as_bytes, axis=1, count=NUM_ACTIONS, bitorder="little").view(bool)


def sample_bits(bits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random set bit of each uint32 in ``bits`` (each must have one set)."""
    bits = np.asarray(bits, dtype=np.int64)
    low = bits & _HALF_MASK
    high = bits >> _HALF
    n_low = _POPCOUNT[low]
    total = n_low + _POPCOUNT[high]
    if np.any(total == 0):
        raise ValueError(f"no legal action in game(s) {np.flatnonzero(total == 0).tolist()}")
    r = (rng.random(bits.shape[0]) * total).astype(np.int64)
    in_high = r >= n_low
    # Index the half that holds the r-th bit: (high, r - n_low) + 13 offset, or (low, r).
    half = np.where(in_high, high, low)
    rank = r - np.where(in_high, n_low, 0)
    return _SELECT_FLAT[half * _HALF + rank] + _HALF * in_high


def sample_mask(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of a boolean mask ``(n, NUM_ACTIONS)``."""
    return sample_bits(pack_mask(mask), rng)
