"""Running the ``skyjo`` command in the test process, for the tests of its subcommands."""

from __future__ import annotations

import pytest

from skyjo_env.apps.cli import main

#: A training run of a few seconds: 1,024 steps of 2 players, no warm start, tiny evaluations.
TINY = ["--total-timesteps", "1024", "--num-envs", "16", "--n-steps", "16", "--batch-size", "128", "--net-arch", "16",
        "--warm-start", "none", "--advice", "none", "--eval-every", "0", "--eval-games", "4", "--final-games", "4",
        "--eval-opponents", "random", "--opponents", "random=1", "self=1", "--snapshot-every", "512", "--no-progress"]  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``skyjo argv`` in this process: its exit status (argparse's included), stdout and stderr."""
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
