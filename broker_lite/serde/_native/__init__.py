"""Which implementation of the payload codecs runs: the compiled twin, or the pure-Python
reference.

As for the record codecs (:mod:`broker_lite.records._native`, whose switch this one shares:
``KPY_PURE_PYTHON=1`` runs the Python codecs of both), Python is the reference:
:mod:`broker_lite.serde.avro.decode` is what the module docs describe and what decides every
question of format and error. ``avro_decode.c`` beside this file follows it and is built into
the extension ``_serde`` by the ordinary install wherever a C compiler is present; the build
is optional, so an install without a compiler still succeeds, with the Python path only.

:data:`codec` is that extension, or None where the Python path runs: the extension was not built
(said once per process, as a warning), or ``KPY_PURE_PYTHON`` is set. Callers read
``_native.codec`` at each call, so a test can swap it.

The compiled decoder never explains a fault: it names the row that failed, and the reference,
run on that row's payload, raises the error. Both paths therefore raise the same exception
with the same message for every corrupt input.
"""

import logging
from types import ModuleType

from broker_lite.records._native import describe_codecs, in_use

logger = logging.getLogger(__name__)


def compiled() -> ModuleType | None:
    """The compiled extension, whatever ``KPY_PURE_PYTHON`` says; None where it was not
    built."""
    try:
        from . import _serde  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _serde


#: The compiled codecs in use, or None: the pure-Python ones run.
codec: ModuleType | None = in_use(compiled(), "payload", logger)


def describe() -> str:
    """One line saying which codecs run, and why."""
    return describe_codecs(codec, "payload")
