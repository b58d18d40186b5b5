"""RULES.md, at the root of the repository, is the rulebook the code cites: it defines every rule and
example id once, every id cited in the code, and every ``Rules`` option with its default; the
documentation's links to it resolve to that file.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections import Counter
from pathlib import Path

from skyjo_env import Rules

ROOT = Path(__file__).resolve().parents[1]
RULES_MD = ROOT / "RULES.md"
IDS = [f"R{i}" for i in range(1, 21)] + [f"E{i}" for i in range(1, 4)]


def rules_text() -> str:
    return RULES_MD.read_text(encoding="utf-8")


def defined_ids() -> Counter:
    """Ids opening a list item: ``- R7. ...``."""
    return Counter(re.findall(r"^- ([RE]\d+)\. ", rules_text(), flags=re.M))


def test_every_rule_and_example_id_is_defined_exactly_once() -> None:
    assert defined_ids() == Counter(IDS)


def test_every_rule_id_cited_in_the_code_is_defined() -> None:
    cited: dict[str, str] = {}
    for folder in ("skyjo_env", "agents", "train", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for rule in re.findall(r"\bR\d+\b", path.read_text(encoding="utf-8")):
                cited.setdefault(rule, str(path.relative_to(ROOT)))
    assert cited, "the scan found no rule ids"
    defined = defined_ids()
    undefined = {rule: path for rule, path in cited.items() if rule not in defined}
    assert undefined == {}


def test_every_rules_option_is_documented_with_its_default() -> None:
    """The options table has one row per ``Rules`` field: `` | `name` | `default` | ``."""
    rows = re.findall(r"^\| `(\w+)` \| `([^`]+)` \|", rules_text(), flags=re.M)
    documented = {name: ast.literal_eval(default) for name, default in rows}
    expected = {f.name: f.default for f in dataclasses.fields(Rules)}
    assert documented == expected
    for name, default in documented.items():  # True == 1 in Python: compare the types too
        assert type(default) is type(expected[name]), name


def test_links_to_rules_md_resolve_to_the_file_in_the_repository() -> None:
    sources = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "notebooks").glob("*.ipynb"))]
    links = [
        (source, target)
        for source in sources
        for target in re.findall(r"\]\(([^)#\s]*RULES\.md)(?:#[^)]*)?\)", source.read_text(encoding="utf-8"))
    ]
    assert any(source.name == "README.md" for source, _ in links)
    for source, target in links:
        assert (source.parent / target).resolve() == RULES_MD, f"{source.name} links {target}"
    assert RULES_MD.is_file()
