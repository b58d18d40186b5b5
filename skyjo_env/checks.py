"""Every check of the environments' and the engine's inputs, each failing with a message that names
the value and what is allowed: rule options, environment options, and actions.

[`illegal_rows()`][illegal_rows] is the one test of whether actions are legal: the engine calls it on its own
legal-action bits; the environments, the opponents and the tournaments through [`check_actions()`][check_actions]
(batches) or [`checked_action()`][checked_action] (one action), each with its own words for who acted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import fields
from typing import Any

import numpy as np

from skyjo_env.actions import NUM_ACTIONS, action_name
from skyjo_env.limits import MAX_GAME_STEPS, check_limit
from skyjo_env.rules import Rules

RULE_OPTIONS = tuple(f.name for f in fields(Rules))
#: The one default of every view's `max_steps`: a game still running at this many actions (of all
#: seats) is truncated, a guard against policies that never end a round (a real game takes a few
#: hundred).
MAX_STEPS = 10_000


class ActionTypeError(TypeError, ValueError):
    """An action that is not an action id at all (a float, a string, `None`, a bool, an array of
    several values): a `TypeError`, and a `ValueError` like every other bad action."""


# ---------------------------------------------------------------------------- options
def is_integer(value: Any) -> bool:
    """A Python or numpy integer, and not a bool (which Python counts as an int)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def rules_from(options: dict[str, Any], env_options: Iterable[str], rules: Rules | None = None) -> Rules:
    """The [`Rules`][] of a view: `rules` itself, or the rule options given as keywords.

    An unknown keyword raises, listing every rule and environment option; giving `rules` and
    rule keywords together raises too.
    """
    unknown = sorted(set(options) - set(RULE_OPTIONS))
    if unknown:
        raise ValueError(
            f"unknown option(s) {unknown}; rule options are {list(RULE_OPTIONS)} and "
            f"environment options are {sorted({*env_options, 'rules'})}"
        )
    if rules is None:
        return Rules(**options)
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a skyjo_env.Rules, not {type(rules).__name__}")
    if options:
        raise ValueError(f"give the rules either as rules=Rules(...) or as keywords, not both ({sorted(options)})")
    return rules


def check_max_steps(max_steps: Any) -> None:
    """`None` or a positive integer up to [`MAX_GAME_STEPS`][skyjo_env.limits.MAX_GAME_STEPS]."""
    if max_steps is not None and (not is_integer(max_steps) or max_steps < 1):
        raise ValueError(f"max_steps={max_steps!r} is not allowed; use None or a positive integer")
    check_limit("max_steps", max_steps, MAX_GAME_STEPS, "actions")


def check_render_mode(render_mode: Any, modes: list[str]) -> None:
    """`None` or one of `modes`."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode={render_mode!r} is not allowed; use None or one of {modes}")


def check_seed(seed: Any, allowed: str = "a non-negative integer") -> None:
    """`None` or a non-negative integer (a bool is none); the message says what is `allowed`."""
    if seed is not None and (not is_integer(seed) or seed < 0):
        raise ValueError(f"seed={seed!r} is not allowed; use None or {allowed}")


def check_reward_scale(reward_scale: Any) -> None:
    """A finite number (not a bool)."""
    if isinstance(reward_scale, bool) or not isinstance(reward_scale, (int, float)) or not np.isfinite(reward_scale):
        raise ValueError(f"reward_scale={reward_scale!r} is not allowed; use a finite number")


def check_seat(seat: Any, num_players: int) -> None:
    """`None` (a random seat) or a seat `0..num_players - 1`."""
    if seat is not None and (not is_integer(seat) or not 0 <= seat < num_players):
        raise ValueError(f"seat={seat!r} is not allowed; use None (random) or a seat 0..{num_players - 1}")


# ---------------------------------------------------------------------------- actions
def illegal_rows(actions: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Rows whose integer action is no legal action id: `legal` holds uint32 bit sets `(n,)` (bit
    `a`: action `a` is legal) or boolean masks `(n, NUM_ACTIONS)`."""
    in_range = (actions >= 0) & (actions < NUM_ACTIONS)
    at = np.where(in_range, actions, 0).astype(np.intp, copy=False)  # (uint64 actions would shift as floats)
    if legal.ndim == 1:
        ok = ((legal.astype(np.int64) >> at) & 1) == 1
    else:
        ok = legal.reshape(-1).take(np.arange(0, legal.size, NUM_ACTIONS) + at)  # row i, column a_i
    return np.flatnonzero(~(in_range & ok))


def check_actions(
    actions: Any, legal: np.ndarray, *, malformed: Callable[[np.ndarray], str], illegal: Callable[[int, int], str]
) -> np.ndarray:
    """`actions` as an int64 array with one legal action id per row of `legal` (see [`illegal_rows()`][illegal_rows]).

    `ValueError(malformed(array))` for a wrong shape or dtype, `ValueError(illegal(row, action))`
    for the first illegal one.
    """
    a = np.asarray(actions)
    if a.shape != (legal.shape[0],) or a.dtype.kind not in "iu":
        raise ValueError(malformed(a))
    bad = illegal_rows(a, legal)
    if bad.size:
        i = int(bad[0])
        raise ValueError(illegal(i, int(a[i])))
    return a.astype(np.int64, copy=False)


def action_id(action: Any) -> int:
    """A Python or numpy integer (a 0-d integer array included) as an int; `ActionTypeError` naming
    anything else (bools, floats, strings, `None`, arrays of several values)."""
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        action = action.item()
    if is_integer(action):
        return int(action)
    raise ActionTypeError(
        f"action {action!r} ({type(action).__name__}) is not an action id; use an integer 0..{NUM_ACTIONS - 1} "
        "(a Python or numpy integer)"
    )


def checked_action(action: Any, mask: np.ndarray, who: str) -> int:
    """`action` as an int if `mask` allows it; else a `ValueError` naming `who` and the legal actions.

    Python and numpy integers (0-d arrays included) are action ids; anything else raises
    [`ActionTypeError`][].
    """
    a = action_id(action)
    if 0 <= a < NUM_ACTIONS and mask[a]:  # (a Python int of any size: no numpy array of it)
        return a
    what = f"illegal action {a} ({action_name(a) if 0 <= a < NUM_ACTIONS else 'out of range'})"
    if not mask.any():
        raise ValueError(f"{what} for {who}: no action is legal (the game is over; reset it)")
    raise ValueError(f"{what} for {who}; legal actions: {legal_names(mask)}")


def legal_names(mask: np.ndarray) -> str:
    """The legal actions of one mask as `14 (flip 0), 15 (flip 1)`."""
    return ", ".join(f"{x} ({action_name(x)})" for x in np.flatnonzero(mask))
