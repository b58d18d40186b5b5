"""MkDocs hook: the package as installed, from pyproject.toml's ``package-dir``, for the site.

pyproject.toml maps three folders onto one import namespace (``[tool.setuptools.package-dir]``:
``skyjo_env/`` is ``skyjo_env``, ``agents/`` is ``skyjo_env.agents``, ``train/`` is
``skyjo_env.train``). Griffe, mkdocstrings' Python reader, finds modules by their place on disk, so
in the source tree it finds no ``skyjo_env.agents``. (Its support for setuptools' editable installs
does not help: it takes the parent folder of every value of the editable finder's ``MAPPING`` as a
search path and drops the keys, so ``agents/`` turns up as a top-level package ``agents``.)

Before every build this hook mirrors the installed layout in :data:`TREE` with symbolic links into
the checkout: ``skyjo_env/`` holds a link to each entry of the source ``skyjo_env/`` plus the links
``agents -> agents/`` and ``train -> train/``. The handler's ``paths`` option points there
(mkdocs.yml). The mapping is read from pyproject.toml, so a folder added there needs no change
here; nothing is installed or copied, and ``mkdocs serve`` shows edited source at once.

The same mapping turns links to source files in included Markdown (RULES.md links
``skyjo_env/observation.py``, a path that works on the repository's web page) into links to that
module's API reference: ``[text](agents/specs.py)`` becomes ``[text][skyjo_env.agents.specs]``, an
autorefs cross-reference. A linked module that the site does not document fails the strict build.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import tomllib
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority

#: The mirrored tree, relative to the folder of mkdocs.yml (``build/`` is git-ignored).
TREE = Path("build", "docs-packages")


def planned_links(root: Path, package_dir: dict[str, str]) -> dict[Path, Path]:
    """Link (relative to the tree) -> target, for every entry of the installed layout.

    A package with no mapped subpackage is one link to its folder. A package with mapped
    subpackages becomes a real folder holding a link to each of its folder's entries and the
    subpackages' links. Every mapped subpackage's parent package must be mapped too.
    """
    for name in package_dir:
        parent = name.rpartition(".")[0]
        if parent and parent not in package_dir:
            raise ValueError(f"package-dir maps {name!r} but not its parent package {parent!r}")
    links: dict[Path, Path] = {}
    for name, folder in package_dir.items():
        parts = name.split(".")
        children = {other.rpartition(".")[2] for other in package_dir if other.rpartition(".")[0] == name}
        source = (root / folder).resolve()
        if not children:
            links[Path(*parts)] = source
            continue
        for entry in source.iterdir():
            if entry.name not in children and entry.name != "__pycache__":
                links[Path(*parts, entry.name)] = entry
    return links


def sync_tree(tree: Path, links: dict[Path, Path]) -> None:
    """Make ``tree`` hold exactly ``links``, changing only what differs (an unchanged tree is left alone)."""
    for link, target in links.items():
        path = tree / link
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() and Path(os.readlink(path)) == target:
            continue
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        path.symlink_to(target, target_is_directory=target.is_dir())
    wanted = {tree / link for link in links}
    folders = {parent for path in wanted for parent in path.parents if tree in parent.parents}
    for folder, dirnames, filenames in os.walk(tree, topdown=False):  # symlinked folders are not entered
        for name in dirnames + filenames:
            path = Path(folder, name)
            if path in wanted or path in folders:
                continue
            if path.is_symlink() or path.is_file():
                path.unlink()
            else:
                path.rmdir()


def source_modules(root: Path, package_dir: dict[str, str]) -> dict[str, str]:
    """Source file (relative to ``root``, ``/``-separated) -> module name, for every mapped ``.py`` file."""
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
    """Mirror the installed layout under :data:`TREE`; add the :class:`SourceLinks` Markdown extension."""
    root = Path(config.config_file_path).parent
    with open(root / "pyproject.toml", "rb") as file:
        package_dir = tomllib.load(file)["tool"]["setuptools"]["package-dir"]
    sync_tree(root / TREE, planned_links(root, package_dir))
    config.markdown_extensions.append(SourceLinks(source_modules(root, package_dir)))
    return config
