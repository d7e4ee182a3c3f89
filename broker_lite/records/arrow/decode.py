"""Record batches to Arrow columns, without a Python object per record.

v2 records are a chain of varint-prefixed byte strings, so finding where each record starts is
inherently sequential; everything else is not. Decoding is therefore split in two:

1. **Where** (:mod:`.fields`): walk the length prefixes through the records sections of all
   batches, then find every record's fields at once, with numpy.
2. **Columns**: offsets and timestamps from the batch headers plus the deltas; keys, values and
   header entries described as Arrow ``binary_view`` arrays whose views point straight into the
   record bytes, which one C++ cast turns into the ``binary``/``string`` columns of Spark's
   Kafka schema.

Uncompressed batches are decoded where they lie, in the buffer they were read from (a Fetch
response): nothing is copied before the cast. Compressed ones are decompressed first, and their
sections joined here; the compiled decoder reads each section where it was decompressed.

Batches of the legacy formats (magic 0 and 1) take the record-by-record path of
:mod:`broker_lite.records`; they only appear in topics written by pre-0.11 clients.

This module is the reference. Where the compiled twin is built
(:mod:`broker_lite.records._native`, ``v2_decode.c``), it takes the records sections instead
and writes the same columns' Arrow buffers in one walk over the records; on a malformed record
it hands the bytes back here, so the errors are always this module's.
"""

from collections.abc import Iterable
from typing import Literal, overload

import numpy as np
import pyarrow as pa
from numpy.lib.stride_tricks import sliding_window_view

from broker_lite.records import (
    CorruptRecordError,
    InvalidTimestampError,
    LegacyRecordBatch,
    Record,
    RecordBatch,
    TimestampType,
)

from .. import _native
from .fields import (
    Regions,
    Run,
    check_sections_filled,
    record_fields,
    record_starts,
    varints,
    walk,
)
from .repeated import partition_column, topic_column
from .schema import HEADER_TYPE, HEADERS_TYPE, TIMESTAMP_TYPE, record_schema

_INLINE_MAX = 12  # binary_view stores values of up to 12 bytes inside the view itself
_INLINE_RANGE = np.arange(_INLINE_MAX)
_MAX_TIMESTAMP_MS = (2**63 - 1) // 1000
_MAX_BINARY_BYTES = 2**31 - 1  # what the 32-bit offsets of Arrow's binary type reach
_MIN_HEADER_BYTES = 2  # header key length and value length varints, one byte each at least


def batches_to_arrow(
    batches: Iterable[RecordBatch | LegacyRecordBatch],
    *,
    topic: str,
    partition: int,
    start_offset: int | None = None,
    end_offset: int | None = None,
    include_headers: bool = False,
) -> pa.RecordBatch:
    """Decode the data records of ``batches`` into one Arrow batch of Spark's Kafka schema.

    Control batches are skipped; only records with ``start_offset <= offset < end_offset`` are kept.

    >>> from broker_lite.records import RecordBatch, build_batch
    >>> batch = RecordBatch(build_batch([(b"k", b"v")], timestamp=1000))
    >>> batches_to_arrow([batch], topic="t", partition=0).to_pylist()[0]["value"]
    b'v'
    """
    pieces: list[pa.RecordBatch] = []
    v2_run: list[RecordBatch] = []  # consecutive v2 batches, decoded together
    legacy_run: list[Record] = []  # records of consecutive v0/v1 batches

    def flush() -> None:
        if v2_run:
            pieces.append(_v2_to_arrow(v2_run, topic, partition, include_headers))
            v2_run.clear()
        if legacy_run:
            pieces.append(_legacy_to_arrow(legacy_run, topic, partition, include_headers))
            legacy_run.clear()

    for batch in batches:
        if batch.is_control_batch:
            continue
        if start_offset is not None and batch.last_offset < start_offset:
            continue
        if batch.magic == 2:
            if end_offset is not None and batch.base_offset >= end_offset:
                continue
            if legacy_run:
                flush()
            v2_run.append(batch)
        else:
            if v2_run:
                flush()
            legacy_run.extend(batch)
    flush()
    if not pieces:
        return _empty(record_schema(include_headers))
    result = pieces[0] if len(pieces) == 1 else pa.concat_batches(pieces)
    return _keep_offsets(result, start_offset, end_offset)


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([], type=f.type) for f in schema], schema=schema)


def _keep_offsets(rb: pa.RecordBatch, start: int | None, end: int | None) -> pa.RecordBatch:
    if start is None and end is None:
        return rb
    offsets = rb.column("offset").to_numpy()
    if not len(offsets):
        return rb
    # Most batches lie wholly inside the range: two passes that allocate nothing tell so,
    # where the mask below would fault in a fresh buffer for every fetch.
    if ((start is None or offsets.min() >= start)
            and (end is None or offsets.max() < end)):
        return rb
    keep = np.ones(len(offsets), dtype=bool)
    if start is not None:
        keep &= offsets >= start
    if end is not None:
        keep &= offsets < end
    return rb if keep.all() else rb.filter(pa.array(keep))


# -- v2: walk, then vectorized fields ---------------------------------------------------------


def _v2_to_arrow(group: list[RecordBatch], topic: str, partition: int,
                 include_headers: bool) -> pa.RecordBatch:
    codec = _native.codec
    if codec is not None:
        data, regions = records_sections(group, joined=False)
        decoded = codec.decode_v2(data, compiled_regions(regions, group), include_headers,
                                  allocate_buffer)
        if decoded is not None:  # None: a malformed record, which the code below names
            return _compiled_columns(decoded, topic, partition, include_headers)
    data, regions = records_sections(group)
    d = np.frombuffer(data, dtype=np.uint8)
    ends = walk(data, d, regions)
    starts = record_starts(ends, regions)
    fields = record_fields(data, d, starts, ends)
    check_sections_filled(ends, regions)
    n = len(starts)

    counts = [batch.record_count for batch in group]
    offsets = np.repeat(np.array([b.base_offset for b in group], dtype=np.int64), counts)
    offsets += fields.offset_delta
    timestamps = _timestamps(group, counts, fields.timestamp_delta, offsets)
    timestamp_types = np.repeat(np.array([int(b.timestamp_type) for b in group], np.int32),
                                counts)
    data_buffer = pa.py_buffer(data)
    key_runs = [(run, run.layout.key_at, run.layout.key_length) for run in fields.runs]
    value_runs = [(run, run.layout.value_at, run.layout.value_length) for run in fields.runs]
    columns = [
        _binary_column(d, data_buffer, fields.key_start, fields.key_length, key_runs),
        _binary_column(d, data_buffer, fields.value_start, fields.value_length, value_runs),
        topic_column(topic, n),
        partition_column(partition, n),
        pa.array(offsets),
        pa.array(timestamps * 1000, type=pa.int64()).cast(TIMESTAMP_TYPE),
        pa.array(timestamp_types),
    ]
    if include_headers:
        columns.append(_headers(d, data_buffer, fields.headers_start, ends))
    return pa.RecordBatch.from_arrays(columns, schema=record_schema(include_headers))


def allocate_buffer(size: int) -> pa.ResizableBuffer:
    """A buffer of Arrow's memory pool for the compiled decoder to write a column into: the pool
    keeps freed memory for the next batch, where the C allocator would give large blocks back to
    the system and fault them in again, page by page."""
    return pa.allocate_buffer(size, resizable=True)


def compiled_regions(regions: Regions, group: list[RecordBatch]) -> list[tuple]:
    """The records sections as the compiled decoder takes them: each with what its records take
    from their batch's header (``region`` in ``_native/v2_decode.c``)."""
    return [(start, end, count, batch.base_offset, batch.base_timestamp, batch.max_timestamp,
             int(batch.timestamp_type))
            for (start, end, count), batch in zip(regions, group, strict=True)]


def _compiled_columns(decoded: dict, topic: str, partition: int,
                      include_headers: bool) -> pa.RecordBatch:
    """The batch of the buffers that the compiled decoder wrote (``decode_v2`` in
    ``_native/v2_decode.c``: the columns :func:`_v2_to_arrow` makes, as Arrow buffers of
    :func:`allocate_buffer`)."""
    n = decoded["records"]
    columns = [
        _binary_of_buffers(decoded["key"], n),
        _binary_of_buffers(decoded["value"], n),
        topic_column(topic, n),
        partition_column(partition, n),
        pa.Array.from_buffers(pa.int64(), n, [None, decoded["offset"]]),
        pa.Array.from_buffers(TIMESTAMP_TYPE, n, [None, decoded["timestamp"]]),
        pa.Array.from_buffers(pa.int32(), n, [None, decoded["timestamp_type"]]),
    ]
    if include_headers:
        validity, null_count, offsets, keys, values = decoded["headers"]
        entries = _header_entries(_binary_of_buffers(keys, keys[2].size // 4 - 1),
                                  _binary_of_buffers(values, values[2].size // 4 - 1))
        columns.append(pa.Array.from_buffers(HEADERS_TYPE, n, [validity, offsets],
                                             null_count=null_count, children=[entries]))
    return pa.RecordBatch.from_arrays(columns, schema=record_schema(include_headers))


def _binary_of_buffers(buffers: tuple, n: int) -> pa.Array:
    """A ``binary`` array of ``n`` values from ``(validity or None, null count, int32 offsets,
    data)``."""
    validity, null_count, offsets, data = buffers
    return pa.Array.from_buffers(pa.binary(), n, [validity, offsets, data],
                                 null_count=null_count)


@overload
def records_sections(group: list[RecordBatch], *, joined: Literal[True] = ...
                     ) -> tuple[bytes | memoryview, Regions]: ...


@overload
def records_sections(group: list[RecordBatch], *, joined: Literal[False]
                     ) -> tuple[bytes | memoryview | list, Regions]: ...


def records_sections(group: list[RecordBatch], *, joined: bool = True
                     ) -> tuple[bytes | memoryview | list, Regions]:
    """The records of ``group`` as one buffer, and where each batch's records section lies in it
    with its record count: the buffer the batches were read from, as it is, when none of them
    is compressed and they share one (a Fetch response's records), else their records sections,
    decompressed, joined. Not ``joined``, those sections are a list, each batch's region lying
    in its own: the compiled decoder takes them so, and copies each record's bytes once, not
    twice."""
    for batch in group:
        if batch.record_count < 0:
            raise CorruptRecordError(
                f"record batch at position {batch.position} has a negative record count"
            )
    spans = [batch.records_span() for batch in group]
    buffer = spans[0][0] if spans[0] is not None else None
    if buffer is not None and all(span is not None and span[0] is buffer for span in spans):
        return buffer, [(start, end, batch.record_count)
                        for (_, start, end), batch in zip(spans, group, strict=True)]
    sections, regions = [], []
    position = 0
    for batch in group:
        section = batch.records_data()
        sections.append(section)
        regions.append((position, position + len(section), batch.record_count))
        if joined:
            position += len(section)
    return (b"".join(sections) if joined else sections), regions


def _timestamps(group: list[RecordBatch], counts: list[int], deltas: np.ndarray,
                offsets: np.ndarray) -> np.ndarray:
    """Each record's timestamp in ms: its batch's base timestamp plus its delta, or the batch's
    max timestamp under LOG_APPEND_TIME; refused where Spark cannot represent it."""
    bases = [b.base_timestamp for b in group]
    log_append = [b.timestamp_type is TimestampType.LOG_APPEND_TIME for b in group]
    base_of = np.repeat(np.array(bases, dtype=np.int64), counts)
    create_times = base_of + deltas
    if len(deltas) and not any(log_append):
        # Python integers do not overflow: when the extremes stay in range, every sum does.
        low, high = int(deltas.min()), int(deltas.max())
        if min(bases) + low >= -_MAX_TIMESTAMP_MS and max(bases) + high <= _MAX_TIMESTAMP_MS:
            return create_times
    # Signed overflow of the sum: both operands differ in sign from the result.
    wrapped = ((base_of ^ create_times) & (deltas ^ create_times)) < 0
    timestamps = create_times
    if any(log_append):
        appended = np.repeat(np.array(log_append), counts)
        maxima = np.repeat(np.array([b.max_timestamp for b in group], dtype=np.int64), counts)
        timestamps = np.where(appended, maxima, create_times)
        wrapped &= ~appended
    _check_timestamps(timestamps, offsets, wrapped)
    return timestamps


def _check_timestamps(timestamps_ms: np.ndarray, offsets: np.ndarray,
                      overflowed: np.ndarray | None = None) -> None:
    """Spark keeps timestamps as int64 microseconds; a millisecond value beyond that range cannot
    be represented (Spark's own Kafka source fails on it too)."""
    outside = (timestamps_ms > _MAX_TIMESTAMP_MS) | (timestamps_ms < -_MAX_TIMESTAMP_MS)
    if overflowed is not None:
        outside |= overflowed
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise InvalidTimestampError(
            f"record at offset {offsets[i]} has a timestamp outside the range of Spark's "
            f"TimestampType (+/-{_MAX_TIMESTAMP_MS} ms)"
        )


def _binary_column(d: np.ndarray, data: pa.Buffer, starts: np.ndarray, lengths: np.ndarray,
                   runs: list[tuple[Run, int, int]]) -> pa.Array:
    """A ``binary`` array of ``data[start:start+length]`` (null where length is -1), where
    ``runs`` holds the stretches of records whose field lies at one distance into each record
    with one length (``(run, distance, length)``): those values are copied from the records
    in one strided copy per run; the others as :func:`_binary_from_ranges` does, then moved
    into place."""
    n = len(starts)
    valid = lengths >= 0
    null_count = n - int(np.count_nonzero(valid))
    if null_count == n or not runs:
        return _binary_from_ranges(d, data, starts, lengths, pa.binary())
    lens = np.maximum(lengths, 0)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    if offsets[-1] > _MAX_BINARY_BYTES:  # beyond 32-bit offsets: let the cast report it
        return _binary_from_ranges(d, data, starts, lengths, pa.binary())
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    by_run = np.zeros(n, dtype=bool)
    for run, at, length in runs:
        by_run[run.first:run.first + run.count] = True
        if length > 0:
            into = out[offsets[run.first]:offsets[run.first + run.count]]
            into.reshape(run.count, length)[...] = run.strided(d, at, length)
    others = np.flatnonzero(~by_run & (lens > 0))
    if others.size:
        part = _binary_from_ranges(d, data, starts[others], lengths[others], pa.binary())
        part_offsets = np.frombuffer(part.buffers()[1], dtype=np.int32, count=len(others) + 1,
                                     offset=4 * part.offset)
        first, last = int(part_offsets[0]), int(part_offsets[-1])
        source = np.arange(first, last)
        # each value moves from where the part has it to where the column has it
        source_to_column = np.repeat(offsets[others] - part_offsets[:-1], lens[others])
        out[source + source_to_column] = np.frombuffer(part.buffers()[2], dtype=np.uint8)[
            first:last]
    validity = pa.py_buffer(np.packbits(valid, bitorder="little")) if null_count else None
    return pa.Array.from_buffers(pa.binary(), n, [validity, pa.py_buffer(
        offsets.astype(np.int32)), pa.py_buffer(out)], null_count=null_count)


def _binary_from_ranges(d: np.ndarray, data: pa.Buffer, starts: np.ndarray, lengths: np.ndarray,
                        arrow_type: pa.DataType) -> pa.Array:
    """A ``binary``/``string`` array of ``data[start:start+length]`` (null where length is -1).

    Built as a ``binary_view`` array over ``data``, whose 16-byte views hold either the whole value
    (up to 12 bytes) or its length, 4-byte prefix and offset, then cast (copied in C++) to the
    contiguous type Spark expects. ``d`` is ``data`` as a numpy array.
    """
    n = len(starts)
    valid = lengths >= 0
    null_count = n - int(np.count_nonzero(valid))
    if null_count == n:
        return pa.nulls(n, arrow_type)
    lens = np.where(valid, lengths, 0).astype(np.int32) if null_count else \
        lengths.astype(np.int32)
    views = np.zeros((n, 4), dtype="<i4")  # length | prefix | buffer index | offset
    views[:, 0] = lens
    inline = lens <= _INLINE_MAX
    if not inline.any():
        views[:, 1] = _int32_at(d, starts)
        views[:, 3] = starts
        inline_values: np.ndarray | tuple[()] = ()
    else:
        long_values = np.flatnonzero(~inline)
        at = starts[long_values]
        views[long_values, 1] = _int32_at(d, at)
        views[long_values, 3] = at
        inline_values = np.flatnonzero(inline & (lens > 0))
    if len(inline_values):
        views.view(np.uint8).reshape(n, 16)[inline_values, 4:] = _inline_bytes(
            d, starts[inline_values], lens[inline_values])
    validity = pa.py_buffer(np.packbits(valid, bitorder="little")) if null_count else None
    view_array = pa.Array.from_buffers(pa.binary_view(), n, [validity, pa.py_buffer(views), data],
                                       null_count=null_count)
    return view_array.cast(arrow_type)


def _inline_bytes(d: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The bytes of values of at most 12 bytes, 12 per row, zero past each value's length. A
    value near the end of ``d`` is read from a zero-padded copy of the end."""
    windows = sliding_window_view(d, _INLINE_MAX) if len(d) >= _INLINE_MAX else \
        np.zeros((0, _INLINE_MAX), np.uint8)
    near_end = starts > len(d) - _INLINE_MAX
    if near_end.any():
        tail_at = max(0, len(d) - _INLINE_MAX)
        tail = np.concatenate([d[tail_at:], np.zeros(_INLINE_MAX, np.uint8)])
        gathered = np.empty((len(starts), _INLINE_MAX), np.uint8)
        gathered[~near_end] = windows[starts[~near_end]]
        tail_windows = sliding_window_view(tail, _INLINE_MAX)
        gathered[near_end] = tail_windows[starts[near_end] - tail_at]
    else:
        gathered = windows[starts]
    gathered *= lengths[:, None] > _INLINE_RANGE
    return gathered


def _int32_at(d: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The little-endian int32 at each (unaligned) byte position: the prefix of a long view."""
    unaligned = np.ndarray(shape=(len(d) - 3,), dtype="<i4", buffer=d, strides=(1,))
    return unaligned[positions]


def _headers(d: np.ndarray, data: pa.Buffer, pos: np.ndarray, ends: np.ndarray) -> pa.Array:
    """The ``headers`` column: each record's header entries, decoded header index by header
    index; null for a record without headers, as Spark's Kafka source has it."""
    count, pos = varints(d, pos, ends, 5, "headerCount")
    if (count < 0).any():
        raise CorruptRecordError("a record has a negative header count")
    if (count * _MIN_HEADER_BYTES > ends - pos).any():  # bounds what is allocated below
        raise CorruptRecordError("a record declares more headers than its bytes can hold")
    list_offsets = np.zeros(len(count) + 1, dtype=np.int32)
    np.cumsum(count, out=list_offsets[1:])
    total = int(list_offsets[-1])
    key_start = np.zeros(total, dtype=np.int64)
    key_length = np.zeros(total, dtype=np.int64)
    value_start = np.zeros(total, dtype=np.int64)
    value_length = np.zeros(total, dtype=np.int64)
    pos = pos.copy()
    rows = np.flatnonzero(count > 0)
    index = 0
    while rows.size:
        at, limit = pos[rows], ends[rows]
        klen, at = varints(d, at, limit, 5, "header key length")
        if (klen < 0).any():
            raise CorruptRecordError("a record header has a null key")
        kstart = at
        at = at + klen
        vlen, at = varints(d, at, limit, 5, "header value length")
        if (vlen < -1).any():
            raise CorruptRecordError("a record header has a value length below -1")
        vstart = at
        at = at + np.maximum(vlen, 0)
        if (at > limit).any():
            raise CorruptRecordError("a record header overruns its record")
        slot = list_offsets[rows] + index
        key_start[slot], key_length[slot] = kstart, klen
        value_start[slot], value_length[slot] = vstart, vlen
        pos[rows] = at
        index += 1
        rows = rows[count[rows] > index]
    if (pos != ends).any():
        raise CorruptRecordError("a record's fields do not fill its declared length")
    keys = _binary_from_ranges(d, data, key_start, key_length, pa.binary())
    values = _binary_from_ranges(d, data, value_start, value_length, pa.binary())
    return pa.ListArray.from_arrays(pa.array(list_offsets), _header_entries(keys, values),
                                    type=HEADERS_TYPE, mask=pa.array(count == 0))


def _header_entries(keys: pa.Array, values: pa.Array) -> pa.StructArray:
    """The header entries of every record, from their binary keys and values."""
    try:
        keys = keys.cast(pa.string())
    except pa.ArrowInvalid:
        # As the Java client does, malformed UTF-8 in a header key is replaced, not fatal.
        keys = pa.array([k.decode("utf-8", "replace") for k in keys.to_pylist()], pa.string())
    return pa.StructArray.from_arrays([keys, values], fields=list(HEADER_TYPE))


# -- legacy formats: record by record ---------------------------------------------------------


def _legacy_to_arrow(records: list[Record], topic: str, partition: int,
                     include_headers: bool) -> pa.RecordBatch:
    n = len(records)
    offsets = np.array([r.offset for r in records], dtype=np.int64)
    timestamps = np.array([r.timestamp for r in records], dtype=np.int64)
    _check_timestamps(timestamps, offsets)
    columns = [
        pa.array([r.key for r in records], pa.binary()),
        pa.array([r.value for r in records], pa.binary()),
        topic_column(topic, n),
        partition_column(partition, n),
        pa.array(offsets),
        pa.array(timestamps * 1000).cast(TIMESTAMP_TYPE),
        pa.array([int(r.timestamp_type) for r in records], pa.int32()),
    ]
    if include_headers:  # messages before v2 have no headers: null, as in Spark
        columns.append(pa.nulls(n, HEADERS_TYPE))
    return pa.RecordBatch.from_arrays(columns, schema=record_schema(include_headers))
