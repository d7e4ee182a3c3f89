"""Arrow columns to a v2 record batch, without a Python object per record.

A record is ``length, attributes, timestampDelta, offsetDelta, keyLength, key, valueLength, value,
headerCount, headers`` (see :mod:`broker_lite.records.record_batch`). The encoder computes every
integer field for all rows with numpy, lays the varints of each row out as rows of a byte matrix,
compacts them into Arrow ``binary`` arrays, and lets one C++ kernel
(``binary_join_element_wise``) interleave them with the key, value and header bytes. The data
buffer of the joined array is then exactly the batch's records section.

This module is the reference. Where the compiled twin is built (:mod:`broker_lite.records._native`,
``v2_encode.c``), it writes the records section instead, byte for byte the same, from the same
columns' Arrow buffers; headers are encoded here either way, and the batch header, compression and
CRC are :func:`broker_lite.records.assemble_batch`'s. Uncompressed, the compiled encoder leaves room
for the header before the records, and the header is written there
(:func:`broker_lite.records.record_batch.write_header`): the batch is never copied whole.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from broker_lite.common.vocabulary import now_ms
from broker_lite.records import CompressionType, TimestampType, assemble_batch
from broker_lite.records.record_batch import HEADER_SIZE, write_header

from .. import _native
from .schema import HEADER_TYPE
from .sizes import lengths as _lengths
from .sizes import zigzag, zigzag_sizes


def arrow_to_batch(
    rows: pa.RecordBatch | pa.Table,
    *,
    compression: CompressionType = CompressionType.NONE,
    compression_level: int | None = None,
    timestamp: int | None = None,
    base_offset: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
) -> bytes | bytearray:
    """Encode ``rows`` as one v2 record batch (a bytearray where the compiled encoder wrote it
    uncompressed, in place).

    ``rows`` has a ``value`` column (binary or string) and optionally ``key`` (binary or string),
    ``headers`` (``list<struct<key: string, value: binary>>``) and ``timestamp`` (a timestamp
    column, or int64 milliseconds); rows without a timestamp get ``timestamp`` (default: now).

    >>> from broker_lite.records import RecordBatch
    >>> batch = RecordBatch(arrow_to_batch(pa.table({"value": [b"a", b"b"]}), timestamp=7))
    >>> [(r.offset, r.value, r.timestamp) for r in batch]
    [(0, b'a', 7), (1, b'b', 7)]
    """
    if isinstance(rows, pa.Table):
        rows = pa.RecordBatch.from_arrays([c.combine_chunks() for c in rows.columns],
                                          schema=rows.schema)
    columns = {name: rows.column(name) for name in rows.schema.names}
    n = rows.num_rows
    if "value" not in columns:
        raise ValueError("rows to write need a 'value' column")
    value = _binary_column(columns["value"], "value")
    key = _binary_column(columns["key"], "key") if "key" in columns else pa.nulls(n, pa.binary())
    timestamps = _timestamps_ms(columns.get("timestamp"), n,
                                now_ms() if timestamp is None else timestamp)
    base_timestamp = int(timestamps[0]) if n else -1
    max_timestamp = int(timestamps.max()) if n else -1

    compression = CompressionType(compression)
    header = dict(
        record_count=n, last_offset_delta=max(n - 1, 0), base_timestamp=base_timestamp,
        max_timestamp=max_timestamp, timestamp_type=TimestampType.CREATE_TIME,
        base_offset=base_offset, producer_id=producer_id, producer_epoch=producer_epoch,
        base_sequence=base_sequence, is_transactional=is_transactional)
    codec = _native.codec
    if codec is None:
        records = _records_section(key, value, timestamps, base_timestamp,
                                   columns.get("headers"), n)
        return assemble_batch(records, compression=compression,
                              compression_level=compression_level, **header)
    headers = columns.get("headers")
    uncompressed = compression is CompressionType.NONE
    records = codec.encode_v2(
        n, _native.binary_buffers(key) if "key" in columns else None,
        _native.binary_buffers(value), timestamps, base_timestamp,
        None if headers is None else _native.binary_buffers(_header_sections(headers, n)),
        HEADER_SIZE if uncompressed else 0)
    if uncompressed:  # the records follow room for the header: the batch is finished in place
        return write_header(records, compression=compression, **header)
    return assemble_batch(records, compression=compression, compression_level=compression_level,
                          **header)


def _records_section(key: pa.Array, value: pa.Array, timestamps: np.ndarray,
                     base_timestamp: int, headers: pa.Array | None, n: int) -> memoryview:
    """The records of the batch, one after the other, as Kafka lays them out."""
    key_length = _lengths(key)
    value_length = _lengths(value)
    header_section = _header_sections(headers, n)
    fields = [
        _Varints(timestamps - base_timestamp, leading_zero=True),  # attributes, timestampDelta
        _Varints(np.arange(n, dtype=np.int64)),  # offsetDelta
        _Varints(key_length),
    ]
    value_length_varints = _Varints(value_length)
    body_length = (
        sum(f.sizes for f in fields) + np.maximum(key_length, 0) + value_length_varints.sizes
        + np.maximum(value_length, 0) + _lengths(header_section)
    )
    prefix = _compact([_Varints(body_length), *fields], n)
    records = pc.binary_join_element_wise(
        prefix, key.fill_null(b""), _compact([value_length_varints], n), value.fill_null(b""),
        header_section, b"",
    )
    return _data_of(records)


class _Varints:
    """The zigzag varints of an int64 column, a column per byte: ``columns[k]`` holds byte
    ``k`` of every row's varint (0 past its end), and row ``i`` has ``sizes[i]`` bytes. Working
    one byte column at a time keeps every numpy pass one-dimensional, which is several times
    faster than a (rows x bytes) array of uint64."""

    def __init__(self, values: np.ndarray, *, leading_zero: bool = False):
        rest = zigzag(values)
        sizes = zigzag_sizes(rest)
        width = int(sizes.max()) if len(rest) else 1
        # a fixed 0 byte in front: the record's attributes
        self.columns = [np.zeros(len(rest), dtype=np.uint8)] if leading_zero else []
        for _ in range(width):  # 7-bit groups, low first; the top bit says that more follow
            group = (rest & np.uint64(0x7F)).astype(np.uint8)
            rest = rest >> np.uint64(7)
            group |= (rest != 0).view(np.uint8) << np.uint8(7)
            self.columns.append(group)
        self.sizes = (sizes + int(leading_zero)).astype(np.int64)
        self.full = not len(sizes) or int(sizes.min()) == width  # every row uses every byte


def _compact(parts: list[_Varints], n: int) -> pa.Array:
    """One binary array whose row i is the concatenation of row i of every part."""
    matrix = np.stack([c for p in parts for c in p.columns], axis=1) if n else \
        np.zeros((0, 1), dtype=np.uint8)
    if all(p.full for p in parts):
        data = matrix.reshape(-1)
    else:  # drop the bytes past the end of each row's varints
        data = matrix[np.stack([p.sizes > k for p in parts for k in range(len(p.columns))],
                               axis=1)]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(sum(p.sizes for p in parts), out=offsets[1:])
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets),
                                                  pa.py_buffer(data)])


def _binary_column(column: pa.Array, name: str) -> pa.Array:
    if pa.types.is_binary(column.type):
        return column
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) or \
            pa.types.is_large_binary(column.type) or pa.types.is_binary_view(column.type) or \
            pa.types.is_string_view(column.type):
        return column.cast(pa.binary())
    raise TypeError(f"column '{name}' must be binary or string, not {column.type}")


def _timestamps_ms(column: pa.Array | None, n: int, default: int) -> np.ndarray:
    if column is None:
        return np.full(n, default, dtype=np.int64)
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.timestamp("ms", tz=column.type.tz)).cast(pa.int64())
    elif not pa.types.is_integer(column.type):
        raise TypeError(f"column 'timestamp' must be a timestamp or int64 ms, not {column.type}")
    return column.fill_null(default).to_numpy(zero_copy_only=False).astype(np.int64)


def _header_sections(headers: pa.Array | None, n: int) -> pa.Array:
    """Per row: headerCount varint followed by each header's encoding."""
    if headers is None:
        return _zero_counts(n)
    if not (pa.types.is_list(headers.type) and pa.types.is_struct(headers.type.value_type)):
        raise TypeError(
            f"column 'headers' must be {pa.list_(HEADER_TYPE)}, not {headers.type}"
        )
    headers = headers.fill_null([])
    entries = headers.flatten()
    header_keys = _binary_column(entries.field("key"), "headers.key")
    if header_keys.null_count:
        raise ValueError("column 'headers' has a header with a null key")
    header_values = _binary_column(entries.field("value"), "headers.value")
    m = len(entries)
    encoded = pc.binary_join_element_wise(
        _compact([_Varints(_lengths(header_keys))], m), header_keys,
        _compact([_Varints(_lengths(header_values))], m), header_values.fill_null(b""), b"",
    )
    offsets = headers.offsets
    if headers.offset:
        offsets = pc.subtract(offsets, offsets[0])
    per_row = pc.binary_join(pa.ListArray.from_arrays(offsets, encoded), b"")
    counts = pc.list_value_length(headers).to_numpy(zero_copy_only=False).astype(np.int64)
    return pc.binary_join_element_wise(_compact([_Varints(counts)], n), per_row, b"")


def _zero_counts(n: int) -> pa.Array:
    """headerCount 0 for every row: one zero byte each."""
    offsets = pa.py_buffer(np.arange(n + 1, dtype=np.int32))
    return pa.Array.from_buffers(pa.binary(), n, [None, offsets, pa.py_buffer(bytes(n))])


def _data_of(column: pa.Array) -> memoryview:
    """The contiguous bytes of all rows of a binary array."""
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[column.offset:]
    return memoryview(column.buffers()[2])[offsets[0]:offsets[len(column)]]
