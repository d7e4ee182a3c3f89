"""Record batches to Arrow columns, without a Python object per record.

v2 records are a chain of varint-prefixed byte strings, so finding where each record starts is
inherently sequential; everything else is not. Decoding is therefore split in two:

1. **Walk** (Python, per record, a handful of byte reads): follow the length prefixes through the
   records sections of all batches and note where each record's body starts and ends.
2. **Fields** (numpy, per field, across all records at once): decode every varint field of every
   record with vectorized gathers, then describe keys, values and header entries as Arrow
   ``binary_view`` arrays whose views point straight into the record bytes; one C++ cast turns them
   into the ``binary``/``string`` columns of Spark's Kafka schema.

Batches of the legacy formats (magic 0 and 1) take the record-by-record path of
:mod:`broker_lite.records`; they only appear in topics written by pre-0.11 clients.
"""

from collections.abc import Iterable

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
from broker_lite.records.varint import decode_varint

from .schema import HEADER_TYPE, HEADERS_TYPE, TIMESTAMP_TYPE, record_schema

# Trailing zeros after the joined records data, so that vectorized gathers of a few bytes past a
# position (inline view bytes, view prefixes) never index out of bounds.
_PAD = bytes(16)
_INLINE_MAX = 12  # binary_view stores values of up to 12 bytes inside the view itself
_INLINE_RANGE = np.arange(_INLINE_MAX)
_MAX_TIMESTAMP_MS = (2**63 - 1) // 1000
_MIN_HEADER_BYTES = 2  # header key length and value length varints, one byte each at least
_PROBE_RECORDS = 4  # stepped through before the records after them are tried as a run
_MIN_RUN = 32  # a shorter run is not worth checking at once
_MAX_SHORT_RUNS = 2  # runs in a row that end sooner than _MIN_RUN before a batch is stepped through


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
    keep = np.ones(len(offsets), dtype=bool)
    if start is not None:
        keep &= offsets >= start
    if end is not None:
        keep &= offsets < end
    return rb if keep.all() else rb.filter(pa.array(keep))


# -- v2: walk, then vectorized fields ---------------------------------------------------------


def _v2_to_arrow(group: list[RecordBatch], topic: str, partition: int,
                 include_headers: bool) -> pa.RecordBatch:
    sections, regions = [], []
    position = 0
    for batch in group:
        if batch.record_count < 0:
            raise CorruptRecordError(
                f"record batch at position {batch.position} has a negative record count"
            )
        section = batch.records_data()
        sections.append(section)
        regions.append((position, position + len(section), batch.record_count))
        position += len(section)
    sections.append(_PAD)
    data = b"".join(sections)
    d = np.frombuffer(data, dtype=np.uint8)
    ends = _walk(data, d, regions)
    starts = _record_starts(ends, regions)
    length, bodies = _varints(d, starts, ends, 5, "length")
    if (length < 0).any():
        raise CorruptRecordError("a record has a negative length")
    _check_sections_filled(ends, regions)

    counts = np.array([batch.record_count for batch in group], dtype=np.int64)
    which = np.repeat(np.arange(len(group)), counts)
    base_offsets = np.array([b.base_offset for b in group], dtype=np.int64)
    base_timestamps = np.array([b.base_timestamp for b in group], dtype=np.int64)
    log_append = np.array([b.timestamp_type is TimestampType.LOG_APPEND_TIME for b in group])
    max_timestamps = np.array([b.max_timestamp for b in group], dtype=np.int64)
    timestamp_types = np.array([int(b.timestamp_type) for b in group], dtype=np.int32)

    pos = bodies + 1  # skip the record attributes byte (unused)
    timestamp_delta, pos = _varints(d, pos, ends, 10, "timestampDelta")
    offset_delta, pos = _varints(d, pos, ends, 5, "offsetDelta")
    key_length, pos = _varints(d, pos, ends, 5, "keyLength")
    key_start = pos
    pos = pos + np.maximum(key_length, 0)
    value_length, pos = _varints(d, pos, ends, 5, "valueLength")
    value_start = pos
    pos = pos + np.maximum(value_length, 0)
    if (key_length < -1).any() or (value_length < -1).any():
        raise CorruptRecordError("a record has a key or value length below -1")
    if (pos >= ends).any():  # checked before any view into the data is made
        raise CorruptRecordError("a record's value overruns the record or leaves no header count")

    data_buffer = pa.py_buffer(data)
    n = len(bodies)
    create_times = base_timestamps[which] + timestamp_delta
    # Signed overflow of the sum: both operands differ in sign from the result.
    wrapped = ((base_timestamps[which] ^ create_times) & (timestamp_delta ^ create_times)) < 0
    timestamps = np.where(log_append[which], max_timestamps[which], create_times)
    _check_timestamps(timestamps, base_offsets[which] + offset_delta,
                      wrapped & ~log_append[which])
    columns = [
        _binary_from_ranges(d, data_buffer, key_start, key_length, pa.binary()),
        _binary_from_ranges(d, data_buffer, value_start, value_length, pa.binary()),
        _constant_string(topic, n),
        pa.array(np.full(n, partition, dtype=np.int32), pa.int32()),
        pa.array(base_offsets[which] + offset_delta),
        pa.array(timestamps * 1000, type=pa.int64()).cast(TIMESTAMP_TYPE),
        pa.array(timestamp_types[which]),
    ]
    if include_headers:
        columns.append(_headers(d, data_buffer, pos, ends))
    return pa.RecordBatch.from_arrays(columns, schema=record_schema(include_headers))


def _walk(data: bytes, d: np.ndarray, regions: list[tuple[int, int, int]]) -> np.ndarray:
    """Follow record length prefixes; return where each record ends (= where the next starts).

    This is the only per-record Python work of the decoder, so it does the least it can. Records
    are stepped through a few at a time; when those few have one size (fixed-size values, with
    timestamp and offset deltas of the same varint size, as most of a batch often is), the
    records after them are taken to have it too, and that is checked for all of them at once: a
    record whose length prefix has the same bytes as its predecessor's has the same size, so
    the next one starts right after it. The run ends at the first record that differs, and
    stepping goes on from there. Signs of lengths are checked afterwards, vectorized, when the
    prefixes are decoded again as fields.
    """
    pieces: list = []
    for start, end, count in regions:
        ends: list[int] = []
        p, left, misses = start, count, 0
        while left:
            steps = min(left, _PROBE_RECORDS) if misses < _MAX_SHORT_RUNS else left
            p = _step(data, p, end, steps, ends)
            left -= steps
            size = ends[-1] - ends[-2] if steps >= 2 else 0
            if not left or steps < _PROBE_RECORDS or any(
                    ends[-i] - ends[-i - 1] != size for i in range(2, steps)):
                continue
            n = min(left, (end - p) // size)
            if n < _MIN_RUN:
                continue
            record = p - size  # the last one stepped through: its prefix is the run's
            prefix = data[record:decode_varint(data, record, end)[1]]
            at = p + size * np.arange(n, dtype=np.int64)
            same = np.ones(n, dtype=bool)
            for i, byte in enumerate(prefix):
                same &= d[at + i] == byte
            k = n if same.all() else int(np.argmin(same))
            pieces.append(np.array(ends, dtype=np.int64))
            pieces.append(at[:k] + size)
            ends = []
            p, left = p + size * k, left - k
            # Sizes that vary from record to record: after a few short runs, step through the rest.
            misses = 0 if k >= _MIN_RUN else misses + 1
        pieces.append(np.array(ends, dtype=np.int64))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)


def _step(data: bytes, p: int, end: int, count: int, ends: list[int]) -> int:
    """Step through ``count`` records from ``p``, one at a time, adding where each ends to
    ``ends``; return where the last one ends. The common one- and two-byte length prefixes are
    decoded inline."""
    add_end = ends.append
    try:
        for _ in range(count):
            b = data[p]
            if b < 0x80:  # zigzag length below 64: one byte
                p += 1 + (b >> 1)
            elif data[p + 1] < 0x80:  # below 8192: two bytes
                p += 2 + (((b & 0x7F) | (data[p + 1] << 7)) >> 1)
            else:
                length, body = decode_varint(data, p, end)
                if length < 0:
                    raise CorruptRecordError(f"record at position {p} has a negative length")
                p = body + length
            add_end(p)
    except IndexError:
        raise CorruptRecordError("record lengths run past the end of the batch") from None
    return p


def _check_sections_filled(ends: np.ndarray, regions: list[tuple[int, int, int]]) -> None:
    """The last record of each batch must end exactly where its records section ends."""
    last = np.cumsum([count for _, _, count in regions]) - 1
    for (start, end, count), index in zip(regions, last):
        actual = int(ends[index]) if count else start
        if actual != end:
            raise CorruptRecordError(
                f"records of a batch end at position {actual}, but its records section ends at "
                f"{end}"
            )


def _record_starts(ends: np.ndarray, regions: list[tuple[int, int, int]]) -> np.ndarray:
    """Each record starts where the previous one ends, or at the start of its batch's records."""
    starts = np.empty_like(ends)
    starts[1:] = ends[:-1]
    first = np.cumsum([0] + [count for _, _, count in regions[:-1]])
    region_starts = np.array([start for start, _, _ in regions], dtype=np.int64)
    has_records = np.array([count > 0 for _, _, count in regions], dtype=bool)
    starts[first[has_records]] = region_starts[has_records]
    return starts


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


def _varints(d: np.ndarray, pos: np.ndarray, limit: np.ndarray, max_bytes: int,
             field: str) -> tuple[np.ndarray, np.ndarray]:
    """Decode one zigzag varint per record at ``d[pos]``; return (values, positions after them).

    Varints of one or two bytes (values from -8192 to 8191: lengths, deltas) are decoded in a
    few whole-array steps; longer ones by :func:`_long_varints`.
    """
    if (pos >= limit).any():
        raise CorruptRecordError(f"a record ends before its {field}")
    first = d[pos].astype(np.int64)
    continued = first >= 0x80
    if not continued.any():
        raw, size = first, 1
    else:
        second = d[pos + 1]  # readable even past a record's last byte: ``d`` is padded
        if (continued & (second >= 0x80)).any():
            return _long_varints(d, pos, limit, max_bytes, field)
        if (continued & (pos + 1 >= limit)).any():
            raise CorruptRecordError(f"a record's {field} runs past the end of the record")
        size = continued.astype(np.int64)
        raw = (first & 0x7F) | ((second.astype(np.int64) << 7) * size)
        size += 1
    return (raw >> 1) ^ -(raw & 1), pos + size


def _long_varints(d: np.ndarray, pos: np.ndarray, limit: np.ndarray, max_bytes: int,
                  field: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_varints` of any length: work is proportional to the number of varint bytes, all
    first bytes at once, then only the records whose varint continues."""
    first = d[pos]
    value = (first & 0x7F).astype(np.uint64)
    size = np.ones(len(pos), dtype=np.int64)
    more = np.flatnonzero(first & 0x80)
    shift = 7
    while more.size:
        if shift >= 7 * max_bytes:
            raise CorruptRecordError(f"a record's {field} is longer than {max_bytes} bytes")
        at = pos[more] + size[more]
        if (at >= limit[more]).any():
            raise CorruptRecordError(f"a record's {field} runs past the end of the record")
        byte = d[at]
        value[more] |= (byte & 0x7F).astype(np.uint64) << np.uint64(shift)
        size[more] += 1
        more = more[(byte & 0x80) != 0]
        shift += 7
    if max_bytes == 5 and shift > 28 and (value >> np.uint64(32)).any():
        raise CorruptRecordError(f"a record's {field} exceeds 32 bits")
    signed = (value >> np.uint64(1)).astype(np.int64) ^ -(value & np.uint64(1)).astype(np.int64)
    return signed, pos + size


def _binary_from_ranges(d: np.ndarray, data: pa.Buffer, starts: np.ndarray, lengths: np.ndarray,
                        arrow_type: pa.DataType) -> pa.Array:
    """A ``binary``/``string`` array of ``data[start:start+length]`` (null where length is -1).

    Built as a ``binary_view`` array over ``data``, whose 16-byte views hold either the whole value
    (up to 12 bytes) or its length, 4-byte prefix and offset, then cast (copied in C++) to the
    contiguous type Spark expects. ``d`` is ``data`` as a numpy array, padded so that 12 bytes can
    be read from any position.
    """
    n = len(starts)
    valid = lengths >= 0
    lens = np.where(valid, lengths, 0).astype(np.int32)
    views = np.zeros((n, 4), dtype="<i4")  # length | prefix | buffer index | offset
    views[:, 0] = lens
    inline = lens <= _INLINE_MAX
    windows = sliding_window_view(d, _INLINE_MAX)
    if inline.all():
        gathered = windows[starts]
        gathered *= _INLINE_RANGE < lens[:, None]
        views.view(np.uint8).reshape(n, 16)[:, 4:] = gathered
    else:
        long_values = np.flatnonzero(~inline)
        at = starts[long_values]
        views[long_values, 1] = _int32_at(d, at)
        views[long_values, 3] = at
        inline_values = np.flatnonzero(inline & (lens > 0))
        if inline_values.size:
            gathered = windows[starts[inline_values]]
            gathered *= _INLINE_RANGE < lens[inline_values][:, None]
            views.view(np.uint8).reshape(n, 16)[inline_values, 4:] = gathered
    null_count = n - int(np.count_nonzero(valid))
    validity = pa.py_buffer(np.packbits(valid, bitorder="little")) if null_count else None
    view_array = pa.Array.from_buffers(pa.binary_view(), n, [validity, pa.py_buffer(views), data],
                                       null_count=null_count)
    return view_array.cast(arrow_type)


def _int32_at(d: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The little-endian int32 at each (unaligned) byte position: the prefix of a long view."""
    unaligned = np.ndarray(shape=(len(d) - 3,), dtype="<i4", buffer=d, strides=(1,))
    return unaligned[positions]


def _constant_string(text: str, n: int) -> pa.Array:
    encoded = text.encode("utf-8")
    offsets = np.arange(n + 1, dtype=np.int32) * len(encoded)
    return pa.Array.from_buffers(pa.string(), n,
                                 [None, pa.py_buffer(offsets), pa.py_buffer(encoded * n)])


def _headers(d: np.ndarray, data: pa.Buffer, pos: np.ndarray, ends: np.ndarray) -> pa.Array:
    """The ``headers`` column: each record's header entries, decoded header index by header
    index; null for a record without headers, as Spark's Kafka source has it."""
    count, pos = _varints(d, pos, ends, 5, "headerCount")
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
        klen, at = _varints(d, at, limit, 5, "header key length")
        if (klen < 0).any():
            raise CorruptRecordError("a record header has a null key")
        kstart = at
        at = at + klen
        vlen, at = _varints(d, at, limit, 5, "header value length")
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
    try:
        keys = keys.cast(pa.string())
    except pa.ArrowInvalid:
        # As the Java client does, malformed UTF-8 in a header key is replaced, not fatal.
        keys = pa.array([k.decode("utf-8", "replace") for k in keys.to_pylist()], pa.string())
    values = _binary_from_ranges(d, data, value_start, value_length, pa.binary())
    entries = pa.StructArray.from_arrays([keys, values], fields=list(HEADER_TYPE))
    return pa.ListArray.from_arrays(pa.array(list_offsets), entries, type=HEADERS_TYPE,
                                    mask=pa.array(count == 0))


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
        _constant_string(topic, n),
        pa.array(np.full(n, partition, dtype=np.int32), pa.int32()),
        pa.array(offsets),
        pa.array(timestamps * 1000).cast(TIMESTAMP_TYPE),
        pa.array([int(r.timestamp_type) for r in records], pa.int32()),
    ]
    if include_headers:  # messages before v2 have no headers: null, as in Spark
        columns.append(pa.nulls(n, HEADERS_TYPE))
    return pa.RecordBatch.from_arrays(columns, schema=record_schema(include_headers))
