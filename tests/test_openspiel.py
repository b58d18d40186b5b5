"""The OpenSpiel game `python_skyjo` (skyjo_env.openspiel) and the OpenSpiel bot as a project agent.

The game wraps the engine; these tests check it against OpenSpiel's own consistency test, and against
the engine replaying its games from decks dealt to show the same cards (R1..R20).
"""

from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (pip install -e '.[openspiel]')")

from open_spiel.python.algorithms.mcts import MCTSBot, RandomRolloutEvaluator  # noqa: E402
from open_spiel.python.bots.uniform_random import UniformRandomBot  # noqa: E402

from skyjo_env import agents  # noqa: E402
from skyjo_env.actions import DRAW, NUM_ACTIONS  # noqa: E402
from skyjo_env.agents.openspiel import OpenSpielPolicy  # noqa: E402
from skyjo_env.cards import COUNTS, DECK_SIZE, MIN_VALUE, NUM_VALUES, SLOTS  # noqa: E402
from skyjo_env.checks import MAX_STEPS  # noqa: E402
from skyjo_env.engine import SkyjoEngine  # noqa: E402
from skyjo_env.evaluation.tournament import run_tournament  # noqa: E402
from skyjo_env.observation import layout, observe  # noqa: E402
from skyjo_env.openspiel import GAME_NAME, PARAMETERS  # noqa: E402
from skyjo_env.phases import OVER  # noqa: E402
from skyjo_env.rewards import result_shares  # noqa: E402
from skyjo_env.rules import Rules  # noqa: E402


def params_of(rules: Rules, **more: object) -> dict[str, object]:
    """The game parameters of `rules` (`players` for `num_players`)."""
    params = {"players": rules.num_players, **rules.to_dict(), **more}
    del params["num_players"]
    return params


def random_rules(rng: np.random.Generator) -> Rules:
    return Rules(
        num_players=int(rng.integers(2, 9)),
        column_rule=bool(rng.random() < 0.7),
        column_rule_at_final_reveal=bool(rng.random() < 0.7),
        end_score=int(rng.choice([30, 60, 100])),
        next_starter=str(rng.choice(["round_winner", "round_ender"])),
        episode="round" if rng.random() < 0.75 else "game",
    )


def chance(state: pyspiel.State, rng: np.random.Generator) -> int:
    """A chance outcome drawn with its probability."""
    outcomes, probs = zip(*state.chance_outcomes())
    return outcomes[min(int(np.searchsorted(np.cumsum(probs), rng.random())), len(outcomes) - 1)]


def any_legal(state: pyspiel.State, rng: np.random.Generator) -> int:
    """A uniformly random legal action."""
    legal = state.legal_actions()
    return legal[int(rng.integers(len(legal)))]


def random_step(state: pyspiel.State, rng: np.random.Generator) -> None:
    state.apply_action(chance(state, rng) if state.is_chance_node() else any_legal(state, rng))


def test_parameters_are_players_and_every_rule_option() -> None:
    assert set(PARAMETERS) == {"players", "max_steps"} | set(Rules().to_dict()) - {"num_players"}
    game = pyspiel.load_game(GAME_NAME, {"players": 4})
    assert game.num_players() == 4
    assert game.rules == Rules(num_players=4)
    assert game.num_distinct_actions() == NUM_ACTIONS
    assert game.max_chance_outcomes() == NUM_VALUES
    assert game.max_game_length() == MAX_STEPS
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, None)  # general-sum
    rules = Rules(3, column_rule=False, column_rule_at_final_reveal=False, end_score=50, next_starter="round_ender", episode="round")  # fmt: skip
    assert pyspiel.load_game(GAME_NAME, params_of(rules)).rules == rules
    with pytest.raises(ValueError, match="end_score=0 is not allowed"):
        pyspiel.load_game(GAME_NAME, {"end_score": 0})
    with pytest.raises(ValueError, match=r"players=9 is not allowed; use 2 to 8 \(R2\)"):
        pyspiel.load_game(GAME_NAME, {"players": 9})
    with pytest.raises(ValueError, match="engine must hold one game under"):
        game.state_of(SkyjoEngine(Rules(num_players=3)))


def test_openspiels_random_simulation_test() -> None:
    game = pyspiel.load_game(GAME_NAME, {"players": 2, "episode": "round"})
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)
    pyspiel.random_sim_test(pyspiel.load_game(GAME_NAME, {"players": 5}), num_sims=1, serialize=False, verbose=False)


def test_the_game_is_general_sum_and_its_returns_are_the_r20_shares() -> None:
    """Issue 54: declared general-sum; the returns of played games are the result shares (R20), within
    the declared utilities, which a lone winner and a lone loser reach."""
    game = pyspiel.load_game(GAME_NAME, {"players": 3})
    assert game.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert game.utility_sum() is None
    for players in range(2, 9):  # R20 over every split of winners and losers: from -1 to +1
        splits = np.array([[seat < w for seat in range(players)] for w in range(1, players + 1)])
        shares = result_shares(splits)
        assert (shares.min(), shares.max()) == (game.min_utility(), game.max_utility())
    rng = np.random.default_rng(20)
    for params in ({"players": 2}, {"players": 3, "episode": "round"}, {"players": 4, "episode": "round"}):
        state = pyspiel.load_game(GAME_NAME, params).new_initial_state()
        while not state.is_terminal():
            random_step(state, rng)
        totals = state.engine.totals
        assert state.engine.phase[0] == OVER
        np.testing.assert_allclose(state.returns(), result_shares(totals == totals.min())[0])  # R20
        assert game.min_utility() <= min(state.returns()) and max(state.returns()) <= game.max_utility()


def test_the_deal_and_the_first_flip_are_chance_nodes_with_the_decks_odds() -> None:
    game = pyspiel.load_game(GAME_NAME, {"players": 2})
    state = game.new_initial_state()
    assert state.is_chance_node()  # R4: the first discard
    assert state.chance_outcomes() == [(v, COUNTS[v] / DECK_SIZE) for v in range(NUM_VALUES)]
    state.apply_action(14)  # a 12
    assert state.current_player() == 0 and state.engine.discard_pile[0, 0] == 12
    np.testing.assert_array_equal(state.engine.unseen[0], COUNTS - np.eye(NUM_VALUES, dtype=np.int16)[14])
    state.apply_action(14)  # flip slot 0 (R5): its card is drawn among the 149 unseen
    assert state.is_chance_node()
    outcomes = dict(state.chance_outcomes())
    assert outcomes[14] == pytest.approx(9 / 149) and outcomes[0] == pytest.approx(5 / 149)
    with pytest.raises(ValueError, match=r"chance outcome 15 \(card 13\) is not possible here"):
        state.apply_action(15)
    state.apply_action(0)  # a -2
    assert state.engine.values[0, 0, 0] == -2 and state.current_player() == 0
    obs = np.asarray(state.observation_tensor(1), dtype=np.float32)
    np.testing.assert_array_equal(obs, observe(state.engine, 1)[0])
    assert obs[layout(2)["grid_1"]][0] == pytest.approx(-2 / 12)  # seat 0 is seat 1's relative seat 1


def odds(counts: np.ndarray) -> tuple[list[int], np.ndarray]:
    """The chance outcomes and probabilities of drawing from cards of `counts` per value."""
    counts = np.asarray(counts, dtype=np.float64)
    return np.flatnonzero(counts).tolist(), counts[counts > 0] / counts.sum()


def test_the_odds_are_the_unseen_counts_and_after_a_reshuffle_the_discards_alone() -> None:
    """A card turned up or drawn is drawn among the cards the seat to act has not seen (its
    observation's `unseen`), until a reshuffle (R12): then a draw comes from the reshuffled discards
    alone, known cards, and a flip from the face-down cards alone."""
    game = pyspiel.load_game(GAME_NAME, {"players": 8, "episode": "round"})  # a draw pile of 53 cards
    rng = np.random.default_rng(3)
    unseen = layout(8)["unseen"]
    checked, reshuffles, after = 0, 0, 0
    for _ in range(6):
        state, first, reshuffled = game.new_initial_state(), False, False
        while not state.is_terminal():
            e = state.engine
            if not state.is_chance_node():
                first = True  # the first card drawn for this action
                state.apply_action(any_legal(state, rng))
                continue
            kind, cell = state.card_to_draw()
            outcomes, probs = zip(*state.chance_outcomes())
            if kind == "draw" and e.draw_size[0] == 0:
                reshuffles += 1
                pile = e.discard_pile[0, : e.discard_size[0] - 1].astype(np.int64) - MIN_VALUE
                expected = odds(np.bincount(pile, minlength=NUM_VALUES))
                reshuffled = True
            elif first and (kind == "slot" or not reshuffled):
                not_seen = np.rint(observe(e, int(e.current[0]))[0, unseen] * COUNTS)
                if reshuffled:  # the face-down cards: the unseen ones but the reshuffled pile's
                    pile = e.draw_pile[0, : e.draw_size[0]].astype(np.int64) - MIN_VALUE
                    not_seen -= np.bincount(pile, minlength=NUM_VALUES)
                    after += 1
                expected = odds(not_seen)
                checked += 1
            else:
                expected = list(outcomes), probs
            assert list(outcomes) == expected[0]
            assert probs == pytest.approx(expected[1])
            state.apply_action(chance(state, rng))
            first = False
    assert checked > 500 and reshuffles > 0 and after > 10


def decks_and_replay(game: pyspiel.Game, rng: np.random.Generator) -> tuple[pyspiel.State, list, list, list]:
    """Play a random game; return its end state, its player actions, the deck order of each round that
    deals every card the game drew where it was drawn, and the draws after each reshuffle (R12), in order."""
    P = game.num_players()
    rest = DECK_SIZE - P * SLOTS - 1
    state = game.new_initial_state()
    dealt: list[dict[int, int]] = []  # per round: deck position -> card
    redraws: list[list[int]] = []  # per reshuffle: the cards drawn from its pile, in order
    reshuffled = False
    actions: list[int] = []
    while not state.is_terminal():
        e = state.engine
        if not state.is_chance_node():
            actions.append(any_legal(state, rng))
            state.apply_action(actions[-1])
            continue
        kind, cell = state.card_to_draw()
        card = chance(state, rng) + MIN_VALUE
        if kind == "discard":  # a new round's deal (R3, R4)
            dealt.append({P * SLOTS: card})
            reshuffled = False
        elif kind == "slot":
            dealt[-1][cell] = card
        elif e.draw_size[0] == 0:  # R12: the discards reshuffled, then drawn
            redraws.append([card])
            reshuffled = True
        elif reshuffled:
            redraws[-1].append(card)
        else:  # the draw pile's top, deck position P * 12 + 1 + the cards drawn before
            dealt[-1][P * SLOTS + 1 + rest - int(e.draw_size[0])] = card
        state.apply_action(card - MIN_VALUE)
    decks = []
    for cards in dealt:
        deck = np.zeros(DECK_SIZE, dtype=np.int64)
        deck[list(cards)] = list(cards.values())
        left = Counter(dict(zip(range(MIN_VALUE, 13), COUNTS.tolist()))) - Counter(cards.values())
        deck[sorted(set(range(DECK_SIZE)) - set(cards))] = sorted(left.elements())
        decks.append(deck)
    return state, actions, decks, redraws


GAMES = 1000


@pytest.mark.slow
def test_1000_random_games_replay_on_the_engine_with_the_same_scores_and_winners() -> None:
    rng = np.random.default_rng(54)
    for g in range(GAMES):
        rules = random_rules(rng)
        game = pyspiel.load_game(GAME_NAME, params_of(rules))
        state, actions, decks, redraws = decks_and_replay(game, rng)
        engine = SkyjoEngine(rules, 1, seed=g, auto_reset=False)
        engine.deal_from(0, decks)  # check_deck: every round's cards are the 150-card deck (R1)
        pending = iter(redraws)
        for a in actions:
            if a == DRAW and engine.draw_size[0] == 0:  # R12: order the reshuffled pile as the game drew it
                engine.step(np.array([a]))
                drawn = next(pending)
                n = int(engine.draw_size[0])
                pile = Counter(engine.draw_pile[0, :n].tolist()) + Counter([int(engine.held[0])])
                left = pile - Counter(drawn)
                assert sum(left.values()) == n + 1 - len(drawn), "the game drew cards the discards lacked"
                engine.held[0] = drawn[0]
                engine.draw_pile[0, :n] = sorted(left.elements()) + drawn[:0:-1]
            else:
                engine.step(np.array([a]))  # checked: every action of the game is legal on the engine
        assert next(pending, None) is None
        assert engine.phase[0] == OVER and state.engine.phase[0] == OVER
        np.testing.assert_array_equal(engine.totals, state.engine.totals)  # R16..R18
        assert engine.round_index[0] == len(decks)
        np.testing.assert_allclose(state.returns(), result_shares(engine.totals == engine.totals.min())[0])  # R20
        assert sum(state.returns()) == pytest.approx(0.0)


def test_max_steps_ends_a_game_with_returns_zero() -> None:
    game = pyspiel.load_game(GAME_NAME, {"players": 3, "max_steps": 25})
    assert game.max_game_length() == 25
    state, rng = game.new_initial_state(), np.random.default_rng(0)
    while not state.is_terminal():
        random_step(state, rng)
    assert state.engine.steps[0] == 25 and state.engine.phase[0] != OVER
    assert state.returns() == [0.0, 0.0, 0.0] and state.legal_actions() == []
    assert len([a for a in state.full_history() if a.player >= 0]) == 25


def test_serialize_clone_and_pickle_restore_the_same_state() -> None:
    game = pyspiel.load_game(GAME_NAME, {"players": 3, "column_rule": False})
    state, rng = game.new_initial_state(), np.random.default_rng(1)
    for _ in range(150):
        random_step(state, rng)
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(game2) == str(game) and game2.rules == game.rules
    for copy in (state2, state.clone(), pickle.loads(pickle.dumps(state))):
        assert copy.history() == state.history() and str(copy) == str(state)
        assert copy.engine is not state.engine
        for p in range(3):
            assert copy.observation_tensor(p) == state.observation_tensor(p)
        assert copy.current_player() == state.current_player()
        assert copy.legal_actions() == state.legal_actions() or copy.is_chance_node()
        if copy.is_chance_node():
            assert copy.chance_outcomes() == state.chance_outcomes()


def test_python_mcts_with_chance_nodes_plays_a_whole_game() -> None:
    game = pyspiel.load_game(GAME_NAME, {"players": 2, "episode": "round"})
    evaluator = RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    bot = MCTSBot(game, uct_c=2.0, max_simulations=2, evaluator=evaluator, random_state=np.random.RandomState(0))
    state, rng = game.new_initial_state(), np.random.default_rng(2)
    while not state.is_terminal():
        state.apply_action(chance(state, rng) if state.is_chance_node() else bot.step(state))
    assert state.engine.phase[0] == OVER
    assert sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])


def test_an_openspiel_bot_plays_counting_in_a_tournament() -> None:
    """The adapter: an OpenSpiel bot as a batched policy, one state per game."""
    rules = Rules(episode="round")
    bot = OpenSpielPolicy(lambda game: UniformRandomBot(0, np.random.RandomState(0)), rules, name="os-random")
    result = run_tournament(
        [bot, agents.make("counting", rules=rules)], players=2, games=20, rules=rules, progress=False
    )
    assert result.by_name("os-random").seats == 20
    assert result.by_name("counting").win_rate > 0.8  # counting beats uniform random play


def test_python_mcts_plays_counting_in_a_tournament() -> None:
    """Search from rebuilt positions: the bot's rollouts play on to the end of the round from every decision."""
    rules = Rules(episode="round")
    evaluator = RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    mcts = OpenSpielPolicy(lambda game: MCTSBot(game, 2.0, 2, evaluator, random_state=np.random.RandomState(0)), rules, name="mcts")  # fmt: skip
    result = run_tournament(
        [mcts, agents.make("counting", rules=rules)], players=2, games=2, rules=rules, progress=False
    )
    assert result.unfinished == 0 and result.by_name("mcts").seats == 2


def test_rl_environment_plays_a_game_on_the_projects_observation() -> None:
    from open_spiel.python import rl_environment

    env = rl_environment.Environment(pyspiel.load_game(GAME_NAME, {"episode": "round"}), seed=0)
    time_step, rng = env.reset(), np.random.default_rng(0)
    while not time_step.last():
        seat = time_step.observations["current_player"]
        obs = np.asarray(time_step.observations["info_state"][seat], dtype=np.float32)
        np.testing.assert_array_equal(obs, observe(env.get_state.engine, seat)[0])
        legal = time_step.observations["legal_actions"][seat]
        time_step = env.step([legal[int(rng.integers(len(legal)))]])
    assert env.get_state.engine.phase[0] == OVER
    assert sorted(time_step.rewards) in ([-1.0, 1.0], [0.0, 0.0])  # R20
