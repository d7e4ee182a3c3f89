"""Which implementation of the record codecs runs: the compiled twin, or the pure-Python
reference.

Python is the reference (DESIGN.md, "Compiled code"): :mod:`broker_lite.records.arrow.decode`
and :mod:`broker_lite.records.arrow.encode` are what the module docs describe and what decides
every question of format and error. The C files beside this one (``module.c``, ``v2_decode.c``,
``v2_encode.c``, each citing the Python it follows) are built into the extension ``_codec`` by the
ordinary install (``pip install``, a wheel build) wherever a C compiler is present; the build is
optional, so an install without a compiler still succeeds, with the Python path only.

:data:`codec` is that extension, or None where the Python path runs: the extension was not built
(said once per process, as a warning), or ``KPY_PURE_PYTHON=1`` is set (the way to run the
reference on purpose: CI runs the codec tests again so). Callers read ``_native.codec`` at each
call, so a test can swap it.

The compiled decoder never explains a fault: on a malformed batch it returns None and the
caller runs the reference on the same bytes, which raises the error. Both paths therefore raise
the same exception with the same message for every corrupt input.
"""

import logging
import os
from types import ModuleType

#: Set to 1 (anything but empty or 0) to run the pure-Python codecs even where the compiled
#: ones are built.
PURE_PYTHON_ENV = "KPY_PURE_PYTHON"

logger = logging.getLogger(__name__)


def forced_pure_python() -> bool:
    """Whether :data:`PURE_PYTHON_ENV` asks for the pure-Python codecs."""
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def compiled() -> ModuleType | None:
    """The compiled extension, whatever :data:`PURE_PYTHON_ENV` says; None where it was not
    built."""
    try:
        from . import _codec  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _codec


def in_use(module: ModuleType | None, what: str, log: logging.Logger) -> ModuleType | None:
    """The compiled ``module`` (None where it was not built) unless :data:`PURE_PYTHON_ENV`
    forces the reference; a missing build is said once, as a warning of ``log``. ``what``
    names the codecs (``record``, ``payload``). Every package with a compiled twin decides
    with this, so one switch and one message serve them all."""
    if forced_pure_python():
        return None
    if module is None:
        log.warning("kpy's compiled %s codecs are not built (no C compiler at install?): "
                    "using the pure-Python codecs, which are slower; reinstall kpy where a C "
                    "compiler is present to build them", what)
    return module


def describe_codecs(module: ModuleType | None, what: str) -> str:
    """One line saying which of the ``what`` codecs run (``module``: the compiled ones in use,
    or None), and why."""
    if module is not None:
        return f"{what} codecs: compiled ({module.__file__})"
    if forced_pure_python():
        return f"{what} codecs: pure Python ({PURE_PYTHON_ENV} is set)"
    return f"{what} codecs: pure Python (the compiled ones were not built at install)"


#: The compiled codecs in use, or None: the pure-Python ones run.
codec: ModuleType | None = in_use(compiled(), "record", logger)


def binary_buffers(column) -> tuple:
    """A binary or string Arrow array as the compiled codecs take it: (validity or None, int32
    offsets, data, the array's offset into them)."""
    validity, offsets, data = column.buffers()
    return validity, offsets, b"" if data is None else data, column.offset


def describe() -> str:
    """One line saying which codecs run, and why."""
    return describe_codecs(codec, "record")
