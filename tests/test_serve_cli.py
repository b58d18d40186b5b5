"""``skyjo serve`` on the command line: it prints its address and serves; bad options and a missing
``web`` extra are one line and exit status 2."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from commands import run


def test_serve_prints_its_address_and_serves_the_page(tmp_path: Path) -> None:
    games = tmp_path / "games"
    command = [sys.executable, "-m", "skyjo_env.apps.cli", "serve", "--port", "0", "--games-dir", str(games)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as server:
        try:
            line = server.stdout.readline()
            assert line.startswith("Skyjo: open http://127.0.0.1:") and str(games) in line
            address = line.split()[2]
            with urllib.request.urlopen(address, timeout=10) as page:
                assert "<title>Skyjo</title>" in page.read().decode()
            with urllib.request.urlopen(f"{address}static/app.js", timeout=10) as script:
                assert "api/games" in script.read().decode()
        finally:
            server.send_signal(signal.SIGINT)
            _, err = server.communicate(timeout=20)
    assert server.returncode == 0, err
    assert not games.exists()  # made when the first game is saved, not before


def test_a_missing_web_extra_is_one_line_naming_it(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if not installed: importing it fails
    code, out, err = run(capsys, "serve", "--games-dir", str(tmp_path))
    assert code == 2 and out == ""
    assert err == "skyjo serve: the web server needs the web extra: pip install 'skyjo-env[web]'\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "70000"], "argument --port: 70000 is out of range; use 0 to 65535"),
        (["--port", "-1"], "argument --port: -1 is out of range; use 0 to 65535"),
        (["--port", "web"], "argument --port: 'web' is not an integer"),
        (["--host"], "argument --host: expected one argument"),
    ],
)
def test_bad_options_are_one_line(capsys, argv: list[str], message: str) -> None:
    code, _, err = run(capsys, "serve", *argv)
    assert code == 2 and err == f"skyjo serve: error: {message}\n"


def test_a_port_in_use_or_a_games_folder_that_is_a_file_is_one_line(capsys, tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        code, _, err = run(capsys, "serve", "--port", port, "--games-dir", str(tmp_path))
    assert (
        code == 2 and err.startswith(f"skyjo serve: cannot listen on 127.0.0.1 port {port}: ") and err.count("\n") == 1
    )
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, "serve", "--games-dir", str(tmp_path / "file"))
    assert (
        code == 2
        and err.startswith(f"skyjo serve: cannot use the games folder {tmp_path / 'file'}: ")
        and err.count("\n") == 1
    )
