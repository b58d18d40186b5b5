"""``skyjo serve``'s HTTP API (Starlette's TestClient): games, moves, errors, no leaks, resuming.

Rules cited: R10 (a drawn card is seen by its drawer only), R16 (every card up at a round's end),
R17 (doubling), R19/R20 (game end, winners).
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from starlette.testclient import TestClient
from web_server import serving

from skyjo_env import Rules, SkyjoEngine
from skyjo_env.actions import DRAW, FLIP, TAKE, action_name
from skyjo_env.apps.serve import create_app
from skyjo_env.observation import size as observation_size

PERSON = None  # a seat for the person in "seats"
TEST_HOST = "testserver"  # the Host that Starlette's TestClient sends: the app answers to it as to its --host


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "games"


@pytest.fixture
def client(folder: Path) -> TestClient:
    return TestClient(create_app(folder, TEST_HOST))


def start(client: TestClient, seats: list, rules: dict | None = None, seed: int = 0) -> dict:
    response = client.post("/api/games", json={"seats": seats, "rules": rules or {}, "seed": seed})
    assert response.status_code == 201, response.json()
    return response.json()


def my_action(view: dict) -> int:
    """The person's fixed strategy: draw, then discard the drawn card and flip the first face-down slot."""
    legal = [m["action"] for m in view["legal"]]
    flips = [a for a in legal if a >= FLIP]
    return DRAW if DRAW in legal else flips[0] if flips else legal[0]


def play_one(client: TestClient, view: dict) -> dict:
    """One move: the person's if it is their turn, else the agent's."""
    game = view["id"]
    if view["legal"]:
        response = client.post(f"/api/games/{game}/moves", json={"action": my_action(view), "step": view["step"]})
    else:
        response = client.post(f"/api/games/{game}/advance", json={"step": view["step"]})
    assert response.status_code == 200, response.json()
    return response.json()


def play_to_end(client: TestClient, view: dict) -> tuple[dict, list[int]]:
    """Play the game out; returns the final view and every action played, in order."""
    actions = []
    while view["table"]["phase"] != "over":
        view = play_one(client, view)
        actions.append(view["last_move"]["action"])
    return view, actions


def replayed(rules: dict, seed: int, actions: list[int]) -> dict:
    """The engine's own snapshot after ``actions`` from the deal of ``seed``."""
    engine = SkyjoEngine(Rules.from_dict(rules), 1, seed=seed, auto_reset=False)
    for action in actions:
        engine.step(np.array([action]))
    return engine.export_game(0)


def error(response: Any, status: int) -> str:
    assert response.status_code == status, response.json()
    return response.json()["error"]


# ---------------------------------------------------------------------------------------- games
def test_options_offer_every_agent_with_the_seat_counts_it_fits(client: TestClient) -> None:
    options = client.get("/api/options").json()
    assert options["agents"]["ppo-2p"] == [2] and options["agents"]["ppo-4p"] == [4]
    assert options["agents"]["counting"] == options["agents"]["random"] == list(range(2, 9))
    assert options["agents"]["ppo-mixed"] == list(range(3, 9)) and options["agents"]["ppo-5p"] == [5]
    assert options["default_agents"] == {str(p): f"ppo-{p}p" for p in range(2, 9)}  # a shipped agent at every size
    assert options["rules"] == Rules().to_dict()
    assert options["choices"] == {"next_starter": ["round_winner", "round_ender"], "episode": ["game", "round"]}


def test_a_new_game_shows_the_persons_face_down_grid_and_setup_flips(client: TestClient) -> None:
    view = start(client, [PERSON, "ppo-2p"], {"end_score": 50, "next_starter": "round_ender"})
    assert view["seats"] == [None, "ppo-2p"] and view["you"] == 0 and not view["snapshot_ready"]
    assert view["rules"] == Rules(num_players=2, end_score=50, next_starter="round_ender").to_dict()
    table = view["table"]
    assert table["phase"] == "setup" and table["current"] == 0 and table["draw_size"] == 150 - 24 - 1
    assert table["cards"] == [[None] * 12, [None] * 12] and table["held"] is None
    assert view["legal"] == [{"action": FLIP + k, "name": f"flip {k}"} for k in range(12)]  # R5
    assert view["last_move"] is None and view["last_round"] is None


def test_a_game_against_an_agent_plays_to_the_end_as_the_engine_does(client: TestClient) -> None:
    view = start(client, [PERSON, "ppo-2p"], {"end_score": 30}, seed=5)
    view, actions = play_to_end(client, view)
    snapshot = client.get(f"/api/games/{view['id']}/snapshot")
    assert snapshot.status_code == 200 and "attachment" in snapshot.headers["content-disposition"]
    assert snapshot.json() == replayed(view["rules"], 5, actions)  # the server stepped the engine, nothing else
    totals = view["table"]["totals"]
    assert max(totals) >= 30  # R19
    assert view["table"]["winners"] == [p for p, t in enumerate(totals) if t == min(totals)]  # R20
    assert view["snapshot_ready"] and view["legal"] == []
    assert view["table"]["cards"] == view["last_round"]["cards"]  # the final grids stay turned up


def test_the_round_end_shows_every_grid_the_scores_and_the_doubling(client: TestClient) -> None:
    view = start(client, [PERSON, "counting", "counting"], {"end_score": 1000}, seed=2)
    while view["last_round"] is None:
        view = play_one(client, view)
    last, table = view["last_round"], view["table"]
    assert table["round_index"] == last["round"] == 1 and table["phase"] == "setup"  # round 2 is dealt
    assert table["cards"] == [[None] * 12] * 3  # ... face down, while the summary shows round 1's grids
    assert all(card is not None for grid in last["cards"] for card in grid)  # R16: every card up
    kept = [
        sum(c for c, gone in zip(cards, removed) if not gone) for cards, removed in zip(last["cards"], last["removed"])
    ]
    ender = last["ender"]
    doubled = kept[ender] > 0 and any(kept[p] <= kept[ender] for p in range(3) if p != ender)  # R17
    assert last["scores"] == [2 * k if p == ender and doubled else k for p, k in enumerate(kept)]
    assert last["doubled"] == ({"seat": ender, "from": kept[ender], "to": 2 * kept[ender]} if doubled else None)
    assert doubled  # this seed's first round: the person ends it with a high score
    assert last["totals"] == table["totals"] == last["scores"]


def test_a_spectator_game_is_advanced_by_its_agents_and_downloadable_at_any_time(client: TestClient) -> None:
    view = start(client, ["counting", "threshold", "random"], {"episode": "round"}, seed=3)
    assert view["you"] is None and view["snapshot_ready"] and view["legal"] == []
    game = view["id"]
    early = client.get(f"/api/games/{game}/snapshot").json()
    assert early == replayed(view["rules"], 3, [])
    refused = client.post(f"/api/games/{game}/moves", json={"action": FLIP, "step": 0})
    assert "spectator game" in error(refused, 409)
    view, actions = play_to_end(client, view)
    assert client.get(f"/api/games/{game}/snapshot").json() == replayed(view["rules"], 3, actions)
    assert view["table"]["round_index"] == 1  # episode "round": one round


def test_games_at_once_do_not_disturb_each_other(client: TestClient) -> None:
    seats = [[PERSON, "counting"], ["threshold", PERSON, "counting"], ["random", "counting"]]
    views = [start(client, s, {"episode": "round"}, seed=10 + i) for i, s in enumerate(seats)]
    played: list[list[int]] = [[] for _ in views]
    while any(v["table"]["phase"] != "over" for v in views):
        for i, view in enumerate(views):  # one move in each game in turn
            if view["table"]["phase"] != "over":
                views[i] = play_one(client, view)
                played[i].append(views[i]["last_move"]["action"])
    assert len({v["id"] for v in views}) == 3
    for i, view in enumerate(views):
        assert client.get(f"/api/games/{view['id']}/snapshot").json() == replayed(view["rules"], 10 + i, played[i])


def test_a_restarted_server_resumes_a_game_from_its_folder(client: TestClient, folder: Path) -> None:
    view = start(client, [PERSON, "counting"], {"episode": "round"}, seed=4)
    for _ in range(7):
        view = play_one(client, view)
    record = json.loads((folder / f"{view['id']}.json").read_text())
    assert record["state"]["format"] == "skyjo-env/game" and record["seats"] == [None, "counting"]
    restarted = TestClient(create_app(folder, TEST_HOST))
    assert restarted.get(f"/api/games/{view['id']}").json() == view
    assert play_one(restarted, view)["table"] != view["table"]  # and it plays on
    assert error(TestClient(create_app(folder.parent / "elsewhere", TEST_HOST)).get(f"/api/games/{view['id']}"), 404)


def test_agents_fit_the_seat_counts_their_networks_read() -> None:
    from skyjo_env.apps.web_games import fits, policy

    network = policy("ppo-4p", Rules(num_players=4))
    assert network.obs_size == observation_size(4)
    assert fits("ppo-4p", 4) and not fits("ppo-4p", 2) and all(fits("counting", p) for p in range(2, 9))


# ---------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "malformed JSON"),
        ("[1, 2]", "must be a JSON object, not list"),
        ("{}", "seats must be a list"),
        ('{"seats": [null, 3]}', "seats must be a list"),
        ('{"seats": [null, null]}', "at most one seat is the person's"),
        ('{"seats": [null, "wizard"]}', "unknown agent 'wizard'; known agents: counting, expectimax, ppo, ppo-2p"),
        # A request names registered agents only: the server imports no file or module it is sent.
        ('{"seats": [null, "tests/reference.py:ReferenceGame"]}', "unknown agent 'tests/reference.py:ReferenceGame'"),
        ('{"seats": [null, "os:getcwd"]}', "unknown agent 'os:getcwd'"),
        (
            '{"seats": [null, "ppo-4p"]}',
            "agent 'ppo-4p' does not play 2-player games; agents that do: counting, expectimax, ppo, ppo-2p",
        ),
        ('{"seats": [null, "ppo-2p", "counting"]}', "agent 'ppo-2p' does not play 3-player games"),
        ('{"seats": [null]}', "bad rules: num_players=1 is not allowed; use 2 to 8 (R2)"),
        ('{"seats": [null, "counting"], "rules": {"end_score": 0}}', "bad rules: end_score=0 is not allowed"),
        ('{"seats": [null, "counting"], "rules": {"wild": 1}}', "bad rules: unknown rule option(s) ['wild']"),
        ('{"seats": [null, "counting"], "rules": {"episode": "set"}}', "bad rules: episode='set' is not allowed"),
        ('{"seats": [null, "counting"], "rules": {"num_players": 2}}', "the player count follows the seats"),
        ('{"seats": [null, "counting"], "rules": []}', "rules must be an object"),
        ('{"seats": [null, "counting"], "seed": "x"}', "bad seed 'x'"),
        ('{"seats": [null, "counting"], "seed": -1}', "bad seed -1"),
    ],
)
def test_a_bad_new_game_is_refused_naming_the_problem(
    client: TestClient, folder: Path, body: str, message: str
) -> None:
    response = client.post("/api/games", content=body, headers={"content-type": "application/json"})
    assert message in error(response, 400)
    assert not folder.exists()  # no game was made, not even the folder


@pytest.mark.parametrize("action", [DRAW, 1, FLIP - 1, 26, -1, "draw", 1.5, None, True, [FLIP]])
def test_an_illegal_move_is_refused_with_the_legal_ones_and_changes_nothing(
    client: TestClient, folder: Path, action
) -> None:
    view = start(client, [PERSON, "counting"])  # setup: only flips are legal (R5)
    before = (folder / f"{view['id']}.json").read_bytes()
    response = client.post(f"/api/games/{view['id']}/moves", json={"action": action, "step": 0})
    assert error(response, 400).startswith("move refused: ")
    assert response.json()["legal"] == view["legal"]
    assert client.get(f"/api/games/{view['id']}").json() == view
    assert (folder / f"{view['id']}.json").read_bytes() == before


def test_moves_out_of_turn_are_refused(client: TestClient) -> None:
    view = start(client, ["counting", PERSON])  # seat 0, the agent, flips first (R5)
    game = view["id"]
    refused = client.post(f"/api/games/{game}/moves", json={"action": FLIP, "step": 0})
    assert "not your turn: seat 0 (counting) is to act" in error(refused, 409) and refused.json()["legal"] == []
    view = client.post(f"/api/games/{game}/advance", json={"step": 0}).json()
    view = client.post(f"/api/games/{game}/advance", json={"step": 1}).json()
    assert view["table"]["current"] == 1 and view["legal"]
    refused = client.post(f"/api/games/{game}/advance", json={"step": 2})
    assert "it is your turn (seat 1)" in error(refused, 409) and refused.json()["legal"] == view["legal"]
    assert client.get(f"/api/games/{game}").json() == view


def test_a_finished_game_takes_no_more_moves(client: TestClient) -> None:
    view, _ = play_to_end(client, start(client, [PERSON, "counting"], {"episode": "round"}))
    for path, body in (("moves", {"action": DRAW}), ("advance", {})):
        sent = {**body, "step": view["step"]}
        assert "the game is over" in error(client.post(f"/api/games/{view['id']}/{path}", json=sent), 409)


def test_a_human_game_is_downloadable_only_once_over(client: TestClient) -> None:
    view = start(client, [PERSON, "counting"])
    assert "once the game is over" in error(client.get(f"/api/games/{view['id']}/snapshot"), 409)


@pytest.mark.parametrize("game", ["0" * 32, "..", "not-a-game"])
@pytest.mark.parametrize(
    ("method", "path"), [("GET", ""), ("POST", "/moves"), ("POST", "/advance"), ("GET", "/snapshot")]
)
def test_an_unknown_game_is_a_404(client: TestClient, game: str, method: str, path: str) -> None:
    response = client.request(method, f"/api/games/{game}{path}", json={"action": DRAW})
    assert error(response, 404) in (f"unknown game {game!r}", "Not Found")


def test_a_malformed_move_body_is_refused(client: TestClient) -> None:
    view = start(client, [PERSON, "counting"])
    response = client.post(f"/api/games/{view['id']}/moves", content="{", headers={"content-type": "application/json"})
    assert "malformed JSON" in error(response, 400)


# ---------------------------------------------------------------------------------------- no leak
def hidden_differently(state: dict, viewer: int | None, rng: np.random.Generator) -> dict:
    """``state`` with what ``viewer`` may not see dealt anew: the face-down cards permuted among
    their slots, the draw pile shuffled, and another seat's drawn card swapped with a face-down one
    (R10). The cards are the same 150 (R1), so the state stays valid."""
    state = json.loads(json.dumps(state))
    hidden = [(p, k) for p, up in enumerate(state["face_up"]) for k in range(12) if not up[k]]
    cards = [state["values"][p][k] for p, k in hidden]
    if state["phase"] == "drawn" and state["current"] != viewer:
        cards.append(state["held"])
    cards = rng.permutation(cards).tolist()
    for (p, k), card in zip(hidden, cards):
        state["values"][p][k] = card
    if len(cards) > len(hidden):
        state["held"] = cards[-1]
    state["draw_pile"] = rng.permutation(state["draw_pile"]).tolist()
    return state


@pytest.mark.parametrize("seats", [[PERSON, "counting"], ["ppo-2p", PERSON], ["counting", "threshold", "random"]])
def test_no_leak_responses_do_not_depend_on_what_the_viewer_may_not_see(folder: Path, seats: list) -> None:
    client = TestClient(create_app(folder, TEST_HOST))
    view = start(client, seats, {"episode": "round"}, seed=8)
    viewer = view["you"]
    rng = np.random.default_rng(0)
    changed = compared_drawn = 0
    while True:
        record = json.loads((folder / f"{view['id']}.json").read_text())
        variant = hidden_differently(record["state"], viewer, rng)
        changed += variant != record["state"]
        compared_drawn += variant["phase"] == "drawn" and variant["current"] != viewer
        (folder / f"{view['id']}.json").write_text(json.dumps({**record, "state": variant}))
        restarted = TestClient(create_app(folder, TEST_HOST))  # reads the variant from the folder
        assert restarted.get(f"/api/games/{view['id']}").json() == view
        wrong = f"/api/games/{view['id']}/{'advance' if view['legal'] else 'moves'}"  # refused here
        sent = {"action": -1, "step": view["step"]}
        assert restarted.post(wrong, json=sent).json() == client.post(wrong, json=sent).json()
        if view["table"]["phase"] == "over":
            break
        view = play_one(client, view)  # (and writes the real state back)
    assert changed > 20 and compared_drawn > 3


def test_the_person_sees_their_own_drawn_card_only(client: TestClient) -> None:
    view = start(client, [PERSON, "counting"], seed=1)
    while not (view["table"]["phase"] == "drawn" and view["table"]["current"] == 0):
        view = play_one(client, view)
    assert view["table"]["held"] is not None and view["table"]["held_from"] == "draw pile"  # R10: the drawer sees it
    while not (view["table"]["phase"] == "drawn" and view["table"]["current"] == 1):
        view = play_one(client, view)
    assert view["table"]["held"] is None and view["table"]["held_from"] == "draw pile"  # ... and nobody else
    assert action_name(view["last_move"]["action"]) == "draw"


# ---------------------------------------------------------------------------------------- one move at a time
def test_a_move_made_at_an_old_step_is_refused_with_the_game_now(client: TestClient, folder: Path) -> None:
    seen = start(client, [PERSON, "counting"])  # two tabs see this view
    game = seen["id"]
    now = client.post(f"/api/games/{game}/moves", json={"action": FLIP + 3, "step": seen["step"]}).json()
    assert now["step"] == seen["step"] + 1 and now["table"]["cards"][0][3] is not None
    saved = (folder / f"{game}.json").read_bytes()
    for path, sent in (("moves", {"action": FLIP + 5}), ("advance", {})):  # the other tab's, made at the old step
        stale = client.post(f"/api/games/{game}/{path}", json={**sent, "step": seen["step"]})
        assert error(stale, 409) == "the game has moved on: the request was made at step 0, the game is at step 1"
        assert stale.json()["view"] == now == client.get(f"/api/games/{game}").json()  # ... to show instead
    assert (folder / f"{game}.json").read_bytes() == saved


@pytest.mark.parametrize("step", [None, "0", -1, True, 0.0])
def test_a_move_or_advance_without_a_step_is_refused(client: TestClient, step) -> None:
    game = start(client, [PERSON, "counting"])["id"]
    for path, sent in (("moves", {"action": FLIP}), ("advance", {})):
        body = sent if step is None else {**sent, "step": step}
        assert error(client.post(f"/api/games/{game}/{path}", json=body), 400).startswith('"step" must be the step')
    assert client.get(f"/api/games/{game}").json()["step"] == 0


def test_a_slow_request_overtaken_by_moves_is_refused_and_rewinds_nothing(tmp_path: Path) -> None:
    """A take whose body is still on its way while 12 moves are played (the first a draw) changes nothing."""
    with serving(tmp_path / "games") as address:
        view = post(address, "api/games", {"seats": [PERSON, "counting"], "seed": 6})
        while view["table"]["phase"] != "choose" or not view["legal"]:
            view = play_over_http(address, view)
        assert {"action": TAKE, "name": "take"} in view["legal"]
        body = json.dumps({"action": TAKE, "step": view["step"]}).encode()
        with socket.create_connection(("127.0.0.1", urlsplit(address).port)) as slow:
            slow.sendall(
                f"POST /api/games/{view['id']}/moves HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body[:5]
            )
            drew = play_over_http(address, view, DRAW)  # overtakes the take
            assert drew["table"]["held_from"] == "draw pile" and drew["table"]["held"] is not None
            later = drew
            for _ in range(11):
                later = play_over_http(address, later)
            slow.sendall(body[5:])
            reply = slow.makefile("rb").read().decode()
        status, _, payload = reply.partition("\r\n\r\n")
        assert status.startswith("HTTP/1.1 409 ")
        assert json.loads(payload)["view"] == later == get(address, f"api/games/{view['id']}")
        assert later["step"] == view["step"] + 12


def test_moves_posted_at_once_from_threads_are_each_applied_once(folder: Path) -> None:
    """Eight threads advance one game as fast as they can: every move they are told was made, was made once."""
    app = create_app(folder, TEST_HOST)
    game = start(TestClient(app), ["counting", "threshold", "counting"], {"episode": "round"}, seed=9)["id"]
    made, failed = [], []

    def play() -> None:
        client = TestClient(app)
        while (view := client.get(f"/api/games/{game}").json())["table"]["phase"] != "over":
            response = client.post(f"/api/games/{game}/advance", json={"step": view["step"]})
            if response.status_code == 200:
                made.append(response.json()["step"])
            elif response.status_code != 409:  # 409: another thread moved first
                failed.append(response.json())

    threads = [threading.Thread(target=play) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    alone = TestClient(create_app(folder.parent / "alone", TEST_HOST))  # the same game, one move at a time
    view, _ = play_to_end(alone, start(alone, ["counting", "threshold", "counting"], {"episode": "round"}, seed=9))
    together = TestClient(app).get(f"/api/games/{game}/snapshot").json()
    assert together == alone.get(f"/api/games/{view['id']}/snapshot").json()
    assert sorted(made) == list(range(1, together["steps"] + 1)) and not failed  # each step made once, by one thread


def test_the_same_move_posted_twenty_times_at_once_is_made_once(client: TestClient) -> None:
    view = start(client, [PERSON, "counting"])
    statuses = []

    def post_flip() -> None:
        response = client.post(f"/api/games/{view['id']}/moves", json={"action": FLIP, "step": view["step"]})
        statuses.append(response.status_code)

    threads = [threading.Thread(target=post_flip) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(statuses) == [200] + [409] * 19
    assert client.get(f"/api/games/{view['id']}").json()["step"] == 1


# ---------------------------------------------------------------------------------------- secret deals
def test_a_game_without_a_seed_is_dealt_from_a_secret_one_that_no_response_shows(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skyjo_env.apps import web_games

    drawn = []
    monkeypatch.setattr(web_games.secrets, "randbits", lambda bits: drawn.append(bits) or 2**63 + 12345)
    response = client.post("/api/games", json={"seats": [PERSON, "counting"], "rules": {"episode": "round"}})
    view = response.json()
    texts = [response.text]
    while view["table"]["phase"] != "over":
        sent = {"action": my_action(view)} if view["legal"] else {}
        response = client.post(f"/api/games/{view['id']}/{'moves' if view['legal'] else 'advance'}",
                               json={**sent, "step": view["step"]})  # fmt: skip
        texts.append(response.text)
        view = response.json()
    assert drawn == [64] and not any(str(2**63 + 12345) in text for text in texts)
    actions = [json.loads(text)["last_move"]["action"] for text in texts[1:]]
    snapshot = client.get(f"/api/games/{view['id']}/snapshot").json()
    assert snapshot == replayed(view["rules"], 2**63 + 12345, actions)  # dealt from the secret seed
    monkeypatch.undo()
    spectated = [client.post("/api/games", json={"seats": ["counting", "counting"]}).json()["id"] for _ in range(2)]
    keys = [client.get(f"/api/games/{game}/snapshot").json()["key"] for game in spectated]  # open at once
    assert len({tuple(key) for key in [snapshot["key"], *keys]}) == 3  # none of them holds another game's deal


def test_the_favicon_is_no_404(client: TestClient) -> None:
    assert client.get("/favicon.ico").status_code == 204
    assert client.get("/static/favicon.svg").headers["content-type"].startswith("image/svg+xml")


# ---------------------------------------------------------------------------------------- over HTTP
def post(address: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        address + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def get(address: str, path: str) -> dict:
    with urllib.request.urlopen(address + path, timeout=10) as response:
        return json.load(response)


def play_over_http(address: str, view: dict, action: int | None = None) -> dict:
    """One move over HTTP: ``action`` or the person's fixed one if it is their turn, else the agent's."""
    game = view["id"]
    if view["legal"]:
        return post(address, f"api/games/{game}/moves", {"action": my_action(view) if action is None else action,
                                                         "step": view["step"]})  # fmt: skip
    return post(address, f"api/games/{game}/advance", {"step": view["step"]})


# ---------------------------------------------------------------------------------------- Host, memory, racing reads
@pytest.mark.parametrize(
    ("listen", "host", "answered"),
    [
        ("127.0.0.1", "127.0.0.1", True),
        ("127.0.0.1", "127.0.0.1:8000", True),
        ("127.0.0.1", "localhost", True),
        ("127.0.0.1", "LOCALHOST:8000", True),
        ("127.0.0.1", "[::1]", True),
        ("127.0.0.1", "[::1]:8000", True),
        ("127.0.0.1", "evil.example", False),  # a page of another site whose name now points here (DNS rebinding)
        ("127.0.0.1", "evil.example:8000", False),
        ("127.0.0.1", "localhost.evil.example", False),
        ("127.0.0.1", "192.168.1.5:8000", False),
        ("127.0.0.1", "localhost:http", False),
        ("127.0.0.1", "[::1", False),
        ("127.0.0.1", "", False),
        ("skyjo.lan", "skyjo.lan:8000", True),  # the --host name
        ("skyjo.lan", "evil.example", False),
        ("::1", "[::1]:8000", True),
        ("0.0.0.0", "192.168.1.5:8000", True),  # every address: any IP address, never another name
        ("0.0.0.0", "[fe80::1]:8000", True),
        ("0.0.0.0", "evil.example", False),
    ],
)
def test_a_request_that_names_another_host_is_refused(tmp_path: Path, listen: str, host: str, answered: bool) -> None:
    client = TestClient(create_app(tmp_path / "games", listen))
    headers = {"host": host}
    responses = [
        client.get("/api/options", headers=headers),
        client.get("/", headers=headers),
        client.post("/api/games", json={"seats": [PERSON, "counting"]}, headers=headers),
    ]
    if answered:
        assert [r.status_code for r in responses] == [200, 200, 201]
    else:
        for response in responses:
            assert response.status_code == 421 and response.headers["content-type"] == "application/json"
            assert response.json()["error"].endswith(f"(with or without the port), not to Host {host!r}")
        assert not (tmp_path / "games").exists()  # no game made


def test_agents_built_for_many_rule_sets_stay_within_a_bounded_memory() -> None:
    """Hundreds of games under distinct rules: the agents kept built stay at AGENTS_IN_MEMORY, and
    the memory taken by 400 more rule sets is flat (unbounded, each kept about 0.2 MB)."""
    import gc
    import itertools
    import tracemalloc

    from skyjo_env.apps import web_games

    rule_sets = itertools.product(range(1, 1001), (True, False), ("round_winner", "round_ender"))
    web_games._built.cache_clear()

    def new_games(count: int) -> None:
        for end_score, column_rule, next_starter in itertools.islice(rule_sets, count):
            rules = {"end_score": end_score, "column_rule": column_rule, "next_starter": next_starter}
            web_games.new_game({"seats": [PERSON, "ppo-2p"], "rules": rules, "seed": 0})

    tracemalloc.start()  # before the cache fills: what it lets go was traced when made
    try:
        new_games(2 * web_games.AGENTS_IN_MEMORY)  # the cache full
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        new_games(400)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert web_games._built.cache_info().currsize == web_games.AGENTS_IN_MEMORY
    assert grown < 1_000_000, grown


def test_a_read_of_a_game_from_its_file_racing_a_move_never_puts_the_older_game_back(folder: Path) -> None:
    """A game left memory; a read of its file is slow (held here) while a move is posted: the move
    waits for the read, and the game in memory is the one after the move, which the next move plays on."""
    from skyjo_env.apps import web_games

    client = TestClient(create_app(folder, TEST_HOST))
    view = start(client, [PERSON, "counting"])
    store = web_games.GameStore(folder, capacity=0)  # keeps nothing in memory: every first read is from the file
    read, go = threading.Event(), threading.Event()
    real = store._read

    def slow_read(game: str) -> dict:
        record = real(game)
        if not read.is_set():  # the first read: the reader is held after reading the file
            read.set()
            assert go.wait(10)
        return record

    store._read = slow_read  # type: ignore[method-assign]
    store.capacity = 256
    reader = threading.Thread(target=store.get, args=(view["id"],))
    reader.start()
    assert read.wait(10)
    move = {"action": FLIP + 3, "step": 0}
    mover = threading.Thread(
        target=store.update, args=(view["id"], lambda record: web_games.move(view["id"], record, move))
    )
    mover.start()
    mover.join(0.5)
    assert mover.is_alive()  # the move waits for the read of the file to end
    go.set()
    reader.join(10)
    mover.join(10)
    assert store.get(view["id"])["state"]["steps"] == 1  # the game after the move, not the one read before it
    moved = store.update(view["id"], lambda record: web_games.move(view["id"], record, {"action": FLIP + 5, "step": 1}))
    assert moved["state"]["steps"] == 2 and moved["state"]["face_up"][0][3] and moved["state"]["face_up"][0][5]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"step": 0}, 'move refused: the move names no "action"; legal now: flip 0, '),
        ({"action": None, "step": 0}, 'move refused: "action" must be an action id, an integer 0..25, not None; '),
        ({"action": "14", "step": 0}, "move refused: \"action\" must be an action id, an integer 0..25, not '14'; "),
        ({"action": 26, "step": 0}, "move refused: action 26 is out of range (0..25); legal now: flip 0, "),
        ({"action": 0, "step": 0}, "move refused: draw (action 0) is not legal now; legal now: flip 0, "),
    ],
)
def test_a_move_without_a_legal_action_id_names_what_is_wrong(client: TestClient, body: dict, message: str) -> None:
    view = start(client, [PERSON, "counting"])  # setup: flips only (R5)
    response = client.post(f"/api/games/{view['id']}/moves", json=body)
    text = error(response, 400)
    assert text.startswith(message) and "dtype" not in text and "game 0" not in text
    assert response.json()["legal"] == view["legal"]


# ---------------------------------------------------------------------------------------- hints
def test_hints_value_every_legal_move_of_the_person_from_their_view_alone(folder: Path) -> None:
    """The hints (the expectimax agent's values) cover exactly the person's legal moves, best first, only
    when the person is to move in play; and they do not change when the cards nobody may see are dealt
    otherwise (RULES.md, what a player can observe)."""
    client = TestClient(create_app(folder, TEST_HOST))
    view = start(client, [PERSON, "counting"], seed=3)
    rng = np.random.default_rng(1)
    hinted = 0
    while view["table"]["phase"] != "over" and hinted < 4:
        answer = client.get(f"/api/games/{view['id']}/hints").json()
        assert answer["agent"] == "expectimax"
        if not view["legal"] or view["table"]["phase"] == "setup":
            assert answer["hints"] == []
        else:
            assert sorted(h["action"] for h in answer["hints"]) == sorted(m["action"] for m in view["legal"])
            values = [h["value"] for h in answer["hints"]]
            assert values == sorted(values, reverse=True) and all(-1 <= v <= 1 for v in values)
            record = json.loads((folder / f"{view['id']}.json").read_text())
            variant = hidden_differently(record["state"], view["you"], rng)
            assert variant != record["state"]
            (folder / f"{view['id']}.json").write_text(json.dumps({**record, "state": variant}))
            restarted = TestClient(create_app(folder, TEST_HOST))  # reads the variant from the folder
            assert restarted.get(f"/api/games/{view['id']}/hints").json() == answer
            (folder / f"{view['id']}.json").write_text(json.dumps(record))
            hinted += 1
        view = play_one(client, view)  # (and writes the real state back)
    assert hinted == 4
