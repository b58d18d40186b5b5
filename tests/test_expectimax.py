"""The expectimax agent and its value network: legal play at every table size, reproducibility, no
peeking, and chance weights equal to a brute-force count of the deals an observation allows."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine, agents
from skyjo_env.actions import DRAW, FLIP, REPLACE
from skyjo_env.agents.expectimax import ExpectimaxPolicy, outcomes
from skyjo_env.agents.value_net import ValueNetwork, features
from skyjo_env.cards import SLOT_FLAGS, SLOTS
from skyjo_env.engine import STATE
from skyjo_env.observation import PADDED_SIZE, observe, pad
from skyjo_env.phases import CHOOSE, DRAWN

from test_search import IllegalBase, midgame, to_act, with_unseen_cards_rearranged
from test_search import value_network as network


@pytest.mark.parametrize("players", range(2, 9))
def test_expectimax_plays_only_legal_actions(players: int) -> None:
    """Every seat plays expectimax through setup (R5) and play; the engine checks every action."""
    rules = Rules(num_players=players)
    engine = SkyjoEngine(rules, 4, seed=players, auto_reset=False)
    player = ExpectimaxPolicy(network(), rules=rules, seed=0)
    for _ in range(4 * players + 16):
        obs, masks = to_act(engine)
        actions = player(obs, masks)
        assert masks[np.arange(4), actions].all()
        engine.step(actions)


def test_an_empty_batch_gets_no_values_and_no_actions() -> None:
    rules = Rules(num_players=2)
    obs, masks = to_act(SkyjoEngine(rules, 1, seed=0))
    player = ExpectimaxPolicy(network(), rules=rules, seed=0)
    assert player.action_values(obs[:0], masks[:0]).shape == (0, 26)
    assert player(obs[:0], masks[:0]).shape == (0,)


@pytest.mark.parametrize(("depth", "value"), [(1, "game"), (3, "points")])
def test_expectimax_is_reproducible_with_a_seed(depth: int, value: str) -> None:
    rules = Rules()
    obs, masks = to_act(midgame(rules, 16, 30, seed=1))
    first, second = (ExpectimaxPolicy(network(), value, depth, rules=rules, seed=7) for _ in range(2))
    for _ in range(2):  # the streams advance alike
        assert np.array_equal(first.action_values(obs, masks), second.action_values(obs, masks))


@pytest.mark.parametrize(("depth", "value"), [(1, "game"), (3, "points")])
def test_expectimax_does_not_peek_at_unseen_cards(depth: int, value: str) -> None:
    """Two positions that differ only in the face-down cards and the draw pile's order give the same
    action values and decisions for a fixed seed (RULES.md, what a player can observe)."""
    rules = Rules(num_players=3)
    engine = midgame(rules, 16, 40, seed=2)
    other = with_unseen_cards_rearranged(engine, seed=3)
    assert not np.array_equal(other.values, engine.values)
    (obs, masks), (other_obs, other_masks) = to_act(engine), to_act(other)
    assert np.array_equal(obs, other_obs) and np.array_equal(masks, other_masks)
    player, twin = (ExpectimaxPolicy(network(), value, depth, rules=rules, seed=5) for _ in range(2))
    values = player.action_values(obs, masks)
    assert np.array_equal(values, twin.action_values(other_obs, other_masks))
    assert np.array_equal(np.isfinite(values), masks)  # a value for every legal action, none for the others


def test_the_base_is_left_only_for_a_gain_above_the_margin() -> None:
    """With a base, an action other than the base's choice is played only where the network values it more
    by over `margin` points (a game's result is `win_points`); with margin 0 the network's best always."""
    rules = Rules()
    obs, masks = to_act(midgame(rules, 64, 30, seed=4))
    values = ExpectimaxPolicy(network(), margin=0, win_points=20, rules=rules, seed=3).action_values(obs, masks)
    best = values.argmax(axis=1)
    choice = agents.make("counting", rules=rules)(obs.copy(), masks.copy())
    gain = (values[np.arange(64), best] - values[np.arange(64), choice]) * 20.0
    for margin in (0.0, 1.0, 5.0, 1e9):
        player = ExpectimaxPolicy(network(), margin=margin, base="counting", win_points=20, rules=rules, seed=3)
        expected = best if margin == 0 else np.where(gain > margin, best, choice)
        assert np.array_equal(player.choose(obs, masks), expected)
    assert 0 < (gain > 1.0).sum() < 64  # the margins tell apart: some decisions leave the base, some keep it
    assert ExpectimaxPolicy(network(), margin=0, rules=rules).base is None
    with pytest.raises(ValueError, match=r"expectimax's base 'illegal-base' chose illegal action \d+ \(row 0 of 64\)"):
        ExpectimaxPolicy(network(), base=IllegalBase(), rules=rules, seed=3).choose(obs, masks)


def small_position(phase: int) -> dict[str, np.ndarray]:
    """A 2-player position of seat 0 to act in `phase` (CHOOSE, or DRAWN after a draw) with few hidden
    cards: three face-down slots a grid and a draw pile of two (the rest of the draw pile moved under
    the discard pile's top), before the draw."""
    rules = Rules()
    engine = midgame(rules, 64, 40, seed=4)
    fit = (engine.phase == CHOOSE) & (engine.current == 0) & (engine.removed == 0).all(axis=1)
    game = int(np.flatnonzero(fit)[0])
    state = {k: getattr(engine, k)[game : game + 1].copy() for k in STATE}
    state["face_up"][:] = SLOT_FLAGS.shape[0] - 1 - 0b111  # every slot up but 0, 1 and 2
    draw = state["draw_pile"][0, : state["draw_size"][0]].copy()
    discard = state["discard_pile"][0, : state["discard_size"][0]].copy()
    pile = np.concatenate([discard[:-1], draw[2:], discard[-1:]])
    state["discard_pile"][0] = 0
    state["discard_pile"][0, : len(pile)] = pile
    state["discard_size"][:] = len(pile)
    state["draw_pile"][0] = 0
    state["draw_pile"][0, :2] = draw[:2]
    state["draw_size"][:] = 2
    small = SkyjoEngine.from_states(rules, state)  # the 150 cards of R1, or ValueError
    if phase == DRAWN:
        small.step(np.array([DRAW]))
    return {k: getattr(small, k).copy() for k in STATE}


def hidden_places(state: dict[str, np.ndarray]) -> tuple[list[tuple[str, int, int]], list[int]]:
    """The places of the hidden cards (grid slots face down, then the draw pile) and their cards."""
    places, cards = [], []
    for seat in range(state["values"].shape[1]):
        for slot in np.flatnonzero(~SLOT_FLAGS[state["face_up"][0, seat]]):
            places.append(("values", seat, int(slot)))
            cards.append(int(state["values"][0, seat, slot]))
    for k in range(int(state["draw_size"][0])):
        places.append(("draw_pile", k, -1))
        cards.append(int(state["draw_pile"][0, k]))
    return places, cards


@pytest.mark.parametrize(("phase", "action"), [(CHOOSE, DRAW), (DRAWN, FLIP + 1), (DRAWN, REPLACE + 2)])
def test_chance_weights_equal_a_brute_force_count_of_the_deals(phase: int, action: int) -> None:
    """A revealing action's outcomes: each distinct unseen value once, weighted as the share of all
    arrangements of the hidden cards over the hidden places (every one equally likely, RULES.md) that
    put that value at the revealed place; each outcome's position holds the same hidden cards with that
    value at the revealed place and every other card where it was."""
    rules = Rules()
    state = small_position(phase)
    places, cards = hidden_places(state)
    top = ("draw_pile", int(state["draw_size"][0]) - 1, -1)
    revealed = places.index(top if action == DRAW else ("values", 0, (action - REPLACE) % SLOTS))
    arrangements = set(itertools.permutations(cards))
    expected = {v: sum(a[revealed] == v for a in arrangements) / len(arrangements) for v in set(cards)}
    masks = np.zeros((1, 26), dtype=bool)
    masks[0, action] = True
    parent, actions, weights, child = outcomes(rules, state, masks)
    assert (parent == 0).all() and (actions == action).all()
    got = {}
    for row in range(len(weights)):
        one = {k: a[row : row + 1] for k, a in child.items()}
        child_places, child_cards = hidden_places(one)
        assert child_places == places and sorted(child_cards) == sorted(cards)
        moved = [i for i, (c, o) in enumerate(zip(child_cards, cards)) if c != o]
        assert moved in ([], [revealed]) or (len(moved) == 2 and revealed in moved)  # one swap at most
        if moved:
            other = sum(moved) - revealed
            assert child_cards[other] == cards[revealed] and cards[other] == child_cards[revealed]
        got[child_cards[revealed]] = weights[row]
        kept = [k for k in STATE if k not in ("values", "draw_pile")]
        assert all(np.array_equal(one[k], state[k]) for k in kept)
    assert got.keys() == expected.keys()
    for v, p in expected.items():
        assert got[v] == pytest.approx(p)


def test_an_action_that_reveals_nothing_has_one_outcome_of_weight_one() -> None:
    """Replacing a face-up card (R9) reveals nothing: one outcome, the position unchanged."""
    state = small_position(DRAWN)
    masks = np.zeros((1, 26), dtype=bool)
    masks[0, REPLACE + 5] = True  # slot 5 is face up
    parent, actions, weights, child = outcomes(Rules(), state, masks)
    assert weights.tolist() == [1.0]
    assert all(np.array_equal(child[k], state[k]) for k in state)


@pytest.mark.parametrize("players", [2, 3, 8])
def test_the_value_network_reads_table_and_padded_observations_alike(players: int) -> None:
    """Table observations take a first layer of only the inputs a table of their size sets: the same values."""
    obs, _ = to_act(midgame(Rules(num_players=players), 4, 20, seed=6))
    net = network()
    for table, padded in zip(net.values(obs), net.values(pad(obs, players))):
        assert np.allclose(table, padded, rtol=1e-5, atol=1e-5)  # float32 sums taken in another order
    with pytest.raises(ValueError, match="padded ones"):
        net.values(obs[:, :-1])


def test_the_networks_inputs_count_each_columns_face_up_cards_by_value() -> None:
    """Past the observation, the inputs hold per relative seat, column (R3: slot = row * 4 + column) and
    value the column's face-up cards of that value: a pair (R13) is one input; face-down cards, removed
    columns and the seats a table lacks count nothing."""
    rules = Rules(num_players=3)
    engine = midgame(rules, 1, 0, seed=2)
    state = {k: np.array(getattr(engine, k)) for k in STATE}
    cards = state["values"][0].reshape(-1)  # every seat's grid; swapping cards keeps the deck (R1)
    v = next(int(c) for c in cards if (cards == c).sum() >= 2)
    for slot, source in zip((1, 5), np.flatnonzero(cards == v)[:2]):
        cards[[slot, source]] = cards[[source, slot]]
    if cards[9] == v:
        cards[[9, 0]] = cards[[0, 9]]
    state["values"][0] = cards.reshape(3, SLOTS)
    state["face_up"][0] = 0
    state["face_up"][0, 0] = (1 << 1) | (1 << 5) | (1 << 2)
    state["removed"][0] = 0
    engine.load(state)
    x = pad(observe(engine, 0), 3)
    counts = features(x)[0, PADDED_SIZE:].reshape(8, 4, 15)
    assert counts[0, 1, v + 2] == 2 and counts[0, 1].sum() == 2  # the pair; slot 9 (column 1) is face down
    assert counts[0].sum() == 3 and counts[0, 2, state["values"][0, 0, 2] + 2] == 1
    assert not counts[3:].any()  # seats 3..7 are not at this table
    assert np.array_equal(features(x)[:, :PADDED_SIZE], x)


def test_a_value_network_survives_saving_and_loading(tmp_path) -> None:
    net = network(3)
    net.metadata["player_counts"] = [2, 4]
    net.save(tmp_path / "v.npz")
    loaded = ValueNetwork.load(tmp_path / "v.npz")
    assert loaded.player_counts == (2, 4)
    x = np.random.default_rng(0).random((5, PADDED_SIZE)).astype(np.float32)
    for got, expected in zip(loaded.values(x), net.values(x)):
        assert np.array_equal(got, expected)
    with pytest.raises(ValueError, match="trained for"):
        ExpectimaxPolicy(loaded, rules=Rules(num_players=3))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"depth": 4}, "depth=4"),
        ({"value": "rounds"}, "value='rounds'"),
        ({"network": "no-such-network"}, "no value network"),
        ({"setup": "nobody"}, "nobody"),
        ({"base": "nobody"}, "nobody"),
        ({"margin": -1.0}, "margin=-1.0"),
        ({"margin": float("inf")}, "margin=inf"),
    ],
)
def test_bad_options_are_refused(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ExpectimaxPolicy(**{"network": network(), **options})


def test_expectimax_is_a_registered_agent_with_the_shipped_value() -> None:
    """`expectimax` plays the shipped network at the table sizes it was trained for and refuses others."""
    player = agents.make("expectimax:depth=1", rules=Rules(), seed=0)
    assert isinstance(player, ExpectimaxPolicy) and player.depth == 1 and 2 in player.network.player_counts
    untrained = [p for p in range(2, 9) if p not in player.network.player_counts]
    if untrained:
        with pytest.raises(ValueError, match=f"this table has {untrained[0]}"):
            agents.make("expectimax", rules=Rules(num_players=untrained[0]))


@pytest.mark.filterwarnings("ignore:agent 'ppo-")  # the bases, trained under another end score
def test_a_network_of_several_table_sizes_plays_at_each_of_them() -> None:
    """A player made at 2 players over a network that learnt 2 and 3 plays a 3-player table as a player made
    there (a mixed run's evaluations), with the game's other rules; a size the network did not learn is refused."""
    net = ValueNetwork(network().weights, metadata={"player_counts": [2, 3]})
    rules = Rules(end_score=60)
    engine = SkyjoEngine(rules.replace(num_players=3), 6, seed=5, auto_reset=False)
    made_at_2 = ExpectimaxPolicy(net, rules=rules, seed=1)
    made_at_3 = ExpectimaxPolicy(net, rules=rules.replace(num_players=3), seed=1)
    for _ in range(30):
        obs, masks = to_act(engine)
        actions = made_at_2(obs, masks)
        assert np.array_equal(actions, made_at_3(obs, masks)) and masks[np.arange(6), actions].all()
        engine.step(actions)
    assert made_at_2.at_table(3).rules == rules.replace(num_players=3) and made_at_2.at_table(2) is made_at_2
    four = SkyjoEngine(rules.replace(num_players=4), 1, seed=5, auto_reset=False)
    with pytest.raises(ValueError, match="trained for 2, 3 players; this table has 4"):
        made_at_2(*to_act(four))
