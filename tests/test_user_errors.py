"""Every bad input a user can give, through the command line or the API: a one-line message naming
the problem and what is allowed, exit status 2, no traceback, and nothing written or overwritten
before the inputs are known to be good. Grow this module with every new input a user can give."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from commands import TINY
from commands import run as skyjo

pytest.importorskip("sb3_contrib")

from skyjo_env.checks import ActionTypeError  # noqa: E402
from skyjo_env.gymnasium_env import SkyjoEnv  # noqa: E402
from skyjo_env.pettingzoo_env import env as aec_env  # noqa: E402
from skyjo_env.pettingzoo_env import raw_env  # noqa: E402
from skyjo_env.train.config import TrainConfig  # noqa: E402
from skyjo_env.train.ppo import train as ppo_train  # noqa: E402


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one-line message of a command that must be refused with exit status 2."""
    code, out, err = skyjo(capsys, *argv)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------- training runs
def test_resuming_to_no_more_steps_than_done_is_refused(capsys, run: Path):
    before = contents(run)
    err = refused(capsys, "train", "--resume", str(run), "--total-timesteps", "1024")
    assert "total_timesteps=1,024 is not above the 1,024 steps the run has done" in err
    assert contents(run) == before


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--players", "4"], "--players 4 cannot change when resuming: the run was trained with players=2"),
        (
            ["--net-arch", "64", "64"],
            "--net-arch [64, 64] cannot change when resuming: the run was trained with net_arch=[16]",
        ),
        (["--advice", "counting"], "--advice counting cannot change when resuming"),
        (["--config", "x.json"], "--config cannot change it"),
        (["--out", "elsewhere"], "a resumed run stays in its folder"),
        (["--overwrite"], "give one of them"),
    ],
)
def test_a_resume_refuses_what_cannot_change(capsys, run: Path, flags: list[str], message: str):
    before = contents(run)
    err = refused(capsys, "train", "--resume", str(run), "--total-timesteps", "2048", *flags)
    assert message in err
    assert contents(run) == before  # config.json still says what the model is


def test_a_resume_applies_and_records_what_can_change(capsys, run: Path):
    code, out, _ = skyjo(capsys, "train", "--resume", str(run), "--total-timesteps", "2048", "--learning-rate", "5e-4",
                         "--no-progress")  # fmt: skip
    assert code == 0
    config = json.loads((run / "config.json").read_text())
    assert config["learning_rate"] == 5e-4 and config["total_timesteps"] == 2048
    assert "this run: 1,024 steps in" in out and "in total: 2,048 steps in" in out


def test_an_existing_run_folder_is_refused_unless_resumed_or_overwritten(capsys, run: Path):
    before = contents(run)
    err = refused(capsys, "train", *TINY, "--out", str(run))
    assert f"{run} already holds a run" in err and "--resume" in err and "--overwrite" in err
    assert contents(run) == before
    code, _, _ = skyjo(capsys, "train", *TINY, "--out", str(run), "--overwrite")
    assert code == 0
    assert (run / "eval.jsonl").read_text().count("\n") == 1  # a fresh run's records only


def test_an_output_path_that_is_a_file_is_refused(capsys, tmp_path: Path):
    file = tmp_path / "taken"
    file.write_text("mine")
    assert "is a file, not a folder" in refused(capsys, "train", *TINY, "--out", str(file))
    assert "is a file, not a folder" in refused(
        capsys, "tournament", "--agents", "random", "counting", "--out", str(file)
    )
    assert file.read_text() == "mine"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"players": "two"}, "players='two' is not allowed; use an integer"),
        ({"learning_rate": "fast"}, "learning_rate='fast' is not allowed; use a number"),
        ({"opponents": "counting"}, "opponents='counting' is not allowed; use an object mapping strings to numbers"),
        ({"net_arch": 256}, "net_arch=256 is not allowed; use a list of integers"),
        ({"reward": "win"}, "reward='win' is not allowed; use one of 'score', 'lead', 'result'"),
        ({"plyers": 2}, "unknown config field(s) ['plyers']"),
        ([1, 2], "a config must be a JSON object of TrainConfig fields, not list"),
        ("not json", "cannot read config"),
    ],
)
def test_a_bad_config_file_is_refused_before_a_run_folder_is_made(capsys, tmp_path: Path, config, message: str):
    path = tmp_path / "config.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    out = tmp_path / "run"
    err = refused(capsys, "train", "--config", str(path), "--out", str(out))
    assert message in err
    assert not out.exists()


@pytest.mark.parametrize("damaged", ["checkpoint/model.zip", "checkpoint/pool/pool.json", "checkpoint/pool/snapshot-000.npz",
                                     "checkpoint/state.json", "checkpoint/config.json"])  # fmt: skip
def test_a_garbled_checkpoint_file_is_one_line(capsys, run: Path, damaged: str):
    (run / damaged).write_bytes(b"garbage")
    before = contents(run)
    err = refused(capsys, "train", "--resume", str(run), "--total-timesteps", "4096")
    assert "checkpoint" in err or "config" in err
    assert contents(run) == before


def test_a_missing_extra_and_an_unknown_opponent_are_one_line(capsys, tmp_path: Path):
    err = refused(capsys, "train", *TINY, "--opponents", "grandmaster=1", "--out", str(tmp_path / "r"))
    assert "unknown opponent 'grandmaster'" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (
            ["--players", "2-9"],
            "player counts [2, 3, 4, 5, 6, 7, 8, 9] are not allowed; use distinct counts from 2 to 8",
        ),
        (["--players", "3,3"], "use distinct counts from 2 to 8"),
        (["--players", "9"], "players=9 is not allowed; use 2 to 8, a range 2-8 or a list 3,5,8"),
        (["--players", "3-8", "--shaping"], "shaping=True is for one table size"),
        (["--players", "2-8", "--num-envs", "4"], "num_envs=4 is too few for 7 table sizes"),
        (["--players", "3-5", "--opponents", "ppo-2p"], "'ppo-2p' was trained for 2 players; this table has 3"),
    ],
)
def test_bad_table_sizes_are_one_line(capsys, tmp_path: Path, players: list[str], message: str):
    err = refused(capsys, "train", *players, "--out", str(tmp_path / "r"))
    assert message in err
    assert not (tmp_path / "r").exists()


def test_a_mistyped_table_size_names_the_forms(capsys):
    code, _, err = skyjo(capsys, "train", "--players", "three")
    assert code == 2 and "'three' is not a player count: use one (4), a range (2-8) or a list (3,5,8)" in err


# ---------------------------------------------------------------------------- progress in a log
def test_a_training_run_sent_to_a_log_reports_every_phase(tmp_path: Path):
    log = tmp_path / "log.txt"
    with log.open("w") as f:
        subprocess.run([sys.executable, "-m", "skyjo_env.apps.cli", "train", *TINY[:-1], "--warm-start", "counting",
                        "--warm-start-samples", "4096", "--warm-start-epochs", "1", "--eval-every", "512",
                        "--out", str(tmp_path / "run")], stdout=f, stderr=subprocess.STDOUT, check=True, cwd=tmp_path)  # fmt: skip
    text = log.read_text()
    assert "\r" not in text and "Traceback" not in text
    for phrase in ("warm start: cloning counting", "warm start: collecting: started", "warm start: fitting:",
                   "PPO: started (1,024 steps)", "PPO: 1,024/1,024 steps (100%)", "evaluation at 512 steps",
                   "evaluation at 1,024 steps", "final tournament: started (4 games)", "head to head (4 games each",
                   "this run: 1,024 steps in", "in total: 1,024 steps"):  # fmt: skip
        assert phrase in text, phrase


def test_a_tournament_sent_to_a_log_writes_lines_not_carriage_returns(tmp_path: Path):
    result = subprocess.run([sys.executable, "-m", "skyjo_env.apps.cli", "tournament", "--agents", "random", "threshold",
                             "--games", "20", "--out", str(tmp_path)], capture_output=True, text=True, check=True)  # fmt: skip
    assert "\r" not in result.stderr and "2-player games: started (20 games)" in result.stderr
    assert "2-player games: 20/20 games (100%)" in result.stderr


# ---------------------------------------------------------------------------- environments
NOT_ACTIONS = [14.0, np.float32(14.0), "14", None, True, np.array([14]), np.bool_(True)]


@pytest.mark.parametrize("action", NOT_ACTIONS, ids=repr)
def test_the_gymnasium_env_rejects_what_is_no_action_id(action):
    env = SkyjoEnv(seat=0)
    env.reset(seed=0)  # setup: flip 0 (14) is legal (R5)
    with pytest.raises(ActionTypeError, match="is not an action id") as caught:
        env.step(action)
    assert isinstance(caught.value, TypeError) and repr(action) in str(caught.value)
    assert env.action_masks()[14]  # nothing moved: the episode goes on
    for fine in (14, np.int64(14), np.array(14)):
        env.reset(seed=0)
        assert not env.step(fine)[2]


@pytest.mark.parametrize("make", [raw_env, aec_env])
@pytest.mark.parametrize("action", [a for a in NOT_ACTIONS if a is not None], ids=repr)
def test_the_aec_envs_reject_what_is_no_action_id(make, action):
    aec = make()
    aec.reset(seed=0)
    with pytest.raises(ActionTypeError, match="is not an action id"):
        aec.step(action)
    aec.step(np.int8(14))  # numpy integers are action ids


def test_raw_env_after_the_game_follows_pettingzoos_dead_steps():
    aec = raw_env(end_score=1)
    aec.reset(seed=0)
    rng = np.random.default_rng(0)
    for _agent in aec.agent_iter():
        obs, _, terminated, truncated, _ = aec.last()
        aec.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert aec.agents == []
    with pytest.raises(ValueError, match=r"every agent has left it; call reset\(\)"):
        aec.step(0)


# ---------------------------------------------------------------------------- play and tournaments
def test_an_agent_at_a_table_of_another_size_is_one_line(capsys):
    assert "agent 'ppo-2p' was trained for 2 players; this table has 3" in refused(
        capsys, "play", "--opponents", "ppo-2p", "ppo-2p"
    )
    err = refused(capsys, "tournament", "--agents", "ppo-4p", "counting", "--players", "2", "--games", "2")
    assert "agent 'ppo-4p' was trained for 4 players; this table has 2" in err


def test_play_leaves_cleanly_at_the_end_of_input():
    result = subprocess.run([sys.executable, "-m", "skyjo_env.apps.cli", "play", "--opponents", "counting", "--seed", "1"],
                            input="f 0\n", capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert result.stdout.rstrip().endswith("You left the game.")
    assert "slots:  0  1  2  3" in result.stdout


def test_tournament_help_lists_the_agents(capsys):
    code, out, _ = skyjo(capsys, "tournament", "--help")
    assert code == 0 and "counting" in out and "ppo-2p" in out and "file.py:attr" in out


def test_a_closed_pipe_ends_quietly(tmp_path: Path):
    command = f"{sys.executable} -m skyjo_env.apps.cli tournament --agents random threshold --games 40 --no-progress --out {tmp_path} | head -1"
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
    assert "Traceback" not in result.stderr and result.stdout.count("\n") == 1


# ---------------------------------------------------------------------------- web server
NEW_GAME = {"seats": [None, "counting"]}
TEST_HOST = "testserver"  # the Host that Starlette's TestClient sends: the app answers to it as to its --host
JSON = {"content-type": "application/json"}


def web_client(folder: Path):
    """``skyjo serve``'s app keeping its games in ``folder``, through Starlette's TestClient."""
    from starlette.testclient import TestClient

    from skyjo_env.apps.serve import create_app

    return TestClient(create_app(folder, TEST_HOST))


def web_error(response, status: int) -> str:
    """The message of a request refused with ``status``: always JSON, never plain text."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    return response.json()["error"]


def test_a_web_request_over_64_kib_is_refused_as_announced_and_as_read(tmp_path: Path):
    client = web_client(tmp_path / "games")
    big = json.dumps({**NEW_GAME, "seed": list(range(20_000))}).encode()  # a seed list of 20,000: over 64 KiB
    assert (
        web_error(client.post("/api/games", content=big, headers=JSON), 413) == "the request body is over 65536 bytes"
    )
    chunks = (big[i : i + 1024] for i in range(0, len(big), 1024))  # no Content-Length: counted while read
    assert (
        web_error(client.post("/api/games", content=chunks, headers=JSON), 413)
        == "the request body is over 65536 bytes"
    )
    assert not (tmp_path / "games").exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"seats": [null, "counting"], "rules": ' + "[" * 30_000 + "]" * 30_000 + "}", "nests lists and objects more than 8 deep"),
        ('{"seats": [null, "counting"], "rules": {"x": [[[[[[[1]]]]]]]}}', "nests lists and objects more than 8 deep"),
        ('{"seats": [null, "counting"], "rules": {"x": [[[[[[1]]]]]]}}', "bad rules: unknown rule option(s) ['x']"),
        ('{"seats": [null, "counting"], "seed": [1, 2, 3]}', "bad seed [1, 2, 3]: use an integer 0 <= seed < 2**64"),
        ('{"seats": [null, "counting"], "seed": 18446744073709551616}', "bad seed 18446744073709551616"),
        ('{"seats": [null, "counting"], "seed": true}', "bad seed True"),
        ('{"seats": [null, "counting"], "seed": 1.5}', "bad seed 1.5"),
    ],
)  # fmt: skip
def test_a_deep_or_costly_web_request_is_refused(tmp_path: Path, body: str, message: str):
    response = web_client(tmp_path / "games").post("/api/games", content=body, headers=JSON)
    assert message in web_error(response, 400)
    assert not (tmp_path / "games").exists()


@pytest.mark.parametrize("headers", [{"content-type": "text/plain"}, {}, {"content-type": "application/x-www-form-urlencoded"}])  # fmt: skip
def test_a_web_post_that_is_not_json_is_refused(tmp_path: Path, headers: dict):
    client = web_client(tmp_path / "games")
    game = client.post("/api/games", json=NEW_GAME).json()["id"]
    body = json.dumps({**NEW_GAME, "action": 14, "step": 0})
    for path in ("/api/games", f"/api/games/{game}/moves", f"/api/games/{game}/advance"):
        response = client.post(path, content=body, headers=headers)
        assert web_error(response, 415) == "the request body must be JSON, sent with Content-Type: application/json"
    assert [p.name for p in (tmp_path / "games").iterdir()] == [f"{game}.json"]
    assert client.get(f"/api/games/{game}").json()["step"] == 0


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://testserver.evil.example", "https://testserver:8443"])  # fmt: skip
def test_a_web_post_from_another_site_is_refused(tmp_path: Path, origin: str):
    client = web_client(tmp_path / "games")
    game = client.post("/api/games", json=NEW_GAME, headers={"origin": "http://testserver"}).json()["id"]  # the page's
    for path in ("/api/games", f"/api/games/{game}/moves", f"/api/games/{game}/advance"):
        for headers in ({**JSON, "origin": origin}, {"content-type": "text/plain", "origin": origin}):
            response = client.post(path, content=json.dumps({**NEW_GAME, "action": 14, "step": 0}), headers=headers)
            assert web_error(response, 403) == f"a request from another site ({origin}) may not change games"
    assert len(list((tmp_path / "games").iterdir())) == 1 and client.get(f"/api/games/{game}").json()["step"] == 0


@pytest.mark.parametrize("damage", ["not JSON", "half written", "not a game", "a bad game state", "a folder"])
def test_a_damaged_game_file_is_a_json_500_naming_the_game(tmp_path: Path, damage: str):
    folder = tmp_path / "games"
    game = web_client(folder).post("/api/games", json=NEW_GAME).json()["id"]
    path = folder / f"{game}.json"
    text = path.read_text()
    path.unlink()
    if damage == "a folder":
        path.mkdir()
    else:
        path.write_text({"not JSON": "\x00{{", "half written": text[: len(text) // 2], "not a game": "[1, 2]",
                         "a bad game state": json.dumps({**json.loads(text), "state": {"format": "?"}})}[damage])  # fmt: skip
    restarted = web_client(folder)  # reads the file
    for response in (
        restarted.get(f"/api/games/{game}"),
        restarted.post(f"/api/games/{game}/moves", json={"action": 14, "step": 0}),
        restarted.get(f"/api/games/{game}/snapshot"),
    ):
        assert web_error(response, 500).startswith(f"game {game}")


def test_a_games_folder_that_cannot_be_written_is_a_json_500(tmp_path: Path):
    import shutil

    folder = tmp_path / "games"
    client = web_client(folder)
    game = client.post("/api/games", json=NEW_GAME).json()
    shutil.rmtree(folder)
    folder.write_text("")  # the folder gone, a file in its place
    moved = client.post(f"/api/games/{game['id']}/moves", json={"action": 14, "step": 0})
    assert web_error(moved, 500).startswith(f"game {game['id']} cannot be saved: ")
    assert web_error(client.post("/api/games", json=NEW_GAME), 500).startswith("game ")
    assert client.get(f"/api/games/{game['id']}").json() == game  # nothing half done


def test_web_games_leave_memory_when_finished_or_least_recently_used(tmp_path: Path):
    from skyjo_env.apps.web_games import GameError, GameStore, advance, new_game

    store = GameStore(tmp_path, capacity=3)
    games = [store.add(new_game(NEW_GAME)) for _ in range(5)]
    store.get(games[2])  # used last: games 3, 4 and 2 are kept in memory
    finished = store.add(new_game({"seats": ["counting", "counting"], "rules": {"episode": "round"}}))
    while store.get(finished)["state"]["phase"] != "over":
        store.update(finished, lambda record: advance(finished, record, {"step": record["state"]["steps"]}))
    for path in tmp_path.iterdir():
        path.unlink()  # now only what is in memory answers
    for game in (games[0], games[1], games[3], finished):
        with pytest.raises(GameError, match="unknown game"):
            store.get(game)
    assert [store.get(game)["seats"] for game in (games[2], games[4])] == [NEW_GAME["seats"]] * 2


def test_serve_checks_its_folder_and_address_before_making_the_folder(capsys, monkeypatch, tmp_path: Path):
    import socket

    games = tmp_path / "new" / "games"
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        assert "cannot listen on 127.0.0.1 port" in refused(capsys, "serve", "--port", port, "--games-dir", str(games))
    (tmp_path / "file").write_text("")
    err = refused(capsys, "serve", "--games-dir", str(tmp_path / "file" / "games"))
    assert err.startswith(f"skyjo serve: cannot use the games folder {tmp_path / 'file' / 'games'}: ")
    assert "not a folder" in err
    monkeypatch.setattr("os.access", lambda path, mode: False)  # as if not writable (root may write anywhere)
    assert "not writable" in refused(capsys, "serve", "--games-dir", str(games))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# ---- command line
def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


TOURNAMENT = ["tournament", "--agents", "random", "counting", "--games", "2", "--no-progress"]


def test_a_tournament_into_a_path_under_a_file_is_refused_before_any_game(tmp_path: Path):
    (tmp_path / "FILE").write_text("mine")
    result = subprocess.run([sys.executable, "-m", "skyjo_env.apps.cli", *TOURNAMENT, "--out", "FILE/sub"],
                            capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""  # no game played, no table printed
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"skyjo tournament: --out FILE/sub: {tmp_path / 'FILE'} is a file, not a folder")
    assert files_under(tmp_path) == ["FILE"] and (tmp_path / "FILE").read_text() == "mine"


def unwritable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """``os.access`` says ``folder`` cannot be written (a permission a root user would not see)."""
    import os

    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: Path(path) != folder and real(path, mode, **kw))


def test_an_unwritable_output_folder_is_refused_before_any_work(capsys, monkeypatch, tmp_path: Path):
    locked = tmp_path / "locked"
    locked.mkdir()
    unwritable(monkeypatch, locked)
    err = refused(capsys, *TOURNAMENT, "--out", str(locked / "t"))
    assert f"--out {locked / 't'}: {locked}, where it would be made, is not writable; choose another --out" in err
    assert f"--out {locked}: it is not writable" in refused(capsys, *TOURNAMENT, "--out", str(locked))
    err = refused(capsys, "train", *TINY, "--out", str(locked / "run"))
    assert f"{locked}, where it would be made, is not writable" in err
    assert files_under(tmp_path) == ["locked"]


def test_a_training_run_into_a_path_under_a_file_is_refused(capsys, tmp_path: Path):
    (tmp_path / "FILE").write_text("mine")
    err = refused(capsys, "train", *TINY, "--out", str(tmp_path / "FILE" / "sub"))
    assert f"{tmp_path / 'FILE'} is a file, not a folder" in err
    assert files_under(tmp_path) == ["FILE"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--eval-opponents", "random", "ppo-4p"], "eval_opponents[1]='ppo-4p': agent 'ppo-4p' was trained for 4 players; this table has 2"),
        (["--warm-start", "ppo-4p"], "warm_start='ppo-4p': agent 'ppo-4p' was trained for 4 players; this table has 2"),
        (["--players", "2-3", "--warm-start", "ppo-2p"], "warm_start='ppo-2p': agent 'ppo-2p' was trained for 2 players; this table has 3"),
        (["--players", "3", "--opponents", "ppo-3p=1", "ppo-4p=1"], "opponent 'ppo-4p': agent 'ppo-4p' was trained for 4 players; this table has 3"),
    ],
)  # fmt: skip
def test_agents_that_do_not_fit_the_table_are_refused_before_the_run_starts(capsys, tmp_path: Path, flags, message):
    err = refused(capsys, "train", *TINY, *flags, "--out", str(tmp_path / "run"))
    assert message in err
    assert not (tmp_path / "run").exists()  # no config.json of a run that could never finish


def test_an_evaluation_agent_that_does_not_fit_is_refused_end_to_end(tmp_path: Path):
    result = subprocess.run([sys.executable, "-m", "skyjo_env.apps.cli", "train", *TINY, "--eval-opponents", "ppo-4p",
                             "--out", "run"], capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr == (
        "skyjo train: eval_opponents[0]='ppo-4p': agent 'ppo-4p' was trained for 4 players; this table has 2\n"
    )
    assert files_under(tmp_path) == []


def test_a_run_folder_that_stopped_before_learning_is_started_afresh(capsys, tmp_path: Path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text("{}")  # what a run killed in its warm start leaves
    code, stdout, _ = skyjo(capsys, "train", *TINY, "--out", str(out))
    assert code == 0
    assert f"{out} holds config.json of a run that stopped before it learned: starting afresh" in stdout
    assert json.loads((out / "config.json").read_text())["total_timesteps"] == 1024
    assert (out / "checkpoint" / "state.json").is_file()


def test_a_run_folder_without_a_checkpoint_points_to_overwrite(capsys, tmp_path: Path):
    out = tmp_path / "run"
    (out / "tensorboard").mkdir(parents=True)
    (out / "config.json").write_text("{}")
    before = files_under(tmp_path)
    err = refused(capsys, "train", *TINY, "--out", str(out))
    assert "holds an earlier run that saved no checkpoint (config.json, tensorboard), so it cannot be resumed" in err
    assert "--overwrite" in err and "--resume" not in err
    err = refused(capsys, "train", "--resume", str(out), "--total-timesteps", "2048")
    assert f"--resume {out}: the run there stopped before it saved a checkpoint, so there is nothing to resume" in err
    assert f"start it afresh with --overwrite --out {out}" in err
    assert "no run there to resume" in refused(capsys, "train", "--resume", str(tmp_path))
    assert "no such folder" in refused(capsys, "train", "--resume", str(tmp_path / "nothing"))
    assert files_under(tmp_path) == before


def float_fields() -> list[str]:
    import typing

    from skyjo_env.train.config import TrainConfig

    hints = typing.get_type_hints(TrainConfig)
    return [name for name, hint in hints.items() if hint in (float, float | None)]


@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
@pytest.mark.parametrize("name", float_fields())
def test_a_number_that_is_not_finite_is_refused(capsys, tmp_path: Path, name: str, value: str):
    err = refused(capsys, "train", f"--{name.replace('_', '-')}={value}", "--out", str(tmp_path / "run"))
    assert f"{name}={float(value)!r} is not allowed; use a finite number" in err
    assert not (tmp_path / "run").exists()


def test_infinite_numbers_in_a_config_file_or_a_weight_are_refused(capsys, tmp_path: Path):
    path = tmp_path / "config.json"
    path.write_text('{"learning_rate": Infinity}')
    assert "learning_rate=inf is not allowed; use a finite number" in refused(capsys, "train", "--config", str(path))
    err = refused(capsys, "train", "--opponents", "counting=inf", "--out", str(tmp_path / "run"))
    assert "the weight of 'counting' must be a finite number >= 0, got 'inf'" in err
    assert files_under(tmp_path) == ["config.json"]


def test_a_minibatch_larger_than_a_rollout_is_refused(capsys, tmp_path: Path):
    err = refused(capsys, "train", "--batch-size", "100000", "--out", str(tmp_path / "run"))
    assert "batch_size=100,000 is larger than a rollout (num_envs x n_steps = 512 x 32 = 16,384 steps)" in err
    assert not (tmp_path / "run").exists()
    with pytest.raises(ValueError, match="batch_size=100,000 is larger than a rollout"):  # a library caller too
        ppo_train(TrainConfig(batch_size=100_000, out_dir=str(tmp_path / "run")), progress=False)
    assert not (tmp_path / "run").exists()


def test_the_value_backend_has_no_rollout_and_names_only_its_own_fields(capsys, tmp_path: Path):
    """Its batches are positions, not a PPO rollout: a small --num-envs is no reason to refuse; a bad
    lambda names lambda alone (gamma is not the value backend's)."""
    err = refused(capsys, "train", "--backend", "value", "--num-envs", "8", "--gae-lambda", "1.5",
                  "--out", str(tmp_path / "run"))  # fmt: skip
    assert "gae_lambda=1.5 is not allowed; use 0 <= gae_lambda <= 1" in err and "gamma" not in err
    assert "rollout" not in err and not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["tournament", "--agents", "random", "--bogus"],
        ["tournament", "--agents", "random", "--players", "9"],
        ["train", "--learning-rate", "fast"],
        ["train", "--bogus"],
        ["play", "--seat", "9"],
        ["play", "--bogus"],
        ["serve", "--port", "-5"],
        ["benchmark"],
        ["benchmark", "counting", "--suite", "quick", "--bogus"],
        ["--bogus"],
        ["nope"],
    ],
)
def test_a_parser_error_of_every_subcommand_is_one_line(capsys, argv: list[str]):
    command = "skyjo" if argv[0].startswith("-") or argv[0] == "nope" else f"skyjo {argv[0]}"
    err = refused(capsys, *argv)
    assert err.startswith(f"{command}: error: ") and "usage" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (TOURNAMENT, "skyjo tournament: error: argument --seed: -1 is out of range; use at least 0"),
        (["play"], "skyjo play: error: argument --seed: -1 is out of range; use at least 0"),
        (["train"], "skyjo train: seed=-1 is not allowed; use a non-negative integer"),
    ],
)
def test_a_negative_seed_is_refused_naming_the_flag(capsys, argv: list[str], message: str):
    assert refused(capsys, *argv, "--seed", "-1").startswith(message)


def test_a_tournament_is_not_overwritten_without_overwrite(capsys, tmp_path: Path):
    assert skyjo(capsys, *TOURNAMENT, "--out", str(tmp_path))[0] == 0
    before = contents(tmp_path)
    err = refused(capsys, *TOURNAMENT, "--seed", "1", "--out", str(tmp_path))
    assert f"--out {tmp_path} already holds a tournament (tournament.json, " in err and "--overwrite" in err
    assert contents(tmp_path) == before
    assert skyjo(capsys, *TOURNAMENT, "--seed", "1", "--out", str(tmp_path), "--overwrite")[0] == 0
    assert json.loads((tmp_path / "tournament.json").read_text())["seed"] == 1


def test_a_full_disk_while_a_tournament_saves_is_one_line_and_leaves_no_report(capsys, monkeypatch, tmp_path: Path):
    """The disk fills up while the reports are written: one line, exit 2, no report (none of 0 bytes
    that a rerun would take for a finished tournament), and an earlier tournament kept whole."""
    import errno
    import os

    from skyjo_env import files

    real = os.fsync
    written = []

    def fsync(fd: int) -> None:
        if len(written) == 2:  # the third file does not fit
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(fd)
        real(fd)

    fresh, earlier = tmp_path / "fresh", tmp_path / "earlier"
    assert skyjo(capsys, *TOURNAMENT, "--out", str(earlier))[0] == 0
    before = contents(earlier)
    monkeypatch.setattr(files.os, "fsync", fsync)
    err = refused(capsys, *TOURNAMENT, "--out", str(fresh))
    assert err == f"skyjo tournament: {fresh / 'tournament.md'}: No space left on device\n"
    assert files_under(fresh) == []  # no file of it: a rerun plays the tournament
    written.clear()
    assert "No space left on device" in refused(
        capsys, *TOURNAMENT, "--seed", "1", "--out", str(earlier), "--overwrite"
    )
    assert contents(earlier) == before  # the earlier tournament, whole
    monkeypatch.undo()
    assert skyjo(capsys, *TOURNAMENT, "--out", str(fresh))[0] == 0 and len(files_under(fresh)) == 4


def test_a_permission_error_while_saving_is_one_line(capsys, monkeypatch, tmp_path: Path):
    import os

    from skyjo_env import files

    real = os.open

    def refuse(path, *args, **kwargs):  # no new file may be made in the folder
        if Path(path).parent == tmp_path:
            raise PermissionError(13, "Permission denied")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", refuse)
    err = refused(capsys, *TOURNAMENT, "--out", str(tmp_path))
    assert err == f"skyjo tournament: {tmp_path / 'tournament.json'}: Permission denied\n"
    assert files_under(tmp_path) == []


def test_overwrite_replaces_a_symbolic_link_in_the_folder_instead_of_writing_through_it(capsys, tmp_path: Path):
    victim = tmp_path / "victim.json"
    victim.write_text("not a tournament's")
    out = tmp_path / "out"
    out.mkdir()
    (out / "tournament.json").symlink_to(victim)
    (out / "tournament.csv").symlink_to(tmp_path / "nowhere")  # a link to nothing is an earlier file too
    err = refused(capsys, *TOURNAMENT, "--out", str(out))
    assert "already holds a tournament (tournament.json, tournament.csv)" in err
    assert skyjo(capsys, *TOURNAMENT, "--out", str(out), "--overwrite")[0] == 0
    assert victim.read_text() == "not a tournament's" and not (tmp_path / "nowhere").exists()
    assert (
        not (out / "tournament.json").is_symlink() and json.loads((out / "tournament.json").read_text())["games"] == 2
    )
    assert not (out / "tournament.csv").is_symlink() and (out / "tournament.csv").read_text().startswith("name,")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*TOURNAMENT, "--out", ""], "skyjo tournament: error: argument --out: an empty name is not a folder"),
        (["benchmark", "counting", "--out", " "], "skyjo benchmark: error: argument --out: an empty name is not a folder"),
        (["serve", "--games-dir", ""], "skyjo serve: error: argument --games-dir: an empty name is not a folder"),
    ],
)  # fmt: skip
def test_an_empty_folder_name_is_refused(capsys, monkeypatch, tmp_path: Path, argv: list[str], message: str):
    monkeypatch.chdir(tmp_path)
    assert refused(capsys, *argv).startswith(message)
    assert files_under(tmp_path) == []


def test_a_symbolic_link_to_nothing_as_the_output_folder_is_refused(capsys, tmp_path: Path):
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    link = tmp_path / "link"
    err = refused(capsys, *TOURNAMENT, "--out", str(link))
    assert err == f"skyjo tournament: --out {link} is a symbolic link to {tmp_path / 'nowhere'}, which does not exist\n"
    err = refused(capsys, "serve", "--games-dir", str(link), "--port", "0")
    assert err.startswith(f"skyjo serve: cannot use the games folder {link}: ") and "which does not exist" in err
    assert files_under(tmp_path) == ["link"]


HOLD = """
import sys, time
from skyjo_env.evaluation.report import claimed_folder
with claimed_folder(sys.argv[1]):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_folder_another_command_is_writing_is_refused_until_it_ends(capsys, tmp_path: Path):
    """Two commands given one --out at once: the second is refused before any work, however far the
    first has got (here it has written nothing yet), and the folder is free again once the first ends."""
    out = tmp_path / "shared"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        message = f"--out {out} is in use: another command (a run, a tournament or a benchmark) is writing there now"
        assert message in refused(capsys, *TOURNAMENT, "--out", str(out))
        assert message in refused(capsys, "train", *TINY, "--out", str(out))
        assert message in refused(capsys, "benchmark", "random", "--suite", "quick", "--out", str(out))
        assert files_under(out) == []
    finally:
        holder.kill()
        holder.wait()
    assert skyjo(capsys, *TOURNAMENT, "--out", str(out))[0] == 0  # the system freed the killed holder's claim
    assert (out / "tournament.json").exists()


def test_a_claimed_folder_that_the_block_left_empty_is_removed_on_an_error(tmp_path: Path):
    from skyjo_env.evaluation.report import claimed_folder

    with pytest.raises(KeyError), claimed_folder(tmp_path / "new" / "deeper"):
        assert (tmp_path / "new" / "deeper").is_dir()
        raise KeyError("stopped")
    assert files_under(tmp_path) == []  # both folders it made are gone
    (tmp_path / "kept").mkdir()
    with pytest.raises(KeyError), claimed_folder(tmp_path / "kept"):
        raise KeyError("stopped")
    with pytest.raises(KeyError), claimed_folder(tmp_path / "made"):
        (tmp_path / "made" / "partial.json").write_text("{}")
        raise KeyError("stopped")
    assert files_under(tmp_path) == ["kept", "made", "made/partial.json"]  # a folder it found, and work done, stay
    with claimed_folder(tmp_path / "kept") as held:  # released after each block
        assert held == tmp_path / "kept"
        with (
            pytest.raises(ValueError, match=r"--table .*kept is in use: .* choose another --table"),
            claimed_folder(tmp_path / "kept", "--table"),
        ):
            pass
    with claimed_folder(tmp_path / "kept"):  # and free again once the block has ended
        pass


@pytest.mark.parametrize(("players", "counts"), [("2-3", [2, 3]), ("3,5", [3, 5])])
def test_a_tournament_plays_at_each_table_size_it_is_given(capsys, tmp_path: Path, players: str, counts: list[int]):
    code, out, _ = skyjo(capsys, *TOURNAMENT, "--players", players, "--out", str(tmp_path))
    assert code == 0
    assert files_under(tmp_path) == sorted(
        [f"{p}p" for p in counts] + [f"{p}p/{name}" for p in counts for name in
                                     ("round_scores.png", "tournament.csv", "tournament.json", "tournament.md")]
    )  # fmt: skip
    for p in counts:
        assert json.loads((tmp_path / f"{p}p" / "tournament.json").read_text())["players"] == p
        assert f"{p} players, seed 0" in out and f"wrote {tmp_path / f'{p}p' / 'tournament.json'}" in out


def test_a_tournament_checks_every_table_size_before_the_first_game(capsys, tmp_path: Path):
    err = refused(capsys, "tournament", "--agents", "ppo-4p", "counting", "--players", "4,2", "--games", "2",
                  "--no-progress", "--out", str(tmp_path / "t"))  # fmt: skip
    assert "agent 'ppo-4p' was trained for 4 players; this table has 2" in err
    assert not (tmp_path / "t").exists()
    err = refused(capsys, *TOURNAMENT, "--players", "2-9")
    assert "argument --players: player counts [2, 3, 4, 5, 6, 7, 8, 9] are not allowed; use distinct counts" in err


# ---------------------------------------------------------------------------- engine, environments and agents API
def test_end_score_has_an_upper_bound_that_int16_totals_hold():
    """R19: 40,000 or 10**30 would never end a game and wrap the int16 totals."""
    from skyjo_env import Rules
    from skyjo_env.rules import MAX_END_SCORE

    assert MAX_END_SCORE + 2 * 12 * 12 < 2**15 - 1  # the last round adds at most 288
    assert Rules(end_score=MAX_END_SCORE).end_score == 1000
    for bad in (1001, 40_000, 10**30):
        with pytest.raises(ValueError, match=rf"end_score={bad} is not allowed; use an integer from 1 to 1000 \(R19\)"):
            Rules(end_score=bad)
    with pytest.raises(ValueError, match="end_score=40000"):
        SkyjoEnv(end_score=40_000)


def test_rules_take_numpy_integers_and_booleans_as_python_ones():
    """R2, R13, R19: numpy scalars are normalised, so the frozen Rules stays hashable and serialisable."""
    from skyjo_env import Rules

    rules = Rules(num_players=np.int64(3), column_rule=np.bool_(True), column_rule_at_final_reveal=np.False_,
                  end_score=np.int16(50), episode=np.str_("round"))  # fmt: skip
    assert rules == Rules(
        num_players=3, column_rule=True, column_rule_at_final_reveal=False, end_score=50, episode="round"
    )
    assert hash(rules) == hash(Rules(num_players=3, column_rule_at_final_reveal=False, end_score=50, episode="round"))
    assert [type(v) for v in rules.to_dict().values()] == [int, bool, bool, int, str, str]
    assert Rules.from_dict(json.loads(json.dumps(rules.to_dict()))) == rules
    with pytest.raises(ValueError, match=r"num_players=9 is not allowed; use 2 to 8"):
        Rules(num_players=np.int64(9))
    with pytest.raises(ValueError, match="column_rule=np.float64.1.0. is not allowed"):
        Rules(column_rule=np.float64(1.0))


@pytest.mark.parametrize("action", [2**63, np.uint64(2**63), 2**64 - 1, 2**70, -(2**63) - 1])
def test_huge_actions_are_reported_as_given(action):
    from skyjo_env import SkyjoEngine

    if isinstance(action, int) and not -(2**63) <= action < 2**64:
        engine_match = "actions must be integers"  # no numpy integer holds it
    else:
        engine_match = rf"illegal action out of range \(id {int(action)}\) in game 0"
    with pytest.raises(ValueError, match=engine_match):
        SkyjoEngine().step(np.array([action]) if engine_match.startswith("illegal") else [action])
    env = SkyjoEnv(illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=rf"illegal action {int(action)} \(out of range\) for the learner"):
        env.step(action)
    aec = raw_env()
    aec.reset(seed=0)
    with pytest.raises(ValueError, match=rf"illegal action {int(action)} \(out of range\) for player_0"):
        aec.step(action)


def test_huge_actions_in_vector_envs_are_reported_as_given():
    from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
    from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv

    for env in (SkyjoVectorEnv(2, seed=0), SkyjoSB3VecEnv(2, seed=0)):
        env.reset()
        with pytest.raises(ValueError, match=r"illegal action 9223372036854775808 for the learner in game 0"):
            env.step(np.array([2**63, 0], dtype=np.uint64))


def test_sb3_seed_refuses_what_cannot_seed_a_reset():
    from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv

    env = SkyjoSB3VecEnv(2)
    for bad in (-1, 1.5, "1"):
        with pytest.raises(ValueError, match=rf"seed={bad!r} is not allowed; use None or a non-negative integer"):
            env.seed(bad)
    assert env.seed(np.int64(7))[0] == 7
    env.reset()  # the seed it accepted works


# Imported states the rules cannot reach (R4, R5, R13, R15, R16): each refused, naming the problem.
def _exported(phase: str, **options) -> dict:
    """A real game of 3 players in ``phase`` (played from seed 0 by random legal actions)."""
    from skyjo_env import Rules, SkyjoEngine
    from skyjo_env.sampling import sample_mask

    engine = SkyjoEngine(Rules(num_players=3, **options), 1, seed=0, auto_reset=False)
    rng = np.random.default_rng(0)
    while engine.export_game(0)["phase"] != phase:
        engine.step(sample_mask(engine.legal_mask(), rng))
    return engine.export_game(0)


def _import(data: dict) -> None:
    from skyjo_env import Rules, SkyjoEngine

    SkyjoEngine(Rules.from_dict(data["rules"]), 1, seed=0, auto_reset=False).import_game(0, data)


def _with_column(data: dict, seat: int, column: int, values: list[int], removed: bool) -> dict:
    """``data`` with ``values`` swapped into a column of ``seat`` (from elsewhere in the state), face up."""
    data = json.loads(json.dumps(data))
    for row, value in enumerate(values):
        slot = row * 4 + column
        old = data["values"][seat][slot]
        pile = data["draw_pile"] if value in data["draw_pile"] else data["discard_pile"]
        pile[pile.index(value)] = old  # the deck stays the 150 cards of R1
        data["values"][seat][slot] = value
        data["face_up"][seat][slot] = True
        data["removed"][seat][slot] = removed
        if removed:  # a removed column's cards lie on the discard pile (R13)
            data["discard_pile"].insert(0, value)
    return data


def test_import_refuses_a_setup_with_too_many_cards_face_up():
    """R5: a seat flips two cards in setup; with 3 (or 4) it would have no legal action."""
    data = _exported("setup")
    for seat in range(3):
        data["face_up"][seat] = [True] * 3 + [False] * 9
    with pytest.raises(ValueError, match=r"phase 'setup' has face-up cards \[3, 3, 3\] by seat"):
        _import(data)


def test_import_refuses_a_game_over_in_the_middle_of_a_round():
    """R15, R16: a finished game has every card up and an ender."""
    data = {**_exported("choose"), "phase": "over"}
    with pytest.raises(ValueError, match="game state is over in the middle of a round"):
        _import(data)


def test_import_refuses_final_turns_without_an_ender():
    data = {**_exported("choose"), "final_turns": 1}
    with pytest.raises(ValueError, match=r"final_turns=1 but no ender \(R15"):
        _import(data)


def test_import_refuses_every_card_face_up_without_an_ender():
    data = _exported("choose")
    data["face_up"][1] = [True] * 12
    with pytest.raises(ValueError, match=r"seat 1 with every card face up but no ender \(R15"):
        _import(data)


def test_import_refuses_an_ender_out_of_turn_order():
    """R15: after the ender, each later seat owes one last turn, in order."""
    data = _exported("choose")
    ender = (data["current"] + 1) % 3
    data["face_up"][ender] = [True] * 12
    _import({**data, "ender": ender, "final_turns": 1})  # the seat before the ender plays last: reachable
    with pytest.raises(ValueError, match=rf"ender={ender}, final_turns=2 and seat {data['current']} to play"):
        _import({**data, "ender": ender, "final_turns": 2})


def test_import_refuses_a_single_removed_slot_and_a_removed_column_of_unequal_cards():
    """R13: a column leaves whole, and only as three equal cards."""
    data = _exported("choose")
    single = json.loads(json.dumps(data))
    single["face_up"][0][0] = single["removed"][0][0] = True
    single["discard_pile"].insert(0, single["values"][0][0])  # the deck stays whole (R1)
    with pytest.raises(ValueError, match="removed slot whose column is not removed whole"):
        _import(single)
    unequal = _with_column(data, 0, 1, [5, 6, 5], removed=True)
    with pytest.raises(ValueError, match="removed column whose three cards are not equal"):
        _import(unequal)
    _import(_with_column(data, 0, 1, [5, 5, 5], removed=True))  # three equal cards: reachable
    with pytest.raises(ValueError, match="removed column, but the column rule is off"):
        _import(_with_column(_exported("choose", column_rule=False), 0, 1, [5, 5, 5], removed=True))


def test_import_refuses_non_integer_values_and_rules_that_are_no_dict():
    data = _exported("choose")
    truncated = json.loads(json.dumps(data))
    truncated["values"][0][0] = truncated["values"][0][0] + 0.7  # would be truncated back
    with pytest.raises(ValueError, match="values must hold integers, got float64 values"):
        _import(truncated)
    from skyjo_env import SkyjoEngine

    with pytest.raises(ValueError, match="rules must be a dict of rule options"):
        SkyjoEngine().import_game(0, {**data, "rules": None})


def test_every_accepted_import_is_over_or_has_a_legal_action():
    """The property: no imported game can stall. Random edits of real states (R5, R13, R15) are
    either refused with a ValueError or leave a game that is over or has a legal action."""
    from skyjo_env import Rules, SkyjoEngine

    rng = np.random.default_rng(3)
    engine = SkyjoEngine(Rules(num_players=3), 1, seed=0, auto_reset=False)
    accepted = refused = 0
    for phase in ("setup", "choose", "drawn", "taken"):
        base = _exported(phase)
        for _ in range(60):
            data = json.loads(json.dumps(base))
            seat = int(rng.integers(3))
            data["face_up"][seat] = (rng.random(12) < rng.random()).tolist()
            if rng.random() < 0.3:
                data["ender"] = int(rng.integers(3))
            data["final_turns"] = int(rng.integers(3))
            try:
                engine.import_game(0, data)
            except ValueError:
                refused += 1
                continue
            accepted += 1
            assert engine.phase[0] == 4 or engine.legal_mask()[0].any(), data
    assert accepted and refused


def test_agent_options_are_checked_when_the_agent_is_made():
    from skyjo_env import agents

    with pytest.raises(ValueError, match=r"agent 'threshold' takes no option\(s\) \['nonsense'\]; its options are \['take_max', 'keep_max'\]"):  # fmt: skip
        agents.make("threshold", nonsense=3)
    with pytest.raises(
        ValueError, match=r"agent 'ppo-2p' takes no option\(s\) \['greedyy'\]; its options are \['greedy'\]"
    ):
        agents.make("ppo-2p", greedyy=True)
    with pytest.raises(ValueError, match="rules must be a skyjo_env.Rules or None, not 'x'"):
        agents.make("counting", rules="x")
    assert agents.make("threshold", take_max=2).take_max == 2


def test_an_opponent_for_another_table_size_is_refused_at_construction():
    import gymnasium

    from skyjo_env import agents
    from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
    from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv

    four = agents.make("ppo-4p")
    with pytest.raises(ValueError, match="opponent 'ppo-4p' was trained for 4 players; this table has 2"):
        gymnasium.make("skyjo_env/Skyjo-v0", opponents=four)
    with pytest.raises(ValueError, match="this table has 3"):
        SkyjoSB3VecEnv(4, num_players=3, opponents=[agents.make("random"), four])
    with pytest.raises(ValueError, match="this table has 2"):
        SkyjoVectorEnv(4, player_counts=[2, 4], opponents=four)  # one of the table sizes
    env = SkyjoEnv(num_players=4, opponents=four)
    with pytest.raises(ValueError, match="opponent 'ppo-2p' was trained for 2 players; this table has 4"):
        env.set_opponents(agents.make("ppo-2p"))


@pytest.mark.parametrize("opponent", ["random", "ppo-3p"])
def test_reset_with_a_seed_reseeds_the_opponents(opponent):
    """The same seed gives the same game, also against opponents that play at random."""
    import gymnasium

    from skyjo_env import agents
    from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv

    options = {"greedy": False} if opponent.startswith("ppo") else {}
    env = gymnasium.make("skyjo_env/Skyjo-v0", num_players=3, opponents=agents.make(opponent, **options))

    def trajectory(seed: int) -> list:
        obs, _ = env.reset(seed=seed)
        seen, rng = [obs], np.random.default_rng(0)
        for _ in range(40):
            obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info_mask(env)))))
            seen.append(obs)
            if terminated or truncated:
                seen.append(env.reset()[0])
        return seen

    def info_mask(e) -> np.ndarray:
        return e.unwrapped.action_masks()

    np.testing.assert_array_equal(trajectory(5), trajectory(5))
    assert not np.array_equal(trajectory(5), trajectory(6))
    vec = SkyjoSB3VecEnv(4, num_players=3, opponents=agents.make(opponent, **options))
    runs = []
    for _ in range(2):
        vec.seed(9)
        seen, rng = [vec.reset()], np.random.default_rng(0)
        for _ in range(30):
            masks = vec.action_masks()
            seen.append(vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))[0])
        runs.append(np.array(seen))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_load_names_a_folder_that_is_no_agent_for_what_it_is(tmp_path: Path):
    from skyjo_env import agents

    deep = tmp_path / "runs" / "old" / "checkpoint"
    deep.mkdir(parents=True)
    (deep / "agent.npz").write_bytes(b"")  # an agent deeper down is not this folder's
    with pytest.raises(
        ValueError, match=r"is a folder without agent.npz: give a training run's folder, its checkpoint/"
    ):
        agents.load(tmp_path)


def test_a_flag_is_taken_whole_never_by_a_prefix(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """A mistyped flag that is the prefix of another (``--env-runner``) is refused, not run as that one."""
    err = refused(capsys, "train", "--backend", "rllib", "--env-runner", "2", "--out", str(tmp_path / "run"))
    assert err == "skyjo train: error: unrecognized arguments: --env-runner 2\n"
    assert not (tmp_path / "run").exists()
    refused(capsys, "tournament", "--agent", "counting", "random", "--out", str(tmp_path / "t"))


# ---------------------------------------------------------------------------- absurd sizes
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tournament", "--agents", "random", "--games", str(10**12)],
         "argument --games: 1,000,000,000,000 is above the limit of 1,000,000 (skyjo_env.limits)"),
        (["tournament", "--agents", "search:samples=100000000", "random"],
         "agent spec 'search:samples=100000000': samples=100,000,000 is above the limit of 4,096"),
        (["tournament", "--agents", "search:top=27", "random"], "top=27 is above the limit of 26 actions"),
        (["tournament", "--agents", "search:horizon=10000000000", "random"], "horizon=10,000,000,000 is above the limit"),
        (["train", "--num-envs", str(10**9)], "num_envs=1,000,000,000 is above the limit of 2,097,152"),
        (["train", "--total-timesteps", str(10**20)], "total_timesteps=100,000,000,000,000,000,000 is above the limit"),
        (["train", "--num-envs", "4096", "--n-steps", "1024"],
         "a rollout of env_runners x num_envs x n_steps = 1 x 4,096 x 1,024 = 4,194,304 steps is above the limit"),
        (["train", "--warm-start-samples", str(10**9)], "warm_start_samples=1,000,000,000 is above the limit"),
        (["train", "--net-arch", "64", "1000000"], "net_arch units=1,000,000 is above the limit of 8,192 units a layer"),
        (["train", "--n-epochs", str(10**9)], "n_epochs=1,000,000,000 is above the limit of 1,000"),
        (["train", "--eval-games", str(10**12)], "eval_games=1,000,000,000,000 is above the limit of 1,000,000"),
        (["train", "--backend", "rllib", "--env-runners", "100000"], "env_runners=100,000 is above the limit of 256"),
        (["train", "--opponents", "search:samples=100000000=1"], "samples=100,000,000 is above the limit of 4,096"),
        (["benchmark", "random", "--workers", "100000"], "skyjo benchmark: workers=100,000 is above the limit of 256 processes"),
        (["benchmark", "random", "--players", "99"], "skyjo benchmark: suite 'quick' has no table size 99"),
    ],
)  # fmt: skip
def test_an_absurd_size_is_refused_before_any_work(capsys, tmp_path: Path, argv: list[str], message: str):
    """Each count a command takes has an upper bound (skyjo_env.limits): one line, exit 2, nothing made,
    instead of a MemoryError traceback after the run folder is made, or a run that would never end."""
    err = refused(capsys, *argv, "--out", str(tmp_path / "out"))
    assert message in err, err
    assert files_under(tmp_path) == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tournament", "--agents", "random", "--games", "１０"], "argument --games: '１０' is not an integer (ASCII digits only)"),
        (["tournament", "--agents", "random", "--seed", "٣"], "argument --seed: '٣' is not an integer (ASCII digits only)"),
        (["tournament", "--agents", "random", "--players", "２"], "argument --players: '２' is not a player count"),
        (["tournament", "--agents", "random", "--end-score", "１００"], "argument --end-score: '１００' is not an integer"),
        (["tournament", "--agents", "random", "--move-timeout", "１"], "argument --move-timeout: '１' is not a number"),
        (["train", "--num-envs", "１６"], "argument --num-envs: '１６' is not an integer (ASCII digits only)"),
        (["train", "--learning-rate", "０.１"], "argument --learning-rate: '０.１' is not a number (ASCII digits only)"),
        (["train", "--opponents", "counting=０.５"], "unknown opponent 'counting=０.５' in opponents: unknown agent '０.５'"),
        (["tournament", "--agents", "search:samples=３２"], "samples='３２' is not allowed; use an integer"),
        (["benchmark", "random", "--workers", "２"], "argument --workers: '２' is not an integer (ASCII digits only)"),
    ],
)  # fmt: skip
def test_full_width_and_other_non_ascii_digits_are_no_numbers(capsys, tmp_path: Path, argv: list[str], message: str):
    """Python's int() reads '１０' as 10; a command line takes ASCII digits only."""
    err = refused(capsys, *argv, "--out", str(tmp_path / "out"))
    assert message in err, err
    assert files_under(tmp_path) == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search:horizon=eight"], "horizon='eight' is not allowed; use a positive integer, None (the round's end) or 'default'"),
        (["search:network=nowhere"], "no value network 'nowhere': give a shipped one (value), a .npz file or a run folder"),
        (["search:network=value", "--players", "3"], "the value network was trained for 2 players; this table has 3"),
    ],
)  # fmt: skip
def test_search_s_network_options_are_checked_in_one_line(capsys, tmp_path: Path, argv: list[str], message: str):
    err = refused(capsys, "tournament", "--agents", argv[0], "random", *argv[1:], "--out", str(tmp_path / "out"))
    assert message in err, err
    assert files_under(tmp_path) == []


def test_the_api_refuses_absurd_sizes_naming_the_limit():
    from skyjo_env import agents
    from skyjo_env.engine import SkyjoEngine
    from skyjo_env.evaluation.benchmark import Benchmark
    from skyjo_env.evaluation.tournament import run_tournament
    from skyjo_env.limits import MAX_BATCH, MAX_GAMES, parse_float, parse_int
    from skyjo_env.train.config import TrainConfig

    with pytest.raises(ValueError, match=rf"batch_size=1,000,000,000,000 is above the limit of {MAX_BATCH:,} games"):
        SkyjoEngine(batch_size=10**12)
    with pytest.raises(ValueError, match=rf"games=1,000,000,000,000 is above the limit of {MAX_GAMES:,}"):
        run_tournament([agents.make("random")], 2, 10**12, progress=False)
    with pytest.raises(ValueError, match=r"max_steps=10,000,000,000 is above the limit of 1,000,000 actions"):
        run_tournament([agents.make("random")], 2, 2, progress=False, max_steps=10**10)
    with pytest.raises(ValueError, match=r"max_steps=10,000,000,000 is above the limit"):
        SkyjoEnv(max_steps=10**10)
    with pytest.raises(ValueError, match=r"samples=100,000,000 is above the limit of 4,096"):
        agents.make("search", players=2, samples=10**8)
    with pytest.raises(ValueError, match=r"num_envs=1,000,000,000 is above the limit"):
        TrainConfig(num_envs=10**9)
    with pytest.raises(ValueError, match=r"total_timesteps=10\*\*20|total_timesteps=100,000,000,000,000,000,000"):
        TrainConfig(total_timesteps=10**20)
    with pytest.raises(ValueError, match=r"workers=1,000 is above the limit of 256 processes"):
        Benchmark("random", workers=1000)
    for text in ("１０", "٣", "1e3", ""):
        with pytest.raises(ValueError, match="is not an integer"):
            parse_int(text)
    assert parse_int("1_000") == 1000 and parse_float("2.5") == 2.5
    with pytest.raises(ValueError, match=r"'２\.５' is not a number \(ASCII digits only\)"):
        parse_float("２.５")


# ---------------------------------------------------------------------------- failing agents
BOTS = """
import time
import numpy as np

def crash(observations, masks):
    raise ZeroDivisionError("my bug\\non two lines")

def crash_at_three(observations, masks):
    if observations.shape[1] > 130:  # more than 2 players
        raise RuntimeError("no idea how to play 3")
    return np.argmax(masks, axis=1)

def slow(observations, masks):
    time.sleep(0.25)
    return np.argmax(masks, axis=1)

def slow_in_crowds(observations, masks):  # fast on the benchmark's 64-row fingerprint, slow in its matches
    time.sleep(0.5 if len(masks) > 64 else 0)
    return np.argmax(masks, axis=1)

def stubborn(observations, masks):  # legal moves that never end a round: never turns a card after setup
    first_flip = 14 + np.argmax(masks[:, 14:], axis=1)
    return np.where(masks[:, 1], 1, np.where(masks[:, 2], 2, first_flip))
"""


@pytest.fixture
def bots(tmp_path: Path) -> Path:
    """A plug-in file of failing agents, outside the output folder."""
    (tmp_path / "bots").mkdir()
    path = tmp_path / "bots" / "bots.py"
    path.write_text(BOTS)
    return path


@pytest.mark.parametrize(
    ("agents", "flags", "message"),
    [
        (["{bots}:crash", "random"], [], "skyjo tournament: agent 'crash' raised ZeroDivisionError: my bug on two lines\n"),
        (["{bots}:slow", "random"], ["--move-timeout", "0.05"],
         "skyjo tournament: agent 'slow' took 0."),
        (["{bots}:stubborn", "{bots}:stubborn"], [],
         "skyjo tournament: agent 'stubborn' finished no game: all its 2 games were abandoned after "
         "max_steps=10,000 actions (a round no seat ends, R15)\n"),
        (["{bots}:crash_at_three", "random"], ["--players", "2-3"],
         "skyjo tournament: agent 'crash_at_three' raised RuntimeError: no idea how to play 3\n"),
    ],
)  # fmt: skip
def test_a_failing_agent_ends_a_tournament_in_one_line_and_nothing_is_written(
    capsys, tmp_path: Path, bots: Path, agents: list[str], flags: list[str], message: str
):
    """A plug-in that raises, runs over --move-timeout, or never ends a round: one line naming it, exit 2,
    and no report, not even of the games or table sizes finished before (2-3: the 2-player tournament
    was played whole, then the 3-player one failed)."""
    specs = [a.format(bots=bots) for a in agents]
    err = refused(capsys, "tournament", "--agents", *specs, "--games", "2", "--no-progress", *flags,
                  "--out", str(tmp_path / "out"))  # fmt: skip
    assert err.startswith(message), err
    if "slow" in message:
        assert "over its time budget of 0.05 s a move (move_timeout)" in err
    assert files_under(tmp_path) == ["bots", "bots/bots.py"]


def test_a_failing_agent_ends_the_command_in_a_subprocess_too(tmp_path: Path, bots: Path):
    result = subprocess.run([sys.executable, "-m", "skyjo_env.apps.cli", "tournament", "--agents", f"{bots}:crash",
                             "counting", "--games", "2", "--out", "out"], capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "skyjo tournament: agent 'crash' raised ZeroDivisionError: my bug on two lines"
    )  # the line before it is the progress report's start
    assert files_under(tmp_path) == ["bots", "bots/bots.py"]


@pytest.mark.parametrize(
    ("bot", "flags", "message"),
    [
        ("crash", [], "skyjo benchmark: agent 'crash' raised ZeroDivisionError: my bug on two lines\n"),
        ("slow_in_crowds", ["--move-timeout", "0.0001"], "skyjo benchmark: agent 'slow_in_crowds' took 0."),
    ],
)
def test_a_failing_agent_ends_a_benchmark_in_one_line_and_nothing_is_written(
    capsys, tmp_path: Path, bots: Path, bot: str, flags: list[str], message: str
):
    err = refused(capsys, "benchmark", f"{bots}:{bot}", "--players", "2", "--no-progress", *flags,
                  "--out", str(tmp_path / "out"))  # fmt: skip
    assert err.startswith(message), err
    assert files_under(tmp_path) == ["bots", "bots/bots.py"]


class _Raises:
    name = "raiser"

    def __call__(self, observations, action_masks):
        raise IndexError("index 99 is out of bounds")


class _Sleeps:
    name = "sleeper"

    def __call__(self, observations, action_masks):
        import time

        time.sleep(0.05)
        return np.argmax(action_masks, axis=1)


def test_the_api_names_a_failing_agent_in_an_agent_error():
    import pickle

    from skyjo_env import agents
    from skyjo_env.evaluation.tournament import run_tournament
    from skyjo_env.opponents import AgentError

    with pytest.raises(AgentError, match=r"^agent 'raiser' raised IndexError: index 99 is out of bounds$") as raised:
        run_tournament([_Raises(), agents.make("random")], 2, 2, progress=False)
    assert raised.value.agent == "raiser" and isinstance(raised.value, ValueError)
    copy = pickle.loads(pickle.dumps(raised.value))  # as it crosses from a benchmark's worker process
    assert (type(copy), copy.agent, str(copy)) == (AgentError, "raiser", str(raised.value))
    with pytest.raises(AgentError, match=r"^agent 'sleeper' took .* over its time budget of 0.001 s a move") as raised:
        run_tournament([_Sleeps(), agents.make("random")], 2, 2, progress=False, move_timeout=0.001)
    assert raised.value.agent == "sleeper"
    result = run_tournament([_Sleeps(), agents.make("random")], 2, 2, progress=False, move_timeout=10.0)
    assert result.games == 2  # within its budget it plays
    for bad in (0, -1.0, float("inf"), float("nan"), "1", True):
        with pytest.raises(
            ValueError, match="move_timeout=.* is not allowed; use None or a positive number of seconds"
        ):
            run_tournament([agents.make("random")], 2, 2, progress=False, move_timeout=bad)


def test_an_opponent_that_raises_is_an_agent_error_naming_it():
    from skyjo_env.opponents import AgentError

    env = SkyjoEnv(opponents=_Raises(), seat=0)
    env.reset(seed=0)
    with pytest.raises(AgentError, match=r"^opponent policy 'raiser' raised IndexError: index 99 is out of bounds$"):
        for _ in range(10):  # the opponent's first turn comes within the setup flips
            env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_a_web_agent_that_raises_is_a_json_500_naming_it(tmp_path: Path):
    from skyjo_env.agents import registry

    registry.register("raiser-test", _Raises)
    try:
        client = web_client(tmp_path / "games")
        response = client.post("/api/games", json={"seats": ["raiser-test", "counting"], "seed": 0})
        assert response.status_code == 201, response.text
        view = response.json()
        response = client.post(f"/api/games/{view['id']}/advance", json={"step": view["step"]})
        assert web_error(response, 500) == "agent 'raiser' raised IndexError: index 99 is out of bounds"
        again = client.get(f"/api/games/{view['id']}").json()
        assert again["step"] == view["step"]  # the game is as it was
    finally:
        registry.unregister("raiser-test")


@pytest.mark.parametrize("text", ["flip ５", "replace ²", "flip ٣"])
def test_a_move_typed_with_other_digits_than_ascii_is_refused(text: str):
    from skyjo_env.actions import parse_action

    with pytest.raises(ValueError, match=r"cannot parse action .*; write 'draw', 'take', 'replace K' or 'flip K'"):
        parse_action(text)
