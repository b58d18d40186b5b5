"""Checks of the environments' arguments, each failing with a ``ValueError`` that names the legal choices."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from typing import Any

import numpy as np

from skyjo_env.actions import NUM_ACTIONS, action_name
from skyjo_env.rules import Rules

RULE_OPTIONS = tuple(f.name for f in fields(Rules))


def rules_from(options: dict[str, Any], env_options: Iterable[str]) -> Rules:
    """The :class:`Rules` named by keyword ``options``; an unknown name raises, listing all options."""
    unknown = sorted(set(options) - set(RULE_OPTIONS))
    if unknown:
        raise ValueError(
            f"unknown option(s) {unknown}; rule options are {list(RULE_OPTIONS)} and "
            f"environment options are {sorted(env_options)}"
        )
    return Rules(**options)


def check_max_steps(max_steps: Any) -> None:
    """``None`` or a positive integer."""
    if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1):
        raise ValueError(f"max_steps={max_steps!r} is not allowed; use None or a positive integer")


def check_render_mode(render_mode: Any, modes: list[str]) -> None:
    """``None`` or one of ``modes``."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode={render_mode!r} is not allowed; use None or one of {modes}")


def checked_action(action: Any, mask: np.ndarray, who: str) -> int:
    """``action`` as an int if ``mask`` allows it; else a ``ValueError`` naming ``who`` and the legal actions.

    Python and numpy integers (0-d arrays included) are action ids; bools are not.
    """
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        action = action.item()
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        a = int(action)
        if 0 <= a < NUM_ACTIONS and mask[a]:
            return a
        what = f"illegal action {a} ({action_name(a) if 0 <= a < NUM_ACTIONS else 'out of range'})"
    else:
        what = f"action {action!r} is not an action id (an integer 0..{NUM_ACTIONS - 1})"
    if not mask.any():
        raise ValueError(f"{what} for {who}: no action is legal (the game is over; reset it)")
    legal = ", ".join(f"{x} ({action_name(x)})" for x in np.flatnonzero(mask))
    raise ValueError(f"{what} for {who}; legal actions: {legal}")
