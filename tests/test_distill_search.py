"""benchmarks/distill_search.py: search's positions saved and fitted again, its two targets, and bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skyjo_env import agents
from skyjo_env.agents import pretrained

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "distill_search.py"
COLLECT = ["--players", "2", "--positions", "120", "--games", "4", "--samples", "4", "--seed", "3"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def positions(tmp_path_factory) -> Path:
    """Search's positions of a few 2-player games against counting, saved by the script."""
    folder = tmp_path_factory.mktemp("distill")
    result = run(*COLLECT, "--epochs", "1", "--save", "positions.npz", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder / "positions.npz"


def test_the_saved_positions_are_search_s_decisions_over_its_base(positions):
    with np.load(positions) as saved:
        data = {k: saved[k] for k in saved.files}
    assert (int(data["players"]), str(data["base"])) == (2, "ppo-2p")
    n = len(data["actions"])
    assert n == 120 and data["inputs"].shape[0] == data["masks"].shape[0] == n
    rows = np.arange(n)
    assert data["masks"][rows, data["actions"]].all()  # search's moves are legal
    base = agents.make("ppo-2p", players=2)
    x = data["inputs"]  # what the network reads: the observation and counting's advice
    for i, (w, b) in enumerate(base.weights):
        x = x @ w + b
        if i < len(base.weights) - 1:
            x = np.maximum(x, 0) if base.activation == "relu" else np.tanh(x)
    assert np.allclose(x[data["masks"]], data["logits"][data["masks"]], atol=1e-4)
    # The base's choice is every row's first candidate; a move that leaves it is another candidate.
    choice = np.where(data["masks"], data["logits"], -np.inf).argmax(axis=1)
    assert (data["candidates"][:, 0] == choice).all()
    left = data["actions"] != choice
    assert (data["candidates"][left] == data["actions"][left, None]).any(axis=1).all()
    assert (data["gain"][:, 0] == 0).all()  # gains are over the base's choice


@pytest.mark.parametrize("targets", ["gains", "choices"])
def test_a_fit_from_saved_positions_writes_a_network_that_plays(positions, tmp_path, targets):
    result = run("--load", str(positions), "--targets", targets, "--epochs", "2", "--out", "fitted.npz", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "120 positions of 2p search (base ppo-2p)" in result.stdout and "loaded" in result.stdout
    assert result.stdout.count("held out, epoch") == 2
    fitted = agents.make(str(tmp_path / "fitted.npz"), players=2)
    base = agents.make("ppo-2p", players=2)
    assert [w.shape for w, _ in fitted.weights] == [w.shape for w, _ in base.weights]
    assert fitted.advice == base.advice
    assert any(not np.array_equal(a, b) for (a, _), (b, _) in zip(fitted.weights, base.weights))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--load", "nowhere.npz"], "--load: no file 'nowhere.npz'"),
        (["--load", "network.npz"], "--load: 'network.npz' is not a file of positions written by --save"),
        (["--targets", "moves"], "invalid choice: 'moves'"),
        (["--departure-weight", "0"], "--tau and --departure-weight must be positive"),
        (["--out", "no/such/fitted.npz"], "no folder 'no/such'"),
    ],
)
def test_bad_input_is_one_line_and_status_2_before_any_game(tmp_path, args, message):
    (tmp_path / "network.npz").write_bytes(pretrained.path("ppo-2p").read_bytes())
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["network.npz"]
