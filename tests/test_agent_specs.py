"""Agent specs (skyjo_env.agents.specs): every form, every error, plug-ins by entry point, trained
agents' names, and the rules reaching the agents (rule-aware counting, R13/R14)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from skyjo_env import Rules, agents
from skyjo_env.actions import NUM_ACTIONS, REPLACE
from skyjo_env.agents import specs
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.apps.cli import main
from skyjo_env.evaluation.tournament import run_tournament
from skyjo_env.observation import size
from skyjo_env.train.config import opponent_weight

from test_heuristics import H, make_obs  # the heuristics tests' hand-made observations

BOT = '''
import numpy as np

def lowest(observations, masks):
    """A plain function: the legal action with the lowest id."""
    return np.argmax(masks, axis=1)

class Ruled:
    """A policy class: it records the rules it was given."""
    name = "ruled"
    def __init__(self, rules=None, seed=None):
        self.rules, self.seed = rules, seed
    def __call__(self, observations, masks):
        return np.argmax(masks, axis=1)

def make_bot():
    """A factory without arguments."""
    return Ruled()

instance = Ruled()
not_a_policy = 42

def broken_factory():
    raise RuntimeError("no luck")

def needs_rules(rules, seed=None):
    """A factory whose rules have no default: it would be called as a policy."""
    return Ruled()
'''


@pytest.fixture
def bot_file(tmp_path: Path) -> Path:
    path = tmp_path / "mybot.py"
    path.write_text(BOT)
    return path


def tiny_network(players: int, metadata: dict | None = None) -> MLPPolicy:
    rng = np.random.default_rng(0)
    weights = [
        (rng.normal(size=(size(players), 8)), np.zeros(8)),
        (rng.normal(size=(8, NUM_ACTIONS)), np.zeros(NUM_ACTIONS)),
    ]
    return MLPPolicy(weights, "tanh", "tiny", metadata={"players": players, **(metadata or {})})


def plays(policy, players: int = 2) -> bool:
    result = run_tournament([policy, agents.make("random", seed=1)] + [agents.make("random", seed=i) for i in range(2, players)],
                            players, 4, seed=0, progress=False)  # fmt: skip
    return result.games == 4


def test_a_registered_name_builds_its_agent_with_the_tables_rules():
    counting = agents.make("counting", rules=Rules(num_players=3, column_rule=False))
    assert isinstance(counting, agents.CountingPolicy) and counting.rules.column_rule is False
    assert agents.make("counting").rules == Rules()


def test_a_file_path_with_a_function_a_factory_a_class_or_an_instance(bot_file: Path):
    function = agents.make(f"{bot_file}:lowest")
    assert function.name == "lowest" and plays(function)
    rules = Rules(num_players=2, end_score=50)
    built = agents.make(f"{bot_file}:Ruled", rules=rules, seed=7)
    assert built.name == "ruled" and built.rules == rules and built.seed == 7  # factories get rules and seed
    assert agents.make(f"{bot_file}:make_bot").name == "ruled"
    assert agents.make(f"{bot_file}:instance") is agents.make(f"{bot_file}:instance")  # the same module object
    assert agents.make(f"mine={bot_file}:lowest").name == "mine"  # alias=SPEC names it in tables


def test_a_module_attribute(bot_file: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(bot_file.parent))
    assert agents.make("mybot:lowest").name == "lowest"
    sys.modules.pop("mybot", None)


def test_a_trained_agent_by_file_or_run_folder_is_named_after_its_folder(tmp_path: Path):
    run = tmp_path / "my-run"
    run.mkdir()
    tiny_network(2).save(run / "agent.npz")
    tiny_network(2).save(tmp_path / "other.npz")
    assert agents.make(str(run)).name == "my-run"
    assert agents.load(str(run / "agent.npz")).name == "my-run"
    assert agents.make(str(tmp_path / "other.npz")).name == "other"
    shipped_name = tmp_path / "ppo-2p"  # a folder named like a shipped agent is named by its path
    shipped_name.mkdir()
    tiny_network(2).save(shipped_name / "agent.npz")
    assert agents.load(str(shipped_name)).name == str(shipped_name) != "ppo-2p"


def test_an_entry_point_plugin_is_discovered(tmp_path: Path, bot_file: Path, monkeypatch: pytest.MonkeyPatch):
    # What `pip install someones-bot` leaves behind: a module and a dist-info with an entry point.
    info = tmp_path / "someones_bot-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: someones-bot\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[skyjo_env.agents]\nsomeones-bot = mybot:Ruled\nbroken-bot = mybot:no_such\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "someones-bot" in agents.names()
    bot = agents.make("someones-bot", rules=Rules(num_players=3))
    assert bot.rules == Rules(num_players=3)
    with pytest.raises(
        ValueError, match=r"agent 'broken-bot': the entry point 'mybot:no_such' of someones-bot does not load"
    ):
        agents.make("broken-bot")
    sys.modules.pop("mybot", None)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("wizard", r"unknown agent 'wizard'; known agents: counting, .*module:attr"),
        ("no_such_module_x:policy", r"cannot import no_such_module_x: ModuleNotFoundError"),
        ("{bot}:nothing", r"has no attribute 'nothing'"),
        ("{bot}:not_a_policy", r"not_a_policy is a int, not a policy or a factory"),
        ("{bot}:broken_factory", r"calling broken_factory\(\) failed: RuntimeError: no luck"),
        (
            "{bot}:needs_rules",
            r"needs_rules\(\) requires rules: a factory takes its options with defaults, "
            r"def needs_rules\(rules=None, seed=None\); a policy function takes \(observations, masks\)",
        ),
        ("{dir}/missing.py:policy", r"no file"),
        ("{dir}:x", r"is neither a module name nor a .py file"),
        ("serch:samples=4", r"unknown agent 'serch' in 'serch:samples=4'; known agents: counting, "),
        (
            "search:smples=4",
            r"'search:smples=4': agent 'search' takes no option\(s\) \['smples'\]; its options are \['base', 'samples'",
        ),
        ("search:samples=1", r"'search:samples=1': samples=1 is not allowed; use an integer of at least 2"),
        ("search:base=wizard", r"'search:base=wizard': unknown agent 'wizard'"),
    ],
)
def test_a_bad_spec_is_one_value_error_naming_it(bot_file: Path, spec: str, message: str):
    spec = spec.format(bot=bot_file, dir=bot_file.parent)
    with pytest.raises(ValueError, match=message) as caught:
        agents.make(spec)
    assert "\n" not in str(caught.value)


def test_a_registered_name_takes_options_in_its_spec():
    """`NAME:key=value,...`: integers, numbers, none, true / false and text go to the factory; the
    whole spec names the agent; an alias renames it; keyword arguments may add others, not repeat them."""
    search = agents.make("search:samples=6,margin=1.5,horizon=none,base=ppo-2p", players=2, top=3)
    assert (search.samples, search.margin, search.horizon, search.top) == (6, 1.5, None, 3)
    assert search.base.name == "ppo-2p" and search.name == "search:samples=6,margin=1.5,horizon=none,base=ppo-2p"
    assert agents.make("ppo-2p:greedy=false").greedy is False
    assert agents.make("fast=search:samples=4").name == "fast"
    with pytest.raises(ValueError, match=r"sets option\(s\) \['samples'\] that are also given"):
        agents.make("search:samples=4", samples=8)


def test_an_agent_trained_for_another_player_count_names_both_counts(tmp_path: Path):
    tiny_network(4).save(tmp_path / "four.npz")
    with pytest.raises(ValueError, match=r"agent 'four' .*was trained for 4 players; this table has 2"):
        agents.make(str(tmp_path / "four.npz"), players=2)
    with pytest.raises(ValueError, match=r"agent 'ppo-4p' was trained for 4 players; this table has 3"):
        agents.make("ppo-4p", players=3)


def test_a_network_warns_when_seated_under_other_rules_than_its_training(tmp_path: Path):
    tiny_network(2, {"rules": Rules(end_score=50).to_dict()}).save(tmp_path / "fifty.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agents.make(str(tmp_path / "fifty.npz"), rules=Rules(end_score=50))
    with pytest.warns(UserWarning, match=r"trained under \{'end_score': 50\} and now plays under \{'end_score': 100\}"):
        agents.make(str(tmp_path / "fifty.npz"), rules=Rules())


def test_the_cli_takes_every_spec_form_and_names_bad_ones_in_one_line(bot_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "t"
    assert main(["tournament", "--agents", f"mine={bot_file}:lowest", f"{bot_file}:Ruled", "counting",
                 "--games", "3", "--no-progress", "--out", str(out)]) == 0  # fmt: skip
    table = capsys.readouterr().out
    assert "mine" in table and "ruled" in table
    assert (
        main(
            [
                "tournament",
                "--agents",
                f"{bot_file}:broken_factory",
                "counting",
                "--games",
                "3",
                "--out",
                str(tmp_path / "u"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("skyjo tournament: agent spec") and "no luck" in err and err.count("\n") == 1


# ---------------------------------------------------------------------------- rule-aware counting
def test_counting_completes_a_column_only_when_the_column_rule_is_on():
    own = [5, H, H, H, 5, H, H, H, H, H, H, H]  # a face-up pair of 5s in column 0 (slots 0 and 4)
    obs = make_obs([own, [H] * 12], discard=5, phase="taken", held=5)
    on = agents.make("counting").costs(obs)[0, REPLACE + 8]  # the third 5 removes the column (R13)
    off = agents.make("counting", rules=Rules(column_rule=False)).costs(obs)[0, REPLACE + 8]
    assert on < -10 < off  # off: a 5 over a face-down card (about 5) gains little


def test_counting_beats_threshold_under_every_rule_variant():
    for rules in (Rules(column_rule=False), Rules(column_rule_at_final_reveal=False), Rules(end_score=50)):
        pool = [agents.make("counting", rules=rules), agents.make("threshold", rules=rules)]
        result = run_tournament(pool, 2, 400, rules=rules, seed=3, progress=False)
        assert result.by_name("counting").win_rate > 0.6, (rules, result.by_name("counting").win_rate)


def test_trained_agent_name_is_the_run_folder_unless_that_is_a_registered_name(tmp_path: Path):
    assert specs.trained_agent_name(tmp_path / "run-a") == "run-a"
    assert specs.trained_agent_name(tmp_path / "run-a" / "agent.npz") == "run-a"
    assert specs.trained_agent_name(Path("runs/ppo-2p")) == "runs/ppo-2p"


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("counting", ("counting", 1.0)),
        ("counting=0.5", ("counting", 0.5)),
        ("mine=counting", ("mine=counting", 1.0)),
        ("mine=counting=2", ("mine=counting", 2.0)),
        ("search:samples=8", ("search:samples=8", 1.0)),
        ("search:samples=8,top=3=0.25", ("search:samples=8,top=3", 0.25)),
        ("fast=search:samples=8", ("fast=search:samples=8", 1.0)),
    ],
)
def test_an_opponent_weight_is_told_from_an_alias_and_an_option(text: str, parsed: tuple[str, float]):
    """`skyjo train --opponents SPEC[=W]`: the last `=` gives a weight unless it belongs to the spec."""
    assert opponent_weight(text) == parsed
