"""Griffe extension: leave out instance attributes that have no docstring of their own.

An attribute assigned only in a method (`self.pair_weight = pair_weight` in `__init__`) and
followed by no docstring is, at best, described by its class's docstring (the engine's state
table, a constructor argument); listing it again with its assignment as its "value" adds a line
per argument and nothing else. To list one, give it a docstring: a string literal right after the
assignment, or a `#:` comment above it. Module and class attributes are always listed.
"""

from __future__ import annotations

from typing import Any

import griffe


class UndocumentedInstanceAttributes(griffe.Extension):
    """Delete the undocumented instance attributes of every class of a loaded package."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Walk `pkg` and delete each class member labelled instance-only that has no docstring."""
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            for name, member in list(obj.members.items()):
                if member.is_alias:
                    continue
                if (
                    obj.is_class
                    and member.is_attribute
                    and member.docstring is None
                    and "instance-attribute" in member.labels
                    and "class-attribute" not in member.labels
                ):
                    obj.del_member(name)
                else:
                    stack.append(member)
