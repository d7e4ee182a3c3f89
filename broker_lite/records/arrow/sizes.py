"""The size of each row's record before any is encoded: what a producer cuts batches by.

A v2 record (see :mod:`broker_lite.records.record_batch`) is::

    length          varint   size of the rest of the record
    attributes      int8     always 0
    timestampDelta  varint   timestamp - the batch's first timestamp
    offsetDelta     varint   index of the record in the batch
    keyLength       varint   -1 for a null key
    key             bytes
    valueLength     varint   -1 for a null value
    value           bytes
    headerCount     varint
    headers         per header: keyLength varint, key, valueLength varint (-1: null), value

(varints are zigzag-encoded, 1 to 10 bytes). :func:`record_sizes` computes every field's size
for all rows with numpy. Two fields depend on which batch a row lands in, so they are bounded:
the timestamp delta by the row's distance to the smallest or largest timestamp of the input,
the offset delta by the row's index in the input. The sizes are therefore upper bounds of the
uncompressed records, exact for the common case (one timestamp per input, short inputs).

This module is the reference. Where the compiled codecs are built
(:mod:`broker_lite.records._native`, ``record_sizes`` in ``v2_encode.c``), they add up the key,
value and offset fields instead, row by row, from the same Arrow buffers; the timestamp spans
and header sizes are computed here either way.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import _native

_SEVEN_BIT_LIMITS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def zigzag(values: np.ndarray) -> np.ndarray:
    """The zigzag mapping of int64 values to uint64 (0, -1, 1, -2 -> 0, 1, 2, 3)."""
    values = np.asarray(values, dtype=np.int64)
    return ((values << 1) ^ (values >> 63)).view(np.uint64)


def zigzag_sizes(zigzagged: np.ndarray) -> np.ndarray:
    """Bytes of the varint of each zigzag-mapped value (int64, 1 to 10)."""
    return 1 + np.searchsorted(_SEVEN_BIT_LIMITS, zigzagged, side="right").astype(np.int64)


def varint_sizes(values: np.ndarray) -> np.ndarray:
    """Bytes of the zigzag varint of each int64 value.

    >>> varint_sizes(np.array([0, -1, 63, 64, -65, 2**31])).tolist()
    [1, 1, 1, 2, 2, 5]
    """
    return zigzag_sizes(zigzag(values))


def record_sizes(rows: pa.RecordBatch, default_timestamp: int) -> np.ndarray:
    """An upper bound of each row's encoded record size in bytes (int64), for rows as
    :func:`broker_lite.records.arrow.encode.arrow_to_batch` takes them (``value``, optional ``key``,
    ``headers``, ``timestamp``; rows without a timestamp get ``default_timestamp``).

    >>> record_sizes(pa.record_batch({"value": [b"abc", None]}), 0).tolist()
    [10, 7]
    """
    n = rows.num_rows
    names = rows.schema.names
    key = _as_binary(rows.column("key"), "key") if "key" in names else None
    value = _as_binary(rows.column("value"), "value")
    spans = _timestamp_spans(rows.column("timestamp") if "timestamp" in names else None,
                             default_timestamp)
    header_bytes = _header_sizes(rows.column("headers")) if "headers" in names else None
    codec = _native.codec
    if codec is not None:
        sizes = np.empty(n, dtype=np.int64)
        codec.record_sizes(sizes, None if key is None else _native.binary_buffers(key),
                           None if value is None else _native.binary_buffers(value), spans,
                           header_bytes)
        return sizes
    key_lengths, value_lengths = _lengths(key, n), _lengths(value, n)
    body = (
        1  # attributes
        + (1 if spans is None else varint_sizes(spans))
        + varint_sizes(np.arange(n, dtype=np.int64))  # offsetDelta, at most the input index
        + varint_sizes(key_lengths) + np.maximum(key_lengths, 0)
        + varint_sizes(value_lengths) + np.maximum(value_lengths, 0)
        + (1 if header_bytes is None else header_bytes)  # headerCount 0 without headers
    )
    return varint_sizes(body) + body


def lengths(column: pa.Array) -> np.ndarray:
    """Byte length per row of a binary or string column, -1 for nulls (Kafka's encoding of a
    null key or value)."""
    return pc.binary_length(column).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


# -- per field ------------------------------------------------------------------------------------


def _as_binary(column: pa.Array, name: str) -> pa.Array | None:
    """``column`` as a binary array with 32-bit offsets (the layout both encoders read); None
    for a column of nulls only (``pa.null()``)."""
    kind = column.type
    if pa.types.is_null(kind):
        return None
    if pa.types.is_binary(kind) or pa.types.is_string(kind):
        return column
    if pa.types.is_large_binary(kind) or pa.types.is_large_string(kind) or \
            pa.types.is_binary_view(kind) or pa.types.is_string_view(kind):
        return pc.cast(column, pa.binary())
    raise TypeError(f"column '{name}' must be binary or string, not {kind}")


def _lengths(column: pa.Array | None, n: int) -> np.ndarray:
    return np.full(n, -1, dtype=np.int64) if column is None else lengths(column)


def _timestamp_spans(column: pa.Array | None, default: int) -> np.ndarray | None:
    """Per row, the farthest its timestamp lies from the smallest or the largest of the input,
    which bounds its delta from the batch's first timestamp; None without a timestamp column
    (every delta 0)."""
    if column is None or len(column) == 0:
        return None
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.timestamp("ms", tz=column.type.tz)).cast(pa.int64())
    elif not pa.types.is_integer(column.type):
        raise TypeError(f"column 'timestamp' must be a timestamp or int64 ms, not {column.type}")
    ts = column.fill_null(default).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.maximum(ts - ts.min(), ts.max() - ts)


def _header_sizes(headers: pa.Array) -> np.ndarray:
    """headerCount varint plus every header's encoding, per row."""
    if not (pa.types.is_list(headers.type) and pa.types.is_struct(headers.type.value_type)):
        raise TypeError(f"column 'headers' must be a list of struct<key, value>, "
                        f"not {headers.type}")
    headers = headers.fill_null([])
    entries = headers.flatten()
    keys = _lengths(_as_binary(entries.field("key"), "headers.key"), len(entries))
    values = _lengths(_as_binary(entries.field("value"), "headers.value"), len(entries))
    entry = varint_sizes(keys) + np.maximum(keys, 0) + varint_sizes(values) + np.maximum(values, 0)
    offsets = headers.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    offsets -= offsets[0]
    cumulative = np.concatenate([[0], np.cumsum(entry)])
    per_row = cumulative[offsets[1:]] - cumulative[offsets[:-1]]
    counts = offsets[1:] - offsets[:-1]
    return varint_sizes(counts) + per_row
