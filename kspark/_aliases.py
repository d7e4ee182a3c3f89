"""Old import paths kept working: ``kspark.client`` and ``kspark.arrow`` moved into the Kafka
layer (:mod:`broker_lite.client`, :mod:`broker_lite.records.arrow`), which the broker's tools
and this connector share. :func:`alias_package` makes an old package name and every submodule
under it the very module objects of the new place, so ``from kspark.client.errors import
ConfigError`` gives the same class as ``broker_lite.client.errors`` (a second copy of a module
would give exception classes that ``except`` clauses do not match).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``<old>.<rest>`` as the already importable ``<new>.<rest>``."""

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new
        self._specs: dict[str, ModuleSpec | None] = {}

    def find_spec(self, fullname: str, path=None, target=None):
        if not fullname.startswith(self.old + "."):
            return None
        target_name = self.new + fullname[len(self.old):]
        if importlib.util.find_spec(target_name) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec) -> ModuleType:
        module = importlib.import_module(self.new + spec.name[len(self.old):])
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The module ran under its new name already; it keeps that name's spec (the import
        system has just set the alias's)."""
        for spec in self._specs.values():
            if getattr(spec, "name", None) == module.__name__:
                module.__spec__ = spec


def alias_package(old: str, new: str) -> ModuleType:
    """Make ``old`` (a package being imported) and its submodules aliases of ``new``'s."""
    if not any(isinstance(f, _AliasFinder) and f.old == old for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder(old, new))
    module = importlib.import_module(new)
    sys.modules[old] = module
    return module
