"""A compiled (writer, reader) program and the interpreter that runs it: the compiled one where
it is built, else the reference (:mod:`broker_lite.serde._native` decides, once per process).

>>> from broker_lite.serde.avro.schema import expand
>>> node = expand({"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]}, {})
>>> decoder = AvroDecoder(node, node)
>>> array, failed = decoder.decode(b"\\x02\\x04", np.array([0, 1]), np.array([1, 2]), False)
>>> array.to_pylist(), failed
([{'a': 1}, {'a': 2}], [])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .. import _native
from ..errors import PayloadError
from . import decode as reference
from .program import Program, compile_program


class AvroDecoder:
    """Payloads written with ``writer`` read as ``reader`` (both expanded schemas)."""

    def __init__(self, writer: Any, reader: Any):
        self.program: Program = compile_program(writer, reader)
        self._compiled: Any = None
        self._compiled_for: Any = None

    @property
    def arrow(self) -> pa.DataType:
        return self.program.arrow

    def _native_program(self, codec: Any) -> Any:
        if self._compiled_for is not codec:
            p = self.program
            self._compiled = codec.avro_program(p.code_bytes(), p.slot_table(),
                                                tuple(p.constants), p.root)
            self._compiled_for = codec
        return self._compiled

    def decode(self, data: Any, starts: np.ndarray, ends: np.ndarray,
               permissive: bool) -> tuple[pa.Array, list[int]]:
        """The payloads ``data[starts[i]:ends[i]]`` (a start below 0: a null) as one Arrow
        array of the reader's type, and the rows that could not be decoded (nulls, when
        ``permissive``; otherwise the first one's error is raised)."""
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        ends = np.ascontiguousarray(ends, dtype=np.int64)
        codec = _native.codec
        if codec is None:
            buffers, failed = reference.run(self.program, data, starts, ends, permissive)
        else:
            answer = codec.avro_decode(self._native_program(codec), data, starts, ends,
                                       permissive)
            if isinstance(answer, int):
                error = self.explain(bytes(memoryview(data)[starts[answer]:ends[answer]]))
                error.row = answer
                raise error
            buffers, failed = answer
        return reference.assemble(self.program, buffers), failed

    def explain(self, payload: bytes) -> PayloadError:
        return reference.explain(self.program, payload)
