"""The vector env reuses empty info dicts between steps; what it hands out is never changed later."""

from __future__ import annotations

import numpy as np

from skyjo_env.sampling import sample_mask
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv


def steps(env: SkyjoSB3VecEnv, count: int, seed: int = 0):
    """Random legal learner steps; yields (dones, infos)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        _, _, dones, infos = env.step(sample_mask(env.action_masks(), rng))
        yield dones, infos


def test_infos_are_empty_except_for_games_that_ended() -> None:
    """Every step: a fresh list, one dict per game, empty unless the game is reported done."""
    env = SkyjoSB3VecEnv(16, seed=0)
    env.reset()
    previous = None
    for dones, infos in steps(env, 300):
        assert isinstance(infos, list) and len(infos) == 16 and infos is not previous
        for g, info in enumerate(infos):
            assert bool(info) == bool(dones[g])
            if dones[g]:
                assert "terminal_observation" in info and "opponent" in info
        previous = infos


def test_a_callers_writes_do_not_leak_into_later_steps() -> None:
    """A caller may write into any info dict (as wrappers do): the next step's dicts are still empty."""
    env = SkyjoSB3VecEnv(8, seed=0)
    env.reset()
    for dones, infos in steps(env, 200):
        assert all(not info for g, info in enumerate(infos) if not dones[g])
        for info in infos:
            info["seen_by_caller"] = True


def test_infos_handed_out_are_not_changed_by_later_steps() -> None:
    """The dicts of done games (and the empty ones) keep their content after later steps."""
    env = SkyjoSB3VecEnv(8, seed=0)
    env.reset()
    kept = []
    for _dones, infos in steps(env, 400):
        kept.append(([dict(info) for info in infos], infos))
    for snapshot, infos in kept:
        for before, info in zip(snapshot, infos):
            assert info.keys() == before.keys()
            for key, value in before.items():
                assert info[key] is value
