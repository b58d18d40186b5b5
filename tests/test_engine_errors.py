"""Misuse of the engine gives a clear ``ValueError`` and changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.actions import DRAW, FLIP, TAKE
from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
from skyjo_env.pettingzoo_env import raw_env
from skyjo_env.rewards import check_reward
from skyjo_env.sampling import sample_bits
from skyjo_env.snapshot import KEYS as SNAPSHOT_KEYS

from scenarios import OVER, SETUP, act, build_deck, new_engine


def snapshot(engine: SkyjoEngine) -> list[dict]:
    """Every game of the batch, exported."""
    return [engine.export_game(b) for b in range(engine.batch_size)]


def finished_engine() -> SkyjoEngine:
    """Three one-round games played to the end with random actions; they stay in phase OVER."""
    engine = new_engine(2, batch=3, episode="round")
    rng = np.random.default_rng(0)
    while (engine.phase != OVER).any():
        games = np.flatnonzero(engine.phase != OVER)
        engine.step(sample_bits(engine.legal_bits(games), rng), games)
    return engine


def test_illegal_action_names_the_game_the_action_and_the_legal_actions() -> None:
    """During setup (R5) a draw is illegal: the error says which game, which action and what is legal."""
    engine = SkyjoEngine(Rules(), 3, seed=0)
    with pytest.raises(ValueError) as info:
        engine.step(np.array([FLIP + 0, DRAW, FLIP + 0]))
    message = str(info.value)
    assert "game 1" in message and "draw" in message
    assert "legal actions" in message and "flip 0" in message and "flip 11" in message


def test_illegal_action_leaves_every_game_unchanged() -> None:
    """A rejected batch step moves no game, not even the ones whose actions were legal."""
    engine = SkyjoEngine(Rules(), 3, seed=0)
    before = snapshot(engine)
    with pytest.raises(ValueError):
        engine.step(np.array([FLIP + 0, FLIP + 1, TAKE]))
    assert snapshot(engine) == before


def test_setup_flip_of_a_face_up_card_is_illegal() -> None:
    """R5: only one's own face-down cards can be turned up; seat 1 may still turn up its slot 0."""
    engine = new_engine(2)
    engine.deal_from(0, [build_deck([], discard=0)])
    act(engine, FLIP + 0, FLIP + 1, FLIP + 4)  # seat 0's setup, then seat 1's first flip
    with pytest.raises(ValueError, match=r"illegal action flip 4 .*seat 1.*'flip 0'"):
        act(engine, FLIP + 4)


def test_taken_card_cannot_be_discarded_for_a_flip() -> None:
    """R9: after a take, flipping is illegal and the message lists the swaps."""
    engine = new_engine(2)
    engine.deal_from(0, [build_deck([], discard=0)])
    act(engine, FLIP + 0, FLIP + 1, FLIP + 0, FLIP + 1, TAKE)
    with pytest.raises(ValueError, match=r"flip 5.*phase taken.*replace 0"):
        act(engine, FLIP + 5)


@pytest.mark.parametrize("action", [-1, 26, 1000])
def test_action_ids_out_of_range_are_rejected(action: int) -> None:
    """Action ids are 0..25."""
    engine = SkyjoEngine(Rules(), 2, seed=0)
    with pytest.raises(ValueError, match=str(action)):
        engine.step(np.array([FLIP, action]))


def test_step_on_a_finished_game_is_an_error() -> None:
    """auto_reset=False: a finished game has no legal action and stepping it says it is over."""
    engine = finished_engine()
    assert not engine.legal_mask().any()
    with pytest.raises(ValueError, match="game 1 is over"):
        engine.step(np.array([FLIP + 0]), np.array([1]))


def test_finished_game_can_be_reset() -> None:
    """reset_games deals a new game into a finished slot and leaves the others alone."""
    engine = finished_engine()
    others = [engine.export_game(0), engine.export_game(2)]
    engine.reset_games(np.array([1]))
    assert engine.phase.tolist() == [OVER, SETUP, OVER]
    assert [engine.export_game(0), engine.export_game(2)] == others


@pytest.mark.parametrize(
    "actions",
    [np.array([FLIP, FLIP]), np.array([FLIP, FLIP, FLIP, FLIP]), np.array(FLIP), np.full((3, 1), FLIP)],
)
def test_actions_of_the_wrong_shape_are_rejected(actions: np.ndarray) -> None:
    """One action per stepped game: shape (3,) for a batch of 3."""
    engine = SkyjoEngine(Rules(), 3, seed=0)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        engine.step(actions)


@pytest.mark.parametrize("actions", [np.array([14.0, 14.0]), np.array([True, True]), np.array(["flip 0", "flip 0"])])
def test_actions_of_a_non_integer_dtype_are_rejected(actions: np.ndarray) -> None:
    """Action ids must be integers, even when a float happens to be whole."""
    engine = SkyjoEngine(Rules(), 2, seed=0)
    with pytest.raises(ValueError, match="integer"):
        engine.step(actions)


def test_games_must_match_actions_and_not_repeat() -> None:
    """A subset step needs one action per listed game, distinct games, indices in range."""
    engine = SkyjoEngine(Rules(), 4, seed=0)
    with pytest.raises(ValueError, match="shape"):
        engine.step(np.array([FLIP]), np.array([0, 1]))
    with pytest.raises(ValueError, match="repeat"):
        engine.step(np.array([FLIP, FLIP + 1]), np.array([2, 2]))
    with pytest.raises(ValueError, match="game index 4 is out of range"):
        engine.step(np.array([FLIP]), np.array([4]))
    with pytest.raises(ValueError, match=r"boolean game mask must have shape \(4,\)"):
        engine.step(np.array([FLIP]), np.array([True, False]))


def test_step_rejects_non_integer_game_indices() -> None:
    """Game indices must be integers: 0.5 is not silently read as game 0."""
    engine = SkyjoEngine(Rules(), 2, seed=0)
    before = snapshot(engine)
    with pytest.raises(ValueError):
        engine.step(np.array([FLIP]), np.array([0.5]))
    assert snapshot(engine) == before


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"batch_size": 0}, ["batch_size=0", "positive integer"]),
        ({"batch_size": 2.5}, ["batch_size=2.5", "positive integer"]),
        ({"batch_size": True}, ["batch_size=True", "positive integer"]),
        ({"rules": {"num_players": 2}}, ["rules", "Rules"]),
    ],
)
def test_engine_constructor_validates_its_arguments(kwargs: dict, words: list[str]) -> None:
    """Bad engine arguments name the argument, the value and what is allowed."""
    arguments = {"rules": Rules(), "batch_size": 2, **kwargs}
    with pytest.raises(ValueError) as info:
        SkyjoEngine(arguments.pop("rules"), arguments.pop("batch_size"), **arguments)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(
    "make",
    [lambda: check_reward("points"), lambda: raw_env(reward="points"), lambda: SkyjoVectorEnv(2, reward="points")],
)
def test_a_reward_mode_is_checked_where_rewards_are_computed(make) -> None:
    """The engine reports scores; the views choose a reward mode (skyjo_env.rewards) and check it."""
    with pytest.raises(ValueError) as caught:
        make()
    for word in ("reward='points'", "'result'", "'score'", "'none'"):
        assert word in str(caught.value)


@pytest.mark.parametrize("reward", [{}, {"points": 1}, {"score": float("nan")}, {"score": "1"}, {"score": True}, 3])
def test_a_reward_mapping_needs_known_modes_and_finite_weights(reward) -> None:
    with pytest.raises(ValueError, match="a mapping of them to finite weights") as caught:
        check_reward(reward)
    assert f"reward={reward!r}" in str(caught.value) and "'score'" in str(caught.value)
    with pytest.raises(ValueError, match="finite weights"):
        SkyjoVectorEnv(2, reward=reward)


def test_sampling_without_a_legal_action_names_the_games() -> None:
    """sample_bits refuses games that have no legal action (finished games)."""
    engine = finished_engine()
    with pytest.raises(ValueError, match=r"no legal action in game\(s\) \[0, 1, 2\]"):
        sample_bits(engine.legal_bits(), np.random.default_rng(0))


# ----------------------------------------------------------------------------- snapshots
def mid_game_state() -> dict:
    """A 3-player game in play, some turns in, exported."""
    engine = SkyjoEngine(Rules(num_players=3), 1, seed=5)
    rng = np.random.default_rng(5)
    for _ in range(20):
        engine.step(sample_bits(engine.legal_bits(), rng))
    return engine.export_game(0)


def corrupt(change) -> dict:
    """A mid-game export with ``change(state)`` applied."""
    state = mid_game_state()
    change(state)
    return state


def import_fails(state: object, *words: str) -> None:
    """Importing ``state`` raises a ValueError containing ``words`` and leaves the target slot alone."""
    engine = SkyjoEngine(Rules(num_players=3), 2, seed=1)
    before = snapshot(engine)
    with pytest.raises(ValueError) as info:
        engine.import_game(1, state)
    for word in words:
        assert word in str(info.value)
    assert snapshot(engine) == before


def test_import_of_a_valid_export_works() -> None:
    """The corruptions below start from a state that imports cleanly."""
    state = mid_game_state()
    engine = SkyjoEngine(Rules(num_players=3), 2, seed=1)
    engine.import_game(1, state)
    assert engine.export_game(1) == state


@pytest.mark.parametrize("key", SNAPSHOT_KEYS)
def test_import_names_a_missing_key(key: str) -> None:
    """Every key of the snapshot format is required."""
    import_fails(corrupt(lambda s: s.pop(key)), "missing", key)


def test_import_rejects_a_non_dict() -> None:
    """A snapshot is a dict."""
    import_fails([1, 2, 3], "dict")


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s["draw_pile"].pop(),  # a card lost
        lambda s: s["discard_pile"].append(5),  # a card too many
        lambda s: s["values"][0].__setitem__(0, 12 if s["values"][0][0] != 12 else 11),  # a card changed
    ],
    ids=["lost", "extra", "changed"],
)
def test_import_rejects_wrong_card_counts(change) -> None:
    """R1: a snapshot must hold exactly the 150-card deck."""
    import_fails(corrupt(change), "150-card deck", "R1")


def test_import_rejects_other_rules() -> None:
    """A state exported under other rules (2 players, or no column rule) does not load."""
    import_fails(SkyjoEngine(Rules(num_players=2), 1, seed=0).export_game(0), "played under", "num_players")
    state = corrupt(lambda s: s["rules"].update(column_rule=False))
    import_fails(state, "played under", "column_rule")


def test_import_rejects_unknown_rule_options() -> None:
    """A rules dict with a misspelt option is rejected by name."""
    import_fails(corrupt(lambda s: s["rules"].update(colum_rule=True)), "colum_rule")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda s: s.update(format="other/game"), ["format"]),
        (lambda s: s.update(version=2), ["format", "2"]),
        (lambda s: s.update(phase="playing"), ["phase", "'playing'"]),
        (lambda s: s.update(phase="taken", held=None), ["held"]),
        (lambda s: s.update(current=3), ["current=3"]),
        (lambda s: s.update(values=s["values"][:2]), ["values", "shape"]),
        (lambda s: s["values"][1].__setitem__(3, 13), ["values", "-2..12"]),
        (lambda s: s.update(face_up=[[int(x) for x in row] for row in s["face_up"]]), ["face_up", "booleans"]),
        (
            lambda s: s["removed"][0].__setitem__(0, True) or s["face_up"][0].__setitem__(0, False),
            ["removed", "face up"],
        ),
        (lambda s: s.update(decks="none"), ["decks"]),
        (lambda s: s.update(decks=[[0] * 150]), ["decks[0]", "150-card deck"]),
    ],
)
def test_import_rejects_corrupt_fields(change, words: list[str]) -> None:
    """Each corrupt field is named in the error."""
    import_fails(corrupt(change), *words)


# ----------------------------------------------------------------------------- deal_from
@pytest.mark.parametrize(
    ("decks", "words"),
    [
        ([], ["decks is empty"]),
        ([list(range(149))], ["decks[0]", "150"]),
        ([[0] * 150], ["decks[0]", "permutation", "R1"]),
        ([[float(x) for x in build_deck([], discard=0)]], ["decks[0]", "integer"]),
        ([build_deck([], discard=0), build_deck([], discard=0)[:-1] + [13]], ["decks[1]", "R1"]),
    ],
)
def test_deal_from_rejects_what_is_not_a_deck_order(decks: list, words: list[str]) -> None:
    """deal_from takes 150-card permutations of the R1 deck; anything else is refused and the slot kept."""
    engine = SkyjoEngine(Rules(), 2, seed=0)
    before = snapshot(engine)
    with pytest.raises(ValueError) as info:
        engine.deal_from(1, decks)
    for word in words:
        assert word in str(info.value)
    assert snapshot(engine) == before


def test_deal_from_rejects_a_game_index_out_of_range() -> None:
    """The game slot must exist."""
    with pytest.raises(ValueError, match="game index 2 is out of range"):
        SkyjoEngine(Rules(), 2, seed=0).deal_from(2, [build_deck([], discard=0)])
