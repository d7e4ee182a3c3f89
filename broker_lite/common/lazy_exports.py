"""Packages that import a module when one of its names is first asked for (PEP 562).

A package lists its public names by the module that defines them; ``from package import name``
(or ``package.name``) then imports that module and no other, so a process that uses one corner
of a package does not load the rest: a Spark driver planning offsets needs the client's
metadata and offset lookups, not the record codecs, the producer or the SASL mechanisms.

>>> import types, sys
>>> sys.modules["lazy_demo"] = demo = types.ModuleType("lazy_demo")
>>> demo.__getattr__, demo.__dir__ = lazy_exports("lazy_demo", {"json": ("dumps",)})
>>> from lazy_demo import dumps
>>> dumps([1]), "dumps" in dir(demo), "dumps" in vars(demo)
('[1]', True, True)
>>> demo.loads
Traceback (most recent call last):
...
AttributeError: module 'lazy_demo' has no attribute 'loads'
>>> del sys.modules["lazy_demo"]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(package: str, modules: Mapping[str, Iterable[str]]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package named ``package``, which gives the
    names of ``modules`` (module -> the public names it defines; ``.name`` is a module of the
    package): a name's module is imported when the name is first asked for, and the name is
    kept in the package, so later lookups do not come here. In the package's ``__init__``::

        __getattr__, __dir__ = lazy_exports(__name__, {".codec": ("decode", "encode")})
    """
    exports = {name: module for module, names in modules.items() for name in names}
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        absolute = package + module if module.startswith(".") else module
        __import__(absolute)  # as an import statement does, so -X importtime lists it
        value = getattr(sys.modules[absolute], name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
