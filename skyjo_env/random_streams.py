"""Per-game counter-based random streams.

Like pgx's per-game PRNG keys, every game carries a 64-bit key (drawn from the engine's seeded
`numpy.random.Generator` when the game starts) and a counter of the shuffles it has made. Each
shuffle is a pure function of (key, counter), so a game exported mid-way and imported elsewhere
shuffles exactly as it would have, whatever batch it sits in.

A shuffle sorts 32-bit words whose high 24 bits are hashed and whose low 8 bits are the card, so
the sort yields the shuffled cards without an argsort. Two positions get the same 24-bit hash with
probability about 7e-4 per 150-card shuffle; such a pair comes out lower card first.
"""

from __future__ import annotations

import numpy as np

_U32 = np.uint32
_GOLDEN = _U32(0x9E3779B9)
_COUNTER_MUL = _U32(0x85EBCA6B)
_HIGH24 = _U32(0xFFFFFF00)


def mix32(x: np.ndarray) -> np.ndarray:
    """The 'lowbias32' integer hash (C. Wellons): a bijective avalanche mix of uint32, in place."""
    x ^= x >> _U32(16)
    x *= _U32(0x7FEB352D)
    x ^= x >> _U32(15)
    x *= _U32(0x846CA68B)
    x ^= x >> _U32(16)
    return x


def shuffle_seeds(keys: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """One uint32 seed per game from its key `(n, 2) uint32` and shuffle counter `(n,)`."""
    x = mix32(keys[:, 0] ^ (counters.astype(_U32) * _COUNTER_MUL))
    x ^= keys[:, 1]
    return mix32(x)


def shuffle(seeds: np.ndarray, codes: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Shuffle byte codes (0..254), one row per seed: `(n, L)` or `(L,)` codes -> `(n, L)` uint8.

    Each code is tagged with 24 hashed bits of (seed, position) and the tagged words are sorted,
    so the codes come out in a random order without an argsort. If `valid` (`(n,)` ints) is
    given, row `i` shuffles only its first `valid[i]` codes; the rest come out as 255.
    """
    length = codes.shape[-1]
    words = seeds[:, None] + np.arange(length, dtype=_U32) * _GOLDEN
    # Two multiply-xorshift rounds of lowbias32; the last xorshift is skipped because only the
    # high 24 bits are used and it does not change them.
    words ^= words >> _U32(16)
    words *= _U32(0x7FEB352D)
    words ^= words >> _U32(15)
    words *= _U32(0x846CA68B)
    words &= _HIGH24
    words |= codes
    if valid is not None:
        words[np.arange(length)[None, :] >= valid[:, None]] = _U32(0xFFFFFFFF)  # sorts last
    words.sort(axis=1)
    return words.astype(np.uint8)  # the low 8 bits: the codes
