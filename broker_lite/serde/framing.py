"""Confluent's wire format: the header in front of every registry-framed payload.

Confluent's serializers (Avro, Protobuf, JSON Schema) write each record's key or value as::

    magic      int8     0
    schema id  int32    big-endian: the id of the writer's schema in the registry
    indexes    varints  Protobuf only: the path to the message type in its file
    data                the record in the schema's own encoding

The Protobuf message indexes are zigzag varints: their count, then each index (the position
of the message among its file's top-level messages, then among the nested types of each level).
The common case, the file's first message, is written as the single byte 0 (count 0).
Confluent's documentation, "Wire format"; confluent-kafka-python's ``_MessageIndexes``.

:func:`frame` reads the headers of a whole Arrow column at once (numpy over the column's
offsets), never a Python object per record.

>>> import pyarrow as pa
>>> column = pa.array([b"\\x00\\x00\\x00\\x00\\x07abc", None, b"xy"], pa.binary())
>>> frames = frame(column)
>>> frames.ids.tolist(), frames.state.tolist()
([7, 0, 0], [0, 1, 2])
>>> message_indexes([1, 0])
b'\\x04\\x02\\x00'
>>> read_message_indexes(b"\\x04\\x02\\x00", 0)
([1, 0], 3)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .errors import NotFramedError

MAGIC = 0
HEADER_BYTES = 5

#: :attr:`Frames.state` of each row
FRAMED, NULL, NOT_FRAMED = 0, 1, 2


@dataclass
class Frames:
    """The headers of a column of payloads: for each row, its ``state`` (:data:`FRAMED`,
    :data:`NULL` for a null value, :data:`NOT_FRAMED` for one too short or without the magic
    byte), its schema id (0 where not framed) and where its data starts and ends in
    :attr:`data` (after the header)."""

    state: np.ndarray  # int8
    ids: np.ndarray  # int64
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    data: pa.Buffer | bytes


def column_spans(column: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, pa.Buffer | bytes]:
    """Where each value of a binary or string column lies in its data buffer: ``(starts,
    ends, null mask, data)``, as numpy arrays, without copying the values."""
    offset_type: type = np.int32
    if pa.types.is_large_binary(column.type) or pa.types.is_large_string(column.type):
        offset_type = np.int64
    elif not pa.types.is_binary(column.type):
        column = column.cast(pa.binary())
    buffers = column.buffers()
    n = len(column)
    offsets = np.frombuffer(buffers[1], dtype=offset_type, count=n + 1 + column.offset) \
        if buffers[1] is not None else np.zeros(n + 1 + column.offset, offset_type)
    offsets = offsets[column.offset:column.offset + n + 1].astype(np.int64)
    nulls = column.is_null().to_numpy(zero_copy_only=False) if column.null_count else \
        np.zeros(n, dtype=bool)
    data = buffers[2] if buffers[2] is not None else b""
    return offsets[:-1], offsets[1:], nulls, data


def frame(column: pa.Array, framed: bool = True) -> Frames:
    """The header of every payload of ``column`` (binary); with ``framed=False`` the payloads
    are bare (no header: a schema given without a registry), each of id 0."""
    starts, ends, nulls, data = column_spans(column)
    n = len(starts)
    state = np.where(nulls, NULL, FRAMED).astype(np.int8)
    ids = np.zeros(n, dtype=np.int64)
    if not framed or n == 0:
        return Frames(state, ids, starts, ends, data)
    raw = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(1, np.uint8)
    long_enough = ~nulls & (ends - starts >= HEADER_BYTES)
    at = np.where(long_enough, starts, 0)
    magic_ok = long_enough & (raw[np.minimum(at, len(raw) - 1)] == MAGIC)
    state[~nulls & ~magic_ok] = NOT_FRAMED
    good = np.flatnonzero(magic_ok)
    if len(good):
        first = starts[good]
        wide = [raw[first + i].astype(np.int64) for i in range(1, 5)]
        ids[good] = (wide[0] << 24) | (wide[1] << 16) | (wide[2] << 8) | wide[3]
    starts = np.where(magic_ok, starts + HEADER_BYTES, starts)
    return Frames(state, ids, starts, ends, data)


def header(schema_id: int) -> bytes:
    """The five bytes in front of a payload written with schema ``schema_id``."""
    return bytes([MAGIC]) + schema_id.to_bytes(4, "big")


def not_framed(length: int | None) -> NotFramedError:
    return NotFramedError(
        "not in Confluent's wire format: " + (
            f"{length} bytes, fewer than the {HEADER_BYTES} of its header"
            if length is not None and length < HEADER_BYTES else
            "the first byte is not the magic byte 0") +
        " (was it written without a schema registry? give the schema with "
        "value.avro.schema or value.protobuf.descriptor to read bare payloads)")


# -- Protobuf message indexes ----------------------------------------------------------------


def message_indexes(path: list[int]) -> bytes:
    """The message indexes of the message at ``path`` in its file, as Confluent writes them
    (``[0]`` as the single byte 0)."""
    if list(path) == [0]:
        return b"\x00"
    out = bytearray()
    for value in (len(path), *path):
        encoded = (value << 1) ^ (value >> 63)
        while True:
            byte = encoded & 0x7F
            encoded >>= 7
            out.append(byte | (0x80 if encoded else 0))
            if not encoded:
                break
    return bytes(out)


def read_message_indexes(data: bytes | memoryview, position: int,
                         end: int | None = None) -> tuple[list[int], int]:
    """The message indexes at ``position`` of ``data`` and where the message starts;
    :class:`NotFramedError` where they are cut short or absurd."""
    end = len(data) if end is None else end

    def varint(at: int) -> tuple[int, int]:
        shift = result = 0
        while True:
            if at >= end or shift > 63:
                raise NotFramedError("a Protobuf payload cut short in its message indexes")
            byte = data[at]
            result |= (byte & 0x7F) << shift
            at += 1
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1), at
            shift += 7

    count, position = varint(position)
    if count == 0:
        return [0], position
    if count < 0 or count > end - position:
        raise NotFramedError(f"a Protobuf payload with {count} message indexes")
    values = []
    for _ in range(count):
        value, position = varint(position)
        values.append(value)
    return values, position
