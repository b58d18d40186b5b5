"""The options of every environment view, declared and checked once: the views' spine.

Every view ([`raw_env`][skyjo_env.pettingzoo_env.raw_env] and `env()`, [`SkyjoEnv`][skyjo_env.gymnasium_env.SkyjoEnv],
[`SkyjoVectorEnv`][skyjo_env.gymnasium_vector_env.SkyjoVectorEnv], [`SkyjoSB3VecEnv`][skyjo_env.sb3_vec_env.SkyjoSB3VecEnv],
and RLlib's env through the vector view) takes its options as keywords and turns them into one
[`EnvOptions`][] with [`EnvOptions.of()`][EnvOptions.of]: the option names the view takes (its
`ENV_OPTIONS`), and any other keyword is a rule option (or `rules=Rules(...)`). Each field has its
default and its check here, once; a view reads the fields it takes and leaves the others at their
defaults. A new view:

1. lists the options it takes, e.g. `ENV_OPTIONS = ("reward", "seed", "max_steps", "obs_type")`;
2. builds `options = EnvOptions.of(ENV_OPTIONS, render_modes, kwargs)` in its constructor (an
   unknown keyword, a bad value or a mix of `rules=` and rule keywords raises a `ValueError` that
   names it and lists the options, the same in every view);
3. plays the games of an engine ([`SkyjoEngine`][skyjo_env.engine.SkyjoEngine]) or of
   [`LearnerGames`][skyjo_env.learner_games.LearnerGames] (one learner against `options.opponents`),
   which check each step's actions once against the engine's own legal actions;
4. handles an illegal action as it documents (raise, or lose the game: `illegal_action`) in one place.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from skyjo_env.checks import (
    MAX_STEPS,
    check_max_steps,
    check_render_mode,
    check_reward_scale,
    check_seed,
    rules_from,
)
from skyjo_env.observation import check_obs_type
from skyjo_env.rewards import Reward, check_reward
from skyjo_env.rules import Rules

#: The values of option `illegal_action`: lose the game (-1, the episode ends) or raise a `ValueError`.
ILLEGAL_ACTIONS = ("lose", "raise")
#: The values of option `autoreset_mode` (the Gymnasium vector view).
AUTORESET_MODES = ("same_step", "next_step")


@dataclass(frozen=True)
class EnvOptions:
    """Every environment option, with its one default; each view takes some of them (its `ENV_OPTIONS`).

    Attributes:
        rules: the rule options ([`Rules`][]): given as `rules=Rules(...)` or as keywords.
        reward: `"result"`, `"score"`, `"lead"` or `"none"`, or a mapping of them to weights
            ([`skyjo_env.rewards`][]).
        reward_scale: every learner reward is multiplied by this.
        obs_type: `"table"` or `"padded"` ([`skyjo_env.observation`][]); `None`: `"table"`, or
            `"padded"` at mixed tables.
        seed: seeds the first `reset` that is given none (and, in the vector views, the games).
        max_steps: truncate a game after this many actions of all seats; `None` for no limit.
        render_mode: one of the view's render modes, or `None`.
        opponents: the policies of the other seats (one, a line-up, or a pool; see
            [`LearnerGames`][skyjo_env.learner_games.LearnerGames]); `None`: a seeded random player.
        weights: the pool's sampling weights (vector views).
        seat: the learner's seat, or `None` for a random seat per game.
        player_counts: mixed tables: the table sizes the games are split among (vector views).
        illegal_action: what an illegal action id does in the single-game Gymnasium view
            ([`ILLEGAL_ACTIONS`][]).
        autoreset_mode: `"same_step"` or `"next_step"` (the Gymnasium vector view, [`AUTORESET_MODES`][]).
    """

    rules: Rules = field(default_factory=Rules)
    reward: Reward = "result"
    reward_scale: float = 1.0
    obs_type: str | None = None
    seed: int | None = None
    max_steps: int | None = MAX_STEPS
    render_mode: str | None = None
    opponents: Any = None
    weights: Sequence[float] | None = None
    seat: int | None = None
    player_counts: Sequence[int] | None = None
    illegal_action: str = "lose"
    autoreset_mode: str = "same_step"

    def __post_init__(self) -> None:
        check_seed(self.seed)
        check_max_steps(self.max_steps)
        check_reward(self.reward)
        check_reward_scale(self.reward_scale)
        if self.obs_type is not None:
            check_obs_type(self.obs_type)
        if self.illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"illegal_action={self.illegal_action!r} is not allowed; use one of {ILLEGAL_ACTIONS}")
        if self.autoreset_mode not in AUTORESET_MODES:
            raise ValueError(
                f"autoreset_mode={self.autoreset_mode!r} is not allowed; use one of {list(AUTORESET_MODES)}"
            )

    @classmethod
    def of(cls, accepted: Iterable[str], render_modes: Iterable[str], given: Mapping[str, Any]) -> EnvOptions:
        """The options of a view that takes the options `accepted` and renders in `render_modes`,
        from the keywords it was `given`: those in `accepted`, `rules`, and rule options.

        `ValueError` naming an unknown keyword (with every rule and environment option), `rules`
        given with rule keywords, a render mode the view lacks, or a bad value."""
        accepted = tuple(accepted)
        env = {k: v for k, v in given.items() if k in accepted}
        rules = rules_from(
            {k: v for k, v in given.items() if k not in accepted and k != "rules"}, accepted, given.get("rules")
        )
        check_render_mode(env.get("render_mode"), list(render_modes))
        return cls(rules=rules, **env)

    @property
    def table_obs_type(self) -> str:
        """`obs_type` in a view of one table size: `"table"` unless `"padded"` was asked for."""
        return self.obs_type or "table"


def view_signature(accepted: Iterable[str], *leading: inspect.Parameter) -> inspect.Signature:
    """The signature a view taking the options `accepted` shows (`help()`, `inspect.signature()`):
    the `leading` parameters (e.g. `num_envs`), then each option as a keyword with its
    [`EnvOptions`][] default, `rules` (unless leading), and the rule options as `**rule_options`."""
    defaults = {f.name: f.default for f in fields(EnvOptions) if f.default is not MISSING}
    keyword = inspect.Parameter.KEYWORD_ONLY
    options = [inspect.Parameter(name, keyword, default=defaults[name]) for name in accepted]
    return inspect.Signature(
        [
            *leading,
            *options,
            *([] if any(p.name == "rules" for p in leading) else [inspect.Parameter("rules", keyword, default=None)]),
            inspect.Parameter("rule_options", inspect.Parameter.VAR_KEYWORD),
        ]
    )
