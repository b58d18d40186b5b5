"""The ``skyjo tournament`` command: output files, rule options and clear errors."""

from __future__ import annotations

import json

import pytest

from skyjo_env.apps.cli import build_parser

from commands import run


def test_tournament_prints_a_table_and_writes_files(capsys, tmp_path):
    code, out, _ = run(capsys, "tournament", "--agents", "random", "threshold", "--games", "4",
                       "--seed", "3", "--out", str(tmp_path), "--no-progress")  # fmt: skip
    assert code == 0
    assert "threshold" in out and "win rate" in out and "Plackett-Luce" in out and "0.0000–" in out
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert data["games"] == 4 and data["players"] == 2 and data["seed"] == 3
    assert (tmp_path / "tournament.csv").exists() and (tmp_path / "round_scores.png").exists()
    assert (tmp_path / "tournament.md").read_text().count("\n| ") == 3  # header and one row per agent


def test_rule_options_reach_the_games(capsys, tmp_path):
    code, out, _ = run(capsys, "tournament", "--agents", "counting", "threshold", "random", "--players", "3",
                       "--games", "4", "--no-column-rule", "--end-score", "40", "--next-starter", "round_ender",
                       "--out", str(tmp_path), "--no-progress")  # fmt: skip
    assert code == 0
    assert "rounded up from 4 to 6" in out
    rules = json.loads((tmp_path / "tournament.json").read_text())["rules"]
    assert rules == {**rules, "num_players": 3, "column_rule": False, "end_score": 40, "next_starter": "round_ender"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "random", "wizard"], "unknown agent 'wizard'; choose from: counting, "),
        (["--agents", "random", "--players", "9"], "9 is out of range; use 2 to 8"),
        (["--agents", "random", "--players", "1"], "1 is out of range; use 2 to 8"),
        (["--agents", "random", "--games", "0"], "0 is out of range; use at least 1"),
        (["--agents", "random", "--games", "many"], "'many' is not an integer"),
        (["--agents", "random", "--end-score", "0"], "0 is out of range; use at least 1"),
        (["--players", "2"], "the following arguments are required: --agents"),
    ],
)
def test_bad_arguments_are_one_line_argparse_errors(capsys, argv, message):
    code, out, err = run(capsys, "tournament", *argv)
    assert code == 2
    assert message in err
    if "unknown agent" in message:
        assert "random" in err and "threshold" in err
    assert err.startswith("skyjo tournament: error: ") and err.count("\n") == 1 and "usage" not in err


def test_a_subcommand_is_required(capsys):
    code, _, err = run(capsys)
    assert code == 2 and "COMMAND" in err


def test_parser_has_one_function_per_subcommand():
    parser = build_parser()
    args = parser.parse_args(["tournament", "--agents", "random"])
    assert args.func.__name__ == "tournament"
    assert args.players == 2 and args.games == 10_000 and args.end_score == 100 and not args.no_column_rule


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], {"warm_start": "counting", "warm_start_samples": 1_000_000, "advice": "counting", "out_dir": "runs/ppo-2p"}),
        (["--warm-start", "none"], {"warm_start": None}),
        (["--advice", "counting"], {"advice": "counting"}),
        (["--advice", "none"], {"advice": None}),
        (["--warm-start", "threshold", "--warm-start-samples", "5000", "--warm-start-epochs", "2", "--players", "3"],
         {"warm_start": "threshold", "warm_start_samples": 5000, "warm_start_epochs": 2, "out_dir": "runs/ppo-3p"}),
        (["--reward", "lead", "--num-envs", "256", "--n-steps", "64", "--batch-size", "4096"],
         {"reward": "lead", "num_envs": 256, "n_steps": 64, "batch_size": 4096}),
        (["--reward", "result", "--reward-scale", "1"], {"reward": "result", "reward_scale": 1.0}),
        (["--reward", "lead", "--win-bonus", "20"], {"reward": "lead", "win_bonus": 20.0}),
    ],
)  # fmt: skip
def test_train_options_make_the_config(argv, expected):
    from skyjo_env.apps.backends import train_config_from_args

    config = train_config_from_args(build_parser().parse_args(["train", *argv])).to_dict()
    assert config == {**config, **expected}


def test_an_unknown_teacher_is_an_argparse_error(capsys):
    code, _, err = run(capsys, "train", "--warm-start", "wizard")
    assert code == 2 and "unknown agent 'wizard'" in err and "counting" in err


def test_the_version_is_the_installed_packages_one_source():
    from importlib.metadata import version

    import skyjo_env

    assert skyjo_env.__version__ == version("skyjo-env")  # pyproject.toml's, as installed
