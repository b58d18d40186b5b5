"""
# Skyjo

| Creation           | `pettingzoo.make("aec", "skyjo_env/skyjo_v0")` or `skyjo_env.env()`     |
|--------------------|------------------------------------------------------------------------|
| Actions            | Discrete                                                               |
| Parallel API       | No                                                                     |
| Manual Control     | No                                                                     |
| Agents             | `agents = ['player_0', ..., 'player_{P-1}']`                           |
| Agents             | 2 to 8 (option `num_players`, default 2)                               |
| Action Shape       | ()                                                                     |
| Action Values      | Discrete(26)                                                           |
| Observation Shape  | `{"observation": (38 * P + 54,), "action_mask": (26,)}`; 365 padded    |
| Observation Values | observation float32 (see below), action_mask int8 {0, 1}               |

Skyjo is a card game for 2 to 8 players (rules: RULES.md R1..R20). Each player has a grid of
3 x 4 cards, face down at first; on each turn a player takes the discard pile's top card or draws
one, and swaps it into the grid or (a drawn card) discards it and turns a card up. A column of
three equal face-up cards is removed. A round ends one lap after a player has turned up all their
cards; the game ends when a total reaches 100, and the lowest total wins.

This environment is a view over a [`SkyjoEngine`][] with one game and no
auto-reset: the engine holds every rule.

### Observation Space

A dict per agent: `"observation"` is the flat float32 vector of
[`skyjo_env.observation`][] (38 * P + 54 entries, seats in order relative to the observer,
nothing the observer may not see; with option `obs_type="padded"`, 365 entries at every player
count: eight seats, the absent ones 0, and a one-hot of the count), `"action_mask"` is an int8 vector of the 26 actions
with 1 for each legal action. The mask is all zeros for every agent except the one to act.

### Action Space

| id      | name         | meaning                                                                    |
|---------|--------------|----------------------------------------------------------------------------|
| 0       | `draw`       | draw the top card of the draw pile (R8, R10)                               |
| 1       | `take`       | take the top card of the discard pile (R8, R9)                             |
| 2..13   | `replace k`  | put the card in hand into slot `k = id - 2` (slots are `row * 4 + column`) |
| 14..25  | `flip k`     | turn slot `k = id - 14` face up: a setup flip (R5), or discard the drawn   |
|         |              | card and flip (R10)                                                        |

A turn takes one or two actions (setup: two flips per player, in seat order; then `take` +
`replace`, `draw` + `replace`, or `draw` + `flip`), so the same agent may act several times in a
row: always read `agent_selection`.

### Rewards

Option `reward`:

* `"result"` (default): at the end of the game the winners (lowest total, R20) share +1 and the
  others share -1, so rewards sum to 0; if all tie, all get 0. Zero at every other step.
* `"score"`: at the end of every round, the mean round score of the opponents minus one's own.
* `"lead"`: at the end of every round, the change in one's lead over the best opponent (the
  lowest opponent total minus one's own); a game's rewards add up to its final lead.
* `"none"`: always 0.
* a mapping of those to weights, e.g. `{"score": 1, "result": 20}`: their weighted sum.

An action is a Python or numpy integer (a 0-d array too), or `None` for an agent that is done;
anything else raises `skyjo_env.checks.ActionTypeError` (a `TypeError` and a `ValueError`) naming
it, and an integer outside 0..25 raises a `ValueError`, in `raw_env` and `env()` alike (checks, not
`assert`s: the same under `python -O`). Legality is checked once per step, in `raw_env.step`, and
an illegal action id is handled in one method: `raw_env` raises a `ValueError` that names the action
and the legal ones; `env()` (a [`LoseOnIllegalEnv`][]) ends the game with -1 for the agent that made
it and 0 for the others, every agent terminated and truncated: PettingZoo's classic convention, as
its `TerminateIllegalWrapper` plays it, without that wrapper's second check (it built an
observation to read the mask). When the game is over, every agent is stepped once more with `None` (PettingZoo's
dead steps) and leaves `agents`; a step after that raises a `ValueError` that says to `reset()`.

### Options

As every view takes them ([`EnvOptions`][skyjo_env.env_options.EnvOptions], declared once): every field of [`Rules`][skyjo_env.rules.Rules] (`num_players`,
`column_rule`, `column_rule_at_final_reveal`, `end_score`, `next_starter`, `episode`) as a keyword,
or `rules=Rules(...)`; `seed` (seeds the first `reset` that is given none); `max_steps` (truncate
the game after this many actions of all agents together; default
[`MAX_STEPS`][skyjo_env.checks.MAX_STEPS]); `render_mode` (`"human"` prints the text table, `"ansi"`
returns it, `"rgb_array"` returns an image; all show public information only); `obs_type`
(`"table"`, the default, or `"padded"`: the same layout at every player count, see
[`skyjo_env.observation`][]); and `reward`.

At the end of the game each agent's info holds `"total"` (its game total) and `"winner"`.
`reset(seed=...)` seeds the deal; `options` is accepted and unused.

### Version History

* v0: Initial version.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from skyjo_env import render
from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.checks import action_id, check_seed, checked_action
from skyjo_env.engine import SkyjoEngine
from skyjo_env.env_options import EnvOptions, view_signature
from skyjo_env.observation import observe_as
from skyjo_env.phases import PHASE_NAMES
from skyjo_env.rewards import rewards as reward_of
from skyjo_env.spaces import action_space, mask_space, observation_space

#: The options this view takes ([`EnvOptions`][skyjo_env.env_options.EnvOptions]), besides the rule options.
ENV_OPTIONS = ("reward", "seed", "max_steps", "render_mode", "obs_type")


def env(**options: Any) -> AECEnv:
    """A [`LoseOnIllegalEnv`][] (an illegal move loses the game) in PettingZoo's order-enforcing
    wrapper and the [`ActionIdWrapper`][]; `options` as [`raw_env`][]."""
    return wrappers.OrderEnforcingWrapper(ActionIdWrapper(LoseOnIllegalEnv(**options)))


class ActionIdWrapper(wrappers.BaseWrapper):
    """Passes on an action id 0..25 as an int (or `None`): `ActionTypeError` naming what is no action
    id, `ValueError` naming an id out of range, raised before the environment's legality check, so an
    id out of range never loses a game (the place of PettingZoo's `AssertOutOfBoundsWrapper`, whose
    `assert` vanishes under `python -O`)."""

    def step(self, action: Any) -> None:
        if action is not None:
            action = action_id(action)
            if not 0 <= action < NUM_ACTIONS:
                raise ValueError(f"action {action} is out of range; action ids are 0..{NUM_ACTIONS - 1}")
        super().step(action)


class raw_env(AECEnv):
    """Skyjo as a PettingZoo AEC environment; see the module docstring."""

    metadata: dict[str, Any] = {
        "name": "skyjo_v0",
        "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 2,
    }
    __signature__ = view_signature(ENV_OPTIONS)  #: what help() shows: the options of EnvOptions

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self.options = o = EnvOptions.of(ENV_OPTIONS, self.metadata["render_modes"], options)
        self._seed = o.seed  # for the first reset that gets none
        self.obs_type = obs_type = o.table_obs_type
        self.rules = rules = o.rules
        self.engine = SkyjoEngine(rules, 1, auto_reset=False)
        self.reward = o.reward
        self.render_mode = o.render_mode
        self.max_steps = o.max_steps
        self.possible_agents = [f"player_{i}" for i in range(rules.num_players)]
        self.agents: list[str] = []
        self.action_spaces = {a: action_space() for a in self.possible_agents}
        self.observation_spaces = {
            a: gymnasium.spaces.Dict(
                {"observation": observation_space(rules, obs_type=obs_type), "action_mask": mask_space()}
            )
            for a in self.possible_agents
        }
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self._mask: np.ndarray | None = None  # legal actions of the seat to act, cached per state

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        check_seed(seed)  # (a bool, a float or a negative number seeds no deal)
        if seed is None:
            seed, self._seed = self._seed, None
        self.engine.reset(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._mask = None
        self.agent_selection = self.possible_agents[int(self.engine.current[0])]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        if seat == self.engine.current[0]:
            mask = self._legal().astype(np.int8)  # all zeros once the game is over
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": observe_as(self.obs_type, self.engine, seat)[0], "action_mask": mask}

    def step(self, action: int | np.integer | None) -> None:
        if not self.agents:
            raise ValueError("the game is over and every agent has left it; call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = action_id(action)  # ActionTypeError for what is no action id: never handled as illegal
        try:  # the step's one check of legality, against the engine's legal actions
            checked_action(a, self._legal(), f"{agent} in phase {PHASE_NAMES[int(self.engine.phase[0])]}")
        except ValueError as error:
            self._illegal_action(agent, error)
            return
        self._cumulative_rewards[agent] = 0.0
        result = self.engine.step(np.array([a]), check=False)
        self._mask = None
        rewards = reward_of(self.reward, result)[0].tolist()
        self.rewards = {name: rewards[self._seat[name]] for name in self.agents}
        if result.game_over[0]:
            self.terminations = dict.fromkeys(self.agents, True)
            for name in self.agents:
                seat = self._seat[name]
                self.infos[name] = {"total": int(result.totals[0, seat]), "winner": bool(result.winners[0, seat])}
            self.agent_selection = self.possible_agents[(self._seat[agent] + 1) % len(self.possible_agents)]
        else:
            if self.max_steps is not None and self.engine.steps[0] >= self.max_steps:
                self.truncations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.possible_agents[int(self.engine.current[0])]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        return render.rendered(self.render_mode, self.engine, 0)

    def close(self) -> None:
        """Nothing to release: rendering opens no window."""

    # ------------------------------------------------------------------ helpers
    def _illegal_action(self, agent: str, error: ValueError) -> None:
        """What an illegal action id of `agent` does (`error` names it and the legal ones): raise it."""
        raise error

    def _legal(self) -> np.ndarray:
        if self._mask is None:
            self._mask = self.engine.legal_mask()[0]
        return self._mask


class LoseOnIllegalEnv(raw_env):
    """A [`raw_env`][] where an illegal action id loses the game, as [`env()`][env] plays it: -1 for
    the agent that made it, 0 for the others, every agent terminated and truncated, then PettingZoo's
    dead steps (the behaviour of PettingZoo's `TerminateIllegalWrapper(illegal_reward=-1)`, with the
    one legality check of `raw_env.step`). Its ids out of range raise in `env()`'s [`ActionIdWrapper`][]."""

    def _illegal_action(self, agent: str, error: ValueError) -> None:
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = -1.0
        self._accumulate_rewards()
        self._deads_step_first()
