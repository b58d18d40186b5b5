"""Array helpers that are not rules: rows as single items, reductions over seats, cheap tests.

numpy's per-call cost dominates the engine's small batches and its many short rows; these helpers
move a row of a game as one item and reduce over a handful of seats by a loop, which is several
times faster than the general operations. Nothing here knows Skyjo.
"""

from __future__ import annotations

import numpy as np


def row_items(rows: np.ndarray) -> np.ndarray:
    """A 2-D array with contiguous rows as a 1-D array of one bytes item per row, sharing memory."""
    return rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).reshape(rows.shape[0])


def row_item(row: np.ndarray) -> np.void:
    """One contiguous row as a bytes item, to fill rows of `row_items` views with."""
    return row_items(row.reshape(1, -1))[0]


def over_seats(ufunc: np.ufunc, x: np.ndarray) -> np.ndarray:
    """`ufunc.reduce(x, axis=1)` of `(n, P)` arrays by a loop over seats: numpy reduces short rows slowly."""
    out = ufunc(x[:, 0], x[:, 1])
    for p in range(2, x.shape[1]):
        ufunc(out, x[:, p], out=out)
    return out


def any_set(flags: np.ndarray) -> bool:
    """`flags.any()` for the engine's 1-D arrays, a few times cheaper for small batches."""
    return np.count_nonzero(flags) > 0  # type: ignore[return-value]  # count_nonzero of a whole array is an int


def all_set(flags: np.ndarray) -> bool:
    """`flags.all()` (nonzero everywhere) for the engine's 1-D arrays, cheaper for small batches."""
    return np.count_nonzero(flags) == flags.size
