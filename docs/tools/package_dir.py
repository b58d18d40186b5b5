"""MkDocs hook: the package as installed, for the site (the layout: .ci/installed_layout.py).

Griffe, mkdocstrings' Python reader, finds modules by their place on disk, so in the source tree it
finds no `skyjo_env.agents` (pyproject.toml's `package-dir` maps `agents/` there). Its support
for setuptools' editable installs does not help: it takes the parent folder of every value of the
editable finder's `MAPPING` as a search path and drops the keys, so `agents/` turns up as a
top-level package `agents`. Before every build this hook mirrors the installed layout in
`TREE` with symbolic links into the checkout (`installed_layout.mirror()`); the
handler's `paths` option points there (mkdocs.yml).

The same mapping turns links to source files in included Markdown (RULES.md links
`skyjo_env/observation.py`, a path that works on the repository's web page) into links to that
module's API reference: `[text](agents/specs.py)` becomes `[text][skyjo_env.agents.specs]`, an
autorefs cross-reference. A linked module that the site does not document fails the strict build.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority

#: The mirrored tree, relative to the folder of mkdocs.yml (`build/` is git-ignored).
TREE = Path("build", "docs-packages")


def source_modules(root: Path, package_dir: dict[str, str]) -> dict[str, str]:
    """Source file (relative to `root`, `/`-separated) -> module name, for every mapped `.py` file."""
    modules = {}
    for name, folder in package_dir.items():
        for path in (root / folder).glob("*.py"):
            module = name if path.stem == "__init__" else f"{name}.{path.stem}"
            modules[path.relative_to(root).as_posix()] = module
    return modules


class SourceLinks(Extension):
    """Markdown links to source files as cross-references to their modules (see the module docstring)."""

    def __init__(self, modules: dict[str, str]) -> None:
        super().__init__()
        self.modules = modules

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        md.preprocessors.register(_SourceLinkPreprocessor(md, self.modules), "source_links", 31)  # after snippets (32)


class _SourceLinkPreprocessor(Preprocessor):
    _LINK = re.compile(r"\[([^\]\n]+)\]\((?:\.\./)*([\w/]+\.py)\)")

    def __init__(self, md: Markdown, modules: dict[str, str]) -> None:
        super().__init__(md)
        self.modules = modules

    def run(self, lines: list[str]) -> list[str]:
        def link(match: re.Match[str]) -> str:
            module = self.modules.get(match.group(2))
            return match.group(0) if module is None else f"[{match.group(1)}][{module}]"

        return [self._LINK.sub(link, line) for line in lines]


@event_priority(100)  # before any page asks mkdocstrings to load the package
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Mirror the installed layout under `TREE`; add the `SourceLinks` Markdown extension."""
    root = Path(config.config_file_path).parent
    layout = _installed_layout(root)
    layout.mirror(root, root / TREE)
    config.markdown_extensions.append(SourceLinks(source_modules(root, layout.package_dir(root))))
    return config


def _installed_layout(root: Path):  # a module loaded from its file
    """The module .ci/installed_layout.py (a script folder, not a package)."""
    spec = importlib.util.spec_from_file_location("installed_layout", root / ".ci" / "installed_layout.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
