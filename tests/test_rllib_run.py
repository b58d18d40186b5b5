"""One recipe, two backends (`skyjo_env.apps.backends`): the RLlib backend's settings from the
command line, and what each backend refuses; no Ray needed."""

from __future__ import annotations

import importlib.util
from dataclasses import fields
from pathlib import Path

import pytest

from skyjo_env.apps.backends import BACKENDS, train_config_from_args
from skyjo_env.apps.cli import build_parser, main
from skyjo_env.apps.flags import default_of
from skyjo_env.train.config import TrainConfig


def config_of(*argv: str) -> TrainConfig:
    return train_config_from_args(build_parser().parse_args(["train", *argv]))


def test_with_no_option_both_backends_run_the_main_jobs_recipe():
    sb3, rllib = config_of(), config_of("--backend", "rllib")
    assert sb3.to_dict() | {"out_dir": None} == rllib.to_dict() | {"out_dir": None}
    assert (sb3.out_dir, rllib.out_dir) == ("runs/ppo-2p", "runs/rllib-2p")
    assert (
        rllib.warm_start == "counting"
        and rllib.advice == "counting"
        and rllib.opponents == {"counting": 0.85, "self": 0.15}
    )


def test_flags_make_the_rllib_run_with_the_rule_options():
    config = config_of("--backend", "rllib", "--players", "3-5", "--address", "head:6379", "--env-runners", "4",
                       "--net-arch", "64", "64", "--no-column-rule", "--end-score", "50")  # fmt: skip
    assert (config.players, config.env_runners, config.address, config.net_arch) == (
        [3, 4, 5],
        4,
        "head:6379",
        [64, 64],
    )
    assert config.rules == {"column_rule": False, "end_score": 50}  # the shared rule flags (R13, R19)
    assert config.out_dir == "runs/rllib-3-5p"


@pytest.mark.parametrize(
    ("backend", "flag", "field"),
    [("sb3", ("--env-runners", "2"), "env_runners"), ("sb3", ("--address", "auto"), "address"),
     ("rllib", ("--shaping",), "shaping")],
)  # fmt: skip
def test_a_field_a_backend_cannot_honour_is_refused_in_one_line_naming_it(capsys, tmp_path, backend, flag, field):
    out = tmp_path / "run"
    assert main(["train", "--backend", backend, *flag, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot honour {field}=" in err and "Traceback" not in err
    assert not out.exists()  # nothing written


def test_every_field_a_backend_refuses_is_honoured_by_another():
    """A field one backend refuses is another's; the PPO backends refuse only fields whose default is
    'off' (the value backend refuses the PPO recipe's fields, which it never reads, at any default)."""
    names = {f.name for f in fields(TrainConfig)}
    for backend in BACKENDS.values():
        assert set(backend.cannot) <= names
        for name in backend.cannot:
            assert any(name not in other.cannot for other in BACKENDS.values()), name
            if backend.name != "value":
                assert default_of(next(f for f in fields(TrainConfig) if f.name == name)) in (None, False, 1)


def test_a_resumed_rllib_run_keeps_its_config(tmp_path: Path):
    saved = TrainConfig(players=3, net_arch=[64], out_dir=str(tmp_path))
    (tmp_path / "checkpoint").mkdir()
    saved.save(tmp_path / "checkpoint" / "config.json")
    (tmp_path / "checkpoint" / "state.json").write_text('{"timesteps": 4096, "seconds": 1.0}')
    config = config_of("--backend", "rllib", "--resume", str(tmp_path), "--total-timesteps", "9000000")
    assert (config.players, config.net_arch, config.total_timesteps) == (3, [64], 9_000_000)


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed here")
def test_without_ray_the_error_names_the_extra(capsys, tmp_path):
    assert main(["train", "--backend", "rllib", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "skyjo-env[distributed]" in err and "Traceback" not in err
