"""A trained actor network as a batched numpy policy: no torch needed to play.

The network is a multilayer perceptron `obs -> hidden layers -> 26 logits`; illegal actions are
masked out and the best legal action is played (or one is sampled, with `greedy=False`). An
*advised* network reads a heuristic's advice after the observation ([`skyjo_env.agents.advice`][]).
Weights and metadata live in one `.npz` file, so shipped agents load with numpy alone.
"""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from skyjo_env.actions import NUM_ACTIONS
from skyjo_env.agents.advice import ADVICE_SIZE, check_advisor, with_advice
from skyjo_env.files import write_file
from skyjo_env.observation import PADDED_SIZE, PLAYER_COUNTS, count_range, num_players, pad, size
from skyjo_env.rules import Rules

ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0, out=x),
}


def forward(weights: list[tuple[np.ndarray, np.ndarray]], activation: str, x: np.ndarray) -> np.ndarray:
    """The multilayer perceptron `weights` (`[(W, b), ...]`, `W` of shape `(in, out)`) on inputs `x`:
    `activation` after every layer but the last."""
    act = ACTIVATIONS[activation]
    for w, b in weights[:-1]:
        x = act(x @ w + b)
    w, b = weights[-1]
    return x @ w + b


class MLPPolicy:
    """Masked MLP policy over observations of a fixed player count, or padded ones of several.

    A network whose inputs are padded observations ([`skyjo_env.observation.PADDED_SIZE`][], plus
    any advice) plays every player count it was trained for (`metadata["player_counts"]`, default
    2..8): it takes table observations of those counts (padding them) or padded ones.

    Args:
        weights: `[(W, b), ...]` per layer, `W` of shape `(in, out)`; the last layer
            outputs the 26 action logits.
        activation: `"tanh"` or `"relu"`, applied after every layer but the last.
        name: label in tournaments.
        greedy: play the most probable legal action; otherwise sample from the masked softmax.
        metadata: free-form facts about the agent (players, training steps, ...).
        seed: seeds sampling when `greedy` is False.
        advice: `None`, or the heuristic whose advice the network reads after the observation
            ([`skyjo_env.agents.advice.ADVISORS`][]).
        rules: the rules of the table it plays at (default: those it was trained under, see
            [`trained_rules`][]). The advice follows them; a table under other rules than the
            training's gets a `UserWarning` (a `ValueError` for a player count it was not
            trained for).
    """

    def __init__(
        self,
        weights: list[tuple[np.ndarray, np.ndarray]],
        activation: str = "tanh",
        name: str = "mlp",
        *,
        greedy: bool = True,
        metadata: dict[str, Any] | None = None,
        seed: int | None = None,
        advice: str | None = None,
        rules: Rules | None = None,
    ) -> None:
        check_advisor(advice)
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r} is not allowed; use one of {sorted(ACTIVATIONS)}")
        if not weights or weights[-1][0].shape[1] != NUM_ACTIONS:
            raise ValueError(f"the last layer must output {NUM_ACTIONS} logits")
        for (w0, _), (w1, _) in zip(weights, weights[1:]):
            if w0.shape[1] != w1.shape[0]:
                raise ValueError(f"layer shapes do not chain: {w0.shape} then {w1.shape}")
        if advice is not None and weights[0][0].shape[0] <= ADVICE_SIZE:
            raise ValueError(f"an advised network reads more than {ADVICE_SIZE} inputs, not {weights[0][0].shape[0]}")
        self.weights = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in weights]
        self.activation = activation
        self.name = name
        self.greedy = greedy
        self.metadata = dict(metadata or {})
        self.rng = np.random.default_rng(seed)
        self.advice = advice
        self.padded = self.obs_size == PADDED_SIZE  #: it reads padded observations
        #: The player counts it was trained for (and plays).
        self.player_counts: tuple[int, ...] = (
            tuple(self.metadata.get("player_counts", PLAYER_COUNTS)) if self.padded else (num_players(self.obs_size),)
        )
        self.rules = self.trained_rules if rules is None else rules
        if self.rules.num_players not in self.player_counts:
            raise ValueError(
                f"agent {name!r} was trained for {count_range(self.player_counts)} players; "
                f"this table has {self.rules.num_players}"
            )
        ignored = {"num_players"} if self.padded else set()  # a padded network plays every trained count
        trained_rules = self.trained_rules.to_dict()
        changed = {k: v for k, v in self.rules.to_dict().items() if trained_rules[k] != v and k not in ignored}
        if changed:
            trained = {k: trained_rules[k] for k in changed}
            warnings.warn(
                f"agent {name!r} was trained under {trained} and now plays under {changed}", UserWarning, stacklevel=2
            )

    @property
    def players(self) -> int:
        """The player count of the table it plays at."""
        return self.rules.num_players

    @property
    def obs_size(self) -> int:
        """Length of the observations it plays from (the network's inputs less any advice)."""
        return self.weights[0][0].shape[0] - (ADVICE_SIZE if self.advice else 0)

    @property
    def trained_rules(self) -> Rules:
        """The rules it was trained under: `metadata["rules"]`, else the default rules for its
        (first) player count."""
        recorded = self.metadata.get("rules")
        return Rules.from_dict(recorded) if recorded is not None else Rules(num_players=self.player_counts[0])

    def logits(self, observations: np.ndarray, action_masks: np.ndarray | None = None) -> np.ndarray:
        """Unmasked action logits `(N, 26)`; an advised agent needs the action masks too."""
        return self._forward(self._network_inputs(observations, action_masks))

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self._choose(self.logits(observations, action_masks), action_masks)

    @property
    def batch_key(self) -> tuple[Any, ...]:
        """Networks with one key read the same inputs (the same advice under the same rules), so
        [`play_together()`][play_together] computes those inputs once for all of them (see
        [`skyjo_env.opponents.play_policies()`][skyjo_env.opponents.play_policies])."""
        return ("mlp", self.advice, self.rules, self.obs_size)

    @staticmethod
    def play_together(
        policies: list[MLPPolicy], observations: np.ndarray, action_masks: np.ndarray, which: np.ndarray
    ) -> np.ndarray:
        """The actions of `policies[which[i]]` for row `i`, as each would choose alone, with the
        inputs (the advice, the costliest part) computed once for every row."""
        x = policies[0]._network_inputs(observations, action_masks)
        masks = np.asarray(action_masks, dtype=bool)
        actions = np.empty(len(x), dtype=np.int64)
        for j, policy in enumerate(policies):
            rows = np.flatnonzero(which == j)
            if rows.size:
                actions[rows] = policy._choose(policy._forward(x[rows]), masks[rows])
        return actions

    def _network_inputs(self, observations: np.ndarray, action_masks: np.ndarray | None) -> np.ndarray:
        """The observations, checked (padded for a padded network), with the advice appended for an
        advised network."""
        x = np.asarray(observations, dtype=np.float32)
        if self.padded and x.ndim == 2 and x.shape[1] != PADDED_SIZE:
            table = {size(p): p for p in self.player_counts}.get(x.shape[1])
            if table is None:
                raise ValueError(
                    f"observations must be padded ones (N, {PADDED_SIZE}) or table ones of "
                    f"{count_range(self.player_counts)} players ({', '.join(str(size(p)) for p in self.player_counts)} "
                    f"entries) for this agent, got {x.shape}"
                )
            x = pad(x, table)
        if x.ndim != 2 or x.shape[1] != self.obs_size:
            raise ValueError(
                f"observations must have shape (N, {self.obs_size}) for this agent "
                f"({count_range(self.player_counts)} players), got {x.shape}"
            )
        if self.advice:
            if action_masks is None:
                raise ValueError(f"this agent reads {self.advice!r} advice: pass the action masks too")
            x = with_advice(self.advice, x, action_masks, self.rules)
        return x

    def _forward(self, x: np.ndarray) -> np.ndarray:
        return forward(self.weights, self.activation, x)

    def _choose(self, logits: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The best legal action (greedy), or one sampled from the masked softmax."""
        masks = np.asarray(action_masks, dtype=bool)
        logits[~masks] = -np.inf
        if self.greedy:
            return logits.argmax(axis=1)
        z = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(z)
        cumulative = np.cumsum(p, axis=1)
        u = self.rng.random((len(p), 1)) * cumulative[:, -1:]
        return np.minimum((cumulative < u).sum(axis=1), NUM_ACTIONS - 1)

    # ------------------------------------------------------------------ files
    def save(self, path: str | Path) -> None:
        """Write weights and metadata to one `.npz` file."""
        arrays: dict[str, Any] = {f"w{i}": w for i, (w, _) in enumerate(self.weights)}
        arrays |= {f"b{i}": b for i, (_, b) in enumerate(self.weights)}
        header = {
            "format": "skyjo-env/mlp-policy",
            "version": 1,
            "activation": self.activation,
            "name": self.name,
            "layers": len(self.weights),
            "metadata": self.metadata,
            "advice": self.advice,
        }
        packed = io.BytesIO()
        np.savez_compressed(packed, header=np.array(json.dumps(header)), **arrays)
        write_file(path, packed.getvalue())

    @classmethod
    def load(cls, path: str | Path, **kwargs: Any) -> MLPPolicy:
        """Read a file written by [`save()`][save]; raises `ValueError` if it is not one."""
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(str(data["header"]))
                weights = [(data[f"w{i}"], data[f"b{i}"]) for i in range(int(header["layers"]))]
        except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"cannot read policy file {path}: {exc}") from exc
        if header.get("format") != "skyjo-env/mlp-policy":
            raise ValueError(f"{path} is not a skyjo-env policy file (format {header.get('format')!r})")
        options = {"name": header["name"], "metadata": header["metadata"], "advice": header.get("advice")} | kwargs
        return cls(weights, header["activation"], **options)
