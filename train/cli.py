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
from skyjo_env.train.config import REWARDS
from skyjo_env.train.serve import add_serve_parser


def agent_name(text: str) -> str:
    """argparse type: a registered agent name (the error lists the known ones)."""
    from skyjo_env import agents
    if text not in agents.names():
        raise argparse.ArgumentTypeError(f"unknown agent {text!r}; choose from: {', '.join(agents.names())}")
    return text


NO_TEACHER = "none"


def _teacher(text: str) -> str:
    """argparse type: an agent name, or ``none`` (no warm start)."""
    return text if text == NO_TEACHER else agent_name(text)


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
    from skyjo_env import agents
    from skyjo_env.train.report import print_table, save
    from skyjo_env.train.tournament import run_tournament

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


def _opponent_weights(text: str) -> tuple[str, float]:
    """argparse type: ``NAME`` or ``NAME=WEIGHT`` (NAME an agent name or ``self``)."""
    from skyjo_env import agents
    from skyjo_env.train.config import SELF

    name, _, weight = text.partition("=")
    if name != SELF and name not in agents.names():
        raise argparse.ArgumentTypeError(f"unknown opponent {name!r}; choose from: {SELF}, {', '.join(agents.names())}")
    try:
        value = float(weight) if weight else 1.0
    except ValueError:
        raise argparse.ArgumentTypeError(f"weight {weight!r} of {name!r} is not a number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"weight of {name!r} must be at least 0")
    return name, value


def add_train_parser(subparsers: argparse._SubParsersAction) -> None:
    from skyjo_env.train.rllib_run import add_rllib_arguments

    parser = subparsers.add_parser(
        "train",
        help="train a PPO agent, then measure it against the heuristics",
        description="Train a MaskablePPO agent on the batched vector env against a mixture of heuristics "
        "and its own snapshots (self-play), then print a tournament of it against the heuristics. "
        "With no options: the README's main job (2 players, about 20 minutes on 2 cores).",
    )
    parser.add_argument("--backend", choices=("sb3", "rllib"), default="sb3",
                        help="sb3: MaskablePPO on one machine (default); rllib: Ray RLlib (needs the distributed extra)")  # fmt: skip
    parser.add_argument("--players", type=_int_range(2, 8), default=None, help="seats per game, 2 to 8 (default 2)")
    parser.add_argument("--seed", type=int, default=None, help="seeds the games, the opponents and torch (default 0)")
    parser.add_argument("--out", default=None, metavar="DIR", help="output folder (default runs/ppo-<P>p)")
    parser.add_argument("--reward", choices=REWARDS, default=None, help="reward mode (default score)")
    sb3 = parser.add_argument_group("sb3 backend")
    sb3.add_argument("--config", default=None, metavar="FILE", help="a JSON TrainConfig; options given here override it")
    sb3.add_argument("--total-timesteps", type=_int_range(1, None), default=None, metavar="N", help="learner steps to train")
    sb3.add_argument("--num-envs", type=_int_range(1, None), default=None, metavar="N", help="games stepped together")
    sb3.add_argument("--opponents", nargs="+", type=_opponent_weights, default=None, metavar="NAME[=W]",
                     help="opponent mixture, e.g. counting=0.4 threshold=0.2 self=0.4 ('self': earlier snapshots)")  # fmt: skip
    sb3.add_argument("--learning-rate", type=float, default=None, metavar="LR")
    sb3.add_argument("--reward-scale", type=float, default=None, metavar="X",
                     help="multiply every reward by X (default 0.1; 1 suits --reward result)")  # fmt: skip
    sb3.add_argument("--n-steps", type=_int_range(1, None), default=None, metavar="N", help="steps per game per rollout")
    sb3.add_argument("--batch-size", type=_int_range(1, None), default=None, metavar="N", help="minibatch size of PPO updates")
    sb3.add_argument("--net-arch", type=_int_range(1, None), nargs="+", default=None, metavar="UNITS", help="hidden layer sizes")
    sb3.add_argument("--warm-start", type=_teacher, default=None, metavar="AGENT",
                     help="behaviour-clone this agent into the networks before PPO (default counting; 'none': start from scratch)")  # fmt: skip
    sb3.add_argument("--warm-start-samples", type=_int_range(1, None), default=None, metavar="N",
                     help="teacher turns to clone (default 1,000,000)")  # fmt: skip
    sb3.add_argument("--warm-start-epochs", type=_int_range(1, None), default=None, metavar="N",
                     help="passes over them (default 3)")  # fmt: skip
    sb3.add_argument("--advice", choices=("counting", NO_TEACHER), default=None,
                     help="the networks also read this heuristic's advice on every action (default counting; 'none': the observation alone)")  # fmt: skip
    sb3.add_argument("--eval-every", type=_int_range(0, None), default=None, metavar="N", help="steps between evaluations")
    sb3.add_argument("--eval-games", type=_int_range(1, None), default=None, metavar="N", help="games per heuristic per evaluation")
    sb3.add_argument("--time-limit-minutes", type=float, default=None, metavar="MIN",
                     help="stop learning after MIN minutes, then evaluate and save as usual")  # fmt: skip
    sb3.add_argument("--resume", default=None, metavar="DIR", help="continue the run saved in DIR/checkpoint")
    sb3.add_argument("--final-games", type=_int_range(1, None), default=2000, metavar="N",
                     help="games of the final tournament against the heuristics")  # fmt: skip
    sb3.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_rllib_arguments(parser)
    parser.set_defaults(func=train)


def train_config_from_args(args: argparse.Namespace):
    """The :class:`~skyjo_env.train.config.TrainConfig` of ``skyjo train`` options (file, then flags)."""
    from skyjo_env.train.config import TrainConfig

    if args.resume:
        base = TrainConfig.load(f"{args.resume}/checkpoint/config.json").to_dict()
    elif args.config:
        base = TrainConfig.load(args.config).to_dict()
    else:
        base = {}
    flags = {
        "players": args.players, "seed": args.seed, "reward": args.reward, "total_timesteps": args.total_timesteps,
        "num_envs": args.num_envs, "learning_rate": args.learning_rate, "reward_scale": args.reward_scale,
        "n_steps": args.n_steps, "batch_size": args.batch_size, "net_arch": args.net_arch,
        "eval_every": args.eval_every, "eval_games": args.eval_games, "time_limit_minutes": args.time_limit_minutes,
        "opponents": dict(args.opponents) if args.opponents else None,
        "warm_start_samples": args.warm_start_samples, "warm_start_epochs": args.warm_start_epochs,
    }  # fmt: skip
    base.update({k: v for k, v in flags.items() if v is not None})
    if args.warm_start is not None:
        base["warm_start"] = None if args.warm_start == NO_TEACHER else args.warm_start
    if args.advice is not None:
        base["advice"] = None if args.advice == NO_TEACHER else args.advice
    if base.get("reward") == "result":
        base.setdefault("shaping", False)
    if args.out or args.resume:
        base["out_dir"] = args.out or args.resume
    elif "out_dir" not in base:
        base["out_dir"] = f"runs/ppo-{base.get('players', TrainConfig.players)}p"
    return TrainConfig.from_dict(base)


def train(args: argparse.Namespace) -> int:
    """Run the ``train`` subcommand."""
    if args.backend == "rllib":
        from skyjo_env.train.rllib_run import run_rllib

        args.players = args.players or 2
        args.seed = 0 if args.seed is None else args.seed
        args.reward = args.reward or "score"
        args.out = args.out or f"runs/rllib-{args.players}p"
        try:
            run_rllib(args)
        except RuntimeError as exc:
            print(f"skyjo train: {exc}", file=sys.stderr)
            return 2
        return 0
    from skyjo_env.train.ppo import train as train_ppo
    from skyjo_env.train.report import print_table

    try:
        config = train_config_from_args(args)
    except ValueError as exc:
        print(f"skyjo train: {exc}", file=sys.stderr)
        return 2
    outcome = train_ppo(config, resume=f"{args.resume}/checkpoint" if args.resume else None,
                        progress=not args.no_progress, final_games=args.final_games)  # fmt: skip
    print(f"trained {outcome.timesteps:,} steps in {outcome.seconds / 60:.1f} min; agent: {outcome.agent_path}")
    print_table(outcome.tournament)
    return 0


def add_play_parser(subparsers: argparse._SubParsersAction) -> None:
    from skyjo_env import agents
    default = "ppo-2p" if "ppo-2p" in agents.names() else "counting"
    parser = subparsers.add_parser(
        "play",
        help="play Skyjo in the terminal against agents",
        description="Play one game in the terminal. Moves: d(raw), t(ake), r(eplace) K, f(lip) K, help, quit.",
    )
    parser.add_argument("--opponents", nargs="+", type=agent_name, default=[default], metavar="NAME",
                        help=f"one agent per opponent seat (default: {default}); the player count follows")  # fmt: skip
    parser.add_argument("--seat", type=_int_range(0, 7), default=0, help="your seat (0 plays first in seat order)")
    parser.add_argument("--seed", type=int, default=None, help="seeds the deal")
    add_rule_arguments(parser)
    parser.set_defaults(func=play)


def play(args: argparse.Namespace) -> int:
    """Run the ``play`` subcommand."""
    from skyjo_env import agents
    from skyjo_env.train.play import play as play_game

    players = len(args.opponents) + 1
    if players > 8:
        print(f"skyjo play: {len(args.opponents)} opponents is too many; at most 7 (R2)", file=sys.stderr)
        return 2
    if args.seat >= players:
        print(f"skyjo play: seat {args.seat} does not exist with {players} players; use 0..{players - 1}", file=sys.stderr)
        return 2
    opponents = [agents.make(name, seed=None if args.seed is None else args.seed + i) for i, name in enumerate(args.opponents)]
    play_game(opponents, seat=args.seat, rules=rules_from_args(args, players), seed=args.seed)
    return 0


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
    from threadpoolctl import threadpool_limits

    args = build_parser().parse_args(argv)
    # Batched numpy work here is many small matrix products: BLAS thread pools only contend.
    with threadpool_limits(1):
        return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
