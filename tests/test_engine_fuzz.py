"""Fuzz: batches of random legal games for every player count and every option combination.

After every step the whole batch is checked (``invariants.check_invariants``) and so is the step's
report (``invariants.check_step_result``). Finished games are re-dealt (auto-reset) and counted:
each configuration plays for about as many steps as a typical random game lasts, which finishes
about two and a half thousand games in all. Games must finish within a bound and have a plausible number of rounds.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.rules import EPISODES, NEXT_STARTERS
from skyjo_env.sampling import sample_bits

from invariants import check_invariants, check_step_result

BATCH = 64
OPTIONS = list(itertools.product([True, False], [True, False], NEXT_STARTERS, EPISODES))
MAX_ROUNDS = 30  # random play scores about 100 points a round; 30 rounds under 100 is implausible


def typical_game_steps(players: int, episode: str) -> int:
    """Roughly the median number of actions in a random game (measured: 150..320 for games, 90..280 for rounds)."""
    return 30 * players + 60 if episode == "game" else 33 * players + 30


@pytest.mark.parametrize("players", range(2, 9))
@pytest.mark.parametrize(("column_rule", "at_final_reveal", "next_starter", "episode"), OPTIONS)
def test_random_games_keep_every_invariant(
    players: int, column_rule: bool, at_final_reveal: bool, next_starter: str, episode: str
) -> None:
    """R1..R20 invariants after every step of random games; games end, with plausible rounds and totals."""
    rules = Rules(
        num_players=players,
        column_rule=column_rule,
        column_rule_at_final_reveal=at_final_reveal,
        next_starter=next_starter,
        episode=episode,
    )
    seed = players * 100 + OPTIONS.index((column_rule, at_final_reveal, next_starter, episode))
    reward = "score" if next_starter == "round_ender" else "result"
    engine = SkyjoEngine(rules, BATCH, seed=seed)
    rng = np.random.default_rng(seed)
    rounds = np.zeros(BATCH, dtype=np.int64)
    finished = 0
    max_steps = 10 * typical_game_steps(players, episode)
    check_invariants(engine)
    for _ in range(typical_game_steps(players, episode)):
        totals = engine.totals.astype(np.int64)
        result = engine.step(sample_bits(engine.legal_bits(), rng))
        check_invariants(engine)
        check_step_result(engine, totals, result, reward)
        rounds += result.round_over
        done = result.game_over
        if done.any():
            assert (rounds[done] >= 1).all() and (rounds[done] <= MAX_ROUNDS).all()
            if episode == "round":
                assert (rounds[done] == 1).all()
            assert (engine.steps[done] == 0).all() and (engine.totals[done] == 0).all()  # re-dealt
            finished += int(done.sum())
            rounds[done] = 0
        assert engine.steps.max() < max_steps, "a random game does not end"
    assert finished >= BATCH // 8
