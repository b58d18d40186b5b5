"""A game-value network: from one seat's view, each seat's expected share of the game's result and its
expected score of the round in play.

The network reads a padded observation ([`skyjo_env.observation.PADDED_SIZE`][]: every table of 2 to 8
players alike) with, for every seat and column, the count of each face-up value
([`features()`][features]: a pair of R13 is one input), and outputs two heads of 8 numbers, one per seat
relative to the observer (entry `r` is the seat `r` places after it, so entry 0 is its own; entries past
the table's size mean nothing):
the expected share of the game's result (R20: the winners share +1, the others -1), and the expected
score of the round in play, after R17's doubling. The round head outputs what the seat will score beyond
its grid's expected score now ([`expected_grid_scores()`][expected_grid_scores]: the face-up cards, and every
face-down card at the mean of the unseen ones), in [`ROUND_SCALE`][] points a unit, so every card counts in
full from the start and the network learns what play will change. It is trained by `skyjo train --backend value`
([`skyjo_env.train.value`][]) on positions of batched self-play and on every legal action's position of
branched decisions, with what followed them as targets ([`skyjo_env.train.value_data`][]), and played by
the [`expectimax`][skyjo_env.agents.expectimax] agent. Weights and metadata live in one `.npz` file, so it
loads and runs with numpy alone.
"""

from __future__ import annotations

import functools
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from skyjo_env.agents.mlp_policy import ACTIVATIONS, forward
from skyjo_env.cards import COLS, COUNTS, MAX_VALUE, MIN_VALUE, NUM_VALUES, ROWS, SLOTS
from skyjo_env.files import write_file
from skyjo_env.observation import (
    GRID_FEATURES,
    PADDED_SEATS,
    PADDED_SIZE,
    PLAYER_COUNTS,
    count_range,
    layout,
    pad,
    padded_layout,
    size,
)

FORMAT = "skyjo-env/value-network"
#: The shipped value networks' folder (inside the agents' weights).
FOLDER = Path(__file__).parent / "weights" / "values"
#: The shipped network the expectimax agent plays by default.
DEFAULT = "value"
#: Points of round score per unit of the round head's output.
ROUND_SCALE = 10.0
#: Outputs: the result head's 8 entries, then the round head's.
OUTPUTS = 2 * PADDED_SEATS
#: The network's inputs: the padded observation, then for every seat, column and card value the number of
#: the column's face-up cards of that value ([`features()`][features]).
FEATURES = PADDED_SIZE + PADDED_SEATS * COLS * NUM_VALUES
_UNSEEN = padded_layout()["unseen"]
_PLAYERS = padded_layout()["players"]
_COUNTS = COUNTS.astype(np.float32)
_VALUES = np.arange(MIN_VALUE, MAX_VALUE + 1, dtype=np.float32)


class ValueNetwork:
    """An MLP `padded observation -> (8 expected result shares, 8 expected round scores)`.

    Args:
        weights: `[(W, b), ...]` per layer, `W` of shape `(in, out)`; the first reads the [`FEATURES`][]
            inputs of [`features()`][features], the last outputs [`OUTPUTS`][].
        activation: `"tanh"` or `"relu"`, after every layer but the last.
        metadata: facts about its training (player counts, positions, command).
    """

    def __init__(
        self,
        weights: list[tuple[np.ndarray, np.ndarray]],
        activation: str = "relu",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r} is not allowed; use one of {sorted(ACTIVATIONS)}")
        if not weights or weights[0][0].shape[0] != FEATURES or weights[-1][0].shape[1] != OUTPUTS:
            raise ValueError(f"a value network reads {FEATURES} inputs and outputs {OUTPUTS} values")
        for (w0, _), (w1, _) in zip(weights, weights[1:]):
            if w0.shape[1] != w1.shape[0]:
                raise ValueError(f"layer shapes do not chain: {w0.shape} then {w1.shape}")
        self.weights = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in weights]
        self.activation = activation
        self.metadata = dict(metadata or {})
        #: The player counts it was trained for.
        self.player_counts: tuple[int, ...] = tuple(self.metadata.get("player_counts", PLAYER_COUNTS))
        self._tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def values(self, observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`(results, rounds)`, each `(N, 8)`: per seat relative to the observer, the expected share of
        the game's result and the expected score (points) of the round in play, from padded
        observations `(N, 365)` or table ones of a trained player count (the faster: the first layer
        then reads only the inputs a table of that size can set)."""
        x = np.asarray(observations, dtype=np.float32)
        if x.ndim == 2 and x.shape[1] != PADDED_SIZE:
            table = {size(p): p for p in self.player_counts}.get(x.shape[1])
            if table is None:
                raise ValueError(
                    f"observations must be padded ones (N, {PADDED_SIZE}) or table ones of "
                    f"{count_range(self.player_counts)} players, got shape {x.shape}"
                )
            w_obs, w_counts, bias = self._table_layer(table)
            grids = _grids(x, table)
            first = x @ w_obs + _column_counts(grids) @ w_counts + bias
            out = forward(self.weights[1:], self.activation, ACTIVATIONS[self.activation](first))
            unseen = x[:, layout(table)["unseen"]]
        elif x.ndim == 2:
            out = forward(self.weights, self.activation, features(x))
            grids, unseen = _grids(x, PADDED_SEATS), x[:, _UNSEEN]
        else:
            raise ValueError(f"observations must have shape (N, {PADDED_SIZE}), got {x.shape}")
        rounds = out[:, PADDED_SEATS:] * np.float32(ROUND_SCALE)
        rounds[:, : grids.shape[1]] += _grid_scores(grids, unseen)
        return out[:, :PADDED_SEATS], rounds

    def _table_layer(self, players: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The first layer for table observations of `players`: `(W_obs, W_counts, b)`, the weights of the
        padded inputs each table input lands on, those of its seats' column counts, and the bias with the
        constant inputs (the table size) folded in."""
        if players not in self._tables:
            w, b = self.weights[0]
            constant = pad(np.zeros((1, size(players)), np.float32), players)
            placed = pad(np.eye(size(players), dtype=np.float32), players) - constant
            counts = w[PADDED_SIZE : PADDED_SIZE + players * COLS * NUM_VALUES]
            self._tables[players] = (
                placed @ w[:PADDED_SIZE],
                np.ascontiguousarray(counts),
                b + constant[0] @ w[:PADDED_SIZE],
            )
        return self._tables[players]

    def check_table(self, players: int) -> None:
        """`ValueError` unless the network learnt tables of `players`."""
        if players not in self.player_counts:
            raise ValueError(
                f"the value network was trained for {count_range(self.player_counts)} players; this table has "
                f"{players} (train one: skyjo train --backend value --players {players})"
            )

    def save(self, path: str | Path) -> None:
        """Write weights and metadata to one `.npz` file, whole or not at all."""
        arrays: dict[str, Any] = {f"w{i}": w for i, (w, _) in enumerate(self.weights)}
        arrays |= {f"b{i}": b for i, (_, b) in enumerate(self.weights)}
        header = {"format": FORMAT, "version": 1, "activation": self.activation, "layers": len(self.weights)}
        header["metadata"] = self.metadata
        packed = io.BytesIO()
        np.savez_compressed(packed, header=np.array(json.dumps(header)), **arrays)
        write_file(path, packed.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> ValueNetwork:
        """Read a file written by [`save()`][save]; `ValueError` if it is not one."""
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(str(data["header"]))
                if not isinstance(header, dict) or header.get("format") != FORMAT:
                    raise ValueError(f"not a skyjo-env value network (format {header.get('format')!r})")
                weights = [(data[f"w{i}"], data[f"b{i}"]) for i in range(int(header["layers"]))]
        except (OSError, KeyError, ValueError, TypeError, EOFError, AttributeError, zipfile.BadZipFile) as exc:
            raise ValueError(f"cannot read value network {path}: {exc}") from exc
        return cls(weights, header["activation"], header.get("metadata"))


def features(padded: np.ndarray) -> np.ndarray:
    """`(N, FEATURES)` the network's inputs from padded observations `(N, 365)`: the observation, then per
    relative seat, column and card value (-2..12) the number of the column's face-up cards of that value:
    a column's pair or three of a kind (R13) is one input, where the card values alone leave the network
    to find equal numbers."""
    x = np.asarray(padded, dtype=np.float32)
    seated = np.arange(PADDED_SEATS) < (x[:, _PLAYERS].argmax(axis=1) + PLAYER_COUNTS[0])[:, None]
    return np.concatenate([x, _column_counts(_grids(x, PADDED_SEATS), seated)], axis=1)


def expected_grid_scores(padded: np.ndarray) -> np.ndarray:
    """`(N, 8)` each relative seat's grid score if it were scored now with every face-down card at the mean
    of the observer's unseen cards (no doubling), from padded observations `(N, 365)`; 0 for absent seats."""
    x = np.asarray(padded, dtype=np.float32)
    return _grid_scores(_grids(x, PADDED_SEATS), x[:, _UNSEEN])


def _grids(x: np.ndarray, seats: int) -> np.ndarray:
    """`(N, seats, 3, SLOTS)` the first `seats` grids of observations (table or padded: the grids come
    first): per slot its value / 12, face-down flag, removed flag."""
    return x[:, : seats * GRID_FEATURES].reshape(len(x), seats, 3, SLOTS)


def _column_counts(grids: np.ndarray, seated: np.ndarray | None = None) -> np.ndarray:
    """`(N, seats * COLS * NUM_VALUES)` per seat, column and value the column's face-up cards of that value,
    from `_grids()`; nothing for the seats where `seated` `(N, seats)` is False."""
    up = (grids[:, :, 1] == 0) & (grids[:, :, 2] == 0)
    if seated is not None:
        up &= seated[:, :, None]
    code = (np.rint(grids[:, :, 0] * MAX_VALUE) - MIN_VALUE).astype(np.int8)
    cards = (code[..., None] == np.arange(NUM_VALUES, dtype=np.int8)) & up[..., None]  # (N, seats, SLOTS, 15)
    n, seats = grids.shape[:2]
    return cards.reshape(n, seats, ROWS, COLS, NUM_VALUES).sum(axis=2, dtype=np.float32).reshape(n, -1)


def _grid_scores(grids: np.ndarray, unseen: np.ndarray) -> np.ndarray:
    """`(N, seats)` the grids' scores with every face-down card at the mean of the `unseen` counts (the
    observation's, a share of each value's [`COUNTS`][skyjo_env.cards.COUNTS])."""
    cards = unseen * _COUNTS
    mean = cards @ _VALUES / np.maximum(cards.sum(axis=1), 1)
    return grids[:, :, 0].sum(axis=2) * np.float32(MAX_VALUE) + grids[:, :, 1].sum(axis=2) * mean[:, None]


def shipped() -> list[str]:
    """Names of the shipped value networks."""
    return sorted(p.stem for p in FOLDER.glob("*.npz"))


def for_table(players: int) -> str | None:
    """The shipped value network that learnt tables of `players` (the first by name), or None."""
    return next((name for name in shipped() if players in _player_counts(FOLDER / f"{name}.npz")), None)


@functools.cache
def _player_counts(path: Path) -> tuple[int, ...]:
    return ValueNetwork.load(path).player_counts


def load(spec: str | Path | ValueNetwork) -> ValueNetwork:
    """A value network: one given, a shipped one by name (e.g. `"value"`), or a file (a `.npz` path, or a
    run folder holding `value.npz`)."""
    if isinstance(spec, ValueNetwork):
        return spec
    text = str(spec)
    if text in shipped():
        return ValueNetwork.load(FOLDER / f"{text}.npz")
    path = Path(text)
    if path.is_dir():
        path = path / "value.npz"
    if path.is_file():
        return ValueNetwork.load(path)
    raise ValueError(
        f"no value network {text!r}: give a shipped one ({', '.join(shipped()) or 'none shipped'}), "
        "a .npz file or a run folder of `skyjo train --backend value`"
    )
