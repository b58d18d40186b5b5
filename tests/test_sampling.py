"""Sampling legal actions from packed masks: the batched path and the one-row path agree."""

from __future__ import annotations

import numpy as np
import pytest

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.sampling import pack_mask, sample_bits, sample_mask, unpack_bits


def random_bits(n: int, seed: int = 0) -> np.ndarray:
    """``n`` non-empty 26-bit sets: random ones, single bits, and the full set."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(1, 1 << NUM_ACTIONS, size=n).astype(np.uint32)
    bits[:NUM_ACTIONS] = 1 << np.arange(NUM_ACTIONS)
    bits[NUM_ACTIONS] = (1 << NUM_ACTIONS) - 1
    return bits


def test_one_row_at_a_time_samples_what_the_batch_samples() -> None:
    """The fast path for a batch of one draws the same number and picks the same action."""
    bits = random_bits(5000)
    batched = sample_bits(bits, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    one_by_one = np.concatenate([sample_bits(bits[i : i + 1], rng) for i in range(bits.size)])
    assert one_by_one.dtype == batched.dtype == np.int64
    np.testing.assert_array_equal(one_by_one, batched)


def test_samples_are_legal_and_cover_every_legal_action() -> None:
    """Every sampled action is set in its mask; over many draws every set bit comes up."""
    mask = unpack_bits(np.array([0b10_0000_0000_0100_0000_0000_0011], dtype=np.uint32))[0]
    rng = np.random.default_rng(0)
    seen = np.concatenate([sample_mask(mask[None], rng) for _ in range(400)])
    np.testing.assert_array_equal(np.unique(seen), np.flatnonzero(mask))
    assert pack_mask(mask[None])[0] == 0b10_0000_0000_0100_0000_0000_0011


def test_one_row_without_a_legal_action_is_refused() -> None:
    """A single empty mask is refused like a batched one."""
    with pytest.raises(ValueError, match=r"no legal action in game\(s\) \[0\]"):
        sample_bits(np.zeros(1, dtype=np.uint32), np.random.default_rng(0))
