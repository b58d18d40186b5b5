"""`skyjo serve`: play Skyjo in the browser against the agents, or watch agents play each other.

A Starlette app (the `web` extra: `pip install 'skyjo-env[web]'`) serves the page in
`apps/web/` and a JSON API over [`skyjo_env.apps.web_games`][]:

route                          | what it does
------------------------------ | ------------
`GET /api/options`             | agents and the seat counts each fits, default agents, rule options
`POST /api/games`              | new game from `{"seats": [null, "ppo-2p"], "rules": {...}, "seed": 1}`
`GET /api/games/{id}`          | the game as the person's seat may see it (a *view*)
`POST /api/games/{id}/moves`   | the person's move `{"action": 0, "step": 7}`; returns the view
`POST /api/games/{id}/advance` | one move of the agent whose turn it is, `{"step": 7}`; returns the view
`GET /api/games/{id}/snapshot` | the engine's snapshot JSON (a human game only once it is over)
`GET /api/games/{id}/hints`    | the `expectimax` agent's value of each legal move of the person's seat, from its view alone

A view is `{"id", "seats", "you" (the person's seat, or null), "rules", "table"` (the fields of
[`skyjo_env.render.Table`][]), `"legal"` (the person's moves now, `[{"action": 0, "name":
"draw"}, ...]`), `"last_move"` (`{"seat", "action", "name"}`), `"last_round"` (`{"round",
"cards", "removed", "scores", "ender", "doubled": {"seat", "from", "to"} or null, "totals"}`),
`"snapshot_ready"` and `"step"` (the moves played so far)`}`.

`rules` and `seed` are optional: without a seed the game is dealt from a secret one, which no
response shows. A move and an advance name the `step` of the view they were made from: once the
game has moved on (another tab, an overtaking request) they are refused with a 409 whose JSON has
the current `"view"`. Each game's moves are applied one at a time.

A refused request gets a 4xx `{"error": "..."}` (a refused move also `"legal"`) and changes
nothing; a fault of the server's own (a game file it cannot read or write) is a 500, also JSON.
A POST must be `Content-Type: application/json` (else 415), at most 64 KiB (else 413), nested at
most 8 deep (else 400), and come from the page's own origin if it names one (else 403), so another
web site cannot play or create games. Every request must name this server in its `Host` header
(else 421, JSON): the `--host` address, or a loopback name (`127.0.0.1`, `localhost`, `[::1]`),
with or without the port; a server listening on every address (`0.0.0.0`, `::`) also answers to
any IP address and to the machine's own name. So a page of another site whose name is made to
point at this machine (DNS rebinding) reaches no game. Games are saved as JSON files in `--games-dir` (made when the
first game is saved); a restarted server resumes them. Finished games and all but the 256 games
used last leave memory, not the folder.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.types import ASGIApp, Receive, Scope, Send

WEB = Path(__file__).parent / "web"
MAX_BODY = 64 * 1024  # bytes of a request body
MAX_NESTING = 8  # levels of lists and objects in a request body
#: Names of this machine that a request's `Host` may always give.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
#: `--host` values that listen on every address of the machine.
EVERY_ADDRESS = ("", "0.0.0.0", "::")


def create_app(games_dir: str | Path, host: str = "127.0.0.1") -> Starlette:
    """The web app, keeping its games in `games_dir` (made when the first game is saved), answering
    requests whose `Host` header names `host` (the address it listens on) or this machine
    ([`HostCheck`][]).

    `OSError` if `games_dir` cannot be a writable folder.
    """
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from skyjo_env.apps import web_games
    from skyjo_env.apps.web_games import GameError, GameStore

    store = GameStore(games_dir)

    def game_id(request: Request) -> str:
        return request.path_params["game_id"]

    async def index(request: Request) -> FileResponse:
        return FileResponse(WEB / "index.html")

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)  # the page links its own icon; this spares other clients a 404

    async def options(request: Request) -> JSONResponse:
        return JSONResponse(web_games.options())

    async def create(request: Request) -> JSONResponse:
        record = web_games.new_game(await body(request))
        return JSONResponse(web_games.view(await run_in_threadpool(store.add, record), record), status_code=201)

    async def show(request: Request) -> JSONResponse:
        return JSONResponse(web_games.view(game_id(request), await run_in_threadpool(store.get, game_id(request))))

    async def move(request: Request) -> JSONResponse:
        sent, game = await body(request), game_id(request)
        record = await run_in_threadpool(store.update, game, lambda record: web_games.move(game, record, sent))
        return JSONResponse(web_games.view(game, record))

    async def advance(request: Request) -> JSONResponse:
        sent, game = await body(request), game_id(request)
        record = await run_in_threadpool(store.update, game, lambda record: web_games.advance(game, record, sent))
        return JSONResponse(web_games.view(game, record))

    async def hints(request: Request) -> JSONResponse:
        record = await run_in_threadpool(store.get, game_id(request))
        return JSONResponse(await run_in_threadpool(web_games.hints, record))

    async def snapshot(request: Request) -> JSONResponse:
        state = web_games.snapshot(await run_in_threadpool(store.get, game_id(request)))
        attachment = {"Content-Disposition": f'attachment; filename="skyjo-{game_id(request)}.json"'}
        return JSONResponse(state, headers=attachment)

    async def refused(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, GameError)
        return JSONResponse({"error": str(exc), **exc.extra}, status_code=exc.status)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    async def fault(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": f"the server failed: {type(exc).__name__}"}, status_code=500)

    routes = [
        Route("/", index),
        Route("/favicon.ico", favicon),
        Route("/api/options", options),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{game_id}", show),
        Route("/api/games/{game_id}/moves", move, methods=["POST"]),
        Route("/api/games/{game_id}/advance", advance, methods=["POST"]),
        Route("/api/games/{game_id}/snapshot", snapshot),
        Route("/api/games/{game_id}/hints", hints),
        Mount("/static", StaticFiles(directory=WEB)),
    ]
    handlers = {GameError: refused, HTTPException: http_error, Exception: fault}
    return Starlette(routes=routes, exception_handlers=handlers, middleware=[Middleware(HostCheck, host=host)])


class HostCheck:
    """ASGI middleware: a request whose `Host` header names neither `host` nor this machine is
    answered 421 with a JSON error, before any route sees it."""

    def __init__(self, app: ASGIApp, host: str) -> None:
        self.app = app
        self.host = host
        wanted = host.strip("[]").lower()
        self.every_address = wanted in EVERY_ADDRESS
        self.names = {wanted, *LOOPBACK_NAMES} - set(EVERY_ADDRESS)
        if self.every_address:
            self.names |= {socket.gethostname().lower(), socket.getfqdn().lower()}

    def allows(self, header: str) -> bool:
        """Whether a `Host` header (`name`, `name:port`, `[v6]` or `[v6]:port`) names this server."""
        name = _host_name(header)
        if name is None:
            return False
        if name in self.names:
            return True
        if not self.every_address:
            return False
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.datastructures import Headers
        from starlette.responses import JSONResponse

        if scope["type"] == "http":
            header = Headers(scope=scope).get("host", "")
            if not self.allows(header):
                names = ", ".join(sorted(self.names)) + (", or any IP address" if self.every_address else "")
                refused = JSONResponse(
                    {"error": f"this server answers to {names} (with or without the port), not to Host {header!r}"},
                    status_code=421,
                )
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _host_name(header: str) -> str | None:
    """The name in a `Host` header, lower case, without its port or an IPv6 address's brackets;
    `None` if the header is malformed."""
    header = header.strip().lower()
    if header.startswith("["):
        name, bracket, rest = header[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None if rest else ""
    else:
        name, colon, port = header.partition(":")
        bracket = "]"
        port = port if colon else ""
    if not name or not bracket or port is None or (port and not port.isdigit()):
        return None
    return name


async def body(request: Request) -> Any:
    """The JSON body of a POST, refused unless it is same-origin JSON within the size and nesting limits."""
    from skyjo_env.apps.web_games import GameError

    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise GameError(403, f"a request from another site ({origin}) may not change games")
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise GameError(415, "the request body must be JSON, sent with Content-Type: application/json")
    too_big = GameError(413, f"the request body is over {MAX_BODY} bytes")
    too_deep = GameError(400, f"the request body nests lists and objects more than {MAX_NESTING} deep")
    length = request.headers.get("content-length", "0")
    if not length.isdigit() or int(length) > MAX_BODY:
        raise too_big
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise too_big
    try:
        parsed = json.loads(data)
    except RecursionError:  # deeper than the parser goes
        raise too_deep from None
    except ValueError as exc:
        raise GameError(400, f"malformed JSON: {exc}") from None
    if _nested_deeper(parsed, MAX_NESTING):
        raise too_deep
    return parsed


def _nested_deeper(data: Any, levels: int) -> bool:
    """Whether `data` nests lists and objects more than `levels` deep."""
    if not isinstance(data, dict | list):
        return False
    items = data.values() if isinstance(data, dict) else data
    return levels == 0 or any(_nested_deeper(item, levels - 1) for item in items)
