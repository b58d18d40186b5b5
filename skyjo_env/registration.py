"""Registers the environments with Gymnasium and PettingZoo without importing either.

``import skyjo_env`` stays as light as the engine (numpy only), yet
``gymnasium.make("skyjo_env/Skyjo-v0")``, ``gymnasium.make_vec("skyjo_env/Skyjo-v0", num_envs=N)``
and ``pettingzoo.make("aec", "skyjo_env/skyjo_v0")`` work whatever the import order: a registry that is already imported gets the entries at once;
otherwise a one-shot import hook adds them right after that package has finished importing.
Entry points are strings, so the environment modules load only when an environment is made.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Callable
from types import ModuleType

GYMNASIUM_ID = "skyjo_env/Skyjo-v0"
PETTINGZOO_ID = "skyjo_env/skyjo_v0"


def _register_gymnasium(gymnasium: ModuleType) -> None:
    gymnasium.register(
        id=GYMNASIUM_ID,
        entry_point="skyjo_env.gym_env:SkyjoEnv",
        vector_entry_point="skyjo_env.gym_vector_env:SkyjoVectorEnv",  # make_vec: one engine of N games
    )


def _register_pettingzoo(pettingzoo: ModuleType) -> None:
    if hasattr(pettingzoo, "register"):  # PettingZoo's registry is new in 1.27
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="skyjo_env.aec_env:env")


_REGISTRARS: dict[str, Callable[[ModuleType], None]] = {
    "gymnasium": _register_gymnasium,
    "pettingzoo": _register_pettingzoo,
}


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the loader of a pending registry package to register after it runs."""

    def __init__(self, pending: dict[str, Callable[[ModuleType], None]]) -> None:
        self.pending = pending

    def find_spec(self, name, path, target=None):  # noqa: ANN001, ANN201 (importlib protocol)
        registrar = self.pending.pop(name, None)
        if registrar is None:
            return None
        if not self.pending:
            sys.meta_path.remove(self)
        spec = None
        for finder in sys.meta_path:  # the finders that would have found it without this hook
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            registrar(module)

        spec.loader.exec_module = exec_module
        return spec


def register_all() -> None:
    """Register now with each imported registry; hook the import of the others."""
    pending = {}
    for name, registrar in _REGISTRARS.items():
        if name in sys.modules:
            registrar(sys.modules[name])
        else:
            pending[name] = registrar
    if pending:
        sys.meta_path.insert(0, _RegisterAfterImport(pending))
