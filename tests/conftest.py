"""Fixtures shared by the test files: a tiny finished training run, and a copy of it a test may damage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skyjo_env.apps.cli import main

from commands import TINY


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 1,024-step run of 2 players with its checkpoint (made once for each module that asks)."""
    out = tmp_path_factory.mktemp("runs") / "tiny"
    assert main(["train", *TINY, "--out", str(out)]) == 0
    return out


@pytest.fixture
def run(trained: Path, tmp_path: Path) -> Path:
    """A copy of the trained run that a test may damage."""
    copy = tmp_path / "tiny"
    shutil.copytree(trained, copy)
    return copy
