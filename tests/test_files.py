"""``skyjo_env.files``: every file the project writes is written whole or not at all, and never
through a symbolic link it did not make."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from skyjo_env import files


def full_disk_after(monkeypatch: pytest.MonkeyPatch, writes: int) -> None:
    """The disk fills up after ``writes`` more files reach it: the next flush to the disk fails with ENOSPC."""
    real = os.fsync
    left = [writes]

    def fsync(fd: int) -> None:
        if left[0] == 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        left[0] -= 1
        real(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_file_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    assert files.write_file(path, "first") == path and path.read_text() == "first"
    files.write_file(path, b"second")
    assert path.read_bytes() == b"second" and names(tmp_path) == ["report.json"]  # no temporary file left


def test_a_full_disk_leaves_the_earlier_files_and_no_new_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files.write_file(tmp_path / "a.json", "earlier a")
    full_disk_after(monkeypatch, 1)  # the second of the three files does not fit
    with pytest.raises(OSError, match="No space left on device") as caught:
        files.write_files({tmp_path / "a.json": "new a", tmp_path / "b.csv": "new b", tmp_path / "c.md": "new c"})
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(tmp_path / "b.csv")
    assert names(tmp_path) == ["a.json"] and (tmp_path / "a.json").read_text() == "earlier a"  # none of the new ones


def test_an_append_that_fails_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "eval.jsonl"
    files.append_file(log, '{"timesteps": 1}\n')
    files.append_file(log, '{"timesteps": 2}\n')
    assert log.read_text() == '{"timesteps": 1}\n{"timesteps": 2}\n'
    full_disk_after(monkeypatch, 0)
    with pytest.raises(OSError):
        files.append_file(log, '{"timesteps": 3}\n')
    assert log.read_text() == '{"timesteps": 1}\n{"timesteps": 2}\n' and names(tmp_path) == ["eval.jsonl"]


def test_a_symbolic_link_is_replaced_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").symlink_to(victim)
    (out / "gone.json").symlink_to(tmp_path / "nowhere")  # a link to nothing
    files.write_files({out / "report.json": "report", out / "gone.json": "gone"})
    assert victim.read_text() == "not yours" and not (tmp_path / "nowhere").exists()
    for name, text in (("report.json", "report"), ("gone.json", "gone")):
        assert not (out / name).is_symlink() and (out / name).read_text() == text


def test_a_folder_that_cannot_be_written_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        files.write_file(tmp_path / "missing" / "report.json", "x")
    assert caught.value.filename == str(tmp_path / "missing" / "report.json")
