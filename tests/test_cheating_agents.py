"""Agents cannot change the game they are shown: a plug-in that writes into the observations and
masks it is handed, to widen its legal actions, is refused in one line naming it wherever agents
play (tournaments, the benchmark, the environments' opponents, search's rollouts), because every
action is checked against the engine's own legal actions (R5, R8-R10: the moves each phase allows)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.actions import DRAW, REPLACE
from skyjo_env.apps.cli import main
from skyjo_env.evaluation.tournament import run_tournament
from skyjo_env.gymnasium_env import SkyjoEnv
from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
from skyjo_env.learner_games import LearnerGames
from skyjo_env.opponents import act

CHEATS = """
import numpy as np

def widening_replace(observations, masks):
    masks[:] = True  # every action "legal"
    return np.full(len(masks), 2, dtype=np.int64)  # replace slot 0: no card in hand at the setup (R5)

def always_draws(observations, masks):
    masks[:] = True
    return np.zeros(len(masks), dtype=np.int64)  # draw, also with a card in hand (R8)

def scribbler(observations, masks):
    legal = masks.copy()
    masks[:] = True
    observations[:] = 0
    return np.argmax(legal, axis=1)  # the lowest legal id, as `lowest` below, after writing over both

def lowest(observations, masks):
    return np.argmax(masks, axis=1)
"""


@pytest.fixture
def cheats(tmp_path: Path) -> Path:
    path = tmp_path / "cheats.py"
    path.write_text(CHEATS)
    return path


def widening_replace(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    masks[:] = True
    return np.full(len(masks), REPLACE, dtype=np.int64)


def always_draws(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    masks[:] = True
    return np.full(len(masks), DRAW, dtype=np.int64)


@pytest.mark.parametrize("cheat", ["widening_replace", "always_draws"])
def test_a_cheating_plug_in_ends_a_tournament_in_one_line_naming_it(capsys, tmp_path: Path, cheats: Path, cheat: str):
    out = tmp_path / "t"
    argv = ["tournament", "--agents", f"{cheats}:{cheat}", "counting", "--games", "4", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("skyjo tournament: agent") and captured.err.count("\n") == 1
    assert f"{cheat!r} chose illegal action" in captured.err and "Traceback" not in captured.err
    assert not out.exists() or not any(out.iterdir())  # no report


def test_a_cheating_plug_in_ends_a_benchmark_in_one_line_naming_it(capsys, tmp_path: Path, cheats: Path):
    out = tmp_path / "b"
    assert main(["benchmark", f"{cheats}:always_draws", "--players", "2", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("skyjo benchmark:") and err.count("\n") == 1 and "'always_draws' chose illegal action" in err
    assert not out.exists() or not any(out.iterdir())


def test_what_an_agent_writes_into_its_arguments_changes_nothing(cheats: Path):
    """The scribbler overwrites its observations and masks, then plays as `lowest`: the same games."""
    from skyjo_env import agents

    results = [
        run_tournament([agents.make(f"{cheats}:{name}"), agents.make("counting")], 3, 6, seed=5, progress=False)
        for name in ("scribbler", "lowest")
    ]
    assert [r.win_rate for r in results[0].agents] == [r.win_rate for r in results[1].agents]
    assert [r.mean_game_total for r in results[0].agents] == [r.mean_game_total for r in results[1].agents]


@pytest.mark.parametrize(("cheat", "action"), [(widening_replace, REPLACE), (always_draws, DRAW)])
def test_a_cheating_opponent_of_the_gymnasium_envs_is_named(cheat, action: int):
    env = SkyjoEnv(seat=1, opponents=cheat)  # the opponent plays first: the setup flips (R5)
    with pytest.raises(ValueError, match=rf"opponent policy 'function' chose illegal action {action}; legal"):
        env.reset(seed=0)
    vector = SkyjoVectorEnv(4, seat=1, opponents=cheat)
    with pytest.raises(
        ValueError, match=rf"opponent policy 'function' chose illegal action {action} \(row 0 of 4, game 0\)"
    ):
        vector.reset(seed=0)


def test_a_one_game_view_names_no_internal_game_index():
    env = SkyjoEnv(seat=1, opponents=widening_replace)
    with pytest.raises(ValueError) as error:
        env.reset(seed=0)
    assert "game 0" not in str(error.value) and "legal actions there: ['flip 0'" in str(error.value)


def test_the_legality_check_is_the_engines_not_the_masks_handed_out():
    engine = SkyjoEngine(Rules(), 2, seed=0)
    with pytest.raises(ValueError, match=r"agent 'function' chose illegal action 2 \(row 0 of 2, game 0\)"):
        act(widening_replace, engine, engine.all_games, role="agent")
    assert engine.steps.tolist() == [0, 0]  # nothing moved
    games = LearnerGames(2, seed=0)
    games.reset(0)
    with pytest.raises(ValueError, match="read-only"):
        games.legal_bits()[:] = (1 << 26) - 1  # what the learners' actions are checked against


def test_search_checks_its_base_policy_in_rollouts():
    from skyjo_env.agents.search import SearchPolicy
    from skyjo_env.observation import observe

    search = SearchPolicy(base=always_draws, samples=2, top=2, screen=None, seed=0)
    engine = SkyjoEngine(Rules(), 1, seed=0)
    for _ in range(4):  # the setup flips (R5) to the first turn
        engine.step(np.flatnonzero(engine.legal_mask()[0])[:1])
    with pytest.raises(ValueError, match=r"search's base policy 'function' chose illegal action 0"):
        search(observe(engine, engine.current), engine.legal_mask())
