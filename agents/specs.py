"""Agent specs: the one way every part of skyjo-env names an agent.

Wherever an agent is named (`agents.make`, `agents.load`, `skyjo tournament --agents`,
`skyjo play --opponents`, `skyjo train --opponents`), a spec is one of:

spec                                       | agent
------------------------------------------ | -----
`counting`                                 | a registered name ([`names()`][names]: built-in, shipped PPO agents, and installed plug-ins)
`search:samples=16,base=ppo-2p`            | a registered name with options for its factory, `NAME:key=value,...` (a value reads as an integer, a number, `none`, `true`, `false` or text), named by the whole spec in tables
`runs/mine`, `runs/mine/agent.npz`         | a trained agent: a run folder or its `checkpoint/` (their `agent.npz`, whichever backend trained it), or an `.npz` policy file
`mybots.greedy:Greedy`, `bots/bot.py:make` | `module:attr` or `path/to/file.py:attr`, where `attr` is a policy, a factory that returns one (a class, or a callable without required arguments), or a plain function `(observations, masks) -> actions`
`mine=SPEC`                                | any of the above, named `mine` in tables

Factories get the game's `rules` and a `seed` where their signature takes them. A trained agent
is named after its run folder (or its file), never after a registered name: a folder that carries a
registered name is named by its path. A spec that does not exist, does not import, is no policy, or
names an agent trained for another player count raises `ValueError` with one line that names the
spec and the problem.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from skyjo_env.agents import registry
from skyjo_env.agents.mlp_policy import MLPPolicy
from skyjo_env.checks import is_integer
from skyjo_env.limits import parse_float, parse_int
from skyjo_env.opponents import build, check_table, is_factory, policy_name, required_parameters
from skyjo_env.rules import Rules

#: The file a training run leaves its agent in.
AGENT_FILE = "agent.npz"
_ALIAS = re.compile(r"^([A-Za-z0-9_.+#-]+)=(.+)$")
_MODULE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_OPTIONS = re.compile(r"^([A-Za-z0-9_.+#-]+):([A-Za-z_]\w*=[^,=]+(?:,[A-Za-z_]\w*=[^,=]+)*)$")


class FunctionPolicy:
    """A plain function `(observations, masks) -> actions` as a named policy."""

    def __init__(self, function: Callable[[np.ndarray, np.ndarray], Any], name: str) -> None:
        self.function = function
        self.name = name

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.asarray(self.function(observations, action_masks))


def make(
    spec: Any, *, players: int | None = None, rules: Rules | None = None, seed: int | None = None, **kwargs: Any
) -> Any:
    """The agent `spec` names (see the module docstring), for a table of `players` seats.

    `rules` (default `Rules(num_players=players)`, or none: each agent's own default) and `seed`
    go to factories that take them; other keyword arguments go to a registered name's factory as
    they are. `spec` may also be a policy or a factory object. `ValueError` for a spec that does
    not resolve to a policy that fits the table (the message names the spec and the problem).
    """
    if rules is not None and not isinstance(rules, Rules):
        raise ValueError(f"rules must be a skyjo_env.Rules or None, not {rules!r}")
    if players is not None and not is_integer(players):
        raise ValueError(f"players={players!r} is not allowed; use None or a number of players (2 to 8)")
    if rules is not None and players is not None and rules.num_players != players:
        raise ValueError(f"players={players} disagrees with rules.num_players={rules.num_players}")
    if rules is None and players is not None:
        rules = Rules(num_players=players)
    policy = _from_text(spec, rules, seed, kwargs) if isinstance(spec, str) else build(spec, rules, seed)
    if rules is not None:
        check_fits(policy, rules.num_players, spec)
    return policy


def load(spec: str | Path, *, players: int | None = None, rules: Rules | None = None, **kwargs: Any) -> MLPPolicy:
    """A trained PPO agent: a shipped name (`"ppo-2p"`), a run folder or an `.npz` policy file.

    Keyword arguments (`greedy`, `seed`) go to [`MLPPolicy.load()`][MLPPolicy.load].
    """
    policy = make(str(spec), players=players, rules=rules, **kwargs)
    if not isinstance(policy, MLPPolicy):
        raise ValueError(
            f"agent spec {str(spec)!r} is not a trained PPO agent (a shipped name, a run folder or an .npz file)"
        )
    return policy


def check_fits(policy: Any, players: int, spec: Any = None) -> None:
    """`ValueError` if `policy` says (attribute `player_counts`, else `players`) that it plays
    other player counts."""
    named = isinstance(spec, str) and spec != policy_name(policy)
    check_table(policy, players, f"agent {policy_name(policy)!r}" + (f" (spec {spec!r})" if named else ""))


def trained_agent_name(path: Path) -> str:
    """What a trained agent at `path` is called: its run folder's name (or its file's stem), or the
    path itself where that name is a registered agent's."""
    named = path.parent if path.name == AGENT_FILE else path
    name = named.stem if named.suffix == ".npz" else named.name
    return str(named) if name in registry.names() or not name else name


# ---------------------------------------------------------------------------- resolution
def check(spec: str) -> None:
    """`ValueError` unless `spec` can name an agent: a registered name, an existing file or
    folder, `module:attr` or `file.py:attr` (not imported yet), or `alias=SPEC` of one."""
    kind, rest = _classify(spec)
    if kind == "alias":
        check(rest)


def has_options(spec: str) -> bool:
    """`spec` is a registered name with options, `NAME:key=value,...` (or `alias=` one)."""
    alias = _ALIAS.match(spec)
    options = _OPTIONS.match(alias.group(2) if alias is not None else spec)
    return options is not None and options.group(1) in registry.names()


def _classify(spec: str) -> tuple[str, str]:
    """`(kind, rest)`: `("alias", inner spec)`, `("name", spec)`, `("options", spec)`, `("path", spec)`
    or `("import", spec)`; `ValueError` for a spec that is none of them."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a non-empty string, got {spec!r}")
    alias = _ALIAS.match(spec)
    if alias is not None:
        return "alias", alias.group(2)
    if spec in registry.names():
        return "name", spec
    options = _OPTIONS.match(spec)
    if options is not None:
        if options.group(1) not in registry.names():
            raise ValueError(
                f"unknown agent {options.group(1)!r} in {spec!r}; known agents: {', '.join(registry.names())}"
            )
        return "options", spec
    if Path(spec).expanduser().exists():
        return "path", spec
    if ":" in spec:
        return "import", spec
    raise ValueError(
        f"unknown agent {spec!r}; known agents: {', '.join(registry.names())} (with options: NAME:key=value,...; "
        "or give a trained agent's file or run folder, module:attr, or file.py:attr)"
    )


def _from_text(spec: str, rules: Rules | None, seed: int | None, kwargs: dict[str, Any]) -> Any:
    kind, rest = _classify(spec)
    if kind == "alias":
        alias = spec[: len(spec) - len(rest) - 1]
        return _renamed(_from_text(rest, rules, seed, kwargs), alias)
    if kind == "name":
        factory = registry.factory(spec)
        assert factory is not None  # _classify found the name
        return _built(factory, spec, rules, seed, kwargs)
    if kind == "options":
        name, options = _split_options(spec)
        both = sorted(set(options) & set(kwargs))
        if both:
            raise ValueError(f"agent spec {spec!r} sets option(s) {both} that are also given as keyword arguments")
        factory = registry.factory(name)
        assert factory is not None  # _classify found the name
        try:
            return _renamed(_built(factory, name, rules, seed, options | kwargs), spec)
        except ValueError as exc:
            raise ValueError(f"agent spec {spec!r}: {exc}") from None
    if kwargs:
        raise ValueError(
            f"agent spec {spec!r} takes no options ({sorted(kwargs)}); only a registered name's factory does"
        )
    if kind == "path":
        return _trained(Path(spec).expanduser(), spec, rules, seed)
    return _imported(spec, rules, seed)


def _split_options(spec: str) -> tuple[str, dict[str, Any]]:
    """`("search", {"samples": 16, "base": "ppo-2p"})` from `"search:samples=16,base=ppo-2p"`."""
    name, _, text = spec.partition(":")
    return name, {key: _option_value(value) for key, value in (item.split("=", 1) for item in text.split(","))}


def _option_value(text: str) -> Any:
    """An option's value: an integer, a number (ASCII digits), `None` for `none`, `True` / `False` for `true` /
    `false`, or the text itself."""
    words = {"none": None, "true": True, "false": False}
    if text.lower() in words:
        return words[text.lower()]
    for kind in (parse_int, parse_float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _built(factory: Any, spec: str, rules: Rules | None, seed: int | None, kwargs: dict[str, Any]) -> Any:
    """A registered name's policy; keyword options go to its factory."""
    if kwargs and not is_factory(factory):
        raise ValueError(f"agent {spec!r} takes no options ({sorted(kwargs)})")
    if kwargs:
        _check_options(factory, spec, kwargs)
    try:
        policy = build(functools.partial(factory, **kwargs) if kwargs else factory, rules, seed)
    except TypeError as exc:  # an option the factory does not take
        raise ValueError(f"agent {spec!r}: {exc}") from None
    return _named(policy, spec)


def _check_options(factory: Any, spec: str, kwargs: dict[str, Any]) -> None:
    """`ValueError` naming the options of `kwargs` that `factory`'s signature does not take,
    and those it does (a factory that takes `**kwargs`, or has no signature, is not checked)."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    accepted = [name for name, p in parameters.items() if p.kind in named and name not in ("rules", "seed")]
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        raise ValueError(f"agent {spec!r} takes no option(s) {unknown}; its options are {accepted or 'none'}")


def _trained(path: Path, spec: str, rules: Rules | None, seed: int | None) -> Any:
    """A trained agent from a run folder, a checkpoint folder or an `.npz` file."""
    name = trained_agent_name(path)
    file = path / AGENT_FILE if path.is_dir() else path
    if path.is_dir() and not file.is_file():
        raise ValueError(
            f"agent spec {spec!r} is a folder without {AGENT_FILE}: give a training run's folder, its "
            "checkpoint/ folder or an .npz policy file"
        )
    if file.suffix != ".npz":
        raise ValueError(f"agent spec {spec!r} is a file but not an .npz policy; use file.py:attr for Python code")
    return MLPPolicy.load(file, name=name, seed=seed, rules=rules)


def _imported(spec: str, rules: Rules | None, seed: int | None) -> Any:
    """`module:attr` or `file.py:attr`: a policy, a factory or a plain policy function."""
    where, _, attr = spec.rpartition(":")
    if not attr.isidentifier():
        raise ValueError(f"agent spec {spec!r}: {attr!r} after ':' is not a Python name")
    module = _import_file(where, spec) if where.endswith(".py") else _import_module(where, spec)
    if not hasattr(module, attr):
        raise ValueError(f"agent spec {spec!r}: {where} has no attribute {attr!r}")
    obj = getattr(module, attr)
    if not callable(obj):
        raise ValueError(f"agent spec {spec!r}: {attr} is a {type(obj).__name__}, not a policy or a factory")
    _check_not_a_factory_with_required_options(obj, spec, attr)
    try:
        policy = build(obj, rules, seed)
    except Exception as exc:  # the user's factory failed
        raise ValueError(f"agent spec {spec!r}: calling {attr}() failed: {type(exc).__name__}: {exc}") from None
    return _named(policy, attr)


def _check_not_a_factory_with_required_options(obj: Any, spec: str, attr: str) -> None:
    """`ValueError` for a function that requires `rules` or `seed`: a factory meant to take them, which
    as written would be called as a policy, `attr(observations, masks)`."""
    if not inspect.isfunction(obj) or is_factory(obj):
        return
    options = [n for n in required_parameters(obj) or () if n in ("rules", "seed")]
    if options:
        raise ValueError(
            f"agent spec {spec!r}: {attr}() requires {' and '.join(options)}: a factory takes its options with "
            f"defaults, def {attr}(rules=None, seed=None); a policy function takes (observations, masks)"
        )


def _named(policy: Any, name: str) -> Any:
    """`policy` as it is if it carries a `name`; a plain function (or a nameless callable) as a
    [`FunctionPolicy`][] called `name`."""
    if inspect.isfunction(policy) or inspect.ismethod(policy) or not hasattr(policy, "name"):
        return FunctionPolicy(policy, name)
    return policy


def _import_module(name: str, spec: str) -> Any:
    if not _MODULE.match(name):
        raise ValueError(f"agent spec {spec!r}: {name!r} is neither a module name nor a .py file")
    try:
        return importlib.import_module(name)
    except Exception as exc:  # any error of the user's import
        raise ValueError(f"agent spec {spec!r}: cannot import {name}: {type(exc).__name__}: {exc}") from None


def _import_file(file: str, spec: str) -> Any:
    path = Path(file).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"agent spec {spec!r}: no file {file}")
    name = f"skyjo_agent_{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"  # one module per file
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    assert module_spec is not None and module_spec.loader is not None  # a .py file always has a loader
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # any error of the user's code
        del sys.modules[name]
        raise ValueError(f"agent spec {spec!r}: running {file} failed: {type(exc).__name__}: {exc}") from None
    return module


def _renamed(policy: Any, name: str) -> Any:
    """`policy` labelled `name` (its own attribute where it can take one)."""
    try:
        policy.name = name
    except AttributeError:
        return FunctionPolicy(policy, name)
    return policy
