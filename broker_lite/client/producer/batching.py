"""Cutting Arrow rows into record batches that stay under a byte limit, without encoding them.

A v2 record batch is a 61-byte header followed by its records (see
:mod:`broker_lite.records.record_batch`); each record is::

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

:func:`split_rows` then cuts the rows greedily, one batch after another, each holding as many
rows as fit: Python work per batch, not per row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from broker_lite.records.record_batch import HEADER_SIZE

#: Bytes of a record batch outside its records (its header).
BATCH_OVERHEAD = HEADER_SIZE
_SEVEN_BIT_LIMITS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def varint_sizes(values: np.ndarray) -> np.ndarray:
    """Bytes of the zigzag varint of each int64 value.

    >>> varint_sizes(np.array([0, -1, 63, 64, -65, 2**31])).tolist()
    [1, 1, 1, 2, 2, 5]
    """
    values = np.asarray(values, dtype=np.int64)
    zigzag = ((values << 1) ^ (values >> 63)).view(np.uint64)
    return 1 + np.searchsorted(_SEVEN_BIT_LIMITS, zigzag, side="right").astype(np.int64)


def record_sizes(rows: pa.RecordBatch, default_timestamp: int) -> np.ndarray:
    """An upper bound of each row's encoded record size in bytes (int64), for rows as
    :func:`broker_lite.records.arrow.encode.arrow_to_batch` takes them (``value``, optional ``key``,
    ``headers``, ``timestamp``; rows without a timestamp get ``default_timestamp``).

    >>> record_sizes(pa.record_batch({"value": [b"abc", None]}), 0).tolist()
    [10, 7]
    """
    n = rows.num_rows
    names = rows.schema.names
    key = _lengths(rows.column("key"), "key") if "key" in names else \
        np.full(n, -1, dtype=np.int64)
    value = _lengths(rows.column("value"), "value")
    body = (
        1  # attributes
        + _timestamp_delta_sizes(rows.column("timestamp") if "timestamp" in names else None,
                                 n, default_timestamp)
        + varint_sizes(np.arange(n, dtype=np.int64))  # offsetDelta, at most the input index
        + varint_sizes(key) + np.maximum(key, 0)
        + varint_sizes(value) + np.maximum(value, 0)
        + _header_sizes(rows.column("headers") if "headers" in names else None, n)
    )
    return varint_sizes(body) + body


def split_rows(rows: pa.RecordBatch, sizes: np.ndarray, max_batch_bytes: int
               ) -> list[pa.RecordBatch]:
    """Cut ``rows`` into consecutive slices whose batches (header included, by ``sizes``) stay
    within ``max_batch_bytes``; a row too large on its own gets a slice of its own (the caller
    checks sizes against its limits first).

    >>> rows = pa.record_batch({"value": [b"x" * 10] * 5})
    >>> [b.num_rows for b in split_rows(rows, record_sizes(rows, 0), 61 + 2 * 17)]
    [2, 2, 1]
    """
    n = rows.num_rows
    budget = max_batch_bytes - BATCH_OVERHEAD
    ends = np.cumsum(sizes)
    batches, start, before = [], 0, 0
    while start < n:
        stop = int(np.searchsorted(ends, before + budget, side="right"))
        stop = max(stop, start + 1)
        batches.append(rows.slice(start, stop - start))
        before = int(ends[stop - 1])
        start = stop
    return batches


def as_record_batch(rows: pa.RecordBatch | pa.Table) -> pa.RecordBatch:
    """One contiguous RecordBatch for a Table (chunks combined), a RecordBatch as it is."""
    if isinstance(rows, pa.RecordBatch):
        return rows
    if isinstance(rows, pa.Table):
        return pa.RecordBatch.from_arrays([c.combine_chunks() for c in rows.columns],
                                          schema=rows.schema)
    raise TypeError(f"rows must be a pyarrow RecordBatch or Table, not {type(rows).__name__}")


# -- per field ------------------------------------------------------------------------------------


def _lengths(column: pa.Array, name: str) -> np.ndarray:
    """Byte length per row, -1 for nulls."""
    kind = column.type
    if pa.types.is_null(kind):
        return np.full(len(column), -1, dtype=np.int64)
    if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or
            pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        if not (pa.types.is_binary_view(kind) or pa.types.is_string_view(kind)):
            raise TypeError(f"column '{name}' must be binary or string, not {kind}")
        column = pc.cast(column, pa.binary())
    return pc.binary_length(column).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _timestamp_delta_sizes(column: pa.Array | None, n: int, default: int) -> np.ndarray:
    if column is None or n == 0:
        return np.ones(n, dtype=np.int64)
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.timestamp("ms", tz=column.type.tz)).cast(pa.int64())
    elif not pa.types.is_integer(column.type):
        raise TypeError(f"column 'timestamp' must be a timestamp or int64 ms, not {column.type}")
    ts = column.fill_null(default).to_numpy(zero_copy_only=False).astype(np.int64)
    # the batch's first timestamp lies between the smallest and the largest of the input
    farthest = np.maximum(ts - ts.min(), ts.max() - ts)
    return varint_sizes(farthest)


def _header_sizes(headers: pa.Array | None, n: int) -> np.ndarray:
    """headerCount varint plus every header's encoding, per row."""
    if headers is None:
        return np.ones(n, dtype=np.int64)
    if not (pa.types.is_list(headers.type) and pa.types.is_struct(headers.type.value_type)):
        raise TypeError(f"column 'headers' must be a list of struct<key, value>, "
                        f"not {headers.type}")
    headers = headers.fill_null([])
    entries = headers.flatten()
    keys = _lengths(entries.field("key"), "headers.key")
    values = _lengths(entries.field("value"), "headers.value")
    entry = varint_sizes(keys) + np.maximum(keys, 0) + varint_sizes(values) + np.maximum(values, 0)
    offsets = headers.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    offsets -= offsets[0]
    cumulative = np.concatenate([[0], np.cumsum(entry)])
    per_row = cumulative[offsets[1:]] - cumulative[offsets[:-1]]
    counts = offsets[1:] - offsets[:-1]
    return varint_sizes(counts) + per_row
