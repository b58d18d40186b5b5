"""The ``skyjo`` command: one argparse subcommand per job.

Each subcommand has an ``add_<name>_parser(subparsers)`` that declares its arguments and sets
``func`` to the function that runs it; :func:`build_parser` wires them all. Shared argument helpers
(:func:`add_rule_arguments`, :func:`rules_from_args`, :func:`agent_name`) are for every subcommand.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from skyjo_env.rules import NEXT_STARTERS, Rules


def agent_name(text: str) -> str:
    """argparse type: a registered agent name (the error lists the known ones)."""
    import agents

    if text not in agents.names():
        raise argparse.ArgumentTypeError(f"unknown agent {text!r}; choose from: {', '.join(agents.names())}")
    return text


def _int_range(low: int, high: int | None) -> Callable[[str], int]:
    """argparse type: an integer in ``low..high`` (no upper bound if ``high`` is None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low or (high is not None and value > high):
            allowed = f"{low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range; use {allowed}")
        return value

    return parse


def add_rule_arguments(parser: argparse.ArgumentParser) -> None:
    """Rule options (``Rules`` fields other than ``num_players`` and ``episode``)."""
    group = parser.add_argument_group("rules (RULES.md)")
    group.add_argument("--no-column-rule", action="store_true", help="turn off column removal (R13)")
    group.add_argument("--no-column-rule-at-final-reveal", action="store_true",
                       help="no column removal when the last cards are turned up for scoring (R14)")  # fmt: skip
    group.add_argument("--end-score", type=_int_range(1, None), default=Rules.end_score, metavar="N",
                       help=f"the game ends once a total reaches N (R19; default {Rules.end_score})")  # fmt: skip
    group.add_argument("--next-starter", choices=NEXT_STARTERS, default=Rules.next_starter,
                       help="who starts rounds after the first (R7)")  # fmt: skip


def rules_from_args(args: argparse.Namespace, players: int) -> Rules:
    """The :class:`Rules` given by :func:`add_rule_arguments` options, for ``players`` players."""
    return Rules(
        num_players=players,
        column_rule=not args.no_column_rule,
        column_rule_at_final_reveal=not args.no_column_rule_at_final_reveal,
        end_score=args.end_score,
        next_starter=args.next_starter,
    )


def add_tournament_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tournament",
        help="play complete games among agents and rate them",
        description="Play complete games among agents (seats rotated), print a table and write "
        "tournament.json, tournament.csv and round_scores.png.",
    )
    parser.add_argument("--agents", nargs="+", type=agent_name, required=True, metavar="NAME",
                        help="agent names (repeat a name to enter it twice)")  # fmt: skip
    parser.add_argument("--players", type=_int_range(2, 8), default=2, help="seats per game, 2 to 8 (R2)")
    parser.add_argument("--games", type=_int_range(1, None), default=10_000,
                        help="games to play, rounded up to a multiple of the number of agents")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals, the line-ups and random agents")
    parser.add_argument("--out", default=None, metavar="DIR", help="output folder (default runs/tournament-<P>p)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_rule_arguments(parser)
    parser.set_defaults(func=tournament)


def tournament(args: argparse.Namespace) -> int:
    """Run the ``tournament`` subcommand."""
    import agents
    from train.report import print_table, save
    from train.tournament import run_tournament

    pool = [agents.make(name, seed=args.seed + i) for i, name in enumerate(args.agents)]
    result = run_tournament(
        pool, args.players, args.games, rules=rules_from_args(args, args.players), seed=args.seed,
        progress=not args.no_progress,
    )  # fmt: skip
    print_table(result)
    played = result.games + result.unfinished
    if played != args.games:
        print(f"(games rounded up from {args.games} to {played}: whole rotations of {len(pool)} agents)")
    if result.unfinished:
        print(f"warning: {result.unfinished} game(s) abandoned after too many actions, left out of the figures")
    paths = save(result, args.out or f"runs/tournament-{args.players}p")
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``skyjo`` parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="skyjo", description="skyjo-env: Skyjo engine, agents and tournaments")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_tournament_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``skyjo`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
