"""MkDocs hook: pipes escaped in code spans of table rows, as GitHub needs them, shown as pipes.

On GitHub a `|` inside a code span of a table cell must be written `\\|` (docs/distributed.md
writes `--reward score\\|result`). Python-Markdown's tables already keep pipes inside code spans
in their cell and would print the backslash, so in table rows this hook drops it again.
"""

from __future__ import annotations

import re
from typing import Any

_TABLE_ROW = re.compile(r"^\|.*$", flags=re.M)
_CODE = re.compile(r"`[^`\n]*`")


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """The page's Markdown with `\\|` inside code spans of table rows written `|`."""
    return _TABLE_ROW.sub(lambda row: _CODE.sub(lambda code: code.group(0).replace("\\|", "|"), row.group(0)), markdown)
