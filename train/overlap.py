"""PPO updates overlapped with the rollouts: sb3-contrib's own update, run in a second process.

Sequential PPO takes turns: the games play a rollout (numpy, one core), then the networks fit it
(torch), then the games play the next. [`OverlappedPPO`][] keeps both cores busy instead: while
its update process fits rollout `k`, the games play rollout `k + 1` with the weights fitted on
the rollouts before `k`. That lag of one update is the only change to the learning: each update is
`MaskablePPO.train` itself, on the same rollouts, from the weights and Adam state the previous
update left, in the same minibatch order, and its ratio and clipping are taken, as always, against
the log-probabilities of the policy that played (as asynchronous PPO does). `tests/test_overlap.py`
checks that an overlapped run equals that lagged schedule played in one process, bit for bit.

The model in the main process holds the weights and optimiser state of the last update received:
snapshots, evaluations and checkpoints read them; `learn` returns once the last update is in.
The update process is `python -m skyjo_env.train.overlap` (a fresh interpreter: no forked thread
pools, and the caller's script is not run again), connected by a socket pair (POSIX).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import subprocess
import sys
import traceback
from multiprocessing.connection import Connection
from typing import Any, NoReturn

import numpy as np
import torch
from sb3_contrib import MaskablePPO

#: The rollout buffer's arrays an update reads (`MaskableRolloutBuffer.get`).
ROLLOUT_FIELDS = ("observations", "actions", "values", "log_probs", "advantages", "returns", "action_masks")


def _state_bytes(model: MaskablePPO) -> bytes:
    """The policy's weights and its optimiser's state, serialised."""
    out = io.BytesIO()
    torch.save({"policy": model.policy.state_dict(), "optimizer": model.policy.optimizer.state_dict()}, out)
    return out.getvalue()


def _load_state(model: MaskablePPO, data: bytes) -> None:
    state = torch.load(io.BytesIO(data), weights_only=True)
    model.policy.load_state_dict(state["policy"])
    model.policy.optimizer.load_state_dict(state["optimizer"])


def serve(conn: Connection) -> None:
    """The update process: load the model sent first, then fit each rollout received with
    `MaskablePPO.train` and send back the weights, the optimiser state, the update's log entries
    and its update count; an exception is sent back as its traceback."""
    from stable_baselines3.common.logger import configure

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    try:
        model_zip, numpy_state, threads = conn.recv()
        torch.set_num_threads(threads)
        model = MaskablePPO.load(io.BytesIO(model_zip), device="cpu")
        model.set_logger(configure(None, []))
        np.random.set_state(numpy_state)  # the minibatch order continues the main process's draws
        while (message := conn.recv()) is not None:
            arrays, progress_remaining = message
            buffer = model.rollout_buffer
            for name in ROLLOUT_FIELDS:
                setattr(buffer, name, arrays[name])
            buffer.full, buffer.generator_ready = True, False
            model._current_progress_remaining = progress_remaining
            model.train()
            logs = dict(model.logger.name_to_value)
            model.logger.name_to_value.clear()
            conn.send(("done", _state_bytes(model), logs, model._n_updates))
    except (EOFError, BrokenPipeError, ConnectionResetError):  # the main process went away
        pass
    except Exception:
        conn.send(("error", traceback.format_exc()))


class UpdateProcess:
    """A process holding a copy of `model` (as it is now) that runs its PPO updates, one at a time,
    with `threads` torch threads."""

    def __init__(self, model: MaskablePPO, threads: int = 1) -> None:
        model_zip = io.BytesIO()
        model.save(model_zip)
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "skyjo_env.train.overlap", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},  # the same packages
        )
        theirs.close()
        self.conn = Connection(ours.detach())
        self.conn.send((model_zip.getvalue(), np.random.get_state(), threads))
        self.pending = False  #: whether an update was sent whose result has not been taken

    def submit(self, arrays: dict[str, np.ndarray], progress_remaining: float) -> None:
        """Start the update of one rollout (its buffer's [`ROLLOUT_FIELDS`][]); one at a time."""
        if self.pending:
            raise RuntimeError("the previous update's result must be taken before the next update is sent")
        try:
            self.conn.send((arrays, progress_remaining))
        except OSError:
            self._ended()
        self.pending = True

    def result(self) -> tuple[bytes, dict[str, Any], int]:
        """Wait for the update sent last: `(state bytes, log entries, update count)`."""
        try:
            reply = self.conn.recv()
        except (EOFError, OSError):
            self._ended()
        self.pending = False
        if reply[0] == "error":
            raise RuntimeError(f"the PPO update process failed:\n{reply[1]}")
        return reply[1], reply[2], reply[3]

    def _ended(self) -> NoReturn:
        code = self.process.wait(timeout=10)
        raise RuntimeError(f"the PPO update process ended unexpectedly (exit status {code})") from None

    def close(self) -> None:
        """Stop the process (an update still running is dropped)."""
        with contextlib.suppress(OSError):  # it may have ended already
            self.conn.send(None)
        self.conn.close()  # a pending update's reply goes nowhere: the process sees the end and exits
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class OverlappedPPO(MaskablePPO):
    """`MaskablePPO` whose updates run in an [`UpdateProcess`][] while the next rollout is played.

    `update_threads` are the torch threads of the update process (one: the games use the other
    core). Saved models load as plain `MaskablePPO` too (the same weights, optimiser state and
    settings).
    """

    def __init__(self, *args: Any, update_threads: int = 1, **kwargs: Any) -> None:
        self.update_threads = update_threads
        self._updates: UpdateProcess | None = None
        super().__init__(*args, **kwargs)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "_updates", "update_threads"]

    def train(self) -> None:
        """Send this rollout to the update process and take in the previous rollout's update."""
        assert self._updates is not None, "OverlappedPPO.train runs within learn"
        previous = self._updates.result() if self._updates.pending else None
        self._updates.submit({name: getattr(self.rollout_buffer, name) for name in ROLLOUT_FIELDS},
                             self._current_progress_remaining)  # fmt: skip
        if previous is not None:
            self._apply(*previous)

    def _apply(self, state: bytes, logs: dict[str, Any], updates: int) -> None:
        _load_state(self, state)
        for key, value in logs.items():
            self.logger.record(key, value)
        self._n_updates = updates

    def learn(self, *args: Any, **kwargs: Any) -> OverlappedPPO:
        """`MaskablePPO.learn`, its updates in a process started now (it loads while the first
        rollout is played); it returns once the last update is taken in, and the process stops."""
        self._updates = UpdateProcess(self, self.update_threads)
        try:
            super().learn(*args, **kwargs)
            if self._updates.pending:
                self._apply(*self._updates.result())
        finally:
            self._updates.close()
            self._updates = None
        return self


if __name__ == "__main__":
    serve(Connection(int(sys.argv[1])))
