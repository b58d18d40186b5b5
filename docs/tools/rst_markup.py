"""Griffe extension: the reStructuredText markup of skyjo-env's docstrings, as the Markdown mkdocstrings renders.

The docstrings are written in Google style with Sphinx markup, most of which Markdown already
reads (````literal````, ``*emphasis*``, bullet lists, ``Args:`` sections). Three constructs it
does not read are rewritten in every docstring once the package is loaded:

* Cross-reference roles, ``:class:`~skyjo_env.rules.Rules``` (likewise ``:func:``, ``:meth:``,
  ``:mod:``, ``:data:``, ``:attr:``): a name that resolves, from the docstring's own scope as in
  Sphinx, to an object of the loaded package becomes an autorefs link (``[`Rules`][skyjo_env.rules.Rules]``);
  a name outside the package (numpy, gymnasium, stable-baselines3), or a bare name that a class
  may inherit from a base outside it, becomes plain code. A name that resolves to nothing else is
  still written as a link, so ``mkdocs build --strict`` fails on it. As in
  Sphinx, ``~`` shows the last component only and functions and methods get ``()``.
* Simple tables (columns framed by ``=====  =====`` rules; a row whose first cell is empty
  continues the row above) become Markdown tables.
* A paragraph ending in ``::`` (a literal block follows) ends in ``:``; the indented block is a
  Markdown code block as it stands.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import griffe

#: A link target for a name, or ``None`` where the name is to be shown as plain code.
Resolver = Callable[[str], "str | None"]

_ROLE = re.compile(r":(class|func|meth|mod|data|attr|obj|exc):`(~?)([\w.]+)`")
_RULE = re.compile(r"^( *)(=+)( +=+)+ *$")
_LITERAL_BLOCK = re.compile(r"^(.*?)( ?)::$", flags=re.M)
_CALLABLE_ROLES = {"func", "meth"}


class RstMarkup(griffe.Extension):
    """Rewrite the docstrings of a loaded package (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite every docstring of ``pkg`` and of its members, aliases excepted."""
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            if obj.docstring is not None:
                obj.docstring.value = to_markdown(obj.docstring.value, functools.partial(_resolve, obj, loader=loader))
            stack.extend(member for member in obj.members.values() if not member.is_alias)


def to_markdown(text: str, resolve: Resolver) -> str:
    """``text`` with simple tables, ``::`` and roles rewritten; ``resolve`` gives each role's link target."""
    text = _tables(text)
    text = _LITERAL_BLOCK.sub(_literal_block, text)
    return _ROLE.sub(lambda m: _role(m, resolve), text)


def _literal_block(match: re.Match[str]) -> str:
    """As reST reads it: ``text::`` is ``text:``, and ``text ::`` or a lone ``::`` leave no colon."""
    before, space = match.groups()
    return before if space or not before.strip() else before + ":"


def _role(match: re.Match[str], resolve: Resolver) -> str:
    role, short, name = match.groups()
    title = name.rpartition(".")[2] if short else name
    if role in _CALLABLE_ROLES:
        title += "()"
    target = resolve(name)
    if target is None:
        return f"`{title}`"
    return f"[`{title}`][{target}]"


def _resolve(obj: griffe.Object, name: str, loader: griffe.GriffeLoader) -> str | None:
    """The path ``name`` stands for in ``obj``'s scope; ``None`` for an object outside the loaded packages."""
    first, _, rest = name.partition(".")
    candidates = [name]
    try:
        scoped = obj.resolve(first)
    except griffe.NameResolutionError:
        pass
    else:
        candidates.insert(0, f"{scoped}.{rest}" if rest else scoped)
    for candidate in candidates:
        try:
            found = loader.modules_collection[candidate]
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        return found.final_target.path if found.is_alias else found.path
    top = candidates[0].partition(".")[0]
    if top not in loader.modules_collection.members and ("." in candidates[0] or top != first):
        return None  # another package's object (numpy.random.Generator, stable_baselines3...)
    if "." not in name and _has_outside_base(obj, loader):
        return None  # may be inherited from a class of another package (VecEnv.seed)
    return candidates[0]  # unresolved: the link fails the strict build


def _has_outside_base(obj: griffe.Object, loader: griffe.GriffeLoader) -> bool:
    """Whether ``obj`` or an enclosing class derives from a class outside the loaded packages."""
    scope: griffe.Object | None = obj
    while scope is not None:
        if scope.is_class:
            for base in scope.bases:  # ty: ignore[unresolved-attribute]
                path = getattr(base, "canonical_path", str(base))
                if path.partition(".")[0] not in loader.modules_collection.members:
                    return True
        scope = scope.parent
    return False


def _tables(text: str) -> str:
    """Every simple table of ``text`` (a run of non-blank lines opened and closed by the same rule) as Markdown."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        end = i
        while end < len(lines) and lines[end].strip():
            end += 1
        block = lines[i:end]
        if len(block) >= 3 and _RULE.match(block[0]) and block[-1] == block[0]:
            out.extend(_markdown_table(block))
            i = end
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def _markdown_table(block: list[str]) -> list[str]:
    """A simple table's lines, from its opening to its closing rule, as Markdown table lines."""
    rule = block[0]
    indent = len(rule) - len(rule.lstrip())
    starts = [m.start() for m in re.finditer(r"=+", rule)]
    rows: list[list[str]] = []
    header_rows = 0
    for line in block[1:-1]:
        if line == rule:
            header_rows = len(rows)
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None])]
        if rows and not cells[0]:
            rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    header, body = (rows[:header_rows], rows[header_rows:]) if header_rows else ([[""] * len(starts)], rows)
    pad = " " * indent
    table = [pad + "| " + " | ".join(" ".join(column).strip() for column in zip(*header)) + " |"]
    table.append(pad + "|" + "|".join("---" for _ in starts) + "|")
    table.extend(pad + "| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in body)
    return [*table]
