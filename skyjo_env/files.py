"""Files written whole or not at all: the one way the project writes a file.

Each file goes first to a temporary file beside it (`.<name>.<random>.partial`, made anew, never
through a link), is flushed to the disk, and only then moved onto its name with `os.replace()`. A
failure on the way (a full disk, no permission, a kill) leaves the file as it was: the earlier one,
or none, never a half. The move replaces whatever the name held, a symbolic link included, and
writes nothing through it. A write that fails raises `OSError` naming the file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

#: What a file's contents may be: text (written as UTF-8) or bytes.
Contents = str | bytes


def write_file(path: str | Path, data: Contents) -> Path:
    """Write `data` to `path` whole or not at all (see the module); returns the path."""
    (written,) = write_files({path: data})
    return written


def write_files(contents: Mapping[str | Path, Contents]) -> list[Path]:
    """Write several files, each whole: all of them go to temporary files first, and only once
    every one is on the disk are they moved onto their names, so a failure while writing leaves
    every one of them as it was. Returns the paths, in order."""
    paths = [Path(p) for p in contents]
    temps: list[Path] = []
    try:
        for path, data in zip(paths, contents.values(), strict=True):
            temps.append(_written_beside(path, data.encode() if isinstance(data, str) else data))
        for temp, path in zip(temps, paths, strict=True):
            try:
                os.replace(temp, path)
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror, str(path)) from None
    finally:
        for temp in temps:
            with contextlib.suppress(OSError):
                temp.unlink(missing_ok=True)
    for folder in {path.parent for path in paths}:
        sync_folder(folder)
    return paths


def append_file(path: str | Path, text: str) -> Path:
    """Add `text` to the end of the text file `path` (made if missing), the whole file written
    anew by [`write_file()`][write_file]: a failure leaves it as it was, never with half a line."""
    path = Path(path)
    try:
        before = path.read_bytes()
    except FileNotFoundError:
        before = b""
    return write_file(path, before + text.encode())


def _written_beside(path: Path, data: bytes) -> Path:
    """A new temporary file in `path`'s folder holding `data`, flushed to the disk."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    while True:
        temp = path.with_name(f".{path.name[:200]}.{secrets.token_hex(4)}.partial")
        try:
            fd = os.open(temp, flags, 0o666)  # (the process's umask applies, as to any new file)
            break
        except FileExistsError:  # another writer's: draw another name
            continue
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    return temp


def sync_folder(folder: Path) -> None:
    """Flush `folder`'s entries (the moves into it) to the disk, where the system allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # (Windows opens no folder)
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
