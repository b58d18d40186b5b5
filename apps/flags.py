"""Configuration dataclasses: command-line flags generated from their fields (CleanRL style).

A configuration dataclass states each field once: its type, its documentation (a `Doc` in an
`Annotated` type, which the API reference renders too) and its default:

    total_timesteps: Annotated[int, Doc("Learner actions to train for.")] = 10_000_000

[`add_flags()`][add_flags] turns every field into a `--field-name` flag whose help is that text and the
default; [`given()`][given] returns the fields the command line set, so a configuration file or a
resumed run can supply the rest. A field's `metadata` may add `flags` (more names, e.g.
`("--out",)`), `type` (an argparse type for one value) and `metavar`.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any

from typing_extensions import Doc

from skyjo_env.limits import parse_float, parse_int

#: What a command line writes for a field's `None`.
NONE = "none"
_METAVARS: dict[Any, str] = {int: "N", float: "X"}


@cache
def field_docs(cls: type) -> dict[str, str]:
    """The documentation of every field of the dataclass `cls` that has one (the `Doc` of an
    `Annotated[T, Doc("...")]` annotation), whitespace collapsed."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return {
        field.name: " ".join(extra.documentation.split())
        for field in dataclasses.fields(cls)
        for extra in getattr(hints[field.name], "__metadata__", ())
        if isinstance(extra, Doc)
    }


def flag(name: str) -> str:
    """The flag of a field: `total_timesteps` -> `--total-timesteps`."""
    return "--" + name.replace("_", "-")


def default_of(field: dataclasses.Field) -> Any:
    """A field's default value (its factory's product for mutable defaults)."""
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    raise ValueError(f"field {field.name!r} has no default, so it cannot be an optional flag")


def add_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    cls: type,
    *,
    skip: tuple[str, ...] = (),
    shown: dict[str, str] | None = None,
) -> list[str]:
    """Add a flag for every field of dataclass `cls` but `skip`; returns the fields added.

    A field whose flag the parser already has is left to that flag, if it came from a field of the
    same name (another dataclass sharing the setting); any other clash raises `ValueError`.
    Flags default to `argparse.SUPPRESS`: only the flags given appear in the parsed namespace.
    `shown` may say, per field, how its help states the default (else [`show_default()`][show_default]).
    """
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    existing = _flag_fields(parser)
    added = []
    for field in dataclasses.fields(cls):
        if field.name in skip:
            continue
        names = [flag(field.name), *field.metadata.get("flags", ())]
        if names[0] in existing:
            if existing[names[0]] != field.name:
                raise ValueError(
                    f"the parser already defines {names[0]} with another meaning than {cls.__name__}.{field.name}"
                )
            continue
        default = default_of(field)
        default_text = (shown or {}).get(field.name, show_default(default))
        options = _argparse_options(field, hints[field.name])
        doc = docs.get(field.name, "")
        action = parser.add_argument(
            *names,
            dest=field.name,
            default=argparse.SUPPRESS,
            help=f"{doc} (default: {default_text})".strip(),
            **options,
        )
        action.field = field.name  # type: ignore[attr-defined]  # marks a generated flag, see _flag_fields
        added.append(field.name)
    return added


def given(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The fields of dataclass `cls` that the parsed command line set."""
    return {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}


def _flag_fields(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> dict[str, str | None]:
    """Every flag the parser has -> the field it was generated from (`None` for a hand-written one)."""
    return {
        name: getattr(action, "field", None)
        for action in parser._actions  # argparse keeps its actions there and offers no public lookup
        for name in action.option_strings
    }


def _argparse_options(field: dataclasses.Field, hint: Any) -> dict[str, Any]:
    """`type`, `nargs`, `choices`, `action` and `metavar` for a field of type `hint`."""
    options: dict[str, Any] = {}
    optional, hint = _without_none(hint)
    origin = typing.get_origin(hint)
    if hint is bool:
        options["action"] = argparse.BooleanOptionalAction
        return options
    if origin is typing.Literal:
        options["choices"] = list(typing.get_args(hint))
        one: Callable[[str], Any] = str
    elif origin is list:
        (item,) = typing.get_args(hint)
        options["nargs"] = "+"
        one = item
    elif origin is dict:
        options["nargs"] = "+"
        one = str
    else:
        one = hint
    metavar = field.metadata.get("metavar", _METAVARS.get(one, field.name.upper()))
    if "type" in field.metadata:
        one = field.metadata["type"]
    elif one in _METAVARS:
        one = _number(one)
    options["type"] = _or_none(one) if optional else one
    if "choices" not in options:
        options["metavar"] = metavar
    return options


def _without_none(hint: Any) -> tuple[bool, Any]:
    """`(True, X)` for `X | None`, else `(False, hint)`."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(rest) == 1:
            return True, rest[0]
    return False, hint


def _number(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    """argparse type for `int` or `float` (ASCII digits only) with a message that names the value."""
    read: Callable[[str], Any] = parse_int if kind is int else parse_float

    def parse(text: str) -> Any:
        try:
            return read(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = kind.__name__
    return parse


def _or_none(one: Callable[[str], Any]) -> Callable[[str], Any]:
    """argparse type: [`NONE`][] for `None`, else `one(text)`."""

    def parse(text: str) -> Any:
        return None if text == NONE else one(text)

    parse.__name__ = getattr(one, "__name__", "value")
    return parse


def show_default(default: Any) -> str:
    """A default value as a command line would write it."""
    if default is None:
        return NONE
    if isinstance(default, list):
        return " ".join(str(x) for x in default)
    if isinstance(default, dict):
        return " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in default.items()) or "none"
    if isinstance(default, float):
        return f"{default:g}"
    if isinstance(default, int) and not isinstance(default, bool):
        return f"{default:,}"
    return str(default)
