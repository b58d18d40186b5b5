"""Skyjo as an OpenSpiel game: `pyspiel.load_game("python_skyjo", {"players": 4})` after `import skyjo_env.openspiel`.

Importing this module registers the game (the `openspiel` extra installs `open_spiel`). The game wraps
the engine: each state holds a [`SkyjoEngine`][skyjo_env.engine.SkyjoEngine] of one game, which plays
every rule; this module adds OpenSpiel's chance nodes and nothing of the rules.

* Parameters: `players` (2..8, R2), every option of [`Rules`][skyjo_env.rules.Rules] under its own name
  (`column_rule`, `column_rule_at_final_reveal`, `end_score`, `next_starter`, `episode`) and
  `max_steps` (a game still running after that many player actions ends with returns 0; default
  [`MAX_STEPS`][skyjo_env.checks.MAX_STEPS]). `max_game_length` is `max_steps`.
* Actions: the project's 26 action ids ([`skyjo_env.actions`][]) for the players; chance outcomes
  0..14 are the card values -2..12.
* Chance: nobody knows a face-down card, so a card's value is drawn at the moment it is seen: the
  deal's first discard (R4), every face-down card turned up (setup flips R5, flips R10, the card a
  replace uncovers R9/R10, the final reveal R14/R16) and every card drawn (R8). The player's action
  waits until its cards are drawn, then the engine plays it. A card's probabilities are the counts of
  the hidden cards it can be: the face-down slots and the draw pile are exchangeable until the draw
  pile is reshuffled (R12); after a reshuffle the draw pile holds the known discards and the face-down
  slots the rest, so a draw and a flip are drawn from each alone. The card of the chosen value is
  swapped into place with a hidden card of that value: hidden cards are exchangeable, so this is exact.
* Observations: `observation_tensor(p)` is [`observe()`][skyjo_env.observation.observe] of seat `p`,
  its named parts those of [`layout()`][skyjo_env.observation.layout]; `observation_string(p)` the text
  table `p` sees. At a chance node they show the position before the player's action that waits.
* Returns: the game's result (R20, [`result_shares()`][skyjo_env.rewards.result_shares]): the winners
  share +1, the others -1, all tied 0; from -1 (a lone loser) to +1 (a lone winner), `min_utility` and
  `max_utility`. The game declares itself general-sum (issue 54; no `utility_sum`): the shares do sum
  to 0, but the declaration promises nothing about the sum.

Limits of OpenSpiel with Python games (docs/environments/openspiel.md): the C++ `MCTSBot.step` and
`ISMCTSBot.step` crash on them (use the C++ bot's `mcts_search`, or the Python `MCTSBot`), and a
process that registered a Python game may abort at exit (not seen with this game; `os._exit` is the
way out).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from skyjo_env.actions import DRAW, NUM_ACTIONS, REPLACE, action_name
from skyjo_env.cards import MIN_VALUE, NUM_VALUES, SLOT_FLAGS, SLOTS
from skyjo_env.checks import MAX_STEPS, check_max_steps, checked_action
from skyjo_env.engine import SkyjoEngine
from skyjo_env.observation import layout, observe, size
from skyjo_env.phases import DRAWN, OVER, TAKEN
from skyjo_env.render import render_text
from skyjo_env.rewards import result_shares
from skyjo_env.rules import Rules

try:
    import pyspiel
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError("skyjo_env.openspiel needs OpenSpiel: pip install 'skyjo-env[openspiel]' (open_spiel)") from error

#: The game's name in OpenSpiel's registry.
GAME_NAME = "python_skyjo"
#: The game's parameters and their defaults: `players`, every rule option but `num_players`, `max_steps`.
PARAMETERS: dict[str, Any] = {
    "players": Rules().num_players,
    **{name: value for name, value in Rules().to_dict().items() if name != "num_players"},
    "max_steps": MAX_STEPS,
}

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Skyjo (skyjo-env)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=8,
    min_num_players=2,
    provides_information_state_string=False,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def rules_of(params: dict[str, Any]) -> Rules:
    """The [`Rules`][skyjo_env.rules.Rules] of game parameters (`players` and the rule options);
    `ValueError` for an unknown or bad one."""
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} of {GAME_NAME}; parameters are {sorted(PARAMETERS)}")
    options = {name: value for name, value in params.items() if name not in ("players", "max_steps")}
    try:
        return Rules(num_players=params.get("players", PARAMETERS["players"]), **options)
    except ValueError as error:  # (the parameter `players` is the rules' `num_players`)
        raise ValueError(f"{GAME_NAME}: {str(error).replace('num_players=', 'players=')}") from None


class SkyjoGame(pyspiel.Game):
    """The game `python_skyjo`; `params` as [`PARAMETERS`][] (missing ones take their defaults)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        self.rules = rules_of(params)
        check_max_steps(params["max_steps"])
        self.max_steps = int(params["max_steps"])
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_VALUES,
            num_players=self.rules.num_players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=None,  # general-sum
            max_game_length=self.max_steps,
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> SkyjoState:
        """A new game: a chance node deals its first discard (R4)."""
        return SkyjoState(self)

    def state_of(self, engine: SkyjoEngine) -> SkyjoState:
        """A state at the position of `engine`'s one game (of this game's rules, at a decision), its
        hidden cards from then on drawn as chance outcomes, as if the draw pile was never reshuffled.

        Its OpenSpiel history starts there, so OpenSpiel's serialization (which replays the history
        from a new game) does not restore it: keep the engine's game ([`export_game()`][skyjo_env.engine.SkyjoEngine.export_game]) instead."""
        if engine.batch_size != 1 or engine.rules != self.rules:
            raise ValueError(f"engine must hold one game under {self.rules}")
        state = SkyjoState(self)
        state._engine = engine
        state._dealt = False
        state._round_shuffles = int(engine.shuffles[0])
        state._player = state._next_player()
        return state

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> SkyjoObserver:
        """The observer of the project's observation (no perfect-recall information state)."""
        if params:
            raise ValueError(f"{GAME_NAME}'s observer takes no parameters, got {params}")
        if iig_obs_type is not None and (
            iig_obs_type.perfect_recall
            or not iig_obs_type.public_info
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(
                f"{GAME_NAME} provides the player's observation only "
                "(IIGObservationType(perfect_recall=False), public and single-player private information)"
            )
        return SkyjoObserver(self.rules.num_players)


class SkyjoState(pyspiel.State):
    """A position of `python_skyjo`: the engine's game, and the cards still to draw for the action that waits."""

    def __init__(self, game: SkyjoGame) -> None:
        super().__init__(game)
        self._max_steps = game.max_steps
        self._engine = SkyjoEngine(game.rules, 1, seed=0, auto_reset=False)
        self._dealt = True  # the round's first discard is still to draw
        self._waiting: int | None = None  # the player action that waits for its cards
        self._reveals: list[int] = []  # flat grid cells (seat * 12 + slot) to draw before it is played
        self._drawn: list[int] = []  # its cells drawn already (still face down until it is played)
        self._round_ends = False  # the waiting action ends the round (its cells: every face-down one)
        self._round_shuffles = int(self._engine.shuffles[0])  # the engine's shuffles when the round was dealt
        self._returns = np.zeros(game.rules.num_players)
        self._mask: np.ndarray | None = None
        self._player = self._next_player()

    @property
    def engine(self) -> SkyjoEngine:
        """The engine of one game that plays the rules (its hidden cards are placeholders until drawn)."""
        return self._engine

    def card_to_draw(self) -> tuple[str, int] | None:
        """At a chance node, which card its outcome is: `("discard", 0)` the round's first discard
        (R4), `("slot", seat * 12 + slot)` a face-down card turned up, `("draw", 0)` the draw pile's
        top (R8; R12 if it must be reshuffled first); `None` elsewhere."""
        if self._dealt:
            return ("discard", 0)
        if self._reveals:
            return ("slot", self._reveals[0])
        return ("draw", 0) if self._waiting is not None else None

    # ------------------------------------------------------------------ OpenSpiel's State API
    def current_player(self) -> int:
        """The seat to act, `CHANCE` while a card is to draw, `TERMINAL` at the end."""
        return self._player

    def _legal_actions(self, player: int) -> list[int]:
        return np.flatnonzero(self._legal_mask()).tolist() if self._player >= 0 else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The values (0..14 for -2..12) the card to draw can take, with their exact probabilities."""
        counts = self._hidden_counts().tolist()
        total = sum(counts)
        return [(v, n / total) for v, n in enumerate(counts) if n]

    def _apply_action(self, action: int) -> None:
        if self._player == pyspiel.PlayerId.CHANCE:
            self._draw_card(int(action) + MIN_VALUE)
        else:
            self._act(action)
        self._mask = None
        self._player = self._next_player()

    def _act(self, action: int) -> None:
        """A player's action: played now, or once the cards it turns up or draws are drawn."""
        e = self._engine
        a = checked_action(action, self._legal_mask(), f"seat {self._player}")
        if a == DRAW:
            self._waiting = a
            return
        if a >= REPLACE:
            seat, phase = int(e.current[0]), int(e.phase[0])
            cell = seat * SLOTS + (a - REPLACE) % SLOTS
            down = self._face_down()
            self._reveals = [cell] if down[cell] else []
            # R15: the last final turn ends the round, and every face-down card is turned up (R14, R16).
            self._round_ends = phase in (DRAWN, TAKEN) and e.ender[0] >= 0 and e.final_turns[0] == 1
            if self._round_ends:
                self._reveals += [c for c in np.flatnonzero(down).tolist() if c != cell]
            if self._reveals:
                self._waiting = a
                return
        self._play(a)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"card {int(action) + MIN_VALUE}"
        return action_name(action)

    def is_terminal(self) -> bool:
        return self._player == pyspiel.PlayerId.TERMINAL

    def returns(self) -> list[float]:
        """Each seat's share of the result (R20) once the game ended, else 0."""
        return self._returns.tolist()

    def __str__(self) -> str:
        return render_text(self._engine)

    def _next_player(self) -> int:
        e = self._engine
        if self._dealt or self._waiting is not None:
            return int(pyspiel.PlayerId.CHANCE)
        if e.phase.item(0) == OVER or e.steps.item(0) >= self._max_steps:
            return int(pyspiel.PlayerId.TERMINAL)
        return int(e.current.item(0))

    def _legal_mask(self) -> np.ndarray:
        """`(26,)` bool: the legal actions of the seat to act (kept until the next action)."""
        if self._mask is None:
            self._mask = self._engine.legal_mask()[0]
        return self._mask

    # ------------------------------------------------------------------ the cards drawn by chance
    def _face_down(self) -> np.ndarray:
        """`(P * 12,)` bool: the grid cells still face down (removed ones are face up)."""
        return ~SLOT_FLAGS[self._engine.face_up[0]].reshape(-1)

    def _reshuffled(self) -> bool:
        """The draw pile was reshuffled (R12) in this round: it holds known cards, apart from the face-down slots."""
        return int(self._engine.shuffles[0]) > self._round_shuffles

    def _pool(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The hidden cards the card to draw can be: grid cells, draw-pile indices, and their values."""
        e = self._engine
        n = int(e.draw_size[0])
        down = self._face_down()
        down[self._drawn] = False
        cells = np.flatnonzero(down)
        if self._dealt:
            piles = np.arange(n)
        elif self._reveals:  # a face-down card
            piles = np.arange(0 if self._reshuffled() else n)
        elif n == 0:  # a draw from the discards about to be reshuffled: every one but the top (R12)
            return cells[:0], np.arange(0), e.discard_pile[0, : int(e.discard_size[0]) - 1]
        else:  # a draw
            piles = np.arange(n)
            cells = cells[:0] if self._reshuffled() else cells
        values = np.concatenate([e.values[0].reshape(-1)[cells], e.draw_pile[0, piles]])
        return cells, piles, values

    def _hidden_counts(self) -> np.ndarray:
        """`(15,)` per value: the hidden cards the card to draw can be (with the deal's discard itself)."""
        values = self._pool()[2].astype(np.int64) - MIN_VALUE
        if self._dealt:
            values = np.append(values, int(self._engine.discard_pile[0, 0]) - MIN_VALUE)
        return np.bincount(values, minlength=NUM_VALUES)

    def _draw_card(self, value: int) -> None:
        """Put a card of `value` where the card to draw is, swapping it with a hidden card of that
        value; play the waiting action once its cards are drawn. `ValueError` for a value no hidden card has."""
        e = self._engine
        counts = self._hidden_counts()
        if not 0 <= value - MIN_VALUE < NUM_VALUES or not counts[value - MIN_VALUE]:
            possible = [v for v, n in enumerate(counts.tolist()) if n]
            raise ValueError(
                f"chance outcome {value - MIN_VALUE} (card {value}) is not possible here; the outcomes are {possible}"
            )
        cells, piles, values = self._pool()
        if self._dealt:  # the first discard, counted as seen when dealt
            self._swap_in(("discard", 0), value, cells, piles, values)
            self._dealt = False
        elif self._reveals:
            self._drawn.append(self._reveals.pop(0))
            self._swap_in(("cell", self._drawn[-1]), value, cells, piles, values)
        elif e.draw_size[0] == 0:  # R12: the engine reshuffles, then the top card is the one drawn
            self._play(DRAW)
            n = int(e.draw_size[0])
            self._swap_in(("held", 0), value, cells[:0], np.arange(n), e.draw_pile[0, :n])
            return
        else:
            self._swap_in(("pile", int(e.draw_size[0]) - 1), value, cells, piles, values)
        if not self._reveals and self._waiting is not None:
            self._play(self._waiting)

    def _swap_in(
        self, where: tuple[str, int], value: int, cells: np.ndarray, piles: np.ndarray, values: np.ndarray
    ) -> None:
        """Swap the card at `where` with the first hidden card of `value` among `cells` and `piles`."""
        e = self._engine
        grid, pile = e.values[0].reshape(-1), e.draw_pile[0]
        arrays = {"cell": grid, "pile": pile, "discard": e.discard_pile[0], "held": e.held}
        kind, at = where
        current = int(arrays[kind][at])
        if current == value:
            return
        if kind == "discard":  # the dealt discard goes back among the unseen cards, the new one leaves them
            e.unseen[0, current - MIN_VALUE] += 1
            e.unseen[0, value - MIN_VALUE] -= 1
        i = int(np.flatnonzero(values == value)[0])
        if i < cells.size:
            grid[cells[i]] = current
        else:
            pile[piles[i - cells.size]] = current
        arrays[kind][at] = value

    def _play(self, action: int) -> None:
        """Let the engine play `action` (legal and its cards drawn); a new round's first discard is then to draw."""
        e = self._engine
        self._waiting = None
        self._drawn = []
        result = e.step(np.array([action]), check=False)
        if result.round_over[0] != self._round_ends and action >= REPLACE:
            raise RuntimeError("the engine ended a round that the OpenSpiel state did not foresee (or not one it did)")
        self._round_ends = False
        if result.game_over[0]:
            self._returns = result_shares(result.winners)[0]
        elif result.round_over[0]:
            self._dealt = True
            self._round_shuffles = int(e.shuffles[0])


class SkyjoObserver:
    """The project's observation ([`observe()`][skyjo_env.observation.observe]) as OpenSpiel's observer:
    `tensor`, `dict` (the parts of [`layout()`][skyjo_env.observation.layout]), `set_from`, `string_from`."""

    def __init__(self, num_players: int) -> None:
        self.tensor = np.zeros(size(num_players), dtype=np.float32)
        self.dict = {name: self.tensor[part] for name, part in layout(num_players).items()}

    def set_from(self, state: SkyjoState, player: int) -> None:
        """The observation of seat `player`."""
        self.tensor[:] = observe(state.engine, player)[0]

    def string_from(self, state: SkyjoState, player: int) -> str:
        """The text table seat `player` sees."""
        return render_text(state.engine, 0, player)


pyspiel.register_game(_GAME_TYPE, SkyjoGame)
