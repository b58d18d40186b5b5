"""An OpenSpiel bot as a project agent: a batched [`Policy`][skyjo_env.agents.base.Policy] over the game
`python_skyjo` ([`skyjo_env.openspiel`][]; the `openspiel` extra).

OpenSpiel bots act on one state at a time, so [`OpenSpielPolicy`][] loops over the games of a batch:
for each observation it builds a position from what the seat has seen alone, as the search player
does ([`positions()`][skyjo_env.agents.search.positions]: the seat to act is seat 0 of it, its unseen
cards dealt at random over the face-down slots and the draw pile), wraps it as a `python_skyjo` state
([`SkyjoGame.state_of()`][skyjo_env.openspiel.SkyjoGame.state_of], where every hidden card is a chance
outcome again) and plays the bot's `step(state)`. The position knows no history: the totals are the
observed ones, the round is counted as the first and its starter as seat 0 (R7 in later rounds), the
draw pile as never reshuffled (R12). The other seats' setup flips (R5) cannot be rebuilt (whose turn
comes next depends on who flipped before), so the setup flips are uniformly random, not the bot's.
That suits bots that search from the state they are given (the Python `MCTSBot`, uniform
random); a bot that follows a game through `inform_action` sees none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from skyjo_env.agents.search import positions
from skyjo_env.agents.view import SETUP, decode
from skyjo_env.engine import SkyjoEngine
from skyjo_env.openspiel import GAME_NAME, SkyjoGame
from skyjo_env.rules import Rules
from skyjo_env.sampling import sample_mask


class OpenSpielPolicy:
    """The OpenSpiel bot `bot(game)` (a factory given the `python_skyjo` game of `rules`) as a batched policy.

    Args:
        bot: builds the bot from the game, e.g. `lambda game: MCTSBot(game, 2, 16, RandomRolloutEvaluator())`;
            it is asked for seat 0's move (the seat to act is seat 0 of every position).
        rules: the table's rules.
        name: its label in tournaments.
        seed: seeds the deals of the unseen cards.
    """

    def __init__(
        self, bot: Callable[[Any], Any], rules: Rules | None = None, name: str = "openspiel", seed: int = 0
    ) -> None:
        import pyspiel

        self.rules = Rules() if rules is None else rules
        params = {"players": self.rules.num_players, **self.rules.to_dict()}
        del params["num_players"]
        self.game: SkyjoGame = pyspiel.load_game(GAME_NAME, params)
        self.bot = bot(self.game)
        self.name = name
        self._rng = np.random.default_rng(seed)

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per observation, the bot's `step()` on a position rebuilt from it, game by game;
        a uniformly random flip in the setup phase (R5)."""
        view = decode(observations)
        states = positions(view, self.rules, 1, self._rng)
        actions = sample_mask(np.asarray(action_masks, dtype=bool), self._rng).astype(np.int64)
        for i in np.flatnonzero(view.phase != SETUP).tolist():
            engine = SkyjoEngine.from_states(self.rules, {name: array[i : i + 1] for name, array in states.items()})
            actions[i] = self.bot.step(self.game.state_of(engine))
        return actions
