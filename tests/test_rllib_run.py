"""Settings and options of the RLlib backend (:mod:`skyjo_env.train.rllib_run`): no Ray needed."""

from __future__ import annotations

import argparse
import importlib.util

import pytest

from skyjo_env.train.backends import rllib_run_from_args
from skyjo_env.train.cli import build_parser, main
from skyjo_env.train.flags import add_flags
from skyjo_env.train.rllib_run import RLlibRun


def test_skyjo_train_flags_make_the_run_with_the_shared_ones():
    args = build_parser().parse_args(
        ["train", "--backend", "rllib", "--players", "4", "--out", "runs/x", "--iterations", "3", "--address", "head:6379",
         "--net-arch", "64", "64", "--learning-rate", "1e-3", "--no-column-rule", "--end-score", "50"]
    )  # fmt: skip
    run = rllib_run_from_args(args)
    assert (run.players, run.iterations, run.out_dir, run.env_runners, run.net_arch) == (4, 3, "runs/x", 2, [64, 64])
    assert run.address == "head:6379" and run.learning_rate == 1e-3
    assert run.rules == {"column_rule": False, "end_score": 50}  # the shared rule flags (R13, R19)
    assert run.env_config() == {"num_players": 4, "reward": "score", "column_rule": False, "end_score": 50}


def test_defaults_name_the_output_folder_after_the_player_count():
    run = rllib_run_from_args(build_parser().parse_args(["train", "--backend", "rllib", "--players", "3"]))
    assert run.out_dir == "runs/rllib-3p" and run.rules == {}


def test_an_option_with_another_meaning_is_refused():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-epochs", type=int, default=10)
    with pytest.raises(ValueError, match=r"--n-epochs"):
        add_flags(parser, RLlibRun, skip=("rules",))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"players": 9}, "num_players=9"),
        ({"rules": {"reward": "result"}}, "unknown rule option"),
        ({"rules": {"end_score": 0}}, "end_score=0"),
        ({"self_play": "league"}, "self_play"),
        ({"train_batch_size": 100, "batch_size": 200}, "batch_size=200"),
        ({"env_runners": -1}, "env_runners"),
        ({"net_arch": []}, "net_arch"),
        ({"learning_rate": "fast"}, "learning_rate='fast'"),
    ],
)
def test_bad_settings_are_refused_before_ray_starts(settings, message):
    with pytest.raises(ValueError, match=message):
        RLlibRun(**settings)


def test_sb3_only_options_are_refused_with_the_rllib_backend(capsys):
    assert main(["train", "--backend", "rllib", "--resume", "runs/x"]) == 2
    assert "options of the sb3 backend" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed here")
def test_without_ray_the_error_names_the_extra(capsys):
    assert main(["train", "--backend", "rllib", "--iterations", "1"]) == 2
    err = capsys.readouterr().err
    assert "skyjo-env[distributed]" in err and "Traceback" not in err
