"""Opponents of a learner: batched policies `policy(observations, action_masks) -> actions`.

Any callable with that signature plays (see [`skyjo_env.agents.base.Policy`][]): it gets the
`(n, obs)` float32 observations of the seats it plays and their `(n, 26)` boolean legal-action
masks, and returns `n` legal action ids. A policy that never reads its observations may say so
with an attribute `observes = False`: it then gets an empty `(n, 0)` array, and the environment
skips encoding observations for it.

Where a policy is expected, a *factory* may stand instead: a class, or a callable without required
arguments, that returns a policy. [`build()`][build] calls it with the game's `rules` (and a `seed`)
where its signature takes them, so an agent learns the rules it plays under.

A policy that makes random choices draws them from an attribute `rng` (a
`numpy.random.Generator`): an environment's `reset(seed=...)` then re-seeds it ([`reseed()`][reseed]),
so the same seed gives the same game. A policy that declares the player counts it plays (attribute
`player_counts`, or `players`) is refused at a table of another size ([`check_table()`][check_table]).

A policy that fails while it plays raises [`AgentError`][] naming it: one that raises an exception
(any `Exception` of its own, wrapped), or one that runs over a time budget. A Python call cannot be
interrupted safely, so the budget is checked when each call returns ([`call_policy()`][call_policy]):
`move_timeout` seconds per move the call decides (a batched call deciding `n` moves may take `n`
times that), so that a policy too slow for its budget ends the play at its first slow call.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from skyjo_env.actions import names as legal_action_names
from skyjo_env.checks import check_actions
from skyjo_env.engine import SkyjoEngine, StepResult
from skyjo_env.observation import count_range, observe
from skyjo_env.rules import Rules
from skyjo_env.sampling import unpack_bits

OpponentPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


class AgentError(RuntimeError, ValueError):
    """A policy failed while it played: it raised an exception, ran over its time budget, or (in a
    tournament) finished no game. The message is one line that names the policy, which `agent`
    holds; a `ValueError` as well, like every other bad input to a command."""

    def __init__(self, agent: str, message: str) -> None:
        super().__init__(message)
        self.agent = agent

    def __reduce__(self) -> tuple[type[AgentError], tuple[str, str]]:
        """Pickled whole (it crosses from a worker process to the parent)."""
        return type(self), (self.agent, str(self))


def check_move_timeout(move_timeout: Any) -> None:
    """`None` (no time budget) or a positive finite number of seconds."""
    number = isinstance(move_timeout, (int, float, np.integer, np.floating)) and not isinstance(move_timeout, bool)
    if move_timeout is not None and not (number and 0 < move_timeout < float("inf")):
        raise ValueError(f"move_timeout={move_timeout!r} is not allowed; use None or a positive number of seconds")


def call_policy(
    policy: Callable[..., Any],
    *inputs: Any,
    moves: int,
    names: Sequence[str],
    role: str = "opponent policy",
    move_timeout: float | None = None,
) -> Any:
    """`policy(*inputs)`, which decides `moves` moves, made safe to call on a user's
    policy: an exception it raises becomes an [`AgentError`][] naming it (as `role` and `names`, the
    policies it plays for), and so does a call that took more than `move_timeout` seconds a move."""
    who = f"{role} {' / '.join(repr(n) for n in names)}"
    started = time.perf_counter()
    try:
        actions = policy(*inputs)
    except Exception as exc:  # any error of the user's policy
        raise AgentError(names[0], f"{who} raised {type(exc).__name__}: {' '.join(str(exc).split())}") from exc
    if move_timeout is not None:
        seconds = time.perf_counter() - started
        if seconds > move_timeout * max(moves, 1):
            raise AgentError(
                names[0],
                f"{who} took {seconds:.3g} s to decide {moves} move(s), over its time budget of "
                f"{move_timeout:g} s a move (move_timeout)",
            )
    return actions


def policy_name(policy: Any) -> str:
    """How tables and errors name a policy: its `name` attribute, else its type."""
    return str(getattr(policy, "name", type(policy).__name__))


def required_parameters(obj: Callable[..., Any]) -> list[str] | None:
    """The names of the arguments `obj` needs (positional or keyword, without defaults); `None` if unknown."""
    try:
        parameters = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):  # some builtins and C callables have no signature
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in parameters if p.kind in kinds and p.default is inspect.Parameter.empty]


def is_factory(obj: Any) -> bool:
    """A class, or a function (`functools.partial` too) that needs no argument: it makes a policy
    rather than being one. Any other callable object is a policy, whatever its signature."""
    if inspect.isclass(obj):
        return True
    function = inspect.isfunction(obj) or inspect.ismethod(obj) or isinstance(obj, functools.partial)
    return function and required_parameters(obj) == []


def call_with_accepted(factory: Callable[..., Any], **options: Any) -> Any:
    """`factory(**options)`, passing only the options its signature takes (all, if it takes `**kwargs`)."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return factory()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return factory(**options)
    return factory(**{k: v for k, v in options.items() if k in parameters})


def build(obj: Any, rules: Rules | None, seed: int | None = None) -> OpponentPolicy:
    """The policy `obj` stands for: `obj` itself, or what the factory `obj` returns when given
    `rules` and `seed` (those its signature takes; no `rules` when `None`). `ValueError` if
    the result is no policy."""
    options = {"seed": seed} if rules is None else {"rules": rules, "seed": seed}
    policy = call_with_accepted(obj, **options) if is_factory(obj) else obj
    if not callable(policy) or inspect.isclass(policy):
        raise ValueError(
            f"{policy_name(obj)!r} made {policy!r}, which is not a policy (observations, action_masks) -> actions"
        )
    return policy


def check_table(policy: Any, players: int, what: str | None = None) -> None:
    """`ValueError` if `policy` declares (attribute `player_counts`, else `players`, as
    [`MLPPolicy`][skyjo_env.agents.mlp_policy.MLPPolicy] does) that it plays other player counts than
    `players`; the message names it as `what` (default: `agent 'name'`)."""
    counts = getattr(policy, "player_counts", None)
    if counts is None and getattr(policy, "players", None) is not None:
        counts = (policy.players,)
    if counts is not None and players not in counts:
        what = what or f"agent {policy_name(policy)!r}"
        raise ValueError(f"{what} was trained for {count_range(tuple(counts))} players; this table has {players}")


def reseed(policies: Sequence[Any], seed: int) -> None:
    """Re-seed the randomness of `policies` from `seed`, so that an environment reset with the
    same seed replays the same game: a policy whose random choices come from an attribute `rng`
    holding a `numpy.random.Generator` (as the random, PPO and RLlib agents do) gets a new one,
    seeded by `seed` and its place in `policies`. Policies without one are left as they are."""
    for k, policy in enumerate(policies):
        if isinstance(getattr(policy, "rng", None), np.random.Generator):
            policy.rng = np.random.default_rng([seed, k])


def per_seat(opponents: OpponentPolicy | Sequence[OpponentPolicy], num_players: int) -> list[OpponentPolicy]:
    """One policy for each opponent seat, in clockwise order after the learner.

    `opponents` is one policy for all of them or a sequence of `num_players - 1` policies.
    """
    count = num_players - 1
    if callable(opponents):
        return [opponents] * count
    policies = list(opponents)
    if len(policies) != count or not all(callable(p) for p in policies):
        raise ValueError(
            f"opponents must be one policy for all {count} opponent seats or a sequence of {count} "
            f"callables (one per seat, clockwise after the learner), got {opponents!r}"
        )
    return policies


def act(
    policy: OpponentPolicy,
    engine: SkyjoEngine,
    games: np.ndarray,
    legal: np.ndarray | None = None,
    role: str = "opponent policy",
    move_timeout: float | None = None,
) -> np.ndarray:
    """The policy's checked actions for the seats to act in `games`.

    `legal` is the engine's own legal-action bits of `games` ([`SkyjoEngine.legal_bits()`][skyjo_env.engine.SkyjoEngine.legal_bits];
    computed when not given). The policy is handed fresh observations and masks of its own (copies
    that nothing reads after it), and its actions are checked against `legal`, never against what
    it was handed: whatever it writes into its arguments, each returned action is an integer legal
    in the engine's game, or a `ValueError` names the policy (as `role`, e.g. `"agent"` in a tournament);
    a policy that raises, or takes more than `move_timeout` seconds a move, is an [`AgentError`][]
    ([`call_policy()`][call_policy]).
    """
    bits = engine.legal_bits(games) if legal is None else legal
    if getattr(policy, "observes", True):
        observations = observe(engine, engine.current[games], games)
    else:
        observations = np.empty((len(games), 0), dtype=np.float32)
    names = [policy_name(policy)]
    actions = call_policy(
        policy, observations, unpack_bits(bits), moves=len(games), names=names, role=role, move_timeout=move_timeout
    )
    return _checked(actions, bits, engine, games, role, names)


def play_policies(
    engine: SkyjoEngine,
    games: np.ndarray,
    policies: Sequence[OpponentPolicy],
    chosen: np.ndarray,
    role: str = "opponent policy",
    move_timeout: float | None = None,
) -> StepResult:
    """One action in each of `games`, made by `policies[chosen[i]]` for game `games[i]`: every
    policy is called once, on all its games together, and the engine steps them all at once.

    Policies that share a `batch_key` (an attribute; e.g. networks that read the same advice) are
    called together, through the static method `play_together(policies, observations, masks,
    which)` of their class, which returns what each would choose alone: what they share is then
    computed once. This is the one move loop's body of the environments, the tournaments and the
    games people play; `ValueError` (naming the policy as `role`) for an illegal or malformed action,
    [`AgentError`][] for a policy that raises or runs over `move_timeout` seconds a move.
    """
    bits = engine.legal_bits(games)
    if len(policies) == 1:
        return engine.step(act(policies[0], engine, games, bits, role, move_timeout), games, check=False)
    actions = np.empty(games.size, dtype=np.int64)
    batches: dict[Any, list[int]] = {}
    for k in np.unique(chosen).tolist():
        batches.setdefault(getattr(policies[k], "batch_key", None) or ("alone", k), []).append(k)
    for members in batches.values():
        rows = np.flatnonzero(np.isin(chosen, members))
        if len(members) == 1:
            actions[rows] = act(policies[members[0]], engine, games[rows], bits[rows], role, move_timeout)
        else:
            which = np.searchsorted(members, chosen[rows])  # members are ascending
            together = [policies[k] for k in members]
            actions[rows] = _act_together(together, which, engine, games[rows], bits[rows], role, move_timeout)
    return engine.step(actions, games, check=False)


def _act_together(
    policies: list[Any],
    which: np.ndarray,
    engine: SkyjoEngine,
    games: np.ndarray,
    legal: np.ndarray,
    role: str,
    move_timeout: float | None,
) -> np.ndarray:
    """[`act()`][act] for several policies of one batch key at once (row `i` is `policies[which[i]]`'s)."""
    observations = observe(engine, engine.current[games], games)
    names = [policy_name(p) for p in policies]
    play = type(policies[0]).play_together
    actions = call_policy(
        play, policies, observations, unpack_bits(legal), which, moves=len(games), names=names, role=role,
        move_timeout=move_timeout,
    )  # fmt: skip
    return _checked(actions, legal, engine, games, role, names, which)


def _checked(
    actions: Any,
    legal: np.ndarray,
    engine: SkyjoEngine,
    games: np.ndarray,
    role: str,
    names: list[str],
    which: np.ndarray | None = None,
) -> np.ndarray:
    """`actions` checked against the engine's legal bits `legal`; the `ValueError` names the policy
    of the row at fault (`names[which[i]]`, or `names[0]` for every row without `which`) as `role`,
    and the game only where the engine holds several (a one-game view's game needs no index)."""
    n = legal.shape[0]

    def illegal(i: int, a: int) -> str:
        where = f" (row {i} of {n}, game {int(games[i])})" if engine.batch_size > 1 else ""
        return (
            f"{role} {names[0 if which is None else which[i]]!r} chose illegal action {a}{where}; "
            f"legal actions there: {legal_action_names(unpack_bits(legal[i : i + 1])[0])}"
        )

    return check_actions(
        actions,
        legal,
        malformed=lambda a: (
            f"{role} {names[0]!r} returned {a.dtype} actions of shape {a.shape}; it must return {n} integer action ids"
        ),
        illegal=illegal,
    )
