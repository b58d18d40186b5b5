"""The package as installed, mirrored from the source tree with symbolic links.

pyproject.toml maps five folders onto one import namespace (``[tool.setuptools.package-dir]``:
``skyjo_env/`` is ``skyjo_env``, ``agents/`` is ``skyjo_env.agents``, ``evaluation/`` is
``skyjo_env.evaluation``, ``train/`` is ``skyjo_env.train``, ``apps/`` is ``skyjo_env.apps``).
Tools that find modules by their place on disk (mypy, griffe) find no ``skyjo_env.agents`` in the
source tree. This module mirrors the installed layout in a folder: ``skyjo_env/`` holds a link to
each entry of the source ``skyjo_env/`` plus the links ``agents -> agents/``, ``evaluation ->
evaluation/``, ``train -> train/`` and ``apps -> apps/``, read from pyproject.toml, so a folder
added there needs no change here; nothing is installed or copied, and edits show at once.

    python .ci/installed_layout.py build/packages      # then e.g. mypy build/packages/skyjo_env

The docs build (docs/tools/package_dir.py) and .ci/typecheck use it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import tomllib


def package_dir(root: Path) -> dict[str, str]:
    """The ``[tool.setuptools.package-dir]`` mapping of the project at ``root``."""
    with open(root / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["tool"]["setuptools"]["package-dir"]


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


def mirror(root: Path, tree: Path) -> Path:
    """Mirror the installed layout of the project at ``root`` in ``tree``; returns ``tree``."""
    sync_tree(tree, planned_links(root, package_dir(root)))
    return tree


if __name__ == "__main__":
    here = Path(__file__).resolve().parents[1]
    print(mirror(here, here / (sys.argv[1] if len(sys.argv) > 1 else "build/packages")))
