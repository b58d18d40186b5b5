"""``skyjo serve``: play Skyjo in the browser against the agents, or watch agents play each other.

A Starlette app (the ``web`` extra: ``pip install 'skyjo-env[web]'``) serves the page in
``train/web/`` and a JSON API over :mod:`skyjo_env.train.web_games`:

=======================================  ====================================================================
route                                    what it does
=======================================  ====================================================================
``GET /api/options``                     agents and the seat counts each fits, default agents, rule options
``POST /api/games``                      new game from ``{"seats": [null, "ppo-2p"], "rules": {...}, "seed": 1}``
``GET /api/games/{id}``                  the game as the person's seat may see it (a *view*)
``POST /api/games/{id}/moves``           the person's move ``{"action": 0}``; returns the view
``POST /api/games/{id}/advance``         one move of the agent whose turn it is; returns the view
``GET /api/games/{id}/snapshot``         the engine's snapshot JSON (a human game only once it is over)
=======================================  ====================================================================

A view is ``{"id", "seats", "you" (the person's seat, or null), "rules", "table"`` (the fields of
:class:`skyjo_env.render.Table`), ``"legal"`` (the person's moves now, ``[{"action": 0, "name":
"draw"}, ...]``), ``"last_move"`` (``{"seat", "action", "name"}``), ``"last_round"`` (``{"round",
"cards", "removed", "scores", "ender", "doubled": {"seat", "from", "to"} or null, "totals"}``) and
``"snapshot_ready"}``. A refused request gets a 4xx ``{"error": "..."}`` (a refused move also
``"legal"``) and changes nothing. Games are saved as JSON files in ``--games-dir``; a restarted server resumes them.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.applications import Starlette

WEB = Path(__file__).parent / "web"
DEFAULT_GAMES_DIR = "runs/web-games"
MISSING_EXTRA = "skyjo serve: the web server needs the web extra: pip install 'skyjo-env[web]'"


def create_app(games_dir: str | Path) -> Starlette:
    """The web app, keeping its games in ``games_dir`` (created if missing)."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from skyjo_env.train import web_games
    from skyjo_env.train.web_games import GameError, GameStore

    store = GameStore(games_dir)

    async def body(request: Request) -> Any:
        try:
            return await request.json()
        except ValueError as exc:
            raise GameError(400, f"malformed JSON: {exc}") from None

    def game_id(request: Request) -> str:
        return request.path_params["game_id"]

    async def index(request: Request) -> FileResponse:
        return FileResponse(WEB / "index.html")

    async def options(request: Request) -> JSONResponse:
        return JSONResponse(web_games.options())

    async def create(request: Request) -> JSONResponse:
        record = web_games.new_game(await body(request))
        return JSONResponse(web_games.view(store.add(record), record), status_code=201)

    async def show(request: Request) -> JSONResponse:
        return JSONResponse(web_games.view(game_id(request), store.get(game_id(request))))

    async def move(request: Request) -> JSONResponse:
        record = store.get(game_id(request))
        record = web_games.move(record, await body(request))
        store.put(game_id(request), record)
        return JSONResponse(web_games.view(game_id(request), record))

    async def advance(request: Request) -> JSONResponse:
        record = web_games.advance(store.get(game_id(request)))
        store.put(game_id(request), record)
        return JSONResponse(web_games.view(game_id(request), record))

    async def snapshot(request: Request) -> JSONResponse:
        state = web_games.snapshot(store.get(game_id(request)))
        attachment = {"Content-Disposition": f'attachment; filename="skyjo-{game_id(request)}.json"'}
        return JSONResponse(state, headers=attachment)

    async def refused(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, GameError)
        return JSONResponse({"error": str(exc), **exc.extra}, status_code=exc.status)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    routes = [
        Route("/", index),
        Route("/api/options", options),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{game_id}", show),
        Route("/api/games/{game_id}/moves", move, methods=["POST"]),
        Route("/api/games/{game_id}/advance", advance, methods=["POST"]),
        Route("/api/games/{game_id}/snapshot", snapshot),
        Mount("/static", StaticFiles(directory=WEB)),
    ]
    return Starlette(routes=routes, exception_handlers={GameError: refused, HTTPException: http_error})


def add_serve_parser(subparsers: argparse._SubParsersAction) -> None:
    """The ``serve`` subcommand."""
    from skyjo_env.train.arguments import int_range

    parser = subparsers.add_parser(
        "serve",
        help="play Skyjo in the browser against agents",
        description="Start a local web server to play Skyjo in the browser against the agents, or to "
        "watch agents play each other (needs the web extra: pip install 'skyjo-env[web]').",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=int_range(0, 65535), default=8000, help="port (default 8000; 0: any free port)")
    parser.add_argument("--games-dir", default=DEFAULT_GAMES_DIR, metavar="DIR",
                        help=f"folder the games are saved in, to resume after a restart (default {DEFAULT_GAMES_DIR})")  # fmt: skip
    parser.set_defaults(func=serve)


def serve(args: argparse.Namespace) -> int:
    """Run the ``serve`` subcommand: listen, print the address, serve until interrupted."""
    try:
        import uvicorn

        app = create_app(args.games_dir)
    except ImportError:
        print(MISSING_EXTRA, file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"skyjo serve: cannot use the games folder {args.games_dir}: {exc}", file=sys.stderr)
        return 2
    try:
        listener = socket.create_server(
            (args.host, args.port), family=socket.AF_INET6 if ":" in args.host else socket.AF_INET
        )
    except OSError as exc:
        print(f"skyjo serve: cannot listen on {args.host} port {args.port}: {exc}", file=sys.stderr)
        return 2
    host, port = listener.getsockname()[:2]
    address = f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"
    print(f"Skyjo: open {address} in a browser (games saved in {args.games_dir}; Ctrl+C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C: uvicorn has shut down cleanly, then passes the signal on
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])
    return 0
