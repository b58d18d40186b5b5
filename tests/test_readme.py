"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_starts_with_the_two_commands() -> None:
    lines = [line for line in README.read_text().splitlines() if line.startswith("python3 -m venv")]
    assert "skyjo train" in lines[0] and "pytest" in lines[1]


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sb3_contrib")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks()
    assert len(blocks) >= 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # our own documentation
