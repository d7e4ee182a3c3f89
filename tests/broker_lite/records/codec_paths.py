"""The two implementations of the record codecs, for tests that run both (see
``tests/codec_paths.py``): :data:`PATHS`, :func:`on_path`, :func:`same_on_both_paths`."""

from codec_paths import CodecPaths, outcome, same

from broker_lite.records import _native

_PATHS = CodecPaths(_native)
COMPILED = _PATHS.compiled
PATHS = _PATHS.paths
on_path = _PATHS.on_path
same_on_both_paths = _PATHS.same_on_both_paths

__all__ = ["COMPILED", "PATHS", "on_path", "outcome", "same", "same_on_both_paths"]
