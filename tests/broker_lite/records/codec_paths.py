"""The two implementations of the record codecs, for tests that run both.

The pure-Python codecs are the reference; the compiled twin (:mod:`broker_lite.records._native`)
must give the same results, and the same exception with the same message for every bad input.
:data:`PATHS` lists the implementations the tests run: both where the compiled one is built, the
Python one alone where it was not (no C compiler at install, which ``test_native.py`` checks is
the reason) or where ``KPY_PURE_PYTHON`` is set (CI's second run of these tests, in which every
test takes the Python path).
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from broker_lite.records import _native

COMPILED = _native.compiled()
PATHS = ("python",) if COMPILED is None or _native.forced_pure_python() else ("python", "compiled")


@contextmanager
def on_path(name: str) -> Iterator[None]:
    """Run the block with the codecs of ``name`` ("python" or "compiled")."""
    previous = _native.codec
    _native.codec = COMPILED if name == "compiled" else None
    try:
        yield
    finally:
        _native.codec = previous


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
    if isinstance(x, pa.RecordBatch | pa.Table) and isinstance(y, pa.RecordBatch | pa.Table):
        return x.schema == y.schema and x.equals(y)
    return bool(x == y)


def same_on_both_paths(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` on every path of :data:`PATHS`, fail unless they agree (results equal, or the
    same exception type and message), and return the reference's result or raise its error."""
    with on_path("python"):
        reference = outcome(fn)
    for name in PATHS[1:]:
        with on_path(name):
            other = outcome(fn)
        assert same(reference, other), f"the {name} codecs gave {other!r}, Python {reference!r}"
    if reference[0] == "error":
        with on_path("python"):
            return fn()  # raises it again, with its traceback
    return reference[1]
