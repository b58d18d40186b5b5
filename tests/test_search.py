"""The search agent: legal play at every table size, reproducibility, no peeking, and a gain over its base."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine, agents
from skyjo_env.actions import FLIP, REPLACE, TAKE
from skyjo_env.agents import value_net
from skyjo_env.agents.search import NETWORK_HORIZON, SearchPolicy, chosen, expected_results, lower_bounds, positions
from skyjo_env.agents.value_net import FEATURES, OUTPUTS, ValueNetwork
from skyjo_env.agents.view import decode
from skyjo_env.cards import MIN_VALUE, NUM_VALUES, SLOT_FLAGS
from skyjo_env.evaluation.tournament import run_tournament
from skyjo_env.observation import observe
from skyjo_env.phases import OVER, SETUP


def midgame(rules: Rules, games: int, steps: int, seed: int) -> SkyjoEngine:
    """``games`` games played by counting for ``steps`` actions (no game over by then)."""
    engine = SkyjoEngine(rules, games, seed=seed, auto_reset=False)
    counting = agents.make("counting", rules=rules)
    for _ in range(steps):
        engine.step(counting(observe(engine, engine.current), engine.legal_mask()))
    assert (engine.phase != OVER).all()
    return engine


def to_act(engine: SkyjoEngine) -> tuple[np.ndarray, np.ndarray]:
    """Observations and legal masks of the seats to act in every game."""
    return observe(engine, engine.current), engine.legal_mask()


@pytest.mark.parametrize(("players", "horizon"), [(2, None), (3, None), (5, 12), (8, 12)])
def test_search_plays_only_legal_actions(players: int, horizon: int | None) -> None:
    """Every seat searches (rollouts to the round's end, R15, or ``horizon`` steps) and every action is
    legal (the engine checks)."""
    rules = Rules(num_players=players)
    engine = SkyjoEngine(rules, 3, seed=players, auto_reset=False)
    search = agents.make("search", rules=rules, seed=0, samples=2, top=3, horizon=horizon)
    for _ in range(2 * players + 12):
        obs, masks = to_act(engine)
        actions = search(obs, masks)
        assert masks[np.arange(3), actions].all()
        engine.step(actions)


def test_search_is_reproducible_with_a_seed() -> None:
    rules = Rules()
    obs, masks = to_act(midgame(rules, 16, 30, seed=1))
    first, second = (agents.make("search", rules=rules, seed=7, samples=8) for _ in range(2))
    assert np.array_equal(first(obs, masks), second(obs, masks))
    assert np.array_equal(first(obs, masks), second(obs, masks))  # the streams advance alike


def with_unseen_cards_rearranged(engine: SkyjoEngine, seed: int) -> SkyjoEngine:
    """A copy of ``engine`` whose face-down cards and draw pile are shuffled together, the rest kept."""
    rng = np.random.default_rng(seed)
    copy = SkyjoEngine(engine.rules, engine.batch_size, seed=seed, auto_reset=False)
    for game in range(engine.batch_size):
        state = engine.export_game(game)
        values = np.array(state["values"])
        down = ~np.array(state["face_up"])
        unseen = rng.permutation(np.concatenate([values[down], state["draw_pile"]]))
        values[down] = unseen[: down.sum()]
        copy.import_game(game, {**state, "values": values.tolist(), "draw_pile": unseen[down.sum() :].tolist()})
    return copy


def test_search_does_not_peek_at_unseen_cards() -> None:
    """Two positions that differ only in the face-down cards and the draw pile's order give the same
    decisions for a fixed seed (RULES.md, what a player can observe)."""
    rules = Rules()
    engine = midgame(rules, 16, 40, seed=2)
    other = with_unseen_cards_rearranged(engine, seed=3)
    assert not np.array_equal(other.values, engine.values)
    (obs, masks), (other_obs, other_masks) = to_act(engine), to_act(other)
    assert np.array_equal(obs, other_obs) and np.array_equal(masks, other_masks)
    search, twin = (agents.make("search", rules=rules, seed=5, samples=8) for _ in range(2))
    assert np.array_equal(search(obs, masks), twin(other_obs, other_masks))


@pytest.mark.parametrize("players", [2, 4, 8])
def test_samples_hold_the_observed_cards_and_deal_exactly_the_unseen_ones(players: int) -> None:
    """Per sample: the face-down cards and the draw pile are the observation's unseen cards (R1
    counts), and the sampled position, seen from its seat 0, is the observation itself."""
    rules = Rules(num_players=players)
    engine = midgame(rules, 8, 6 * players + 20, seed=players)
    playing = np.flatnonzero(engine.phase != SETUP)
    obs = observe(engine, engine.current[playing], playing)
    view = decode(obs)
    samples = 4
    state = positions(view, rules, samples, np.random.default_rng(0))
    sampled = SkyjoEngine.from_states(rules, state)
    assert np.array_equal(observe(sampled, 0), np.repeat(obs, samples, axis=0))
    for row in range(sampled.batch_size):
        down = ~SLOT_FLAGS[sampled.face_up[row]]
        cards = np.concatenate([sampled.values[row][down], sampled.draw_pile[row, : sampled.draw_size[row]]])
        counts = np.bincount(cards.astype(np.int64) - MIN_VALUE, minlength=NUM_VALUES)
        assert np.array_equal(counts, view.unseen[row // samples])
    assert len({sampled.values[r].tobytes() for r in range(samples)}) > 1  # the samples differ


def test_search_improves_on_its_base_policy() -> None:
    """Over a random base, truncated rollouts valued by the expected grid scores win clearly: ten
    one-round games (R19 option episode="round") against the base itself."""
    rules = Rules(episode="round")
    search = agents.make("search", rules=rules, seed=0, base="random", samples=4, top=26, margin=1.0, horizon=6)
    result = run_tournament([search, agents.make("random", rules=rules, seed=0)], 2, 10, rules=rules, progress=False)
    ours, base = result.by_name("search"), result.by_name("random")
    assert ours.win_rate >= 0.8
    assert ours.mean_round_score < base.mean_round_score - 20


@pytest.mark.parametrize(
    "options",
    [{"samples": 1}, {"top": 1}, {"horizon": 0}, {"samples": 2.5}, {"screen": 1}, {"screen": 4.0}, {"value": "lead"}],
    ids=lambda o: f"{next(iter(o))}={next(iter(o.values()))}",
)
def test_bad_parameters_are_refused(options: dict) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        SearchPolicy(**options)


@pytest.mark.parametrize("players", [2, 4, 7])
def test_the_default_base_is_the_shipped_network_for_the_table_size(players: int) -> None:
    """By default search rolls out ``ppo-{P}p`` (over it, search measured best; docs/agents/search.md);
    any spec may replace it."""
    rules = Rules(num_players=players)
    assert agents.make("search", rules=rules).base.name == f"ppo-{players}p"
    assert agents.make("search:base=counting", rules=rules).base.name == "counting"


@pytest.mark.parametrize(("players", "samples", "margin"), [(2, 32, 2.0), (3, 64, 1.5), (4, 64, 1.5), (8, 64, 1.5)])
def test_the_default_budget_grows_with_the_opponents(players: int, samples: int, margin: float) -> None:
    """By default 32 samples and a margin of 2 standard errors at 2 players, 64 and 1.5 from 3 players on
    (measured at 3, 4 and 6 players, docs/agents/search.md); either option may replace its default."""
    rules = Rules(num_players=players)
    search = agents.make("search:base=counting", rules=rules)
    assert (search.samples, search.margin) == (samples, margin)
    chosen_budget = agents.make("search:base=counting,samples=16,margin=3", rules=rules)
    assert (chosen_budget.samples, chosen_budget.margin) == (16, 3.0)


def test_a_network_base_offers_its_most_likely_actions() -> None:
    """A base without ``costs()`` (a PPO network) ranks its candidates by its logits: its choice,
    then the legal actions it rates most likely."""
    rules = Rules()
    engine = midgame(rules, 16, 9, seed=4)
    obs, masks = to_act(engine)
    search = SearchPolicy(base="ppo-2p", top=3, rules=rules, seed=0)
    choice = search.base(obs, masks)
    candidates = search.candidates(obs, masks, choice)
    logits = np.where(masks, search.base.logits(obs, masks), -np.inf)
    logits[np.arange(len(choice)), choice] = np.inf
    expected = np.argsort(-logits, axis=1, kind="stable")[:, :3]
    expected = np.where(np.take_along_axis(masks, expected, axis=1), expected, -1)
    np.testing.assert_array_equal(candidates, expected)
    assert (candidates[:, 0] == choice).all() and (candidates[:, 1] >= 0).any()


def stalling(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """A base that never ends a round: it takes the discard (R8) and swaps it into a face-up slot
    (R9), so no card is ever revealed (R15); the first legal action where it cannot."""
    up = ~decode(observations).hidden[:, 0]
    swap = action_masks[:, REPLACE:FLIP] & up
    return np.where(
        action_masks[:, TAKE],
        TAKE,
        np.where(swap.any(axis=1), REPLACE + swap.argmax(axis=1), action_masks.argmax(axis=1)),
    )


def test_rollouts_of_a_base_that_never_ends_a_round_stop() -> None:
    """Rollouts stop after ``ROLLOUT_STEPS_PER_SEAT`` per seat, valued like a horizon's: a search over
    a base whose rounds never end still decides, legally."""
    rules = Rules()
    engine = midgame(rules, 4, 9, seed=4)
    for _ in range(8):  # the stalling base plays both seats a while: the round stays open
        engine.step(stalling(*to_act(engine)))
    assert (engine.phase != SETUP).all()  # every game searches (setup flips are the base's)
    obs, masks = to_act(engine)
    search = SearchPolicy(base=stalling, rules=rules, seed=0, samples=2, top=2, screen=None, network=None)
    assert search.horizon is None
    actions = search(obs, masks)
    assert masks[np.arange(len(obs)), actions].all()


def rollout_rows(search: SearchPolicy, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, int]:
    """The actions of ``search`` and the rows its rollouts started."""
    started = []
    play = search.rollouts

    def counted(state: dict, first: np.ndarray) -> np.ndarray:
        started.append(len(first))
        return play(state, first)

    search.rollouts = counted  # type: ignore[method-assign]
    return search(obs, masks), sum(started)


def test_every_legal_candidate_is_played_in_every_sample_without_screening() -> None:
    """``screen=None``: one rollout per legal candidate and sample (none for the missing candidates of
    a decision with fewer legal actions than ``top``, e.g. take or draw, R8)."""
    rules = Rules()
    obs, masks = to_act(midgame(rules, 24, 30, seed=2))  # every game to choose: take or draw
    search = SearchPolicy(rules=rules, seed=0, samples=6, top=4, screen=None)
    searched = decode(obs).phase != SETUP
    candidates = search.candidates(obs, masks, search.base(obs, masks))[searched]
    _, rows = rollout_rows(search, obs, masks)
    legal = candidates >= 0
    assert rows == 6 * legal[legal[:, 1]].sum()
    assert (~legal).any()  # some decision had fewer legal actions than top


def test_screening_drops_candidates_the_first_samples_reject() -> None:
    """With ``screen``, the first samples are played by every candidate; those whose paired mean gain
    is clearly negative play no more, so fewer rollouts start; a decision either way is legal."""
    rules = Rules()
    obs, masks = to_act(midgame(rules, 24, 31, seed=2))
    full, full_rows = rollout_rows(SearchPolicy(rules=rules, seed=0, samples=16, screen=None), obs, masks)
    screened, screened_rows = rollout_rows(SearchPolicy(rules=rules, seed=0, samples=16, screen=4), obs, masks)
    assert screened_rows < full_rows
    assert masks[np.arange(len(obs)), screened].all() and masks[np.arange(len(obs)), full].all()


def test_rollout_values_hold_every_played_sample_and_decide_the_actions() -> None:
    """``rollout_values()``: a survivor of the screening has a value in every sample, a dropped
    candidate in its screening samples only, a missing one (-1) none; ``decide()`` plays, for the
    same seed, the same values' choice (the highest positive lower bound) and the base's elsewhere."""
    rules = Rules()
    obs, masks = to_act(midgame(rules, 24, 31, seed=2))
    v = decode(obs)
    rows = np.flatnonzero(v.phase != SETUP)
    first = SearchPolicy(rules=rules, seed=0, samples=16, screen=4)
    candidates = first.candidates(obs, masks, first.base(obs, masks))[rows]
    values, alive = first.rollout_values(v.take(rows), candidates)
    assert values.shape == (len(rows), 4, 16) and alive.shape == (len(rows), 4)
    assert not alive[candidates < 0].any() and (values[candidates < 0] == 0).all()
    dropped = (candidates >= 0) & ~alive
    assert dropped.any() and (values[dropped][:, 4:] == 0).all() and (values[dropped][:, :4] != 0).any()
    assert (values[alive][:, 4:] != 0).any()
    decided = SearchPolicy(rules=rules, seed=0, samples=16, screen=4).decide(obs, masks)
    assert np.array_equal(decided.rows, rows) and np.array_equal(decided.candidates[rows], candidates)
    assert np.array_equal(decided.values, values) and np.array_equal(decided.alive, alive)
    picked = chosen(lower_bounds(values, alive, first.margin))
    assert np.array_equal(decided.actions[rows], candidates[np.arange(len(rows)), picked])
    assert (picked > 0).any()  # search left the base somewhere
    others = np.setdiff1d(np.arange(len(obs)), rows)
    assert np.array_equal(decided.actions[others], decided.candidates[others, 0])


def test_the_base_choice_is_left_only_for_a_candidate_whose_lower_bound_is_positive() -> None:
    """Paired gains over the first candidate: a clear gain is played, a noisy or negative one is not."""
    clear = [[0.0] * 8, [3.0, 4.0] * 4, [1.0] * 8]  # candidate 1 gains 3 or 4 in every sample, candidate 2 gains 1
    noisy = [[0.0] * 8, [-20.0, 24.0] * 4, [-1.0] * 8]  # candidate 1: a mean gain of 2, a standard error of about 8
    values = np.array([clear, noisy])
    alive = np.ones((2, 3), dtype=bool)
    bounds = lower_bounds(values, alive, margin=2.0)
    assert bounds[:, 0].tolist() == [0.0, 0.0]
    assert bounds[0, 1] > 3.0 and bounds[1, 1] < 0 and bounds[1, 2] < 0
    assert chosen(bounds).tolist() == [1, 0]
    dropped = alive.copy()
    dropped[0, 1] = False  # a candidate dropped at the screening is never played
    assert chosen(lower_bounds(values, dropped, margin=2.0)).tolist() == [2, 0]


def test_expected_results_end_each_future_at_its_first_round_past_the_end_score() -> None:
    """R19: a future ends after the first round in which a total reaches ``end_score``; R20: the lowest
    total wins (+1, shared by a tie), the others share -1; a future that never ends counts after its
    last round."""
    totals = np.array([[10, 20, 30], [90, 80, 0], [0, 0, 0], [10, 10, 30]])
    ahead = np.array([[[5, 5, 70], [6, 60, 70]], [[5, 5, 50], [60, 60, 51]]], dtype=np.float32)  # (K=2, R=2, P=3)
    # row 0: the first future ends in its first round (15, 25, 100), the second after its last (70, 80, 81):
    #   seat 0 lowest in both
    # row 1: neither ends in its first round (95 is below 100); both end in their second, seat 2 lowest
    # row 2: neither ends; after the last round seat 0 is lowest in the first (6, 60, 70), seat 2 in the
    #   second (60, 60, 51)
    # row 3: seats 0 and 1 tie in both (15, 15, 100 and 70, 70, 81) and share the win
    np.testing.assert_allclose(expected_results(totals, 100, ahead), [1.0, -0.5, 0.25, 0.5])


def test_expected_results_favour_the_lower_total() -> None:
    """Over common futures, a lower total of one's own never lowers one's expected result, and a seat
    far ahead when the game is about to end (R19) almost surely wins (R20)."""
    search = SearchPolicy(base="counting", value="game", rules=Rules(num_players=4), seed=0)
    own = np.arange(0, 100, 5)
    totals = np.column_stack([own, np.full((len(own), 3), 60)])
    results = expected_results(totals, 100, search._ahead)
    assert (np.diff(results) <= 0).all() and results[0] > 0.5 and results[-1] < -0.25
    assert expected_results(np.array([[20, 95, 96, 97]]), 100, search._ahead)[0] > 0.9


@pytest.mark.parametrize("players", [2, 4])
def test_search_by_the_games_expected_result_plays_legally_and_reproducibly(players: int) -> None:
    """``value="game"``: rollouts that end a round without ending the game are valued by the game's
    expected result from the new totals; legal actions, the same for the same seed."""
    rules = Rules(num_players=players)
    obs, masks = to_act(midgame(rules, 8, 12 * players, seed=players))
    first, second = (SearchPolicy(base="counting", value="game", samples=4, rules=rules, seed=3) for _ in range(2))
    actions = first(obs, masks)
    assert masks[np.arange(len(obs)), actions].all()
    assert np.array_equal(actions, second(obs, masks))


class IllegalBase:
    """A base that plays an illegal action in every row."""

    name = "illegal-base"

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.argmin(action_masks, axis=1)


def test_a_base_that_plays_an_illegal_action_is_named() -> None:
    rules = Rules()
    obs, masks = to_act(midgame(rules, 4, 20, seed=6))
    with pytest.raises(ValueError, match=r"search's base 'illegal-base' chose illegal action \d+ \(row 0 of 4\)"):
        SearchPolicy(base=IllegalBase(), rules=rules, seed=0, samples=2)(obs, masks)


def test_rollouts_cut_at_the_horizon_are_valued_by_the_value_network_from_seat_0s_view() -> None:
    """With a `network`, a rollout stopped at `horizon` is worth the opponents' mean expected round score
    less seat 0's, as the network reads seat 0's observation (R16, R17) of the position reached."""
    rules = Rules(num_players=3)
    net = value_network()
    search = SearchPolicy(rules=rules, seed=0, samples=2, top=2, horizon=1, network=net)
    obs, masks = to_act(midgame(rules, 4, 12, seed=8))
    start = positions(decode(obs), rules, 1, np.random.default_rng(0))
    first = masks.argmax(axis=1)
    values = search.rollouts(start, first)
    engine = SkyjoEngine.from_states(rules, start)
    going = np.flatnonzero(~engine.step(first).round_over)
    assert going.size
    rounds = net.values(observe(engine, 0, going))[1][:, :3]
    assert np.allclose(values[going], rounds[:, 1:].mean(axis=1) - rounds[:, 0], atol=1e-4)
    plain = SearchPolicy(rules=rules, seed=0, samples=2, top=2, horizon=1)
    assert not np.allclose(plain.rollouts(start, first)[going], values[going])
    # Without a network every grid counts its face-down cards at the mean of the cards seat 0 has not seen.
    unseen = decode(observe(engine, 0, going)).unseen.astype(np.float64)
    mean = unseen @ np.arange(MIN_VALUE, MIN_VALUE + NUM_VALUES) / unseen.sum(axis=1)
    down, kept = ~SLOT_FLAGS[engine.face_up[going]], ~SLOT_FLAGS[engine.removed[going]]
    grids = (np.where(down, mean[:, None, None], engine.values[going]) * kept).sum(axis=2)
    assert np.allclose(plain.rollouts(start, first)[going], grids[:, 1:].mean(axis=1) - grids[:, 0], atol=1e-4)


def test_search_over_a_value_network_plays_legally_and_refuses_a_network_of_other_tables() -> None:
    rules = Rules(num_players=4)
    obs, masks = to_act(midgame(rules, 3, 10, seed=9))
    search = agents.make("search", rules=rules, seed=0, samples=2, top=3, horizon=4, network=value_network())
    assert masks[np.arange(len(obs)), search(obs, masks)].all()
    with pytest.raises(ValueError, match="trained for 2 players; this table has 4"):
        agents.make("search:network=value", rules=rules)


@pytest.mark.parametrize(("players", "shipped"), [(2, "value"), (3, None), (8, None)])
def test_by_default_rollouts_stop_after_8_steps_over_the_shipped_value_network_of_the_table(
    players: int, shipped: str | None
) -> None:
    """Where a value network is shipped for the table's size (2 players), search cuts its rollouts after
    `NETWORK_HORIZON` steps and values them by it (R16, R17); elsewhere, and with `network=none`, rollouts
    play to the round's end (R15). Either option may be given alone."""
    rules = Rules(num_players=players)
    assert value_net.for_table(players) == shipped
    search = agents.make("search:base=counting", rules=rules)
    if shipped is None:
        assert (search.network, search.horizon) == (None, None)
    else:
        assert search.horizon == NETWORK_HORIZON == 8
        assert np.array_equal(search.network.weights[0][0], value_net.load(shipped).weights[0][0])
    off = agents.make("search:base=counting,network=none", rules=rules)
    assert (off.network, off.horizon) == (None, None)
    assert agents.make("search:base=counting,network=none,horizon=6", rules=rules).horizon == 6
    longer = agents.make("search:base=counting,horizon=12", rules=rules)
    assert (longer.horizon, longer.network is None) == (12, shipped is None)
    to_the_end = agents.make("search:base=counting,horizon=none", rules=rules)
    assert (to_the_end.horizon, to_the_end.network is None) == (None, shipped is None)
    chosen_network = SearchPolicy(base="counting", network=value_network(), rules=rules)
    assert chosen_network.horizon == NETWORK_HORIZON
    with pytest.raises(
        ValueError, match="horizon='eight' is not allowed; use a positive integer, None .* or 'default'"
    ):
        SearchPolicy(base="counting", horizon="eight", rules=rules)


def test_the_shipped_value_network_of_a_table_is_the_first_by_name_that_learnt_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two = value_network(1)
    ValueNetwork(two.weights, metadata={"player_counts": [2]}).save(tmp_path / "b-2p.npz")
    value_network(2).save(tmp_path / "c-all.npz")
    ValueNetwork(two.weights, metadata={"player_counts": [4, 5]}).save(tmp_path / "a-4p.npz")
    monkeypatch.setattr(value_net, "FOLDER", tmp_path)
    assert [value_net.for_table(p) for p in (2, 3, 4, 5, 8)] == ["b-2p", "c-all", "a-4p", "a-4p", "c-all"]
    (tmp_path / "c-all.npz").unlink()
    assert value_net.for_table(3) is None


def value_network(seed: int = 0) -> ValueNetwork:
    """A small value network of random weights, for every table of 2 to 8 players (its values differ from
    position to position)."""
    rng = np.random.default_rng(seed)
    sizes = [FEATURES, 32, OUTPUTS]
    return ValueNetwork([(rng.normal(0, 0.3, (a, b)), rng.normal(0, 0.1, b)) for a, b in zip(sizes, sizes[1:])])
