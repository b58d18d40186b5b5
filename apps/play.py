"""`skyjo play`: a person plays Skyjo in the terminal against agents.

The table is shown as text (only what the person's seat may see), with the slot numbers beside it.
Moves are short commands: `d` / `draw`, `t` / `take`, `r K` / `replace K`, `f K` /
`flip K` (slot K = row * 4 + column, 0..11), `help` and `quit`; on a terminal the line can be
edited and earlier moves recalled (readline). A bad entry is answered with the legal moves; Ctrl-C
or the end of input leaves the game. At every round end every grid is shown turned up, with each
seat's score and any doubling (R16, R17).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from skyjo_env.actions import action_name, names, parse_action
from skyjo_env.agents.base import Policy
from skyjo_env.engine import SkyjoEngine
from skyjo_env.opponents import act, policy_name
from skyjo_env.phases import OVER
from skyjo_env.render import render_round_end, render_text, round_end
from skyjo_env.rules import Rules

SHORT = {"d": "draw", "t": "take", "r": "replace", "f": "flip"}
SLOT_MAP = "slots:  0  1  2  3\n        4  5  6  7\n        8  9 10 11"
HELP = (
    "moves: d(raw) | t(ake) | r(eplace) K | f(lip) K   -- slot K = row * 4 + column:\n"
    f"{SLOT_MAP}\n"
    "help: this text   quit (or Ctrl-C): leave the game"
)


class Quit(Exception):
    """The person left the game."""


def read_move(legal: np.ndarray, ask: Callable[[str], str], say: Callable[[str], None]) -> int:
    """Ask until the person enters a legal move; raises [`Quit`][] on `quit`, Ctrl-C or end of input."""
    legal_names = names(legal)
    while True:
        try:
            text = ask("your move> ").strip().lower()
        except (EOFError, KeyboardInterrupt):
            raise Quit from None
        words = text.split()
        if not words:
            continue
        if words[0] in ("q", "quit", "exit"):
            raise Quit
        if words[0] in ("h", "help", "?"):
            say(HELP)
            say(f"legal now: {', '.join(legal_names)}")
            continue
        words[0] = SHORT.get(words[0], words[0])
        try:
            action = parse_action(" ".join(words))
        except ValueError as exc:
            say(f"{exc}. Legal now: {', '.join(legal_names)}")
            continue
        if not legal[action]:
            say(f"'{action_name(action)}' is not legal now. Legal now: {', '.join(legal_names)}")
            continue
        return action


def play(
    opponents: Sequence[Policy],
    seat: int = 0,
    rules: Rules | None = None,
    seed: int | None = None,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
) -> list[int] | None:
    """Play one game with the person in `seat` and `opponents` in the other seats, in order.

    Returns the final totals, or None if the person left.
    """
    players = len(opponents) + 1
    rules = (rules or Rules()).replace(num_players=players)
    if not 0 <= seat < players:
        raise ValueError(f"seat={seat} is not allowed; use 0..{players - 1}")
    seated: dict[int, Policy] = dict(zip([s for s in range(players) if s != seat], opponents))
    engine = SkyjoEngine(rules, 1, seed=seed, auto_reset=False)
    game = np.zeros(1, dtype=np.intp)
    say(f"You are player {seat}. Type 'help' for the moves.")
    try:
        while engine.phase[0] != OVER:
            current = int(engine.current[0])
            before = engine.export_game(0)
            if current == seat:
                say(render_text(engine, 0, viewer=seat) + SLOT_MAP)
                action = read_move(engine.legal_mask()[0], ask, say)
            else:
                agent = seated[current]
                action = int(act(agent, engine, game, role="agent")[0])
                say(f"player {current} ({policy_name(agent)}): {action_name(action)}")
            result = engine.step(np.array([action]))
            if result.round_over[0]:
                say(render_round_end(round_end(before, action), viewer=seat))
    except (Quit, KeyboardInterrupt):
        say("You left the game.")
        return None
    totals = engine.totals[0].tolist()
    winners = [p for p, t in enumerate(totals) if t == min(totals)]
    say(f"game over; totals {totals}; " + ("you win!" if seat in winners else f"winner(s): {winners}"))
    return totals
