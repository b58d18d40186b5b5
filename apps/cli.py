"""The `skyjo` command: one argparse subcommand per job.

Each subcommand (`tournament`, `train`, `play`, `serve`, `benchmark`) has here an
`add_<name>_parser(subparsers)` that declares its arguments and sets `func` to the function that
runs it; [`build_parser()`][build_parser] wires them all. Shared argument types and
the rule options are in [`skyjo_env.apps.arguments`][]; the training flags are generated from each
training backend's settings dataclass ([`skyjo_env.apps.backends`][], [`skyjo_env.apps.flags`][]). Bad input of any kind
(argparse's errors too, see [`Parser`][]) ends with one line on stderr and exit status 2, before
any work is done (output folders included: [`check_output_folder()`][skyjo_env.evaluation.report.check_output_folder]);
set `SKYJO_TRACEBACK=1` to see the traceback behind such a line. `skyjo --help` and `skyjo tournament` need the core
dependencies only; a command that needs an extra says which.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from threadpoolctl import threadpool_limits

from skyjo_env.apps.arguments import (
    add_move_timeout,
    add_rule_arguments,
    agent_spec,
    build_agents,
    folder_name,
    int_range,
    integer,
    player_counts,
    require,
    rules_from_args,
)
from skyjo_env.apps.backends import BACKENDS, train_config_from_args
from skyjo_env.apps.flags import add_flags
from skyjo_env.evaluation.benchmark import FULL, QUICK, SUITES, Benchmark, print_card, save_card
from skyjo_env.limits import MAX_GAMES
from skyjo_env.train.config import CHECKPOINT, TrainConfig

if TYPE_CHECKING:
    from skyjo_env.rules import Rules

#: Exit status of a command that got bad input (as argparse's own errors).
USAGE_ERROR = 2


# ---------------------------------------------------------------------------- tournament
def add_tournament_parser(subparsers: argparse._SubParsersAction) -> None:
    from skyjo_env import agents

    parser = subparsers.add_parser(
        "tournament",
        help="play complete games among agents and rate them",
        description="Play complete games among agents (seats rotated), print a table and write "
        "tournament.json, tournament.csv, tournament.md and round_scores.png (with matplotlib).",
        epilog=f"Agents: {', '.join(agents.names())}; or a trained agent's file or run folder, "
        "module:attr, path/to/file.py:attr, NAME:key=value,... for a registered name's options, and alias=SPEC "
        "to name one in the table.",
    )
    parser.add_argument("--agents", nargs="+", type=agent_spec, required=True, metavar="SPEC",
                        help="agent specs (repeat one to enter it twice)")  # fmt: skip
    parser.add_argument("--players", type=player_counts, default=2, metavar="P|P-Q|P,Q,...",
                        help="seats per game, 2 to 8 (R2); or several table sizes, a range 2-8 or a list 3,5,8: "
                        "a tournament at each, written to the subfolder <P>p of --out")  # fmt: skip
    parser.add_argument("--games", type=int_range(1, None, limit=MAX_GAMES), default=10_000,
                        help="games to play (at each table size), rounded up to a multiple of the number of agents")  # fmt: skip
    parser.add_argument("--seed", type=int_range(0, None), default=0,
                        help="seeds the deals, the line-ups and random agents")  # fmt: skip
    parser.add_argument("--out", default=None, type=folder_name, metavar="DIR",
                        help="output folder (default runs/tournament-<P>p)")  # fmt: skip
    parser.add_argument("--overwrite", action="store_true", help="replace the files of an earlier tournament in --out")
    parser.add_argument("--no-progress", action="store_true", help="no progress reports")
    add_move_timeout(parser)
    add_rule_arguments(parser)
    parser.set_defaults(func=tournament)


def tournament(args: argparse.Namespace) -> int:
    """Run the `tournament` subcommand: every input (output folders, agents at each table size)
    is checked before the first game. An agent that fails (it raises, runs over `--move-timeout`,
    finishes no game) ends it in one line naming the agent, before any file is written."""
    from skyjo_env.evaluation.report import FILES, check_no_earlier, check_output_folder, claimed_folder
    from skyjo_env.observation import count_range

    several = isinstance(args.players, list)
    counts: list[int] = sorted(args.players) if several else [args.players]
    out = Path(
        args.out if args.out is not None else f"runs/tournament-{count_range(tuple(counts)).replace(', ', ',')}p"
    )
    folders = {players: out / f"{players}p" if several else out for players in counts}
    for folder in folders.values():
        check_output_folder(folder)
    tables = {players: rules_from_args(args, players) for players in counts}
    pools = {players: build_agents(args.agents, rules, args.seed) for players, rules in tables.items()}
    with contextlib.ExitStack() as held:  # the folders stay this command's until its files are written
        for folder in folders.values():
            held.enter_context(claimed_folder(folder))
            check_no_earlier(folder, FILES, "a tournament", args.overwrite)
        play_tournaments(args, tables, pools, folders)
    return 0


def play_tournaments(
    args: argparse.Namespace, tables: dict[int, Rules], pools: dict[int, list[Any]], folders: dict[int, Path]
) -> None:
    """Play the tournament of each table size, then save them all: a failure at any size writes nothing."""
    from skyjo_env.evaluation.report import print_table, save
    from skyjo_env.evaluation.tournament import TournamentResult, run_tournament

    results: dict[int, TournamentResult] = {}
    for players, rules in tables.items():
        pool = pools[players]
        result = run_tournament(pool, players, args.games, rules=rules, seed=args.seed,
                                progress=not args.no_progress, move_timeout=args.move_timeout)  # fmt: skip
        print_table(result)
        played = result.games + result.unfinished
        if played != args.games:
            print(f"(games rounded up from {args.games:,} to {played:,}: whole rotations of {len(pool)} agents)")
        results[players] = result
    for players, result in results.items():
        paths = save(result, folders[players])
        print("wrote " + ", ".join(str(p) for p in paths.values()))
        if "plot" not in paths:
            print("(round_scores.png not drawn: it needs matplotlib, pip install 'skyjo-env[plot]')")


# ---------------------------------------------------------------------------- train
def add_train_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a PPO agent, then measure it against the heuristics",
        description="Train a PPO agent on the batched vector env against a mixture of agents and its own "
        "snapshots (self-play), then print its head-to-head win rates and a tournament against the "
        "heuristics. With no options: the README's main job (2 players, under 20 minutes on 2 cores), "
        "with MaskablePPO (sb3) or Ray RLlib (--backend rllib). Every TrainConfig field is a flag; a flag "
        "that takes 'none' sets the field to None.",
    )
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="sb3",
                        help="; ".join(f"{b.name}: {b.help} (the {b.extra} extra)" for b in BACKENDS.values()))  # fmt: skip
    parser.add_argument(
        "--config", default=None, metavar="FILE", help="a JSON TrainConfig; flags given here override it"
    )
    parser.add_argument("--resume", default=None, metavar="DIR", help="continue the run saved in DIR")
    parser.add_argument(
        "--overwrite", action="store_true", help="start afresh in an --out folder that holds an earlier run"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress reports")
    add_flags(parser.add_argument_group("the recipe (TrainConfig; both backends)"), TrainConfig, skip=("rules",),
              shown={"out_dir": "runs/<backend>-<P>p: runs/ppo-2p (sb3), runs/rllib-2p (rllib)"})  # fmt: skip
    add_rule_arguments(parser, defaults=False)
    parser.set_defaults(func=train)


def train(args: argparse.Namespace) -> int:
    """Run the `train` subcommand with the chosen backend ([`skyjo_env.apps.backends`][])."""
    backend = BACKENDS[args.backend]
    config = train_config_from_args(args)
    require(backend.extra, *backend.modules)
    from skyjo_env.train.runs import print_outcome  # needs torch: after the check that names the extra

    resume = Path(args.resume) / CHECKPOINT if args.resume else None
    outcome = backend.train(config, resume, overwrite=args.overwrite, progress=not args.no_progress)
    print_outcome(outcome, config)
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
    parser.add_argument("--seat", type=int_range(0, 7), default=0, help="your seat (0 plays first in seat order)")
    parser.add_argument("--seed", type=int_range(0, None), default=None, help="seeds the deal")
    add_rule_arguments(parser)
    parser.set_defaults(func=play)


def play(args: argparse.Namespace) -> int:
    """Run the `play` subcommand."""
    from skyjo_env.apps.play import play as play_game

    players = len(args.opponents) + 1
    if players > 8:
        raise ValueError(f"{len(args.opponents)} opponents is too many; at most 7 (R2)")
    if args.seat >= players:
        raise ValueError(f"seat {args.seat} does not exist with {players} players; use 0..{players - 1}")
    rules = rules_from_args(args, players)
    opponents = build_agents(args.opponents, rules, args.seed)
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):  # not every platform has readline
            import readline  # noqa: F401  (imported for its effect: line editing and history in input())
    play_game(opponents, seat=args.seat, rules=rules, seed=args.seed, ask=_ask)
    return 0


def _ask(prompt: str) -> str:
    """`input(prompt)`, ending the prompt's line when the input ends (Ctrl-D) or is interrupted (Ctrl-C)."""
    try:
        return input(prompt)
    except (EOFError, KeyboardInterrupt):
        print()
        raise


# ---------------------------------------------------------------------------- serve
#: Where `skyjo serve` saves its games unless `--games-dir` says otherwise.
DEFAULT_GAMES_DIR = "runs/web-games"
#: What `skyjo serve` says when the `web` extra is not installed.
MISSING_EXTRA = "skyjo serve: the web server needs the web extra: pip install 'skyjo-env[web]'"


def add_serve_parser(subparsers: argparse._SubParsersAction) -> None:
    """The `serve` subcommand."""
    parser = subparsers.add_parser(
        "serve",
        help="play Skyjo in the browser against agents",
        description="Start a local web server to play Skyjo in the browser against the agents, or to "
        "watch agents play each other (needs the web extra: pip install 'skyjo-env[web]').",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=int_range(0, 65535), default=8000, help="port (default 8000; 0: any free port)")
    parser.add_argument("--games-dir", default=DEFAULT_GAMES_DIR, type=folder_name, metavar="DIR",
                        help=f"folder the games are saved in, to resume after a restart (default {DEFAULT_GAMES_DIR})")  # fmt: skip
    parser.set_defaults(func=serve)


def serve(args: argparse.Namespace) -> int:
    """Run the `serve` subcommand: listen, print the address, serve until interrupted."""
    from skyjo_env.apps.serve import create_app

    try:
        import uvicorn

        app = create_app(args.games_dir, args.host)
    except ImportError:
        print(MISSING_EXTRA, file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"skyjo serve: cannot use the games folder {args.games_dir}: {exc}", file=sys.stderr)
        return 2
    try:
        listener = socket.create_server(
            (args.host, args.port), family=socket.AF_INET6 if ":" in args.host else socket.AF_INET
        )
    except OSError as exc:
        print(f"skyjo serve: cannot listen on {args.host} port {args.port}: {exc}", file=sys.stderr)
        return 2
    host, port = listener.getsockname()[:2]
    address = f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"
    print(f"Skyjo: open {address} in a browser (games saved in {args.games_dir}; Ctrl+C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C: uvicorn has shut down cleanly, then passes the signal on
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])
    return 0


# ---------------------------------------------------------------------------- benchmark
def add_benchmark_parser(subparsers: argparse._SubParsersAction) -> None:
    """`skyjo benchmark SPEC [--suite quick|full] [--players P ...] [--workers W] [--out DIR] [--no-progress]`."""
    parser = subparsers.add_parser(
        "benchmark",
        help="rate an agent against the reference suite on the fixed scale (random 0, counting 1000)",
        description="Play an agent against random, threshold, counting and the shipped PPO agent of each table "
        "size (2, 3, 4 and 6 players), print its report card and write benchmark.json and benchmark.md. "
        "See docs/leaderboard.md.",
    )
    parser.add_argument("spec", metavar="SPEC", help="an agent spec: a registered name, a trained agent's file or run "
                        "folder, module:attr, path/file.py:attr or alias=SPEC")  # fmt: skip
    parser.add_argument("--suite", default="quick", metavar="|".join(SUITES),
                        help=f"quick: {QUICK.games:,} games per match; full: {FULL.games:,} (default quick)")  # fmt: skip
    parser.add_argument("--players", nargs="+", type=integer, default=None, metavar="P",
                        help="table sizes to play, of the suite's 2 3 4 6 (default all)")  # fmt: skip
    parser.add_argument("--workers", type=integer, default=1, metavar="W",
                        help="processes playing the matches, one match each at a time (one per core; the card "
                        "is the same at any number; default 1)")  # fmt: skip
    parser.add_argument("--out", default=None, type=folder_name, metavar="DIR",
                        help="output folder (default runs/benchmark-<name>)")  # fmt: skip
    parser.add_argument("--overwrite", action="store_true", help="replace the files of an earlier benchmark in --out")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_move_timeout(parser)
    parser.set_defaults(func=benchmark)


def benchmark(args: argparse.Namespace) -> int:
    """Run the `benchmark` subcommand (bad input raises `ValueError`: `skyjo` prints its one line, status 2)."""
    from skyjo_env.evaluation.benchmark import FILES
    from skyjo_env.evaluation.report import check_no_earlier, claimed_folder

    plan = Benchmark(args.spec, args.suite, args.players, args.workers, args.move_timeout)
    out = args.out if args.out is not None else f"runs/benchmark-{re.sub(r'[^A-Za-z0-9._+-]+', '_', plan.name)}"
    with claimed_folder(out):
        check_no_earlier(out, FILES, "a benchmark", args.overwrite)
        card = plan.run(progress=not args.no_progress)
        print_card(card)
        paths = save_card(card, out)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


# ---------------------------------------------------------------------------- main
class Parser(argparse.ArgumentParser):
    """The parser of `skyjo` and (argparse builds them of the same class) of every subcommand: an
    error is one line, `skyjo <command>: error: <message>`, not the usage (`--help` shows it); a
    flag is taken whole, never by a prefix (a mistyped `--env-runner 2` is an error, not `--env-runners`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The `skyjo` parser with every subcommand."""
    parser = Parser(prog="skyjo", description="skyjo-env: Skyjo engine, agents and tournaments")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_tournament_parser(subparsers)
    add_train_parser(subparsers)
    add_play_parser(subparsers)
    add_serve_parser(subparsers)
    add_benchmark_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `skyjo` console script; returns the exit status."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the subcommand's parser, which names the command
        _subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        with threadpool_limits(1):  # the batched numpy work is many small products, on which BLAS pools only contend
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
    except OSError as exc:  # the system refused (a full disk, no permission): files are written whole or not at all
        if os.environ.get("SKYJO_TRACEBACK"):
            raise
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"skyjo {args.command}: {where}{exc.strerror or exc}", file=sys.stderr)
        return USAGE_ERROR


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of subcommand `command` (argparse keeps its actions there and offers no public lookup)."""
    (subparsers,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices[command]


if __name__ == "__main__":
    sys.exit(main())
