"""Avro payloads into Arrow columns: the interpreter of :mod:`.program`, in Python, the
reference that ``_native/avro_decode.c`` follows.

Avro's binary encoding (the specification, "Binary Encoding"), which the program's nodes read:

* ``int`` and ``long``: a zigzag varint (``(n << 1) ^ (n >> 63)``, then 7 bits a byte, least
  significant first, the high bit set on every byte but the last); an ``int`` fits in 32 bits;
* ``float``, ``double``: 4 or 8 bytes, IEEE 754, little-endian; ``boolean``: one byte, 0 or 1;
* ``bytes``, ``string``: a ``long`` length, then the bytes (a string's UTF-8); ``fixed``: its
  size in bytes, nothing before them;
* ``enum``: the symbol's index, an ``int``; ``union``: the branch's index, a ``long``, then the
  value;
* ``record``: its fields, in the schema's order, nothing between them;
* ``array``, ``map``: blocks, each a ``long`` count of items (negative: its absolute value,
  followed by a ``long`` byte size of the block), then the items (a map's each a string key and
  a value); a count of 0 ends them.

A payload must be read to its last byte: bytes left over mean it was not written with the
writer's schema. An array or map block may not claim more items than bytes remain (a corrupt
count could otherwise ask for any amount of memory); so an array whose items take no bytes
(``array<null>``) holds at most as many items as bytes follow its count.

Each slot is built as Arrow lays it out (a validity bitmap, then values; offsets for binary and
list slots), and :func:`assemble` turns the buffers into one Arrow array, for both interpreters.
A failure is a :class:`~broker_lite.serde.errors.PayloadError` saying what was wrong and at
which byte of the payload; the compiled interpreter only reports *that* a row failed, and this
one, run on that row's payload, says why (:func:`explain`), so both paths raise the same error.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import CorruptPayloadError, IncompatibleSchemaError, PayloadError
from .program import (
    K_BINARY,
    K_BOOL,
    K_DECIMAL,
    K_FLOAT32,
    K_FLOAT64,
    K_INT32,
    K_INT64,
    K_LIST,
    K_NULL,
    K_STRUCT,
    OP_ARRAY,
    OP_BOOLEAN,
    OP_BYTES,
    OP_DECIMAL,
    OP_DEFAULT,
    OP_DOUBLE,
    OP_ENUM,
    OP_FAIL,
    OP_FIXED,
    OP_FLOAT,
    OP_INT,
    OP_LONG,
    OP_MAP,
    OP_MEMBER,
    OP_NULL,
    OP_NULL_INTO,
    OP_RECORD,
    OP_UNION,
    Program,
)

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
#: A row's start (in the starts given to :func:`run`) meaning "no payload": a null struct.
NO_PAYLOAD = -1

#: One slot's Arrow buffers: (length, null count, validity bitmap or None, values or None,
#: int32 offsets or None)
SlotBuffers = tuple[int, int, Any, Any, Any]


class _Slot:
    """A slot being built: a validity byte per value, values (fixed-width kinds: numbers;
    binary: bytes; decimal: ints) and, for lists, the end offset of each value's items."""

    __slots__ = ("children", "ends", "kind", "valid", "values")

    def __init__(self, kind: int, children: list[int]):
        self.kind = kind
        self.children = children
        self.valid = bytearray()
        self.values: list[Any] = []
        self.ends: list[int] = []

    def mark(self) -> tuple[int, int, int]:
        return len(self.valid), len(self.values), len(self.ends)

    def rewind(self, mark: tuple[int, int, int]) -> None:
        del self.valid[mark[0]:], self.values[mark[1]:], self.ends[mark[2]:]


class _Interpreter:
    """Runs a program over payloads, filling its slots."""

    def __init__(self, program: Program):
        self.program = program
        self.code = program.code
        self.slots = [_Slot(s.kind, s.children) for s in program.slots]

    # -- slots ----------------------------------------------------------------------------------

    def null_into(self, slot: int) -> None:
        s = self.slots[slot]
        s.valid.append(0)
        if s.kind == K_STRUCT:
            for child in s.children:
                self.null_into(child)
        elif s.kind == K_LIST:
            s.ends.append(len(self.slots[s.children[0]].valid))
        elif s.kind == K_BINARY:
            s.values.append(b"")
        elif s.kind != K_NULL:
            s.values.append(0)

    def put(self, slot: int, value: Any) -> None:
        if slot >= 0:
            s = self.slots[slot]
            s.valid.append(1)
            s.values.append(value)

    # -- reading --------------------------------------------------------------------------------

    def run_row(self, data: memoryview, start: int, end: int) -> None:
        """Decode one payload (``data[start:end]``) into the slots; raises the row's error."""
        self.data, self.base = data, start
        position = self.run(self.program.root, start, end)
        if position != end:
            raise CorruptPayloadError(f"{end - position} bytes left over after the value "
                                      f"(it ends at byte {position - start} of {end - start})")

    def where(self, position: int) -> str:
        return f"byte {position - self.base}"

    def varint(self, position: int, end: int, what: str) -> tuple[int, int]:
        shift = result = 0
        start = position
        while True:
            if position >= end:
                raise CorruptPayloadError(f"cut short: the {what} at {self.where(start)} "
                                          "runs past the end")
            byte = self.data[position]
            position += 1
            if shift == 63 and byte > 1:
                raise CorruptPayloadError(f"the {what} at {self.where(start)} is longer than "
                                          "a 64-bit varint")
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
            shift += 7
        return (result >> 1) ^ -(result & 1), position

    def int32(self, position: int, end: int, what: str) -> tuple[int, int]:
        value, after = self.varint(position, end, what)
        if not INT32_MIN <= value <= INT32_MAX:
            raise CorruptPayloadError(f"the {what} at {self.where(position)} does not fit in "
                                      "32 bits")
        return value, after

    def index(self, position: int, end: int, count: int, what: str, limit: str
              ) -> tuple[int, int]:
        """A union's branch (a long) or an enum's symbol (an int) index, below ``count``."""
        kind = "int" if what.startswith("enum") else "long"
        value, after = (self.int32 if kind == "int" else self.varint)(
            position, end, f"{what}{' index' if kind == 'long' else ''}")
        if not 0 <= value < count:
            raise CorruptPayloadError(f"{what} {value} at {self.where(position)}: "
                                      + limit.format(count))
        return value, after

    def take(self, position: int, end: int, size: int, what: str) -> int:
        if size < 0:
            raise CorruptPayloadError(f"the {what} at {self.where(position)} has a negative "
                                      f"length ({size})")
        if size > end - position:
            raise CorruptPayloadError(f"cut short: the {what} at {self.where(position)} needs "
                                      f"{size} bytes, {end - position} remain")
        return position + size

    def run(self, pc: int, position: int, end: int) -> int:
        code = self.code
        op = code[pc]
        if op == OP_RECORD:
            slot, n = code[pc + 1], code[pc + 2]
            if slot >= 0:
                self.slots[slot].valid.append(1)
            for i in range(n):
                position = self.run(code[pc + 3 + i], position, end)
            return position
        if op == OP_INT:
            value, position = self.int32(position, end, "int")
            self.put(code[pc + 1], self.widened(code[pc + 1], value))
            return position
        if op == OP_LONG:
            start = position
            value, position = self.varint(position, end, "long")
            scale = code[pc + 2]
            if scale != 1:
                value *= scale
                if not INT64_MIN <= value <= INT64_MAX:
                    raise CorruptPayloadError(f"the timestamp at {self.where(start)} is out of "
                                              "the range of Spark's timestamps")
            self.put(code[pc + 1], self.widened(code[pc + 1], value))
            return position
        if op == OP_BYTES:
            start = position
            size, position = self.varint(position, end, "length")
            after = self.take(position, end, size, "bytes or string")
            raw = bytes(self.data[position:after])
            if code[pc + 2]:
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise CorruptPayloadError(f"the string at {self.where(start)} is not UTF-8 "
                                              f"({exc.reason} at its byte {exc.start})") from None
            self.put(code[pc + 1], raw)
            return after
        if op == OP_UNION:
            index, position = self.index(position, end, code[pc + 1], "union branch",
                                         "the writer's union has {} branches")
            return self.run(code[pc + 2 + index], position, end)
        if op in (OP_DOUBLE, OP_FLOAT):
            size = 8 if op == OP_DOUBLE else 4
            after = self.take(position, end, size, "double" if size == 8 else "float")
            (value,) = struct.unpack_from("<d" if size == 8 else "<f", self.data, position)
            self.put(code[pc + 1], value)
            return after
        if op == OP_BOOLEAN:
            after = self.take(position, end, 1, "boolean")
            byte = self.data[position]
            if byte > 1:
                raise CorruptPayloadError(f"the boolean at {self.where(position)} is {byte}, "
                                          "not 0 or 1")
            self.put(code[pc + 1], byte)
            return after
        if op in (OP_ARRAY, OP_MAP):
            return self.blocks(pc, position, end)
        if op == OP_NULL:
            if code[pc + 1] >= 0:
                self.null_into(code[pc + 1])
            return position
        if op == OP_NULL_INTO:
            self.null_into(code[pc + 1])
            return position
        if op == OP_MEMBER:
            slot, index = code[pc + 1], code[pc + 2]
            s = self.slots[slot]
            s.valid.append(1)
            for i, child in enumerate(s.children):
                if i != index:
                    self.null_into(child)
            return self.run(code[pc + 3], position, end)
        if op == OP_ENUM:
            index, position = self.index(position, end, code[pc + 2], "enum index",
                                         "the writer's enum has {} symbols")
            symbol = code[pc + 3 + index]
            if symbol == -2:
                raise IncompatibleSchemaError(f"the writer's enum symbol number {index} is not "
                                              "among the reader's symbols, which have no default")
            if code[pc + 1] >= 0:
                self.put(code[pc + 1], self.program.constants[symbol])
            return position
        if op == OP_FIXED:
            after = self.take(position, end, code[pc + 2], "fixed")
            self.put(code[pc + 1], bytes(self.data[position:after]))
            return after
        if op == OP_DECIMAL:
            start = position
            size = code[pc + 2]
            if size < 0:
                size, position = self.varint(position, end, "length")
            after = self.take(position, end, size, "decimal")
            value = int.from_bytes(self.data[position:after], "big", signed=True)
            if abs(value) >= 10 ** code[pc + 3]:
                raise CorruptPayloadError(f"the decimal at {self.where(start)} has more than "
                                          f"{code[pc + 3]} digits")
            self.put(code[pc + 1], value)
            return after
        if op == OP_DEFAULT:
            constant = self.program.constants[code[pc + 1]]
            data, base = self.data, self.base
            self.data, self.base = memoryview(constant), 0
            try:
                self.run(code[pc + 2], 0, len(constant))
            finally:
                self.data, self.base = data, base
            return position
        if op == OP_FAIL:
            raise IncompatibleSchemaError(self.program.constants[code[pc + 1]].decode())
        raise AssertionError(f"unknown opcode {op} at {pc}")

    def widened(self, slot: int, value: int) -> Any:
        """An integer as its slot holds it (a writer's int or long in a float slot)."""
        if slot >= 0 and self.slots[slot].kind in (K_FLOAT32, K_FLOAT64):
            return float(value)
        return value

    def blocks(self, pc: int, position: int, end: int) -> int:
        code = self.code
        is_map = code[pc] == OP_MAP
        slot = code[pc + 1]
        item = code[pc + 4] if is_map else code[pc + 2]
        entries, key = (code[pc + 2], code[pc + 3]) if is_map else (-1, -1)
        while True:
            start = position
            count, position = self.varint(position, end, "block count")
            if count == 0:
                break
            if count < 0:
                count = -count
                _, position = self.varint(position, end, "block size")
            if count > end - position:
                raise CorruptPayloadError(f"the block at {self.where(start)} claims {count} "
                                          f"items, more than the {end - position} bytes left")
            for _ in range(count):
                if is_map:
                    key_start = position
                    size, position = self.varint(position, end, "length")
                    after = self.take(position, end, size, "map key")
                    raw = bytes(self.data[position:after])
                    try:
                        raw.decode("utf-8")
                    except UnicodeDecodeError:
                        raise CorruptPayloadError(f"the map key at {self.where(key_start)} is "
                                                  "not UTF-8") from None
                    position = after
                    if entries >= 0:
                        self.slots[entries].valid.append(1)
                        self.put(key, raw)
                position = self.run(item, position, end)
        if slot >= 0:
            s = self.slots[slot]
            s.valid.append(1)
            s.ends.append(len(self.slots[s.children[0]].valid))
        return position

    # -- the slots as Arrow buffers ---------------------------------------------------------------

    def buffers(self) -> list[SlotBuffers]:
        return [_slot_buffers(s) for s in self.slots]


_NUMPY = {K_BOOL: np.uint8, K_INT32: np.int32, K_INT64: np.int64, K_FLOAT32: np.float32,
          K_FLOAT64: np.float64}


def _slot_buffers(s: _Slot) -> SlotBuffers:
    n = len(s.valid)
    valid = np.frombuffer(bytes(s.valid), dtype=np.uint8)
    nulls = int(n - valid.sum())
    validity = np.packbits(valid, bitorder="little").tobytes() if nulls else None
    if s.kind in (K_NULL, K_STRUCT):
        return n, nulls, validity, None, None
    if s.kind == K_LIST:
        return n, nulls, validity, None, np.array([0, *s.ends], dtype=np.int32).tobytes()
    if s.kind == K_BINARY:
        lengths = np.fromiter(map(len, s.values), dtype=np.int64, count=n)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        if offsets[-1] > INT32_MAX:
            raise CorruptPayloadError("a column of more than 2 GiB in one batch")
        return n, nulls, validity, b"".join(s.values), offsets.astype(np.int32).tobytes()
    if s.kind == K_DECIMAL:
        return n, nulls, validity, b"".join(v.to_bytes(16, "little", signed=True)
                                            for v in s.values), None
    if s.kind == K_BOOL:
        return n, nulls, validity, np.packbits(np.array(s.values, dtype=np.uint8),
                                               bitorder="little").tobytes(), None
    return n, nulls, validity, np.array(s.values, dtype=_NUMPY[s.kind]).tobytes(), None


def run(program: Program, data: Any, starts: np.ndarray, ends: np.ndarray,
        permissive: bool) -> tuple[list[SlotBuffers], list[int]]:
    """Decode the payloads ``data[starts[i]:ends[i]]`` (a start of :data:`NO_PAYLOAD`: a null)
    into the program's slots, in Python. Failing rows are nulls and listed when
    ``permissive``; otherwise the first one's error is raised."""
    interpreter = _Interpreter(program)
    view = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
    slots = interpreter.slots
    failed = []
    for row, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        if start < 0:
            interpreter.null_into(0)
            continue
        marks = [s.mark() for s in slots] if permissive else None
        try:
            interpreter.run_row(view, start, end)
        except PayloadError as exc:
            if marks is None:
                exc.row = row
                raise
            for s, mark in zip(slots, marks, strict=True):
                s.rewind(mark)
            interpreter.null_into(0)
            failed.append(row)
    return interpreter.buffers(), failed


def explain(program: Program, payload: bytes) -> PayloadError:
    """The error decoding ``payload`` raises (the reference's word on a row that the compiled
    interpreter refused)."""
    try:
        _Interpreter(program).run_row(memoryview(payload), 0, len(payload))
    except PayloadError as exc:
        return exc
    raise AssertionError("the compiled Avro decoder refused a payload that the reference "
                         "decodes")  # a bug: the two must agree


def assemble(program: Program, buffers: Sequence[SlotBuffers]) -> pa.Array:
    """The Arrow array of slot 0 (and its children) from each slot's buffers."""

    def build(slot: int, arrow: pa.DataType) -> pa.Array:
        n, nulls, validity, values, offsets = buffers[slot]
        spec = program.slots[slot]
        bitmap = pa.py_buffer(validity) if validity is not None else None
        if spec.kind == K_NULL:
            return pa.nulls(n)
        if spec.kind == K_STRUCT:
            children = [build(child, f.type) for child, f in zip(spec.children, arrow,
                                                                 strict=True)]
            return pa.Array.from_buffers(arrow, n, [bitmap], null_count=nulls,
                                         children=children)
        if spec.kind == K_LIST:
            child_type = arrow.value_type if pa.types.is_list(arrow) else pa.struct(
                [arrow.key_field, arrow.item_field])
            child = build(spec.children[0], child_type)
            return pa.Array.from_buffers(arrow, n, [bitmap, pa.py_buffer(offsets)],
                                         null_count=nulls, children=[child])
        if spec.kind == K_BINARY:
            return pa.Array.from_buffers(arrow, n, [bitmap, pa.py_buffer(offsets),
                                                    pa.py_buffer(values)], null_count=nulls)
        return pa.Array.from_buffers(arrow, n, [bitmap, pa.py_buffer(values)],
                                     null_count=nulls)

    return build(0, program.arrow)

