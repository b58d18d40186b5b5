"""Rule options as a frozen, validated value object (RULES.md, every **(decision)** point)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

import numpy as np

NEXT_STARTERS = ("round_winner", "round_ender")
EPISODES = ("game", "round")
#: The highest `end_score`. Game totals are int16 (at most 32,767): before its last round every
#: total is below `end_score`, and a round adds at most 288 (twelve 12s, doubled by R17), so
#: this bound keeps every total, and every losing streak of negative rounds, far inside int16.
MAX_END_SCORE = 1000


@dataclass(frozen=True)
class Rules:
    """Every option of the rules this project implements.

    Python and numpy integers, booleans and strings are all accepted and stored as the Python
    ones, so a `Rules` stays hashable and JSON-serialisable.

    Attributes:
        num_players: 2..8 (R2).
        column_rule: remove a column of three equal face-up cards (R13).
        column_rule_at_final_reveal: the column rule also applies when the remaining cards are
            turned up for scoring (R14).
        end_score: the game ends after a round in which a game total reaches this (R19); 1 to
            [`MAX_END_SCORE`][] (1000).
        next_starter: who starts rounds after the first: `"round_winner"` or `"round_ender"` (R7).
        episode: `"game"` plays rounds until `end_score` (R19); `"round"` ends after one round.
    """

    num_players: int = 2
    column_rule: bool = True
    column_rule_at_final_reveal: bool = True
    end_score: int = 100
    next_starter: Literal["round_winner", "round_ender"] = "round_winner"
    episode: Literal["game", "round"] = "game"

    def __post_init__(self) -> None:
        self._normalise()
        _require_int("num_players", self.num_players, "an integer from 2 to 8 (R2)")
        if not 2 <= self.num_players <= 8:
            raise ValueError(f"num_players={self.num_players!r} is not allowed; use 2 to 8 (R2)")
        for name in ("column_rule", "column_rule_at_final_reveal"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(f"{name}={value!r} is not allowed; use True or False")
        allowed = f"an integer from 1 to {MAX_END_SCORE} (R19)"
        _require_int("end_score", self.end_score, allowed)
        if not 1 <= self.end_score <= MAX_END_SCORE:
            raise ValueError(f"end_score={self.end_score!r} is not allowed; use {allowed}")
        if self.next_starter not in NEXT_STARTERS:
            raise ValueError(f"next_starter={self.next_starter!r} is not allowed; use one of {NEXT_STARTERS} (R7)")
        if self.episode not in EPISODES:
            raise ValueError(f"episode={self.episode!r} is not allowed; use one of {EPISODES}")

    def _normalise(self) -> None:
        """numpy integers, booleans and strings as the Python ones (the dataclass is frozen)."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.bool_):
                object.__setattr__(self, f.name, bool(value))
            elif isinstance(value, np.integer):
                object.__setattr__(self, f.name, int(value))
            elif isinstance(value, np.str_):
                object.__setattr__(self, f.name, str(value))

    def to_dict(self) -> dict[str, Any]:
        """The options as a plain dict (JSON-serialisable)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Build from [`to_dict()`][to_dict] output; unknown keys raise `ValueError`."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown rule option(s) {unknown}; known options are {sorted(known)}")
        return cls(**data)

    def replace(self, **changes: Any) -> Rules:
        """A copy with the options `changes` changed; `ValueError` as [`from_dict()`][from_dict]."""
        return Rules.from_dict({**self.to_dict(), **changes})


def _require_int(name: str, value: Any, allowed: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}={value!r} is not allowed; use {allowed}")
