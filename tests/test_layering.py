"""The package's layers, core <- agents <- evaluation <- training <- applications: no module imports
from a layer above its own, the core (the engine and the views over it) imports none of the others,
and the engine itself imports numpy alone (architecture principle 1)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = sorted((ROOT / "skyjo_env").glob("*.py"))
#: The layers above the core, by their installed names: skyjo_env.agents, .evaluation, .train, .apps.
ABOVE_CORE = ("agents", "evaluation", "train", "apps")
STDLIB = set(sys.stdlib_module_names)


def imported_modules(path: Path) -> set[str]:
    """Every module an ``import`` or ``from ... import`` statement of the file names (anywhere in it);
    ``from a import b`` names ``a`` and ``a.b`` (b may be a submodule)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_the_core_imports_neither_agents_nor_training(path: Path) -> None:
    layers = {f"skyjo_env.{name}" for name in ABOVE_CORE}
    above = {m for m in imported_modules(path) if ".".join(m.split(".")[:2]) in layers}
    assert not above, (
        f"{path.name} imports {sorted(above)}: the core sits below the agents, evaluation, training and applications"
    )


def test_the_engine_imports_numpy_and_the_core_alone() -> None:
    outside = {
        m for m in imported_modules(ROOT / "skyjo_env" / "engine.py")
        if m.split(".")[0] not in STDLIB | {"numpy", "skyjo_env"}
    }  # fmt: skip
    assert not outside, f"the engine imports {sorted(outside)}"


def test_the_environments_work_when_a_users_own_agents_package_shadows_nothing(tmp_path: Path) -> None:
    # A user's project with its own top-level ``agents``, ``evaluation``, ``train`` and ``apps`` packages
    # (common in RL code).
    for name in ABOVE_CORE:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise ImportError('the user package was imported')\n")
    code = (
        "import gymnasium, pettingzoo, skyjo_env\n"
        "env = gymnasium.make('skyjo_env/Skyjo-v0'); env.reset(seed=0)\n"
        "vec = gymnasium.make_vec('skyjo_env/Skyjo-v0', num_envs=4); vec.reset(seed=0)\n"
        "aec = pettingzoo.make('aec', 'skyjo_env/skyjo_v0'); aec.reset(seed=0)\n"
        "from skyjo_env import agents; agents.make('counting')\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True)


def test_the_core_has_no_import_cycle() -> None:
    """No core module imports, directly or through others, a module that imports it back."""
    modules = {p.stem for p in CORE if p.stem != "__init__"}
    graph = {
        name: {m.split(".")[1] for m in imported_modules(ROOT / "skyjo_env" / f"{name}.py") if m.count(".") == 1 and m.split(".")[1] in modules} - {name}
        for name in modules
    }  # fmt: skip

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph[start])

    cycles = sorted(name for name in modules if reaches(name, name, {name}))
    assert not cycles, f"modules on an import cycle: {cycles}"


#: Every module of the installed package, by its installed name, and the file it is read from:
#: the core (skyjo_env/), the agents (agents/, skyjo_env.agents), evaluation (evaluation/,
#: skyjo_env.evaluation), training (train/, skyjo_env.train) and the applications (apps/,
#: skyjo_env.apps), in that order of layers.
PACKAGES = {
    "skyjo_env": ROOT / "skyjo_env",
    "skyjo_env.agents": ROOT / "agents",
    "skyjo_env.evaluation": ROOT / "evaluation",
    "skyjo_env.train": ROOT / "train",
    "skyjo_env.apps": ROOT / "apps",
}
LAYERS = list(PACKAGES)
MODULES = {
    (package if path.stem == "__init__" else f"{package}.{path.stem}"): path
    for package, folder in PACKAGES.items()
    for path in sorted(folder.glob("*.py"))
}


def package_imports(name: str) -> set[str]:
    """The package modules that module ``name`` imports, function-level imports included
    (``from a import b`` counts as ``a.b`` where that is a module, else as ``a``)."""
    found = set()
    for module in imported_modules(MODULES[name]):
        parent = module.rpartition(".")[0]
        if module in MODULES:
            found.add(module)
        elif parent in MODULES and module not in MODULES:
            found.add(parent)
    return found - {name}


def layer(name: str) -> int:
    """0 for the core, 1 for the agents, 2 for evaluation, 3 for training, 4 for the applications."""
    return max(i for i, package in enumerate(LAYERS) if name == package or name.startswith(package + "."))


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    """core <- agents <- evaluation <- training <- applications: a module imports (function-level
    imports included) from its own layer and those below only."""
    up = sorted(
        f"{name} -> {other}" for name in MODULES for other in package_imports(name) if layer(other) > layer(name)
    )
    assert not up, f"imports from a layer above: {up}"


def test_the_whole_package_has_no_import_cycle() -> None:
    """No module of the package (function-level imports included) imports, directly or through
    others, a module that imports it back; a package's own ``__init__`` re-exporting its modules
    is not counted (importing ``skyjo_env.x`` runs it first, so it cannot close a cycle)."""
    graph = {name: {m for m in package_imports(name) if m not in PACKAGES} for name in MODULES if name not in PACKAGES}

    def cycle_from(start: str) -> list[str] | None:
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    return [*path, start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
        return None

    cycles = [cycle for name in sorted(graph) if (cycle := cycle_from(name))]
    assert not cycles, f"import cycles: {cycles[:3]}"
