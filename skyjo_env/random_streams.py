"""Per-game counter-based random streams.

Like pgx's per-game PRNG keys, every game carries a 64-bit key (drawn from the engine's seeded
``numpy.random.Generator`` when the game starts) and a counter of the shuffles it has made. Each
shuffle is a pure function of (key, counter), so a game exported mid-way and imported elsewhere
shuffles exactly as it would have, whatever batch it sits in.

A shuffle sorts 32-bit words whose high 24 bits are hashed and whose low 8 bits are the position,
so the sort yields a permutation without an argsort. Two positions get the same 24-bit hash with
probability about 7e-4 per 150-card shuffle; such a pair keeps its deck order.
"""

from __future__ import annotations

import numpy as np

_U32 = np.uint32
_GOLDEN = _U32(0x9E3779B9)
_COUNTER_MUL = _U32(0x85EBCA6B)
_HIGH24 = _U32(0xFFFFFF00)
_LOW8 = _U32(0xFF)


def mix32(x: np.ndarray) -> np.ndarray:
    """The 'lowbias32' integer hash (C. Wellons): a bijective avalanche mix of uint32."""
    x = x ^ (x >> _U32(16))
    x = x * _U32(0x7FEB352D)
    x = x ^ (x >> _U32(15))
    x = x * _U32(0x846CA68B)
    return x ^ (x >> _U32(16))


def shuffle_seeds(keys: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """One uint32 seed per game from its key ``(n, 2) uint32`` and shuffle counter ``(n,)``."""
    with np.errstate(over="ignore"):
        return mix32(mix32(keys[:, 0] ^ (counters.astype(_U32) * _COUNTER_MUL)) ^ keys[:, 1])


def permutations(seeds: np.ndarray, length: int, valid: np.ndarray | None = None) -> np.ndarray:
    """Random permutations of ``range(length)`` (``length <= 256``), one row per seed.

    If ``valid`` (``(n,)`` ints) is given, row ``i`` shuffles only its first ``valid[i]``
    positions among themselves; the rest stay in place after them.
    """
    positions = np.arange(length, dtype=_U32)
    with np.errstate(over="ignore"):
        words = mix32(seeds[:, None] + positions * _GOLDEN) & _HIGH24
    words |= positions
    if valid is not None:
        words[positions[None, :] >= valid[:, None]] = _HIGH24
        words |= positions  # keeps the tail in place, behind every valid word
    words.sort(axis=1)
    return (words & _LOW8).astype(np.intp)
