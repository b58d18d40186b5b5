"""The games of `skyjo serve`: kept as engine snapshots, stepped one move at a time, shown per seat.

A game is a *record* of plain JSON data: `seats` (per seat an agent name, or `None` for the
person; no `None`: a spectator game), `state` (the engine's snapshot, [`skyjo_env.snapshot`][]),
`last_move` and `last_round`. Each call imports the snapshot into a fresh one-game engine, steps
it and exports it again, so no live engine outlives a request and a record on disk resumes as it was.

[`view()`][view] is all a client ever sees of a game: it is built from
[`skyjo_env.render.public_table()`][skyjo_env.render.public_table] for the person's seat (a spectator: public
information only), so face-down cards, the draw pile's order and another seat's drawn card never leave the server.
The full snapshot ([`snapshot()`][snapshot]) is given out only once nothing is secret any more: a human
game that is over, or a spectator game. A game the request gives no seed is dealt from a seed drawn
by `secrets` and never shown, so no other game (a spectator game's snapshot included) holds its deal.

Every view carries `step`, the number of moves played; a move or an advance names the step it was
made at and is refused (409, with the game's view now) if the game has moved on since: two tabs, or
a request overtaken by another, never apply a move to a state their sender did not see.
[`GameStore`][] applies each game's changes one at a time.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import secrets
import threading
import uuid
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from skyjo_env import agents
from skyjo_env.actions import NUM_ACTIONS, action_name, names
from skyjo_env.agents.base import Policy
from skyjo_env.agents.expectimax import ExpectimaxPolicy
from skyjo_env.agents.value_net import DEFAULT as DEFAULT_VALUE_NETWORK
from skyjo_env.agents.value_net import ValueNetwork
from skyjo_env.agents.value_net import load as load_value_network
from skyjo_env.checks import is_integer
from skyjo_env.engine import SkyjoEngine
from skyjo_env.files import write_file
from skyjo_env.observation import observe
from skyjo_env.opponents import AgentError, act
from skyjo_env.phases import OVER, SETUP
from skyjo_env.render import public_table, round_end
from skyjo_env.rules import EPISODES, NEXT_STARTERS, Rules

PLAYER_COUNTS = range(2, 9)  # R2
SEED_BITS = 64  # a seed is an integer 0 <= seed < 2**SEED_BITS
GAMES_IN_MEMORY = 256  # games in play kept in memory, the least recently used leave first (all stay on disk)
#: Agents kept built, by name and rules: the least recently used leave first (each may hold a network's weights).
AGENTS_IN_MEMORY = 32
HINT_AGENT = "expectimax"  # the agent whose move values the hints show
_GAME_ID = re.compile(r"[0-9a-f]{32}")


class GameError(Exception):
    """A request refused with HTTP `status`; `extra` goes into the JSON error beside the message."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.extra = extra


# ---------------------------------------------------------------------------------------- agents
def policy(name: str, rules: Rules) -> Policy:
    """The registered agent `name` at a table under `rules`, kept built for the
    [`AGENTS_IN_MEMORY`][] agents and rules used last (a server's memory does not grow with every
    rule set a request names).

    Only registered names: a request must not make the server import files (agent specs such as
    `file.py:attr` are for the command line). `GameError` for an unknown name or an agent that
    does not play this many seats.
    """
    if name not in agents.names():
        raise GameError(400, f"unknown agent {name!r}; known agents: {', '.join(agents.names())}")
    agent = _built(name, rules)
    if agent is None:
        fitting = [n for n in agents.names() if fits(n, rules.num_players)]
        raise GameError(
            400, f"agent {name!r} does not play {rules.num_players}-player games; agents that do: {', '.join(fitting)}"
        )
    return agent


@functools.cache
def fits(name: str, num_players: int) -> bool:
    """Whether agent `name` plays `num_players`-player games (a network reads one player count
    only); answered once per process, without keeping the agent."""
    return _make(name, Rules(num_players=num_players)) is not None


@functools.lru_cache(maxsize=AGENTS_IN_MEMORY)
def _built(name: str, rules: Rules) -> Policy | None:
    """`_make(name, rules)`, kept for the [`AGENTS_IN_MEMORY`][] agents and rules used last."""
    return _make(name, rules)


def _make(name: str, rules: Rules) -> Policy | None:
    """`agents.make(name, rules=rules)`; `None` if the agent does not fit the table."""
    try:
        with warnings.catch_warnings():  # a network trained under other rules still plays: the page needs no warning
            warnings.simplefilter("ignore", UserWarning)
            return agents.make(name, rules=rules)
    except ValueError:
        return None


def default_agent(num_players: int) -> str:
    """The shipped PPO agent for `num_players` players where there is one, else `counting`."""
    name = f"ppo-{num_players}p"
    return name if name in agents.names() and fits(name, num_players) else "counting"


def options() -> dict[str, Any]:
    """What a new game may be: each agent with the seat counts it fits, the default agents, the rules."""
    return {
        "agents": {name: [p for p in PLAYER_COUNTS if fits(name, p)] for name in agents.names()},
        "default_agents": {str(p): default_agent(p) for p in PLAYER_COUNTS},
        "rules": Rules().to_dict(),
        "choices": {"next_starter": list(NEXT_STARTERS), "episode": list(EPISODES)},
    }


# ---------------------------------------------------------------------------------------- games
def new_game(body: Any) -> dict[str, Any]:
    """A new game's record from a request `{"seats": [...], "rules": {...}, "seed": n}` (rules, seed optional)."""
    body = _object(body)
    seats = body.get("seats")
    if not isinstance(seats, list) or not all(s is None or isinstance(s, str) for s in seats):
        raise GameError(400, "seats must be a list with an agent name, or null for the person, per seat")
    if seats.count(None) > 1:
        raise GameError(400, "at most one seat is the person's (null); name an agent for the others")
    chosen = body.get("rules", {})
    if not isinstance(chosen, dict) or "num_players" in chosen:
        raise GameError(400, "rules must be an object of rule options; the player count follows the seats")
    try:
        rules = Rules.from_dict({**chosen, "num_players": len(seats)})
    except ValueError as exc:
        raise GameError(400, f"bad rules: {exc}") from None
    for name in seats:
        if name is not None:
            policy(name, rules)
    engine = SkyjoEngine(rules, 1, seed=_seed(body.get("seed")), auto_reset=False)
    return {"seats": seats, "state": engine.export_game(0), "last_move": None, "last_round": None}


def _seed(seed: Any) -> int:
    """The seed a request chose, or a secret one drawn by `secrets` if it chose none."""
    if seed is None:
        return secrets.randbits(SEED_BITS)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**SEED_BITS:
        raise GameError(400, f"bad seed {seed!r}: use an integer 0 <= seed < 2**{SEED_BITS}, or none for a secret one")
    return seed


def move(game_id: str, record: dict[str, Any], body: Any) -> dict[str, Any]:
    """The record after the person's move `{"action": id, "step": n}` (action ids: [`skyjo_env.actions`][])."""
    sent = _seen(game_id, record, body)
    engine = _playing(record)
    person = _person(record)
    if person is None:
        raise GameError(409, "every seat of this game is an agent's (a spectator game): advance it instead")
    if int(engine.current[0]) != person:
        seat = int(engine.current[0])
        raise GameError(
            409, f"not your turn: seat {seat} ({record['seats'][seat]}) is to act; advance the game", legal=[]
        )
    return _step(record, engine, _action(engine, sent))


def _action(engine: SkyjoEngine, sent: dict[str, Any]) -> int:
    """The action id of the move `sent`, if legal now; else a 400 naming the legal moves."""
    legal = engine.legal_mask()[0]
    action: Any = sent.get("action")
    if "action" not in sent:
        problem = 'the move names no "action"'
    elif not is_integer(action):
        problem = f'"action" must be an action id, an integer 0..{NUM_ACTIONS - 1}, not {action!r}'
    elif not 0 <= action < NUM_ACTIONS:
        problem = f"action {action} is out of range (0..{NUM_ACTIONS - 1})"
    elif not legal[action]:
        problem = f"{action_name(action)} (action {action}) is not legal now"
    else:
        return int(action)
    raise GameError(400, f"move refused: {problem}; legal now: {', '.join(names(legal))}", legal=_legal(engine))


def advance(game_id: str, record: dict[str, Any], body: Any) -> dict[str, Any]:
    """The record after one move of the agent whose turn it is, asked for by `{"step": n}`."""
    _seen(game_id, record, body)
    engine = _playing(record)
    seat = int(engine.current[0])
    name = record["seats"][seat]
    if name is None:
        raise GameError(409, f"it is your turn (seat {seat}): send a move", legal=_legal(engine))
    games = np.zeros(1, dtype=np.intp)
    try:
        action = int(act(policy(name, engine.rules), engine, games, role="agent")[0])
    except AgentError as exc:  # the agent raised: the game stays as it was
        raise GameError(500, str(exc)) from None
    return _step(record, engine, action)


def view(game_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """What the person (a spectator, in a spectator game) may see of the game, as JSON data."""
    engine = _engine(record)
    person = _person(record)
    table = public_table(engine, 0, person)
    return {
        "id": game_id,
        "seats": record["seats"],
        "you": person,
        "rules": engine.rules.to_dict(),
        "table": asdict(table),
        "legal": _legal(engine) if person is not None and table.current == person else [],
        "last_move": record["last_move"],
        "last_round": record["last_round"],
        "snapshot_ready": _snapshot_ready(record),
        "step": _steps(record),
    }


def hints(record: dict[str, Any]) -> dict[str, Any]:
    """The expectimax agent's value of each legal move of the person, when the person is to act in
    play (not in the setup flips), computed from the person's view alone: `{"agent": ..., "hints":
    [{"action": id, "name": ..., "value": v}, ...]}`, best first, `v` its value in units of a game's result
    ([`ExpectimaxPolicy.action_values()`][skyjo_env.agents.expectimax.ExpectimaxPolicy.action_values]). Empty
    when the person is not to act."""
    engine = _engine(record)
    person = _person(record)
    if person is None or int(engine.current[0]) != person or int(engine.phase[0]) in (SETUP, OVER):
        return {"agent": HINT_AGENT, "hints": []}
    if engine.num_players not in _hint_network().player_counts:
        raise GameError(409, f"hints are not available at tables of {engine.num_players} players")
    # The values alone are shown: no base policy (margin 0).
    hinter = ExpectimaxPolicy(_hint_network(), margin=0, rules=engine.rules, seed=_steps(record))
    masks = engine.legal_mask()
    values = hinter.action_values(observe(engine, person), masks)[0]
    order = sorted(np.flatnonzero(masks[0]).tolist(), key=lambda a: -values[a])
    return {"agent": HINT_AGENT, "hints": [{"action": a, "name": action_name(a), "value": round(float(values[a]), 4)}
                                           for a in order]}  # fmt: skip


@functools.cache
def _hint_network() -> ValueNetwork:
    """The shipped value network the hints are computed with (loaded once)."""
    return load_value_network(DEFAULT_VALUE_NETWORK)


def snapshot(record: dict[str, Any]) -> dict[str, Any]:
    """The engine's full snapshot of the game: a spectator game's at any time, a human game's once over."""
    if not _snapshot_ready(record):
        raise GameError(409, "the game's snapshot shows face-down cards: it can be downloaded once the game is over")
    return record["state"]


def _seen(game_id: str, record: dict[str, Any], body: Any) -> dict[str, Any]:
    """The request `body`, if its `step` is the game's: 400 without one, 409 with the view now if stale."""
    body = _object(body)
    seen = body.get("step")
    if not isinstance(seen, int) or isinstance(seen, bool) or seen < 0:
        raise GameError(400, f'"step" must be the step of the view the request was made from, not {seen!r}')
    if seen != _steps(record):
        raise GameError(
            409,
            f"the game has moved on: the request was made at step {seen}, the game is at step {_steps(record)}",
            view=view(game_id, record),
        )
    return body


def _steps(record: dict[str, Any]) -> int:
    """The moves played in the game so far."""
    return record["state"]["steps"]


def _step(record: dict[str, Any], engine: SkyjoEngine, action: int) -> dict[str, Any]:
    """The record after the legal `action`."""
    seat = int(engine.current[0])
    result = engine.step(np.array([action]))
    return {
        **record,
        "state": engine.export_game(0),
        "last_move": {"seat": seat, "action": action, "name": action_name(action)},
        "last_round": _round_end(record["state"], action) if result.round_over[0] else record["last_round"],
    }


def _round_end(before: dict[str, Any], action: int) -> dict[str, Any]:
    """The round that `action` ends in state `before` ([`skyjo_env.render.round_end()`][skyjo_env.render.round_end]), as
    JSON data."""
    r = round_end(before, action)
    doubled = {"seat": r.ender, "from": r.doubled_from, "to": r.scores[r.ender]} if r.doubled_from is not None else None
    return {"round": r.round, "cards": r.cards, "removed": r.removed, "scores": r.scores, "ender": r.ender,
            "doubled": doubled, "totals": r.totals}  # fmt: skip


def _engine(record: dict[str, Any]) -> SkyjoEngine:
    return SkyjoEngine.of_game(record["state"])


def _playing(record: dict[str, Any]) -> SkyjoEngine:
    """The game's engine, or a 409 if the game is over."""
    engine = _engine(record)
    if engine.phase[0] == OVER:
        raise GameError(409, "the game is over: start a new one")
    return engine


def _person(record: dict[str, Any]) -> int | None:
    """The person's seat, or None in a spectator game."""
    seats = record["seats"]
    return seats.index(None) if None in seats else None


def _snapshot_ready(record: dict[str, Any]) -> bool:
    return _person(record) is None or record["state"]["phase"] == "over"


def _legal(engine: SkyjoEngine) -> list[dict[str, Any]]:
    """The legal moves of the seat to act, as `{"action": id, "name": ...}`."""
    return [{"action": int(a), "name": action_name(a)} for a in np.flatnonzero(engine.legal_mask()[0])]


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise GameError(400, f"the request body must be a JSON object, not {type(body).__name__}")
    return body


# ---------------------------------------------------------------------------------------- storage
class GameStore:
    """Game records by id, as `<id>.json` in `folder` (a restarted server resumes them) and, for
    the `capacity` games in play used last, in memory; each game's changes are made one at a time.

    Nothing is written before the first game is saved: the folder is made then. Files are replaced
    whole (a temporary file, then `os.replace()`); a file that cannot be read, written or decoded
    is a 500 naming the game.
    """

    def __init__(self, folder: str | Path, capacity: int = GAMES_IN_MEMORY) -> None:
        self.folder = Path(folder)
        _check_folder(self.folder)
        self.capacity = capacity
        self._records: OrderedDict[str, dict[str, Any]] = OrderedDict()  # least recently used first
        self._locks: weakref.WeakValueDictionary[str, threading.Lock] = weakref.WeakValueDictionary()
        self._guard = threading.Lock()  # over _records and _locks

    def add(self, record: dict[str, Any]) -> str:
        """Store a new game; returns its id."""
        game_id = uuid.uuid4().hex
        self._write(game_id, record)
        return game_id

    def get(self, game_id: str) -> dict[str, Any]:
        """The record of game `game_id` (read from its file if not in memory); 404 if there is none."""
        remembered = self._remembered(game_id)
        if remembered is not None:
            return remembered
        with self._lock(game_id):  # a read from the file never puts back a game older than a change made meanwhile
            return self._load(game_id)

    def update(self, game_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        """Replace game `game_id` by `change` of it, with no other change of the game in between."""
        with self._lock(game_id):
            record = change(self._load(game_id))
            self._write(game_id, record)
        return record

    def _lock(self, game_id: str) -> threading.Lock:
        """The lock held while game `game_id` is read from its file or changed."""
        with self._guard:
            return self._locks.setdefault(game_id, threading.Lock())

    def _remembered(self, game_id: str) -> dict[str, Any] | None:
        """Game `game_id`'s record if it is in memory (then used last), else `None`."""
        with self._guard:
            if game_id in self._records:
                self._records.move_to_end(game_id)
                return self._records[game_id]
        return None

    def _load(self, game_id: str) -> dict[str, Any]:
        """Game `game_id`'s record from memory, else from its file (kept in memory then); the caller
        holds the game's lock, so no change of the game is saved between the read and the keeping."""
        remembered = self._remembered(game_id)
        if remembered is not None:
            return remembered
        record = self._read(game_id)
        self._remember(game_id, record)
        return record

    def _read(self, game_id: str) -> dict[str, Any]:
        """The record in game `game_id`'s file, checked."""
        try:
            record = json.loads(self._path(game_id).read_bytes())
        except FileNotFoundError:
            raise GameError(404, f"unknown game {game_id!r}") from None
        except OSError as exc:
            raise GameError(500, f"game {game_id} cannot be read: {exc.strerror}") from None
        except ValueError as exc:
            raise GameError(500, f"game {game_id}'s file is damaged: {exc}") from None
        try:
            _check_record(record)
        except (KeyError, TypeError, ValueError) as exc:
            raise GameError(500, f"game {game_id}'s file is damaged: {exc!r}") from None
        return record

    def _write(self, game_id: str, record: dict[str, Any]) -> None:
        """Save `record` as game `game_id`, replacing its file whole (never half written)."""
        path = self._path(game_id)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_file(path, json.dumps(record))
        except OSError as exc:
            raise GameError(500, f"game {game_id} cannot be saved: {exc.strerror}") from None
        self._remember(game_id, record)

    def _remember(self, game_id: str, record: dict[str, Any]) -> None:
        """Keep a game in play in memory (a finished one leaves), within `capacity` games."""
        with self._guard:
            self._records.pop(game_id, None)
            if record["state"]["phase"] != "over":
                self._records[game_id] = record
            while len(self._records) > self.capacity:
                self._records.popitem(last=False)

    def _path(self, game_id: str) -> Path:
        if not _GAME_ID.fullmatch(game_id):
            raise GameError(404, f"unknown game {game_id!r}")
        return self.folder / f"{game_id}.json"


def _check_record(record: Any) -> None:
    """`ValueError`, `TypeError` or `KeyError` unless `record` is a game record."""
    if not isinstance(record, dict) or set(record) != {"seats", "state", "last_move", "last_round"}:
        raise ValueError("not a game record")
    seats = record["seats"]
    if not isinstance(seats, list) or len(seats) != _engine(record).num_players or seats.count(None) > 1:
        raise ValueError(f"seats {seats!r} do not fit the game")
    if not all(seat is None or isinstance(seat, str) for seat in seats):
        raise ValueError(f"seats {seats!r} must be agent names or null")


def _check_folder(folder: Path) -> None:
    """`OSError` unless `folder` is a writable folder or can be made as one; makes nothing."""
    if folder.is_symlink() and not folder.exists():
        raise FileNotFoundError(errno.ENOENT, f"a symbolic link to {os.readlink(folder)}, which does not exist")
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if not existing.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(existing))
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, "not writable", str(existing))
