"""The two implementations of a codec with a compiled twin, for tests that run both.

The pure-Python codecs are the reference; the compiled twin (a ``_native`` package:
:mod:`broker_lite.records._native`, :mod:`broker_lite.serde._native`) must give the same results,
and the same exception with the same message for every bad input. :attr:`CodecPaths.paths`
lists the implementations the tests run: both where the compiled one is built, the Python one
alone where it was not (no C compiler at install, which each package's ``test_native.py``
checks is the reason) or where ``KPY_PURE_PYTHON`` is set (CI's second run of these tests, in
which every test takes the Python path).
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pyarrow as pa

from broker_lite.records._native import forced_pure_python


class CodecPaths:
    """The paths of the codecs whose switch is ``native`` (its ``codec`` and ``compiled()``)."""

    def __init__(self, native: ModuleType):
        self.native = native
        self.compiled = native.compiled()
        self.paths = ("python",) if self.compiled is None or forced_pure_python() \
            else ("python", "compiled")

    @contextmanager
    def on_path(self, name: str) -> Iterator[None]:
        """Run the block with the codecs of ``name`` ("python" or "compiled")."""
        previous = self.native.codec
        self.native.codec = self.compiled if name == "compiled" else None
        try:
            yield
        finally:
            self.native.codec = previous

    def same_on_both_paths(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on every path, fail unless they agree (results equal, or the same
        exception type and message), and return the reference's result or raise its error."""
        with self.on_path("python"):
            reference = outcome(fn)
        for name in self.paths[1:]:
            with self.on_path(name):
                other = outcome(fn)
            assert same(reference, other), \
                f"the {name} codecs gave {other!r}, Python {reference!r}"
        if reference[0] == "error":
            with self.on_path("python"):
                return fn()  # raises it again, with its traceback
        return reference[1]


def outcome(fn: Callable[[], Any]) -> tuple:
    """What ``fn()`` gave: ("ok", its result) or ("error", exception type, message)."""
    try:
        return "ok", fn()
    except Exception as exc:
        return "error", type(exc), str(exc)


def same(a: tuple, b: tuple) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return a == b
    x, y = a[1], b[1]
    if isinstance(x, pa.RecordBatch | pa.Table | pa.Array) and \
            isinstance(y, pa.RecordBatch | pa.Table | pa.Array):
        return x.type == y.type and x.equals(y) if isinstance(x, pa.Array) else \
            x.schema == y.schema and x.equals(y)
    return bool(x == y)
