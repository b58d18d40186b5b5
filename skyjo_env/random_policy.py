"""The uniformly random legal player."""

from __future__ import annotations

import numpy as np

from skyjo_env.sampling import sample_mask


class RandomPolicy:
    """Picks a legal action uniformly at random, in batch."""

    name = "random"
    observes = False  #: needs only the masks: environments may pass an empty observation array

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return sample_mask(action_masks, self.rng)
