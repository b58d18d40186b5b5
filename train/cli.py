"""The ``skyjo`` command: one argparse subcommand per job.

Each subcommand has an ``add_<name>_parser(subparsers)`` that declares its arguments and sets
``func`` to the function that runs it; :func:`build_parser` wires them all. The training flags are
generated from :class:`~skyjo_env.train.config.TrainConfig` and
:class:`~skyjo_env.train.rllib_run.RLlibRun` (:mod:`skyjo_env.train.flags`). Bad input of any kind
ends with one line on stderr and exit status 2, before any work is done; set ``SKYJO_TRACEBACK=1``
to see the traceback behind such a line. ``skyjo --help`` and ``skyjo tournament`` need the core
dependencies only; a command that needs an extra says which.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import fields
from pathlib import Path
from typing import Any

from skyjo_env.rules import NEXT_STARTERS, Rules
from skyjo_env.train.config import CHECKPOINT, FIXED_ON_RESUME, TrainConfig, opponent_weight
from skyjo_env.train.flags import add_flags, default_of, given, show_default
from skyjo_env.train.progress import duration
from skyjo_env.train.rllib_run import RLlibRun, add_rllib_flags
from skyjo_env.train.serve import add_serve_parser

#: Exit status of a command that got bad input (as argparse's own errors).
USAGE_ERROR = 2


class MissingExtra(ValueError):
    """A command needs an optional dependency group (an *extra*) that is not installed."""


def require(extra: str, *modules: str) -> None:
    """``MissingExtra`` naming ``extra`` unless every module in ``modules`` can be imported."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtra(f"this needs the '{extra}' extra: pip install 'skyjo-env[{extra}]' (missing: {', '.join(missing)})")


def agent_spec(text: str) -> str:
    """argparse type: an agent spec that can name an agent (registered name, path, module:attr, ...)."""
    from skyjo_env.agents import specs

    try:
        specs.check(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("; known agents:", "; choose from:", 1)) from None
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


def add_rule_arguments(parser: argparse.ArgumentParser, *, defaults: bool = True) -> None:
    """Rule options (``Rules`` fields other than ``num_players``).

    With ``defaults=False`` an option not given is left out of the namespace, so that a run's saved
    or configured rules stand (``skyjo train``).
    """
    default: Callable[[Any], Any] = (lambda value: value) if defaults else (lambda value: argparse.SUPPRESS)
    group = parser.add_argument_group("rules (RULES.md)")
    group.add_argument("--no-column-rule", action="store_true", default=default(False), help="turn off column removal (R13)")
    group.add_argument("--no-column-rule-at-final-reveal", action="store_true", default=default(False),
                       help="no column removal when the last cards are turned up for scoring (R14)")  # fmt: skip
    group.add_argument("--end-score", type=_int_range(1, None), default=default(Rules.end_score), metavar="N",
                       help=f"the game ends once a total reaches N (R19; default {Rules.end_score})")  # fmt: skip
    group.add_argument("--next-starter", choices=NEXT_STARTERS, default=default(Rules.next_starter),
                       help=f"who starts rounds after the first (R7; default {Rules.next_starter})")  # fmt: skip
    group.add_argument("--episode", choices=("game", "round"), default=default(Rules.episode),
                       help=f"'game': rounds until the end score (R19); 'round': one round (default {Rules.episode})")  # fmt: skip


def rule_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``Rules`` options (but ``num_players``) that :func:`add_rule_arguments` flags set."""
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
    """The :class:`Rules` given by :func:`add_rule_arguments` options, for ``players`` players."""
    return Rules.from_dict({**rule_options(args), "num_players": players})


def build_agents(specs_: Sequence[str], rules: Rules, seed: int | None) -> list[Any]:
    """The agents of ``specs_`` for a table under ``rules`` (agent ``i`` seeded ``seed + i``)."""
    from skyjo_env import agents

    return [agents.make(spec, rules=rules, seed=None if seed is None else seed + i) for i, spec in enumerate(specs_)]


# ---------------------------------------------------------------------------- tournament
def add_tournament_parser(subparsers: argparse._SubParsersAction) -> None:
    from skyjo_env import agents

    parser = subparsers.add_parser(
        "tournament",
        help="play complete games among agents and rate them",
        description="Play complete games among agents (seats rotated), print a table and write "
        "tournament.json, tournament.csv, tournament.md and round_scores.png (with matplotlib).",
        epilog=f"Agents: {', '.join(agents.names())}; or a trained agent's file or run folder, "
        "module:attr, path/to/file.py:attr, and alias=SPEC to name one in the table.",
    )
    parser.add_argument("--agents", nargs="+", type=agent_spec, required=True, metavar="SPEC",
                        help="agent specs (repeat one to enter it twice)")  # fmt: skip
    parser.add_argument("--players", type=_int_range(2, 8), default=2, help="seats per game, 2 to 8 (R2)")
    parser.add_argument("--games", type=_int_range(1, None), default=10_000,
                        help="games to play, rounded up to a multiple of the number of agents")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals, the line-ups and random agents")
    parser.add_argument("--out", default=None, metavar="DIR", help="output folder (default runs/tournament-<P>p)")
    parser.add_argument("--no-progress", action="store_true", help="no progress reports")
    add_rule_arguments(parser)
    parser.set_defaults(func=tournament)


def tournament(args: argparse.Namespace) -> int:
    """Run the ``tournament`` subcommand."""
    from skyjo_env.train.report import print_table, save
    from skyjo_env.train.tournament import run_tournament

    rules = rules_from_args(args, args.players)
    out = Path(args.out or f"runs/tournament-{args.players}p")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    pool = build_agents(args.agents, rules, args.seed)
    result = run_tournament(pool, args.players, args.games, rules=rules, seed=args.seed, progress=not args.no_progress)
    print_table(result)
    played = result.games + result.unfinished
    if played != args.games:
        print(f"(games rounded up from {args.games:,} to {played:,}: whole rotations of {len(pool)} agents)")
    paths = save(result, out)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    if "plot" not in paths:
        print("(round_scores.png not drawn: it needs matplotlib, pip install 'skyjo-env[plot]')")
    return 0


# ---------------------------------------------------------------------------- train
def add_train_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a PPO agent, then measure it against the heuristics",
        description="Train a MaskablePPO agent on the batched vector env against a mixture of agents "
        "and its own snapshots (self-play), then print its head-to-head win rates and a tournament "
        "against the heuristics. With no options: the README's main job (2 players, under 20 minutes "
        "on 2 cores). Every TrainConfig field is a flag; a flag that takes 'none' sets the field to None.",
    )
    parser.add_argument("--backend", choices=("sb3", "rllib"), default="sb3",
                        help="sb3: MaskablePPO on one machine (default); rllib: Ray RLlib (needs the distributed extra)")  # fmt: skip
    parser.add_argument("--config", default=None, metavar="FILE", help="a JSON TrainConfig (sb3); flags given here override it")
    parser.add_argument("--resume", default=None, metavar="DIR", help="continue the run saved in DIR (sb3)")
    parser.add_argument("--overwrite", action="store_true", help="start afresh in an --out folder that holds an earlier run")
    parser.add_argument("--no-progress", action="store_true", help="no progress reports")
    sb3 = parser.add_argument_group("training (TrainConfig; the rllib backend reads the flags it shares)")
    add_flags(sb3, TrainConfig, skip=("rules",), shown=_shared_defaults())
    add_rllib_flags(parser.add_argument_group("Ray RLlib backend (RLlibRun)"))
    add_rule_arguments(parser, defaults=False)
    parser.set_defaults(func=train)


def _shared_defaults() -> dict[str, str]:
    """How ``skyjo train --help`` states the defaults of the flags both backends read, where they differ."""
    rllib = {f.name: default_of(f) for f in fields(RLlibRun)}
    notes = {"out_dir": "runs/ppo-<P>p; rllib: runs/rllib-<P>p"}
    for f in fields(TrainConfig):
        if f.name in rllib and f.name not in notes and rllib[f.name] != default_of(f):
            notes[f.name] = f"{show_default(default_of(f))}; rllib: {show_default(rllib[f.name])}"
    return notes


def train_config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` of ``skyjo train`` options: the resumed run's or ``--config``'s, then flags."""
    flags = given(args, TrainConfig)
    if "opponents" in flags:
        flags["opponents"] = dict(opponent_weight(text) for text in flags["opponents"])
    rules = rule_options(args)
    if args.resume:
        if args.config:
            raise ValueError("--resume continues a run with its own config; --config cannot change it")
        saved = TrainConfig.load(Path(args.resume) / CHECKPOINT / "config.json")
        if "out_dir" in flags and Path(flags["out_dir"]) != Path(args.resume):
            raise ValueError(f"--out {flags['out_dir']} differs from --resume {args.resume}: a resumed run stays in its folder")
        fixed = {k: v for k, v in flags.items() if k in FIXED_ON_RESUME and v != getattr(saved, k)}
        if fixed:
            name, value = next(iter(fixed.items()))
            raise ValueError(
                f"--{name.replace('_', '-')} {value} cannot change when resuming: the run was trained with "
                f"{name}={getattr(saved, name)!r} ({', '.join(FIXED_ON_RESUME)} fix the network and its inputs)"
            )
        base = saved.to_dict() | {"out_dir": args.resume}
    elif args.config:
        base = TrainConfig.load(args.config).to_dict()
    else:
        base = {}
    if "out_dir" not in flags and "out_dir" not in base:
        base["out_dir"] = f"runs/ppo-{flags.get('players', base.get('players', TrainConfig.players))}p"
    if flags.get("reward") == "result" and "shaping" not in flags:
        base["shaping"] = False
    base["rules"] = {**base.get("rules", {}), **rules}
    return TrainConfig.from_dict({**base, **flags})


def rllib_run_from_args(args: argparse.Namespace) -> RLlibRun:
    """The :class:`RLlibRun` of ``skyjo train --backend rllib`` options."""
    if args.config or args.resume:
        raise ValueError("--config and --resume are options of the sb3 backend")
    flags = given(args, RLlibRun)
    players = flags.get("players", RLlibRun.players)
    flags.setdefault("out_dir", f"runs/rllib-{players}p")
    return RLlibRun(**flags, rules=rule_options(args))


def train(args: argparse.Namespace) -> int:
    """Run the ``train`` subcommand."""
    if args.backend == "rllib":
        from skyjo_env.train.rllib_run import run_rllib

        run = rllib_run_from_args(args)
        require("distributed", "ray")
        run_rllib(run)
        return 0
    config = train_config_from_args(args)
    require("train", "torch", "stable_baselines3", "sb3_contrib", "tensorboard")
    from skyjo_env.train.ppo import train as train_ppo
    from skyjo_env.train.report import print_table

    resume = Path(args.resume) / CHECKPOINT if args.resume else None
    outcome = train_ppo(config, resume=resume, overwrite=args.overwrite, progress=not args.no_progress)
    print_table(outcome.tournament)
    print(f"head to head ({config.eval_games:,} games each, seats rotated), {outcome.agent_name} wins against:")
    for name, f in outcome.final_eval.items():
        print(f"  {name:<12} {f['win_rate']:.3f} (95% CI {f['win_ci_low']:.3f}-{f['win_ci_high']:.3f})")
    print(
        f"this run: {outcome.run_timesteps:,} steps in {duration(outcome.seconds)}; "
        f"in total: {outcome.timesteps:,} steps in {duration(outcome.total_seconds)}; agent: {outcome.agent_path}"
    )
    return 0


# ---------------------------------------------------------------------------- play
def add_play_parser(subparsers: argparse._SubParsersAction) -> None:
    from skyjo_env import agents

    default = "ppo-2p" if "ppo-2p" in agents.names() else "counting"
    parser = subparsers.add_parser(
        "play",
        help="play Skyjo in the terminal against agents",
        description="Play one game in the terminal. Moves: d(raw), t(ake), r(eplace) K, f(lip) K, help, quit.",
    )
    parser.add_argument("--opponents", nargs="+", type=agent_spec, default=[default], metavar="SPEC",
                        help=f"one agent spec per opponent seat (default: {default}); the player count follows")  # fmt: skip
    parser.add_argument("--seat", type=_int_range(0, 7), default=0, help="your seat (0 plays first in seat order)")
    parser.add_argument("--seed", type=int, default=None, help="seeds the deal")
    add_rule_arguments(parser)
    parser.set_defaults(func=play)


def play(args: argparse.Namespace) -> int:
    """Run the ``play`` subcommand."""
    from skyjo_env.train.play import play as play_game

    players = len(args.opponents) + 1
    if players > 8:
        raise ValueError(f"{len(args.opponents)} opponents is too many; at most 7 (R2)")
    if args.seat >= players:
        raise ValueError(f"seat {args.seat} does not exist with {players} players; use 0..{players - 1}")
    rules = rules_from_args(args, players)
    opponents = build_agents(args.opponents, rules, args.seed)
    if sys.stdin.isatty():
        try:
            import readline  # noqa: F401  (imported for its effect: line editing and history in input())
        except ImportError:  # not every platform has it
            pass
    play_game(opponents, seat=args.seat, rules=rules, seed=args.seed, ask=_ask)
    return 0


def _ask(prompt: str) -> str:
    """``input(prompt)``, ending the prompt's line when the input ends (Ctrl-D) or is interrupted (Ctrl-C)."""
    try:
        return input(prompt)
    except (EOFError, KeyboardInterrupt):
        print()
        raise


# ---------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    """The ``skyjo`` parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="skyjo", description="skyjo-env: Skyjo engine, agents and tournaments")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_tournament_parser(subparsers)
    add_train_parser(subparsers)
    add_play_parser(subparsers)
    add_serve_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``skyjo`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        with _one_thread():
            return args.func(args)
    except ValueError as exc:  # bad input, named by the check that found it
        if os.environ.get("SKYJO_TRACEBACK"):
            raise
        print(f"skyjo {args.command}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print(f"skyjo {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``skyjo ... | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _one_thread() -> Any:
    """Limit BLAS thread pools to one thread (threadpoolctl, where installed): the batched numpy work
    here is many small matrix products, on which thread pools only contend."""
    if importlib.util.find_spec("threadpoolctl") is None:
        return nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


if __name__ == "__main__":
    sys.exit(main())
