"""``skyjo serve``'s app under uvicorn on a free loopback port, in a thread, for the tests that need a real server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from skyjo_env.apps.serve import create_app


@contextmanager
def serving(games: Path) -> Iterator[str]:
    """Serve the app keeping its games in ``games`` on 127.0.0.1; yields its address, ``http://127.0.0.1:port/``."""
    listener = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(games), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(10)
