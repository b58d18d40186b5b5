"""Settings and options of the RLlib backend (:mod:`skyjo_env.train.rllib_run`): no Ray needed."""

from __future__ import annotations

import argparse
import importlib.util

import pytest

from skyjo_env.train.rllib_run import RLlibRun, add_rllib_arguments, parse_rules, run_from_args, run_rllib


def test_options_join_a_parser_that_has_the_shared_ones():
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--out", default="runs/x")
    add_rllib_arguments(parser)
    args = parser.parse_args(["--iterations", "3", "--address", "head:6379", "--rule", "end_score=50", "--hidden", "64", "64"])
    run = run_from_args(args, rules={"num_players": 4, "column_rule": False, "end_score": 100})
    assert (run.players, run.iterations, run.out, run.env_runners, run.hidden) == (4, 3, "runs/x", 2, [64, 64])
    assert args.address == "head:6379"
    assert run.rules == {"column_rule": False, "end_score": 50}  # --rule overrides the caller's rules
    assert run.env_config() == {"num_players": 4, "reward": "score", "column_rule": False, "end_score": 50}


def test_an_option_with_another_meaning_is_refused():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-epochs", type=int, default=10)
    with pytest.raises(ValueError, match=r"--num-epochs"):
        add_rllib_arguments(parser)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"players": 9}, "num_players=9"),
        ({"rules": {"reward": "result"}}, "unknown rule option"),
        ({"rules": {"end_score": 0}}, "end_score=0"),
        ({"self_play": "league"}, "self_play"),
        ({"train_batch_size": 100, "minibatch_size": 200}, "minibatch_size=200"),
        ({"env_runners": -1}, "env_runners"),
        ({"hidden": []}, "hidden"),
    ],
)
def test_bad_settings_are_refused_before_ray_starts(settings, message):
    with pytest.raises(ValueError, match=message):
        RLlibRun(**settings)


def test_rule_values_are_json_or_text():
    assert parse_rules(["end_score=50", "column_rule=false", "next_starter=round_ender"]) == {
        "end_score": 50, "column_rule": False, "next_starter": "round_ender",
    }  # fmt: skip
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_rules(["end_score"])


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed here")
def test_without_ray_the_error_names_the_extra():
    parser = argparse.ArgumentParser()
    add_rllib_arguments(parser)
    with pytest.raises(RuntimeError, match=r"\.\[distributed\]"):
        run_rllib(parser.parse_args([]))
