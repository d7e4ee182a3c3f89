"""Where the records of v2 batches lie, and their fields, found for all records at once.

A v2 batch's records section is a chain of records, each (all varints zigzag, as Kafka's
``DefaultRecord`` writes them)::

    length          varint       bytes after this field
    attributes      int8         unused
    timestampDelta  varlong      from the batch's baseTimestamp
    offsetDelta     varint       from the batch's baseOffset
    keyLength       varint       -1: null key
    key             keyLength bytes
    valueLength     varint       -1: null value
    value           valueLength bytes
    headerCount     varint
    headers         headerCount x (keyLength varint, key, valueLength varint, value)

Finding where each record starts is sequential (:func:`walk`); the fields are found with numpy
across all records at once (:func:`record_fields`), in one of two ways:

* **Runs of one layout.** Records of one size in a row (fixed-size values, as most of a
  batch often is) usually share their layout too: the same length prefix, the same varint
  sizes for both deltas, the same key and value lengths. The first record of the run is parsed;
  the others are checked against it with a few unaligned 8-byte reads per record (the bytes that
  must be equal, and the continuation bits of the deltas), and their deltas decoded from the same
  reads. Their fields then lie at fixed distances from where they start.
* **Field by field** for every other record (and any record of a run that differs): each varint
  field of every record decoded with vectorized gathers, one field after the other.

Both report corrupt records as :class:`CorruptRecordError`: a record that does not fit its run's
layout is decoded field by field, where every check applies. The buffer needs no padding: reads
stay inside the records, or are clipped to the buffer and their bytes discarded.
"""

from dataclasses import dataclass, field

import numpy as np

from broker_lite.records import CorruptRecordError, RecordsError
from broker_lite.records.varint import decode_varint

_PROBE_RECORDS = 4  # stepped through before the records after them are tried as a run
_MIN_RUN = 32  # a shorter run is not worth checking at once
_MAX_SHORT_RUNS = 2  # runs in a row that end sooner than _MIN_RUN before a batch is stepped through
_MIN_LAYOUT_RUN = 128  # records of one size in a row before they are tried as one layout
_WINDOW = 8  # bytes of a record read at once: one unaligned little-endian uint64
_MAX_DELTA_BYTES = 4  # longer deltas (rare) are left to the field-by-field path

Regions = list[tuple[int, int, int]]  # each batch's records section: start, end, record count


@dataclass
class RecordFields:
    """Per record: its deltas, and where its key, value and headers lie in the buffer (key and
    value lengths are -1 for null)."""

    timestamp_delta: np.ndarray
    offset_delta: np.ndarray
    key_start: np.ndarray
    key_length: np.ndarray
    value_start: np.ndarray
    value_length: np.ndarray
    headers_start: np.ndarray  # the header count varint
    # Stretches of records that all share one layout: their keys and values lie at a fixed
    # stride, so a column can copy them without looking at each record's position.
    runs: list["Run"] = field(default_factory=list)

    @classmethod
    def empty(cls, n: int) -> "RecordFields":
        """Fields for ``n`` records, their values still to be filled in."""
        def column() -> np.ndarray:
            return np.empty(n, dtype=np.int64)
        return cls(column(), column(), column(), column(), column(), column(), column())


_COLUMNS = tuple(name for name in RecordFields.__dataclass_fields__ if name != "runs")


# -- record boundaries ------------------------------------------------------------------------


def walk(data, d: np.ndarray, regions: Regions) -> np.ndarray:
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
            if p > end:  # into the next batch's bytes, or past the buffer: stop at once
                raise CorruptRecordError(f"records of a batch end at position {p}, but its "
                                         f"records section ends at {end}")
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
            same = _same_prefix(d, p, size, n, prefix)
            k = n if same.all() else int(np.argmin(same))
            pieces.append(np.array(ends, dtype=np.int64))
            pieces.append(np.arange(p + size, p + size * (k + 1), size, dtype=np.int64))
            ends = []
            p, left = p + size * k, left - k
            # Sizes that vary from record to record: after a few short runs, step through the rest.
            misses = 0 if k >= _MIN_RUN else misses + 1
        pieces.append(np.array(ends, dtype=np.int64))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)


def _same_prefix(d: np.ndarray, p: int, size: int, n: int, prefix) -> np.ndarray:
    """For each of ``n`` records of ``size`` bytes from ``p``: whether it starts with
    ``prefix``. Prefixes of one or two bytes (records below 8 KiB) are compared in one strided
    read of each record; longer ones byte by byte."""
    if len(prefix) <= 2:
        width = np.dtype("<u1" if len(prefix) == 1 else "<u2")
        starts = np.ndarray((n,), dtype=width, buffer=d, offset=p, strides=(size,))
        return starts == int.from_bytes(prefix, "little")
    same = np.ones(n, dtype=bool)
    for i, byte in enumerate(prefix):  # byte i of each record's prefix, strided
        same &= d[p + i:p + i + size * n:size] == byte
    return same


def _step(data, p: int, end: int, count: int, ends: list[int]) -> int:
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
        raise CorruptRecordError(f"records of a batch end at position {p} or later, but its "
                                 f"records section ends at {end}") from None
    return p


def check_sections_filled(ends: np.ndarray, regions: Regions) -> None:
    """The last record of each batch must end exactly where its records section ends."""
    last = np.cumsum([count for _, _, count in regions]) - 1
    for (start, end, count), index in zip(regions, last, strict=True):
        actual = int(ends[index]) if count else start
        if actual != end:
            raise CorruptRecordError(
                f"records of a batch end at position {actual}, but its records section ends at "
                f"{end}"
            )


def record_starts(ends: np.ndarray, regions: Regions) -> np.ndarray:
    """Each record starts where the previous one ends, or at the start of its batch's records."""
    starts = np.empty_like(ends)
    starts[1:] = ends[:-1]
    first = np.cumsum([0] + [count for _, _, count in regions[:-1]])
    region_starts = np.array([start for start, _, _ in regions], dtype=np.int64)
    has_records = np.array([count > 0 for _, _, count in regions], dtype=bool)
    starts[first[has_records]] = region_starts[has_records]
    return starts


# -- fields -----------------------------------------------------------------------------------


def record_fields(data, d: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> RecordFields:
    """The fields of the records ``[starts, ends)`` of ``d`` (``data`` as numpy bytes): runs of
    one layout at once, the other records field by field (see the module docstring)."""
    n = len(starts)
    runs = _equal_size_runs(starts, ends)
    if not runs:
        return RecordFields(*_fields_one_by_one(d, starts, ends))
    fields = RecordFields.empty(n)
    left = np.ones(n, dtype=bool)  # records still to decode field by field
    for first, count in runs:
        found = _run_fields(data, d, starts, ends, first, count, fields)
        if found is None:
            continue
        layout, fitting = found
        left[first:first + count] = ~fitting
        if fitting.all():
            fields.runs.append(Run(first, count, int(starts[first]), layout))
    rest = np.flatnonzero(left)
    if rest.size:
        one_by_one = _fields_one_by_one(d, starts[rest], ends[rest])
        for column, values in zip(_COLUMNS, one_by_one, strict=True):
            getattr(fields, column)[rest] = values
    return fields


def _equal_size_runs(starts: np.ndarray, ends: np.ndarray) -> list[tuple[int, int]]:
    """(first record, count) of each stretch of at least ``_MIN_LAYOUT_RUN`` records of one
    size, each starting where the one before ends (a batch's header lies between batches)."""
    n = len(starts)
    if n < _MIN_LAYOUT_RUN:
        return []
    sizes = ends - starts
    joined = (sizes[1:] == sizes[:-1]) & (starts[1:] == ends[:-1])
    breaks = np.flatnonzero(~joined) + 1
    firsts = np.concatenate(([0], breaks))
    counts = np.diff(np.concatenate((firsts, [n])))
    long = counts >= _MIN_LAYOUT_RUN
    return list(zip(firsts[long].tolist(), counts[long].tolist(), strict=True))


@dataclass(frozen=True)
class _Layout:
    """Where the fields of one record lie, as distances from its start, and what every record of
    its run must share with it: ``checks`` are (window start, mask, expected bits) over 8-byte
    windows of the record."""

    size: int
    timestamp_delta: tuple[int, int]  # (distance, varint bytes)
    offset_delta: tuple[int, int]
    key_at: int
    key_length: int
    value_at: int
    value_length: int
    headers_at: int
    checks: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class Run:
    """Records ``first`` to ``first + count``, one after the other from byte ``start``, all of
    one ``layout``."""

    first: int
    count: int
    start: int
    layout: _Layout

    def strided(self, d: np.ndarray, at: int, length: int) -> np.ndarray:
        """The ``length`` bytes at distance ``at`` into each record, as a (count, length) view
        of ``d``."""
        return np.lib.stride_tricks.as_strided(d[self.start + at:], (self.count, length),
                                               (self.layout.size, 1), writeable=False)


def _layout_of(data, start: int, size: int) -> _Layout | None:
    """The layout of the record at ``start``, or None for one that is better left to the
    field-by-field path (anything unusual, including corruption, which that path reports)."""
    end = start + size
    if size < _WINDOW:
        return None
    try:
        length, p = decode_varint(data, start, end)
        if length < 0 or p + length != end:
            return None
        structure = [(i, 0xFF, data[start + i]) for i in range(p - start)]  # the length prefix
        p += 1  # attributes: not looked at
        deltas = []
        for _ in range(2):  # timestampDelta, offsetDelta: their sizes, not their values
            at = p
            while data[p] & 0x80:
                p += 1
            p += 1
            if p - at > _MAX_DELTA_BYTES or p > end:
                return None
            deltas.append((at - start, p - at))
            structure += [(i - start, 0x80, 0x80) for i in range(at, p - 1)]
            structure.append((p - 1 - start, 0x80, 0))
        key_length, q = decode_varint(data, p, end)
        structure += [(i - start, 0xFF, data[i]) for i in range(p, q)]
        key_at = q
        p = q + max(key_length, 0)
        value_length, q = decode_varint(data, p, end)
        structure += [(i - start, 0xFF, data[i]) for i in range(p, q)]
        value_at = q
        p = q + max(value_length, 0)
    except (RecordsError, IndexError):
        return None
    if key_length < -1 or value_length < -1 or p >= end:
        return None
    return _Layout(size, deltas[0], deltas[1], key_at - start, key_length, value_at - start,
                   value_length, p - start, _windows(structure, size))


def _windows(structure: list[tuple[int, int, int]], size: int) -> tuple[tuple[int, int, int], ...]:
    """(distance, mask, expected) per byte grouped into as few 8-byte windows as cover them; a
    window starts at most ``size - 8`` into the record, so it never reads past the record."""
    checks: list[tuple[int, int, int]] = []
    for at, mask, expected in sorted(structure):
        if checks and at < checks[-1][0] + _WINDOW:
            window, masks, bits = checks[-1]
            shift = 8 * (at - window)
            checks[-1] = (window, masks | mask << shift, bits | expected << shift)
            continue
        window = min(at, size - _WINDOW)
        shift = 8 * (at - window)
        checks.append((window, mask << shift, expected << shift))
    return tuple(checks)


def _run_fields(data, d: np.ndarray, starts: np.ndarray, ends: np.ndarray, first: int,
                count: int, fields: RecordFields) -> tuple[_Layout, np.ndarray] | None:
    """Fill ``fields`` for the records ``first`` to ``first + count`` (one size, one after the
    other) when they share the first one's layout; that layout and which of them do (None: the
    first one's layout is left to the field-by-field path).

    Each 8-byte window is read from the records once, into an array of its own: the checks and
    the deltas then work on those, not on the (unaligned, strided) record bytes again."""
    start = int(starts[first])
    layout = _layout_of(data, start, int(ends[first]) - start)
    if layout is None:
        return None
    size = layout.size
    read: dict[int, np.ndarray] = {}

    def window(at: int) -> np.ndarray:  # 8 bytes at ``at`` into each record of the run
        if at not in read:
            read[at] = np.ndarray((count,), dtype="<u8", buffer=d, offset=start + at,
                                  strides=(size,)).copy()
        return read[at]

    fitting = None
    for at, mask, expected in layout.checks:
        fits = (window(at) & np.uint64(mask)) == np.uint64(expected)
        fitting = fits if fitting is None else fitting & fits
    if fitting is None:
        fitting = np.ones(count, dtype=bool)
    run = slice(first, first + count)
    here = starts[run]
    fields.timestamp_delta[run] = _delta(read, window, layout.timestamp_delta, size)
    fields.offset_delta[run] = _delta(read, window, layout.offset_delta, size)
    fields.key_start[run] = here + layout.key_at
    fields.key_length[run] = layout.key_length
    fields.value_start[run] = here + layout.value_at
    fields.value_length[run] = layout.value_length
    fields.headers_start[run] = here + layout.headers_at
    return layout, fitting


def _delta(read: dict, window, where: tuple[int, int], size: int) -> np.ndarray:
    """A zigzag varint of at most 4 bytes at a fixed distance into each record of a run,
    decoded from one 8-byte read (shared with the checks when one covers it)."""
    at, length = where
    for window_at in read:
        if window_at <= at and at + length <= window_at + _WINDOW:
            break
    else:
        window_at = min(at, size - _WINDOW)
    bytes_ = window(window_at) >> np.uint64(8 * (at - window_at))
    raw = bytes_ & np.uint64(0x7F)
    for i in range(1, length):  # byte i's 7 bits go to bit 7 * i
        raw |= (bytes_ >> np.uint64(i)) & np.uint64(0x7F << 7 * i)
    raw = raw.astype(np.int64)
    return (raw >> 1) ^ -(raw & 1)


def _fields_one_by_one(d: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple:
    """The fields of the records ``[starts, ends)``, decoded field by field, in the order of
    :class:`RecordFields`."""
    length, bodies = varints(d, starts, ends, 5, "length")
    if (length < 0).any():
        raise CorruptRecordError("a record has a negative length")
    pos = bodies + 1  # skip the record attributes byte (unused)
    timestamp_delta, pos = varints(d, pos, ends, 10, "timestampDelta")
    offset_delta, pos = varints(d, pos, ends, 5, "offsetDelta")
    key_length, pos = varints(d, pos, ends, 5, "keyLength")
    key_start = pos
    pos = pos + np.maximum(key_length, 0)
    value_length, pos = varints(d, pos, ends, 5, "valueLength")
    value_start = pos
    pos = pos + np.maximum(value_length, 0)
    if (key_length < -1).any() or (value_length < -1).any():
        raise CorruptRecordError("a record has a key or value length below -1")
    if (pos >= ends).any():  # checked before any view into the data is made
        raise CorruptRecordError("a record's value overruns the record or leaves no header count")
    return (timestamp_delta, offset_delta, key_start, key_length, value_start, value_length, pos)


def varints(d: np.ndarray, pos: np.ndarray, limit: np.ndarray, max_bytes: int,
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
        # A second byte past the buffer's end is clipped: it only counts where it is inside.
        second = np.take(d, pos + 1, mode="clip")
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
    """:func:`varints` of any length: work is proportional to the number of varint bytes, all
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
