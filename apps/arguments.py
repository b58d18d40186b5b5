"""Argument types and option groups that every `skyjo` subcommand shares: agent specs, integer
ranges, player counts, folder names, the rule options, and the check for optional dependencies (extras)."""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable, Sequence
from typing import Any

from skyjo_env.limits import parse_float, parse_int
from skyjo_env.rules import EPISODES, NEXT_STARTERS, Rules


class MissingExtra(ValueError):
    """A command needs an optional dependency group (an *extra*) that is not installed."""


def require(extra: str, *modules: str) -> None:
    """`MissingExtra` naming `extra` unless every module in `modules` can be imported."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtra(
            f"this needs the '{extra}' extra: pip install 'skyjo-env[{extra}]' (missing: {', '.join(missing)})"
        )


def player_counts(text: str) -> int | list[int]:
    """argparse type: `--players` as one count 2..8 (`4`), a range (`2-8`) or a list (`3,5,8`)
    of distinct counts, as `skyjo train` takes it."""
    from skyjo_env.mixed_games import check_player_counts
    from skyjo_env.train.config import parse_players

    value = parse_players(text)
    try:
        if isinstance(value, list):
            check_player_counts(value)
        elif not 2 <= value <= 8:
            raise ValueError(f"{value} is out of range; use 2 to 8, a range (2-8) or a list (3,5,8)")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def agent_spec(text: str) -> str:
    """argparse type: an agent spec that can name an agent (registered name, path, module:attr, ...)."""
    from skyjo_env.agents import specs

    try:
        specs.check(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("; known agents:", "; choose from:", 1)) from None
    return text


def integer(text: str) -> int:
    """argparse type: an integer of ASCII digits, which the API then checks (its message names the value)."""
    try:
        return parse_int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def int_range(low: int, high: int | None, *, limit: int | None = None) -> Callable[[str], int]:
    """argparse type: an integer of ASCII digits in `low..high` (no upper bound if `high` is None), and
    at most `limit` ([`skyjo_env.limits`][]: a size, whose error names the limit)."""

    def parse(text: str) -> int:
        try:
            value = parse_int(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if limit is not None and value > limit:
            raise argparse.ArgumentTypeError(f"{value:,} is above the limit of {limit:,} (skyjo_env.limits)")
        if value < low or (high is not None and value > high):
            allowed = f"{low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range; use {allowed}")
        return value

    return parse


def seconds(text: str) -> float:
    """argparse type: a positive finite number of seconds (ASCII digits)."""
    try:
        value = parse_float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is out of range; use a positive number of seconds")
    return value


def add_move_timeout(parser: argparse.ArgumentParser) -> None:
    """`--move-timeout SECONDS`: every agent's time budget (see [`call_policy()`][skyjo_env.opponents.call_policy])."""
    parser.add_argument("--move-timeout", type=seconds, default=None, metavar="SECONDS",
                        help="stop (exit 2, nothing written) when an agent's call takes more than SECONDS per move it "
                        "decides (checked when the call returns; default: no limit)")  # fmt: skip


def folder_name(text: str) -> str:
    """argparse type: a folder's name, refused if empty (an empty name would mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name is not a folder; name one (e.g. runs/mine)")
    return text


def add_rule_arguments(parser: argparse.ArgumentParser, *, defaults: bool = True) -> None:
    """Rule options (`Rules` fields other than `num_players`).

    With `defaults=False` an option not given is left out of the namespace, so that a run's saved
    or configured rules stand (`skyjo train`).
    """
    default: Callable[[Any], Any] = (lambda value: value) if defaults else (lambda value: argparse.SUPPRESS)
    group = parser.add_argument_group("rules (RULES.md)")
    group.add_argument(
        "--no-column-rule", action="store_true", default=default(False), help="turn off column removal (R13)"
    )
    group.add_argument("--no-column-rule-at-final-reveal", action="store_true", default=default(False),
                       help="no column removal when the last cards are turned up for scoring (R14)")  # fmt: skip
    group.add_argument("--end-score", type=int_range(1, None), default=default(Rules.end_score), metavar="N",
                       help=f"the game ends once a total reaches N (R19; default {Rules.end_score})")  # fmt: skip
    group.add_argument("--next-starter", choices=NEXT_STARTERS, default=default(Rules.next_starter),
                       help=f"who starts rounds after the first (R7; default {Rules.next_starter})")  # fmt: skip
    group.add_argument("--episode", choices=EPISODES, default=default(Rules.episode),
                       help=f"'game': rounds until the end score (R19); 'round': one round (default {Rules.episode})")  # fmt: skip


def rule_options(args: argparse.Namespace) -> dict[str, Any]:
    """The `Rules` options (but `num_players`) that [`add_rule_arguments()`][add_rule_arguments] flags set."""
    out: dict[str, Any] = {}
    if hasattr(args, "no_column_rule"):
        out["column_rule"] = not args.no_column_rule
    if hasattr(args, "no_column_rule_at_final_reveal"):
        out["column_rule_at_final_reveal"] = not args.no_column_rule_at_final_reveal
    for name in ("end_score", "next_starter", "episode"):
        if hasattr(args, name):
            out[name] = getattr(args, name)
    return out


def rules_from_args(args: argparse.Namespace, players: int) -> Rules:
    """The [`Rules`][] given by [`add_rule_arguments()`][add_rule_arguments] options, for `players` players."""
    return Rules.from_dict({**rule_options(args), "num_players": players})


def build_agents(specs_: Sequence[str], rules: Rules, seed: int | None) -> list[Any]:
    """The agents of `specs_` for a table under `rules` (agent `i` seeded `seed + i`)."""
    from skyjo_env import agents

    return [agents.make(spec, rules=rules, seed=None if seed is None else seed + i) for i, spec in enumerate(specs_)]
