"""The upper bound of every count a user gives: games, batches, samples, steps, layers, processes.

Each bound is checked where the count is taken (the engine's batch size, [`run_tournament()`][skyjo_env.evaluation.tournament.run_tournament],
`SearchPolicy`, `TrainConfig`, the `skyjo` flags), before any work or any file is made, with a
`ValueError` that names the value and the limit ([`check_limit()`][check_limit]): an absurd size ends in one
line, not in a `MemoryError` after minutes of work or in a run that would never end. The bounds
are far above what any run of this project uses, and low enough that a run at a bound fits the
memory of a laptop (the figures below are measured or counted at 8 players, the largest table).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Games one engine steps together (`SkyjoEngine(batch_size=...)`, the vector envs' `num_envs`, a search's
#: rollouts): about 550 bytes of engine state a game, 0.6 GB at the bound.
MAX_BATCH = 1 << 21
#: Games of a tournament at one table size, of a benchmark match, of an evaluation: a tournament plays
#: them all in one engine batch and keeps every game's result, about 3 KB a game (3 GB at the bound)
#: and hours of play.
MAX_GAMES = 1_000_000
#: Sampled positions a search decision rolls out (`search:samples=N`, `screen`): each is `top`
#: rollout games per searched row.
MAX_SEARCH_SAMPLES = 4096
#: Actions of one game (a view's or a tournament's `max_steps`, a search's `horizon`): a real game
#: takes a few hundred, and the engine counts them in int32.
MAX_GAME_STEPS = 1_000_000
#: Learner steps of a training run (`total_timesteps`, and the step intervals `snapshot_every`,
#: `eval_every`, `checkpoint_every`): about three weeks at 5,000 steps a second.
MAX_TIMESTEPS = 10**10
#: Learner steps of one rollout (`num_envs x n_steps`, times `env_runners` with RLlib), all held in
#: memory: about 1.7 KB a step with advice, 3.6 GB at the bound.
MAX_ROLLOUT_STEPS = 1 << 21
#: Teacher turns a warm start clones, all held in memory (1.7 KB a turn, 3.4 GB at the bound).
MAX_WARM_START_SAMPLES = 2_000_000
#: Passes over a rollout or over the warm start's turns.
MAX_EPOCHS = 1000
#: Snapshots of the self-play pool, each a network in memory.
MAX_POOL_SIZE = 1000
#: Units of one hidden layer (a layer of 8,192 x 8,192 float32 weights is 256 MB) and hidden layers.
MAX_UNITS = 8192
MAX_LAYERS = 32
#: Processes or threads a command starts (`--workers`, `update_threads`, `env_runners`).
MAX_WORKERS = 256


def check_limit(name: str, value: Any, limit: int, unit: str = "") -> None:
    """`ValueError` naming `name` and `limit` if the integer `value` is above `limit` (other checks
    say what a value below 1 or of another type means)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > limit:
        raise ValueError(
            f"{name}={value:,} is above the limit of {limit:,}{' ' + unit if unit else ''} (skyjo_env.limits)"
        )


def parse_int(text: str) -> int:
    """`int(text)` for ASCII text only: Python's `int()` also reads other scripts' digits (`'１０'`
    is 10), which a command line must not take for a number. `ValueError` naming `text` otherwise."""
    try:
        if text.isascii():
            return int(text)
    except ValueError:
        pass
    raise ValueError(f"{text!r} is not an integer" + ("" if text.isascii() else " (ASCII digits only)"))


def parse_float(text: str) -> float:
    """`float(text)` for ASCII text only (see [`parse_int()`][parse_int]). `ValueError` otherwise."""
    try:
        if text.isascii():
            return float(text)
    except ValueError:
        pass
    raise ValueError(f"{text!r} is not a number" + ("" if text.isascii() else " (ASCII digits only)"))
