"""``skyjo play``: a scripted person plays a whole game; bad entries are answered, never a crash."""

from __future__ import annotations

import itertools

import pytest

from skyjo_env import agents
from skyjo_env.apps.cli import main
from skyjo_env.apps.play import play


def scripted(moves):
    """An ``input`` replacement that answers from ``moves`` and records the prompts."""
    it = iter(moves)

    def ask(prompt: str) -> str:
        return next(it)

    return ask


def test_a_person_can_play_a_whole_game_against_an_agent() -> None:
    lines: list[str] = []
    legal_cycle = itertools.cycle(["d", "t", "r 0", *[f"f {k}" for k in range(12)], *[f"r {k}" for k in range(12)]])
    totals = play([agents.make("threshold")], seat=0, seed=3, ask=lambda _: next(legal_cycle), say=lines.append)
    assert totals is not None and max(totals) >= 100  # R19: the game ran to its end
    assert lines[-1].startswith("game over")
    assert any(line.startswith("player 1 (threshold):") for line in lines)


@pytest.mark.parametrize("entry", ["", "jump", "replace 99", "flip", "r x", "draw"])
def test_bad_entries_are_answered_with_the_legal_moves(entry: str) -> None:
    lines: list[str] = []
    # In setup only flips are legal (R5): every entry above is refused, then the person quits.
    totals = play([agents.make("random", seed=0)], seat=0, seed=1, ask=scripted([entry, "quit"]), say=lines.append)
    assert totals is None
    assert lines[-1] == "You left the game."
    if entry:
        assert any("Legal now: flip 0, flip 1" in line for line in lines)


def test_help_lists_the_moves_and_end_of_input_leaves() -> None:
    lines: list[str] = []

    def ask(prompt: str) -> str:
        if lines and lines[-1].startswith("legal now"):
            raise EOFError
        return "help"

    assert play([agents.make("counting")], seat=0, seed=0, ask=ask, say=lines.append) is None
    assert any("r(eplace) K" in line for line in lines)


def test_the_person_sees_only_their_own_view() -> None:
    lines: list[str] = []
    moves = iter(["f 0", "f 1", "d", "quit"])
    play([agents.make("threshold")], seat=0, seed=2, ask=lambda _: next(moves), say=lines.append)
    tables = [line for line in lines if "in hand" in line]
    assert tables, "the table is shown before each move"
    assert all("##" in t for t in tables)  # face-down cards stay hidden


def test_cli_rejects_a_bad_seat_and_unknown_agents(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--opponents", "random", "--seat", "3"]) == 2
    assert "seat 3 does not exist with 2 players" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["play", "--opponents", "grandmaster"])
    assert "unknown agent 'grandmaster'" in capsys.readouterr().err
