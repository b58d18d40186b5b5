"""Running the ``skyjo`` command in the test process, for the tests of its subcommands."""

from __future__ import annotations

import pytest

from skyjo_env.apps.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``skyjo argv`` in this process: its exit status (argparse's included), stdout and stderr."""
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
