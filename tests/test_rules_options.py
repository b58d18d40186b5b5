"""``Rules``: validation of every option, immutability and the dict round trip."""

from __future__ import annotations

import dataclasses
import json

import pytest

from skyjo_env import Rules

BOOLS = ["True", "False"]


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("num_players", 1, ["2", "8"]),  # R2
        ("num_players", 9, ["2", "8"]),
        ("num_players", 2.0, ["2", "8"]),
        ("num_players", True, ["2", "8"]),
        ("num_players", "4", ["2", "8"]),
        ("column_rule", "yes", BOOLS),  # R13
        ("column_rule", 1, BOOLS),
        ("column_rule", None, BOOLS),
        ("column_rule_at_final_reveal", 0, BOOLS),  # R14
        ("end_score", 0, ["1 to 1000"]),  # R19
        ("end_score", -100, ["1 to 1000"]),
        ("end_score", 99.5, ["1 to 1000"]),
        ("end_score", False, ["1 to 1000"]),
        ("end_score", "100", ["1 to 1000"]),
        ("end_score", 1001, ["1 to 1000"]),  # R19: totals are int16
        ("end_score", 10**30, ["1 to 1000"]),
        ("next_starter", "winner", ["'round_winner'", "'round_ender'"]),  # R7
        ("next_starter", None, ["'round_winner'", "'round_ender'"]),
        ("episode", "games", ["'game'", "'round'"]),
        ("episode", 1, ["'game'", "'round'"]),
    ],
)
def test_bad_option_raises_value_error_naming_field_value_and_allowed(
    field: str, value: object, allowed: list[str]
) -> None:
    """Every invalid option value is a ValueError saying which field, which value and what is allowed."""
    with pytest.raises(ValueError) as info:
        Rules(**{field: value})
    message = str(info.value)
    assert field in message
    assert repr(value) in message
    for word in allowed:
        assert word in message


@pytest.mark.parametrize("players", range(2, 9))
def test_every_player_count_from_2_to_8_is_accepted(players: int) -> None:
    """R2: 2..8 players are valid."""
    assert Rules(num_players=players).num_players == players


def test_defaults_follow_rules_md() -> None:
    """Defaults: column rule on (R13), also at the final reveal (R14), end at 100 (R19), round winner starts (R7)."""
    rules = Rules()
    assert rules.column_rule is True
    assert rules.column_rule_at_final_reveal is True
    assert rules.end_score == 100
    assert rules.next_starter == "round_winner"
    assert rules.episode == "game"


@pytest.mark.parametrize("field", ["num_players", "column_rule", "end_score", "next_starter", "episode"])
def test_rules_are_frozen(field: str) -> None:
    """Options cannot be changed after construction (an engine relies on its rules staying put)."""
    rules = Rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(rules, field, getattr(Rules(num_players=3, column_rule=False, end_score=50), field))


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(num_players=8, column_rule=False, column_rule_at_final_reveal=False),
        Rules(num_players=5, end_score=1, next_starter="round_ender", episode="round"),
    ],
)
def test_to_dict_from_dict_round_trip(rules: Rules) -> None:
    """to_dict is plain JSON data with every option; from_dict rebuilds an equal (and equally hashed) Rules."""
    data = json.loads(json.dumps(rules.to_dict()))
    assert set(data) == {f.name for f in dataclasses.fields(Rules)}
    again = Rules.from_dict(data)
    assert again == rules and hash(again) == hash(rules)


def test_from_dict_rejects_unknown_options() -> None:
    """from_dict names the unknown key instead of ignoring it."""
    data = {**Rules().to_dict(), "colum_rule": False}
    with pytest.raises(ValueError, match="colum_rule"):
        Rules.from_dict(data)


def test_from_dict_validates_values() -> None:
    """from_dict goes through the same validation as the constructor."""
    data = {**Rules().to_dict(), "num_players": 12}
    with pytest.raises(ValueError, match="num_players=12"):
        Rules.from_dict(data)
