"""Confidence intervals for tournament figures."""

from __future__ import annotations

import math

import numpy as np

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials >= 1, got {successes}/{trials}")
    rate = successes / trials
    z2 = z * z
    centre = (rate + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(rate * (1 - rate) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends, where rounding strays
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def mean_interval(samples: np.ndarray, z: float = Z95) -> tuple[float, float]:
    """Normal-approximation interval for the mean of `samples` (95% by default)."""
    x = np.asarray(samples, dtype=np.float64)
    if x.size < 2:
        raise ValueError(f"need at least 2 samples for an interval, got {x.size}")
    half = z * x.std(ddof=1) / math.sqrt(x.size)
    m = float(x.mean())
    return m - half, m + half
