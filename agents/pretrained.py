"""Pretrained PPO agents shipped inside the package, loadable by name.

`agents.load("ppo-2p")` returns the 2-player agent as a batched policy; [`available()`][available]
lists the shipped names. Each agent is one `.npz` file in `agents/weights/` (see
[`MLPPolicy`][]), with its training facts in its metadata.

A network trained on mixed tables plays several player counts; [`SEATED`][] names it at each
count it has no network of its own for: `ppo-5p` is `ppo-mixed` at 5 players, and refuses
another table size. `ppo-2p`, `ppo-3p` and `ppo-4p` are networks of their own.
"""

from __future__ import annotations

from pathlib import Path

from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.rules import Rules

FOLDER = Path(__file__).parent / "weights"
#: The mixed-table network, and the names that seat it at one table size each.
MIXED = "ppo-mixed"
SEATED: dict[str, tuple[str, int]] = {f"ppo-{p}p": (MIXED, p) for p in (5, 6, 7, 8)}


def available() -> list[str]:
    """Names of the shipped agents (files, and the [`SEATED`][] names of a shipped network)."""
    files = {p.stem for p in FOLDER.glob("*.npz")}
    return sorted(files | {name for name, (network, _) in SEATED.items() if network in files})


def path(name: str) -> Path:
    """File of the shipped agent `name`; `ValueError` naming the shipped ones if unknown."""
    file = FOLDER / f"{SEATED.get(name, (name, 0))[0]}.npz"
    if not file.is_file():
        raise ValueError(f"no shipped agent named {name!r}; shipped agents: {', '.join(available()) or 'none'}")
    return file


def for_table(*, greedy: bool = True, seed: int | None = None, rules: Rules | None = None) -> MLPPolicy:
    """The shipped network for the table's size (`ppo-{P}p`, registered as the agent `ppo`), under `rules`
    (default: 2 players)."""
    table = Rules() if rules is None else rules
    return load(f"ppo-{table.num_players}p", greedy=greedy, seed=seed, rules=table)


def load(name: str, *, greedy: bool = True, seed: int | None = None, rules: Rules | None = None) -> MLPPolicy:
    """The shipped agent `name` (e.g. `"ppo-2p"`) as a batched policy, for a table under `rules`
    (default: the rules it was trained under; for a [`SEATED`][] name, at its table size)."""
    if name not in SEATED:
        return MLPPolicy.load(path(name), name=name, greedy=greedy, seed=seed, rules=rules)
    network, players = SEATED[name]
    if rules is not None and rules.num_players != players:
        raise ValueError(
            f"agent {name!r} is {network} seated at tables of {players} players; this table has "
            f"{rules.num_players}: use ppo-{rules.num_players}p or {network}"
        )
    stored = MLPPolicy.load(path(name))  # read once: its trained rules give the seat's default rules
    table = stored.trained_rules.replace(num_players=players) if rules is None else rules
    policy = MLPPolicy(stored.weights, stored.activation, name, greedy=greedy, metadata=stored.metadata, seed=seed,
                       advice=stored.advice, rules=table)  # fmt: skip
    policy.player_counts = (players,)  # the name plays its own table size only
    return policy
