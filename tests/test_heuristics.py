"""Heuristic agents: legal, observation-only, batch-independent, sensible in set positions, and
ordered random < threshold < counting in strength."""

from __future__ import annotations

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine, agents
from skyjo_env.actions import DRAW, FLIP, REPLACE, TAKE
from skyjo_env.agents.columns import ColumnModel
from skyjo_env.agents.view import VALUES, decode
from skyjo_env.cards import COUNTS, MIN_VALUE, SLOT_FLAGS
from skyjo_env.evaluation.tournament import run_tournament
from skyjo_env.observation import layout, observe, size
from skyjo_env.sampling import sample_mask

HEURISTICS = ("threshold", "counting")
PHASES = {"setup": 0, "choose": 1, "drawn": 2, "taken": 3}
H = None  # a face-down slot in a grid written for make_obs
X = "x"  # a removed slot


def make_obs(grids, discard, phase, held=None, round_ending=False) -> np.ndarray:
    """One observation (seat 0's view) written from public facts; grids list 12 entries per seat
    (a value, ``H`` face down or ``X`` removed), seat 0 first."""
    P = len(grids)
    L = layout(P)
    obs = np.zeros(size(P), dtype=np.float32)
    unseen = COUNTS.astype(np.float32).copy()
    for r, grid in enumerate(grids):
        block = obs[L[f"grid_{r}"]]
        for k, card in enumerate(grid):
            if card is H:
                block[12 + k] = 1
            elif card == X:
                block[24 + k] = 1
            else:
                block[k] = card / 12
                unseen[card - MIN_VALUE] -= 1
    unseen[discard - MIN_VALUE] -= 1
    obs[L["discard_top"].start + discard - MIN_VALUE] = 1
    if held is not None:
        obs[L["held"].start + held - MIN_VALUE] = 1
        obs[L["held_source"].start + (phase == "taken")] = 1
        if phase == "drawn":
            unseen[held - MIN_VALUE] -= 1
    obs[L["phase"].start + PHASES[phase]] = 1
    obs[L["unseen"]] = unseen / COUNTS
    obs[L["draw_size"]] = 0.5
    obs[L["to_act"]] = 1
    obs[L["round_ending"]] = round_ending
    return obs[None, :]


def legal_for(obs: np.ndarray) -> np.ndarray:
    """The legal mask of a hand-made observation: phase and own face-down / removed slots."""
    view = decode(obs)
    mask = np.zeros((1, 26), dtype=bool)
    phase = int(view.phase[0])
    hidden, present = view.hidden[0, 0], ~view.removed[0, 0]
    if phase == 0:
        mask[0, FLIP:] = hidden
    elif phase == 1:
        mask[0, [DRAW, TAKE]] = True
    else:
        mask[0, REPLACE:FLIP] = present
        if phase == 2:
            mask[0, FLIP:] = hidden
    return mask


def act(name: str, obs: np.ndarray, **kwargs) -> int:
    return int(agents.make(name, **kwargs)(obs, legal_for(obs))[0])


def random_states(players: int, games: int = 48, steps: int = 120, seed: int = 0):
    """Yield (engine, games, observations, masks) along games where random, threshold and counting
    players take turns at random, so that rounds end and restart (auto-reset) many times."""
    rng = np.random.default_rng(seed)
    engine = SkyjoEngine(Rules(num_players=players), games, seed=seed)
    pool = [agents.make("random", seed=seed), agents.make("threshold"), agents.make("counting")]
    everyone = np.arange(games)
    for _ in range(steps):
        obs = observe(engine, engine.current, everyone)
        masks = engine.legal_mask()
        yield engine, everyone, obs, masks
        who = rng.integers(len(pool), size=games)
        actions = np.empty(games, dtype=np.int64)
        for i, agent in enumerate(pool):
            sel = who == i
            if sel.any():
                actions[sel] = agent(obs[sel], masks[sel])
        engine.step(actions)


@pytest.mark.parametrize("players", range(2, 9))
def test_heuristics_choose_legal_actions_in_every_phase(players):
    policies = [agents.make(name) for name in HEURISTICS]
    seen_phases = set()
    for engine, _, obs, masks in random_states(players, steps=100 if players > 4 else 160, seed=players):
        seen_phases.update(engine.phase.tolist())
        for policy in policies:
            actions = policy(obs, masks)
            assert actions.shape == (len(obs),)
            assert masks[np.arange(len(obs)), actions].all(), policy.name
    assert seen_phases >= {0, 1, 2, 3}


def test_heuristics_are_deterministic_and_batch_independent():
    states = list(random_states(3, games=32, steps=60, seed=5))
    obs = np.concatenate([s[2] for s in states])
    masks = np.concatenate([s[3] for s in states])
    order = np.random.default_rng(1).permutation(len(obs))
    for name in HEURISTICS:
        policy = agents.make(name)
        actions = policy(obs, masks)
        np.testing.assert_array_equal(policy(obs, masks), actions)
        np.testing.assert_array_equal(policy(obs[order], masks[order]), actions[order])
        alone = [int(policy(obs[i : i + 1], masks[i : i + 1])[0]) for i in range(0, len(obs), 97)]
        assert alone == actions[::97].tolist()


def test_hidden_cards_and_draw_order_do_not_change_the_action():
    """Two games equal in everything public but their face-down cards and draw pile give one
    observation, hence one action (the agents see nothing else)."""
    engine = SkyjoEngine(Rules(num_players=2), 2, seed=3, auto_reset=False)
    walker = agents.make("counting")
    for _ in range(30):
        engine.step(walker(observe(engine, engine.current[:1], [0]), engine.legal_mask([0])), [0])
    engine.import_game(1, engine.export_game(0))
    rng = np.random.default_rng(0)
    seat = int(engine.current[1])
    down = np.flatnonzero(~SLOT_FLAGS[engine.face_up[1, seat]])
    assert down.size >= 2
    engine.values[1, seat, down] = (engine.values[1, seat, rng.permutation(down)] + 5) % 13  # other cards
    n = int(engine.draw_size[1])
    engine.draw_pile[1, :n] = engine.draw_pile[1, rng.permutation(n)]
    assert not np.array_equal(engine.values[0], engine.values[1])
    obs = observe(engine, engine.current, [0, 1])
    np.testing.assert_array_equal(obs[0], obs[1])
    masks = engine.legal_mask()
    for name in HEURISTICS:
        actions = agents.make(name)(obs, masks)
        assert actions[0] == actions[1]


def test_decode_reads_the_public_state():
    engine = SkyjoEngine(Rules(num_players=3), 16, seed=2)
    rng = np.random.default_rng(0)
    for _ in range(40):
        engine.step(sample_mask(engine.legal_mask(), rng))
    view = decode(observe(engine, engine.current))
    seat = engine.current.astype(int)
    games = np.arange(16)
    up = SLOT_FLAGS[engine.face_up[games, seat]] & ~SLOT_FLAGS[engine.removed[games, seat]]
    np.testing.assert_array_equal(view.hidden[:, 0], ~SLOT_FLAGS[engine.face_up[games, seat]])
    np.testing.assert_array_equal(view.values[:, 0], np.where(up, engine.values[games, seat], 0))
    np.testing.assert_array_equal(view.discard, engine.discard_pile[games, engine.discard_size - 1])
    np.testing.assert_array_equal(view.phase, engine.phase)
    holding = engine.phase >= 2
    np.testing.assert_array_equal(view.held[holding], engine.held[holding])


def test_column_model_tables_agree_with_single_values():
    states = list(random_states(2, games=64, steps=80, seed=9))
    view = decode(np.concatenate([s[2] for s in states]))
    n = view.phase.size
    p = view.unseen / view.unseen.sum(axis=1, keepdims=True)
    rng = np.random.default_rng(0)
    for beta in (0.0, 4.0):
        model = ColumnModel(view.values[:, 0], view.hidden[:, 0], view.removed[:, 0], p, np.full(n, beta, np.float32))
        brute = np.stack([model.replace_deltas(np.full(n, x)) for x in VALUES], axis=2)  # (n, 12, 15)
        slot_cost = rng.random((n, 12), dtype=np.float32)
        penalty_slot = np.where(rng.random(n) < 0.3, rng.integers(0, 12, n), -1)
        penalty = rng.random((n, 15), dtype=np.float32) * 5
        expected = brute + slot_cost[:, :, None]
        rows = np.flatnonzero(penalty_slot >= 0)
        expected[rows, penalty_slot[rows]] += penalty[rows]
        got = model.best_replacements(np.arange(n), slot_cost, penalty_slot, penalty)
        np.testing.assert_allclose(got, expected.min(axis=1), atol=1e-4)


# ---------------------------------------------------------------- set positions
OPPONENT = [5, H, H, H, H, 6, H, H, H, H, H, H]


def test_counting_completes_a_column():
    own = [10, 2, H, H, 10, 3, H, H, 7, 1, H, H]  # column 0: 10, 10, 7
    assert act("counting", make_obs([own, OPPONENT], discard=4, phase="drawn", held=10)) == REPLACE + 8


def test_counting_takes_a_low_discard_and_replaces_its_worst_card():
    own = [12, 2, H, H, 1, 3, H, H, 9, 1, H, H]
    obs = make_obs([own, OPPONENT], discard=-2, phase="choose")
    assert act("counting", obs) == TAKE
    assert act("counting", make_obs([own, OPPONENT], discard=-2, phase="taken", held=-2)) == REPLACE + 0


def test_counting_does_not_end_a_round_it_would_lose():
    """One face-down card left, 30 points showing against an opponent showing 2: turning it up
    would end the round and double the score (R17), so it swaps a face-up card instead."""
    own = [4, 3, 2, 3, 3, 2, 4, 1, 3, 2, 3, H]
    opponent = [0, 0, 1, H, 0, 1, -1, 0, 1, 0, 0, -1]
    obs = make_obs([own, opponent], discard=9, phase="drawn", held=5)
    action = act("counting", obs)
    assert REPLACE <= action < REPLACE + 11  # a face-up slot, not the last face-down one (11)


def test_counting_ends_a_round_it_wins():
    own = [0, 1, -1, 0, 0, 1, -1, 0, 1, 0, 0, H]
    opponent = [9, 10, H, H, 8, H, H, H, 11, H, H, H]
    obs = make_obs([own, opponent], discard=9, phase="drawn", held=0)
    assert act("counting", obs) == REPLACE + 11


def test_counting_plays_its_last_turn_for_its_own_score():
    """A face-up pair of 12s (column 0) is worth keeping while the round goes on (a third 12
    removes 34 points), so a 0 replaces the 10 beside it; on its last turn (another player ended
    the round) the pair has no future and the 0 replaces a 12."""
    own = [12, 1, H, H, 12, 2, H, H, 10, 1, H, H]
    going_on = make_obs([own, OPPONENT], discard=0, phase="taken", held=0)
    assert act("counting", going_on) == REPLACE + 8
    last_turn = make_obs([own, OPPONENT], discard=0, phase="taken", held=0, round_ending=True)
    assert act("counting", last_turn) in (REPLACE + 0, REPLACE + 4)


def test_counting_setup_flips_two_columns_of_the_top_row():
    grid = [H] * 12
    assert act("counting", make_obs([grid, grid], discard=3, phase="setup")) == FLIP + 0
    grid = [7] + [H] * 11
    assert act("counting", make_obs([grid, [H] * 12], discard=3, phase="setup")) == FLIP + 1


def test_threshold_rules():
    own = [9, 2, H, H, 1, 3, H, H, 11, 1, H, H]
    assert act("threshold", make_obs([own, OPPONENT], discard=3, phase="choose")) == TAKE
    assert act("threshold", make_obs([own, OPPONENT], discard=4, phase="choose")) == DRAW
    # keeps a low card over its highest face-up card, else in its first face-down slot
    assert act("threshold", make_obs([own, OPPONENT], discard=4, phase="drawn", held=4)) == REPLACE + 8
    low = [1, 2, H, H, 1, 3, H, H, 2, 1, H, H]
    assert act("threshold", make_obs([low, OPPONENT], discard=4, phase="drawn", held=4)) == REPLACE + 2
    # a high drawn card is discarded and the first face-down slot turned up
    assert act("threshold", make_obs([own, OPPONENT], discard=4, phase="drawn", held=10)) == FLIP + 2


# ---------------------------------------------------------------- registry
def test_registry_builds_by_name_and_rejects_unknown_names():
    assert {"random", "threshold", "counting"} <= set(agents.names())
    assert isinstance(agents.make("counting"), agents.CountingPolicy)
    assert agents.make("counting", pair_weight=2.0).pair_weight == 2.0
    assert isinstance(agents.make("threshold", seed=3), agents.ThresholdPolicy)  # seed ignored: deterministic
    with pytest.raises(ValueError, match="unknown agent 'nope'; known agents: .*counting.*random.*threshold"):
        agents.make("nope")
    with pytest.raises(ValueError, match="already registered"):
        agents.register("random", agents.RandomPolicy)


def test_registry_accepts_new_entries():
    class Fixed:
        name = "fixed-test"

        def __call__(self, observations, action_masks):
            return np.argmax(action_masks, axis=1)

    agents.register("fixed-test", Fixed)
    try:
        assert agents.make("fixed-test").name == "fixed-test"
        assert "fixed-test" in agents.names()
    finally:
        agents.unregister("fixed-test")


def test_random_agents_with_one_seed_agree():
    states = list(random_states(2, games=16, steps=10))
    obs, masks = states[-1][2], states[-1][3]
    a, b = agents.make("random", seed=4), agents.make("random", seed=4)
    np.testing.assert_array_equal(a(obs, masks), b(obs, masks))


# ---------------------------------------------------------------- strength
def test_strength_order_random_threshold_counting():
    """In a 2-player pool (every pairing, seats rotated) the 95% win-rate intervals are disjoint
    and in order. Typical rates: random ~0.00, threshold ~0.52, counting ~0.98; 240 games put each
    interval within about +-0.07 of its rate."""
    result = run_tournament(
        [agents.make("random", seed=1), agents.make("threshold"), agents.make("counting")],
        players=2, games=240, seed=3, progress=False,
    )  # fmt: skip
    rnd, thr, cnt = (result.by_name(n) for n in ("random", "threshold", "counting"))
    assert rnd.win_ci[1] < thr.win_ci[0]
    assert thr.win_ci[1] < cnt.win_ci[0]
    assert rnd.mean_round_score > thr.mean_round_score > cnt.mean_round_score
    assert rnd.rating_mu < thr.rating_mu < cnt.rating_mu


def test_counting_beats_threshold_head_to_head():
    result = run_tournament([agents.make("threshold"), agents.make("counting")], 2, 200, seed=4, progress=False)
    assert result.by_name("counting").win_ci[0] > 0.8  # typically 0.94
