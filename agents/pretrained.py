"""Pretrained PPO agents shipped inside the package, loadable by name.

``agents.load("ppo-2p")`` returns the 2-player agent as a batched policy; :func:`available`
lists the shipped names. Each agent is one ``.npz`` file in ``agents/weights/`` (see
:class:`~skyjo_env.agents.mlp_policy.MLPPolicy`), with its training facts in its metadata.
"""

from __future__ import annotations

from pathlib import Path

from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.rules import Rules

FOLDER = Path(__file__).parent / "weights"


def available() -> list[str]:
    """Names of the shipped agents."""
    return sorted(p.stem for p in FOLDER.glob("*.npz"))


def path(name: str) -> Path:
    """File of the shipped agent ``name``; ``ValueError`` naming the shipped ones if unknown."""
    file = FOLDER / f"{name}.npz"
    if not file.is_file():
        raise ValueError(f"no shipped agent named {name!r}; shipped agents: {', '.join(available()) or 'none'}")
    return file


def load(name: str, *, greedy: bool = True, seed: int | None = None, rules: Rules | None = None) -> MLPPolicy:
    """The shipped agent ``name`` (e.g. ``"ppo-2p"``) as a batched policy, for a table under ``rules``."""
    return MLPPolicy.load(path(name), name=name, greedy=greedy, seed=seed, rules=rules)
