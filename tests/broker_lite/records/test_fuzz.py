"""Fuzzing the record readers: whatever the bytes, only RecordsError may come out.

Random bytes, flipped bits, truncations and hand-crafted absurd lengths are fed to

* ``list(iter_batches(buf, validate=True))`` (the scan: sizes, magic, CRC),
* ``for b in BatchReader(buf, validate=...): list(b)`` (record decoding; with ``validate=False``
  the CRC is not checked, so the record decoders see the corrupt bytes themselves),
* ``batches_to_arrow(BatchReader(buf, validate=...), ..., include_headers=True)`` on both
  implementations of the codecs (pure Python and compiled, ``codec_paths.py``), which must give
  the same columns or the same error with the same message,

and must raise :class:`broker_lite.records.RecordsError` (or a subclass) or succeed: never another
exception, a hang, or an allocation out of proportion to the input.

Regressions found by these fuzzers are pinned as plain tests near the end (a value length
overrunning its record, once a segmentation fault; timestamps out of Spark's range; header counts
that overflowed or over-allocated).
"""

import json
import os
import pickle
import random
import resource
import signal
import struct
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

import crc32c
import lz4.frame
import pytest
import snappy
import xxhash
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker_lite.records import (
    BatchReader,
    CompressionType,
    ControlRecordType,
    CorruptRecordError,
    EndTransactionMarker,
    MessageSetBuilder,
    RecordBatchBuilder,
    RecordsError,
    RecordTooLargeError,
    TimestampType,
    UnsupportedCompressionError,
    build_control_batch,
    build_message_set,
    compress,
    iter_batches,
)
from broker_lite.records.arrow.decode import batches_to_arrow
from broker_lite.records.compression import DEFAULT_MAX_DECOMPRESSED_BYTES
from broker_lite.records.message_set import encode_message
from broker_lite.records.record_batch import HEADER, HEADER_SIZE, encode_record
from broker_lite.records.varint import (
    encode_varint,
    encode_varlong,
)

from .codec_paths import PATHS, same_on_both_paths

NONE, GZIP, SNAPPY, LZ4, ZSTD = (
    CompressionType.NONE,
    CompressionType.GZIP,
    CompressionType.SNAPPY,
    CompressionType.LZ4,
    CompressionType.ZSTD,
)
T0 = 1_700_000_000_000
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

FUZZ = settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


# -- guards ---------------------------------------------------------------------------------------


class TimeBudgetExceeded(BaseException):
    """Raised in the test's thread when it uses far more CPU than its budget: most likely a
    loop without end.

    A BaseException, so that neither the code under test nor assert_only_records_errors can
    swallow it."""


# A loop that never ends burns CPU: the budget is the CPU time of the test's own thread, which a
# loaded machine does not inflate the way it stretches wall time (the slowest test here uses
# about 11 s), and which the other threads of a test process (a session's broker, Spark's
# gateway) do not add to, as they do to the whole process's. A hang that waits instead meets
# the suite's timeout (pyproject.toml).
CPU_TIME_LIMIT_S = 30
BUDGET_CHECK_INTERVAL_S = 0.5


@contextmanager
def cpu_budget(limit_s: float):
    """Raise TimeBudgetExceeded in this thread once it has used ``limit_s`` of CPU inside the
    block: a watcher reads the thread's CPU clock and, past the budget, signals the thread,
    whose handler raises. Must be entered on the main thread (it sets a signal handler)."""
    test_thread = threading.get_ident()
    clock = time.pthread_getcpuclockid(test_thread)
    start = time.clock_gettime(clock)
    finished = threading.Event()

    def on_cpu_limit(signum, frame):
        raise TimeBudgetExceeded(f"test used over {limit_s:g} s of CPU: a hang?")

    def watch():
        while not finished.wait(BUDGET_CHECK_INTERVAL_S):
            if time.clock_gettime(clock) - start > limit_s:
                signal.pthread_kill(test_thread, signal.SIGPROF)
                return

    previous = signal.signal(signal.SIGPROF, on_cpu_limit)
    watcher = threading.Thread(target=watch, name="fuzz-cpu-budget", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        finished.set()
        watcher.join()
        signal.signal(signal.SIGPROF, previous)


@pytest.fixture(autouse=True)
def time_budget():
    """Interrupt a test that loops without end instead of letting it run to the suite's
    timeout."""
    if not hasattr(time, "pthread_getcpuclockid") or not hasattr(signal, "pthread_kill"):
        yield
        return
    with cpu_budget(CPU_TIME_LIMIT_S):
        yield


def test_the_budget_stops_a_loop_but_not_for_what_other_threads_use():
    with pytest.raises(TimeBudgetExceeded, match=r"over 0\.3 s of CPU"), cpu_budget(0.3):
        while True:
            pass
    burner_done = threading.Event()

    def burn():
        until = time.thread_time() + 1.0
        while time.thread_time() < until:
            pass
        burner_done.set()

    with cpu_budget(0.3):  # the process uses a second of CPU, this thread next to none
        threading.Thread(target=burn).start()
        assert burner_done.wait(60)


def assert_only_records_errors(fn, *, context=""):
    """Run ``fn()``; return the RecordsError it raised, or None when it succeeded.

    Any other exception fails the test, naming its type and repr.
    """
    try:
        fn()
    except RecordsError as exc:
        return exc
    except Exception as exc:
        pytest.fail(
            f"{type(exc).__module__}.{type(exc).__qualname__} escaped instead of a RecordsError"
            f"{' (' + context + ')' if context else ''}: {exc!r}\n"
            + "".join(traceback.format_exception(exc)[-6:]),
            pytrace=False,
        )
    return None


# -- targets --------------------------------------------------------------------------------------


def _scan(buf):
    return list(iter_batches(buf, validate=True))


def _records(buf, validate):
    return [list(batch) for batch in BatchReader(buf, validate=validate)]


def _arrow(buf, validate):
    """The Arrow decoding, on both implementations of the codecs, which must agree: the same
    columns, or the same error with the same message."""
    return same_on_both_paths(lambda: batches_to_arrow(
        BatchReader(buf, validate=validate), topic="t", partition=0, include_headers=True))


TARGETS = {
    "iter_batches(validate=True)": _scan,
    "records(validate=False)": lambda buf: _records(buf, False),
    "records(validate=True)": lambda buf: _records(buf, True),
    "arrow(validate=False)": lambda buf: _arrow(buf, False),
    "arrow(validate=True)": lambda buf: _arrow(buf, True),
}


def check_all_targets(buf, context=""):
    """Run every target on ``buf``; only RecordsError may escape. Returns {target: error|None}."""
    return {
        name: assert_only_records_errors(partial(target, buf),
                                         context=f"{name} {context}".strip())
        for name, target in TARGETS.items()
    }


# -- valid buffers --------------------------------------------------------------------------------

SAMPLES = [
    (b"key-1", b"value one", [("h1", b"x"), ("h2", None)], T0),
    (None, b"no key", [], T0 + 7),
    (b"k3", None, [("empty", b"")], T0 - 3),
    (b"", b"value four " * 3, [], T0 + 1),
]


def _v2(codec, **options):
    builder = RecordBatchBuilder(compression=codec, base_offset=1000, **options)
    for key, value, headers, ts in SAMPLES:
        builder.append(value, key=key, timestamp=ts, headers=headers)
    return builder.build()


def _legacy(magic, codec):
    builder = MessageSetBuilder(magic=magic, compression=codec, base_offset=1000)
    for key, value, _, ts in SAMPLES[:3]:
        builder.append(value, key=key, timestamp=ts)
    return builder.build()


def _valid_buffers():
    cases = {}
    for magic in (0, 1):
        for codec in (NONE, GZIP, SNAPPY, LZ4):
            cases[f"v{magic}-{codec.kafka_name}"] = _legacy(magic, codec)
    for codec in CompressionType:
        cases[f"v2-{codec.kafka_name}"] = _v2(codec)
    cases["v2-none-txn"] = _v2(NONE, producer_id=77, producer_epoch=2, base_sequence=5,
                               is_transactional=True)
    cases["v2-lz4-logappend"] = _v2(LZ4, timestamp_type=TimestampType.LOG_APPEND_TIME)
    cases["v2-control"] = build_control_batch(
        EndTransactionMarker(ControlRecordType.COMMIT, coordinator_epoch=5), producer_id=77,
        producer_epoch=2, timestamp=T0, base_offset=1004)
    return cases


VALID = _valid_buffers()


def _mixed_buffer():
    """A log of every magic and several codecs back to back."""
    return b"".join([
        build_message_set([(b"a", b"v0 one"), (None, b"v0 two")], magic=0, base_offset=0),
        build_message_set([(b"b", b"v1 one"), (None, None)], magic=1, timestamp=T0,
                          compression=GZIP, base_offset=2),
        _v2(NONE),
        build_message_set([(b"c", b"v0 snappy")], magic=0, compression=SNAPPY, base_offset=1004),
        _v2(ZSTD),
        build_message_set([(b"d", b"v1 lz4"), (b"e", b"")], magic=1, timestamp=T0 + 1,
                          compression=LZ4, base_offset=1005),
        VALID["v2-control"],
        _v2(SNAPPY),
    ])


MIXED = _mixed_buffer()


def test_valid_buffers_are_valid():
    for name, buf in [*VALID.items(), ("mixed", MIXED)]:
        reader = BatchReader(buf, validate=True)
        batches = list(reader)
        assert batches and not reader.incomplete, name
        for batch in batches:
            list(batch)
        _arrow(buf, True)


# -- (a) random bytes -----------------------------------------------------------------------------


@FUZZ
@given(st.binary(max_size=512))
def test_random_bytes(buf):
    check_all_targets(buf)


@st.composite
def entry_shaped_bytes(draw):
    """Random bytes behind a plausible entry head: a size that fits, a known magic."""
    magic = draw(st.sampled_from([0, 1, 2]))
    body = draw(st.binary(min_size=2, max_size=400))
    size = len(body) + 5
    offset = draw(st.integers(-(1 << 63), (1 << 63) - 1))
    head = struct.pack(">qi", offset, size) + draw(st.binary(min_size=4, max_size=4))
    buf = head + bytes([magic]) + body
    tail = draw(st.binary(max_size=30))
    return buf + tail


@FUZZ
@given(entry_shaped_bytes())
def test_random_bytes_behind_an_entry_head(buf):
    check_all_targets(buf)


def _v2_with_crc(records_section, *, attributes=0, record_count=1, last_offset_delta=0,
                 base_offset=0, base_timestamp=T0, max_timestamp=T0, producer_id=-1,
                 producer_epoch=-1, base_sequence=-1):
    """A v2 batch around arbitrary records bytes, with a correct CRC (so validate=True passes)."""
    out = bytearray(HEADER_SIZE + len(records_section))
    HEADER.pack_into(out, 0, base_offset, len(out) - 12, -1, 2, 0, attributes,
                     last_offset_delta, base_timestamp, max_timestamp, producer_id,
                     producer_epoch, base_sequence, record_count)
    out[HEADER_SIZE:] = records_section
    struct.pack_into(">I", out, 17, crc32c.crc32c(memoryview(out)[21:]))
    return bytes(out)


_int16 = st.integers(-(1 << 15), (1 << 15) - 1)
_int32 = st.integers(-(1 << 31), (1 << 31) - 1)
_int64 = st.integers(-(1 << 63), (1 << 63) - 1)
_small_count = st.one_of(st.integers(-2, 40), _int32)


@FUZZ
@given(data=st.data())
def test_crc_valid_v2_batch_with_random_records(data):
    """The CRC passes, so even validate=True hands random bytes to the record decoders."""
    codec = data.draw(st.integers(0, 7), label="codec")
    raw = data.draw(st.binary(max_size=300), label="records")
    if 1 <= codec <= 4 and data.draw(st.booleans(), label="compress"):
        raw = compress(CompressionType(codec), raw)
    attributes = codec | data.draw(st.sampled_from([0, 0x08, 0x10, 0x20, 0x40, -0x80]),
                                   label="flags")
    buf = _v2_with_crc(
        raw, attributes=attributes, record_count=data.draw(_small_count, label="count"),
        last_offset_delta=data.draw(_int32, label="lastOffsetDelta"),
        base_offset=data.draw(_int64, label="baseOffset"),
        base_timestamp=data.draw(_int64, label="baseTimestamp"),
        max_timestamp=data.draw(_int64, label="maxTimestamp"),
    )
    check_all_targets(buf)


def _mutate(data, raw):
    """Overwrite, insert or delete a few random bytes of ``raw``."""
    out = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        kind = data.draw(st.sampled_from(["set", "insert", "delete"]), label="kind")
        at = data.draw(st.integers(0, len(out)), label="at")
        if kind == "set" and at < len(out):
            out[at] = data.draw(st.integers(0, 255), label="byte")
        elif kind == "insert":
            out[at:at] = data.draw(st.binary(min_size=1, max_size=6), label="inserted")
        elif at < len(out):
            del out[at:at + data.draw(st.integers(1, 6), label="deleted")]
    return bytes(out)


_headers = st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=8))),
                    max_size=3)
_kv = st.one_of(st.none(), st.binary(max_size=20))


@FUZZ
@given(data=st.data())
def test_crc_valid_v2_batch_with_mutated_records(data):
    """Well-formed records with a few bytes changed, in a CRC-valid (possibly compressed) batch:
    the record decoders see almost-valid varint streams."""
    records = data.draw(st.lists(st.tuples(_kv, _kv, _headers), min_size=1, max_size=6))
    section = b"".join(encode_record(i, i * 3, k, v, h) for i, (k, v, h) in enumerate(records))
    section = _mutate(data, section)
    codec = data.draw(st.sampled_from(list(CompressionType)), label="codec")
    if codec is not NONE:
        section = compress(codec, section)
    count = len(records) + data.draw(st.sampled_from([0, 0, 0, -1, 1]), label="count skew")
    buf = _v2_with_crc(section, attributes=int(codec), record_count=count,
                       last_offset_delta=max(count - 1, 0))
    check_all_targets(buf)


@FUZZ
@given(data=st.data())
def test_crc_valid_legacy_messages_with_random_contents(data):
    """v0/v1 messages with correct CRCs around random keys, values and compressed inner sets."""
    magic = data.draw(st.sampled_from([0, 1]), label="magic")
    codec = data.draw(st.integers(0, 7), label="codec")
    timestamp = data.draw(st.one_of(st.integers(0, 2**45), _int64), label="timestamp")
    attributes = codec | data.draw(st.sampled_from([0, 0x08, -0x10]), label="flags")
    if 1 <= codec <= 3 and data.draw(st.booleans(), label="real inner set"):
        inner = b"".join(
            encode_message(data.draw(_int64, label="inner offset"),
                           data.draw(st.sampled_from([magic, 1 - magic]), label="inner magic"),
                           data.draw(st.sampled_from([0, 0, 1, 2]), label="inner attributes"),
                           data.draw(st.integers(0, 2**45), label="inner ts"), k, v)
            for k, v in data.draw(st.lists(st.tuples(_kv, _kv), max_size=4), label="inner")
        )
        if data.draw(st.booleans(), label="mutate inner"):
            inner = _mutate(data, inner)
        value = compress(CompressionType(codec), inner, magic=magic)
    else:
        value = data.draw(_kv, label="value")
    key = data.draw(_kv, label="key")
    offset = data.draw(_int64, label="offset")
    buf = encode_message(offset, magic, attributes, timestamp, key, value)
    buf += data.draw(st.binary(max_size=20), label="tail")
    check_all_targets(buf)


# -- (b) bit flips --------------------------------------------------------------------------------


def _layout(buf):
    """(position, size, magic, compressed) of every entry of a valid buffer."""
    return [(b.position, b.size_in_bytes, b.magic, b.compression is not NONE)
            for b in BatchReader(buf)]


def _field(magic, rel):
    if rel < 8:
        return "offset"
    if rel < 12:
        return "length"
    if magic == 2 and rel < 16:
        return "leader epoch"
    if rel == 16:
        return "magic"
    return "checked"  # covered by the CRC (v0/v1: from magic; v2: from attributes)


def _content(records):
    return [(r.timestamp, r.timestamp_type, r.key, r.value, r.headers) for r in records]


def _flip(buf, bit):
    out = bytearray(buf)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def _check_validated_flip(buf, bit, layout, original):
    """What validate=True must make of ``buf`` with ``bit`` flipped."""
    flipped = _flip(buf, bit)
    byte = bit // 8
    index = next(i for i, (pos, size, _, _) in enumerate(layout) if pos <= byte < pos + size)
    position, _, magic, _ = layout[index]
    field = _field(magic, byte - position)
    where = f"bit {bit} (byte {byte}: {field} of entry {index}, magic {magic})"

    reader = BatchReader(flipped, validate=True)
    got, error = [], None
    try:
        for batch in reader:
            got.append(batch)
    except RecordsError as exc:
        error = exc

    if field in ("offset", "leader epoch"):
        # Outside every checksum: the batch stays valid and decodes to the same records.
        assert error is None, f"{where}: {error!r}"
        assert not reader.incomplete and len(got) == len(layout), where
        for i, (batch, (orig_batch, orig_records)) in enumerate(zip(got, original, strict=True)):
            records = list(batch)
            assert _content(records) == _content(orig_records), where
            if i != index:
                assert records == orig_records, where
            elif magic == 2:
                if field == "offset":
                    delta = batch.base_offset - orig_batch.base_offset
                    assert delta != 0
                    assert [r.offset for r in records] == [r.offset + delta for r in orig_records]
                else:
                    assert records == orig_records
                    assert batch.partition_leader_epoch != orig_batch.partition_leader_epoch
        assert _arrow(flipped, True).num_rows == _arrow(buf, True).num_rows, where
    elif field == "length":
        # Longer: the entry no longer fits (incomplete) or its CRC covers other bytes; shorter:
        # too small for its magic, or the CRC does not match.
        assert len(got) == index, where
        if error is None:
            assert reader.incomplete, where
        else:
            assert isinstance(error, CorruptRecordError), f"{where}: {error!r}"
    else:
        # magic, v0/v1 CRC, v2 CRC and everything after it: the CRC (or the magic check) fails.
        assert isinstance(error, CorruptRecordError), f"{where}: {error!r}"
        assert len(got) == index, where


MAX_FLIPS = 2000


def _bits_to_flip(buf, layout):
    """Every bit of a small buffer; of a large one, every bit of each entry's first 22 bytes (the
    fields outside the CRC, magic, CRC, attributes) and a fixed random sample of the rest."""
    bits = range(len(buf) * 8)
    if len(bits) <= MAX_FLIPS:
        return list(bits)
    heads = {pos * 8 + i for pos, _, _, _ in layout for i in range(22 * 8)}
    rest = sorted(set(bits) - heads)
    sample = random.Random(len(buf)).sample(rest, max(MAX_FLIPS - len(heads), 400))
    return sorted(heads) + sorted(sample)


@pytest.mark.slow
@pytest.mark.parametrize("name", [*VALID, "mixed"])
def test_single_bit_flips(name):
    """Every bit (or, for the mixed log, a deterministic sample of bits) flipped in turn."""
    buf = MIXED if name == "mixed" else VALID[name]
    layout = _layout(buf)
    original = [(batch, list(batch)) for batch in BatchReader(buf, validate=True)]
    bits = _bits_to_flip(buf, layout)
    # Bounded work however large the buffer: every head bit and a sample of the rest.
    assert len(bits) <= max(MAX_FLIPS, 22 * 8 * len(layout) + 400)
    for bit in bits:
        flipped = _flip(buf, bit)
        check_all_targets(flipped, context=f"{name}, bit {bit} flipped")
        _check_validated_flip(buf, bit, layout, original)


@FUZZ
@given(data=st.data())
def test_random_multi_bit_flips(data):
    name = data.draw(st.sampled_from([*VALID, "mixed"]), label="buffer")
    buf = bytearray(MIXED if name == "mixed" else VALID[name])
    for bit in data.draw(st.lists(st.integers(0, len(buf) * 8 - 1), min_size=2, max_size=6),
                         label="bits"):
        buf[bit // 8] ^= 1 << (bit % 8)
    check_all_targets(bytes(buf))


# -- (c) truncation -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mixed", "v2-zstd", "v1-gzip", "v0-none"])
def test_truncation_at_every_byte(name):
    buf = MIXED if name == "mixed" else VALID[name]
    layout = _layout(buf)
    ends = [pos + size for pos, size, _, _ in layout]
    all_records = [list(b) for b in BatchReader(buf, validate=True)]
    all_rows = _arrow(buf, True).to_pylist()
    rows_per_entry = [0 if b.is_control_batch else len(recs)
                      for b, recs in zip(BatchReader(buf), all_records, strict=True)]
    for cut in range(len(buf) + 1):
        piece = buf[:cut]
        complete = sum(1 for end in ends if end <= cut)
        boundary = ends[complete - 1] if complete else 0
        for validate in (True, False):
            reader = BatchReader(piece, validate=validate)
            batches = list(reader)  # a clean truncation never raises
            assert len(batches) == complete, cut
            assert reader.position == boundary, cut
            assert reader.incomplete is (cut > boundary), cut
            assert [list(b) for b in batches] == all_records[:complete], cut
            rows = _arrow(piece, validate).to_pylist()
            assert rows == all_rows[:sum(rows_per_entry[:complete])], cut


@pytest.mark.parametrize("codec", list(CompressionType), ids=lambda c: c.kafka_name)
def test_truncated_records_section_with_valid_crc(codec):
    """The records section cut short, the batch header rewritten to match it: CRC-valid batches
    whose compressed stream or record list ends early are corrupt, never anything else."""
    section = b"".join(encode_record(i, i, k, v, h) for i, (k, v, h, _) in enumerate(SAMPLES))
    if codec is not NONE:
        section = compress(codec, section)
    for cut in range(len(section)):
        buf = _v2_with_crc(section[:cut], attributes=int(codec), record_count=len(SAMPLES),
                           last_offset_delta=len(SAMPLES) - 1)
        results = check_all_targets(buf, context=f"cut at {cut}")
        assert results["iter_batches(validate=True)"] is None
        for target in ("records(validate=True)", "arrow(validate=True)"):
            assert isinstance(results[target], CorruptRecordError), (cut, target, results[target])


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4], ids=lambda c: c.kafka_name)
@pytest.mark.parametrize("magic", [0, 1])
def test_truncated_legacy_inner_set_with_valid_crc(magic, codec):
    inner = b"".join(encode_message(i, magic, 0, T0, b"key", b"value %d" % i) for i in range(3))
    compressed = compress(codec, inner, magic=magic)
    for cut in range(len(compressed)):
        buf = encode_message(2, magic, int(codec), T0, None, compressed[:cut])
        results = check_all_targets(buf, context=f"cut at {cut}")
        assert isinstance(results["records(validate=True)"], CorruptRecordError), cut
    # inner set cut inside its last message, then compressed properly
    for cut in range(1, len(inner)):
        buf = encode_message(2, magic, int(codec), T0, None, compress(codec, inner[:cut],
                                                                       magic=magic))
        results = check_all_targets(buf, context=f"inner cut at {cut}")
        if cut in (len(inner) // 3, 2 * len(inner) // 3):  # whole messages: valid
            assert results["records(validate=True)"] is None
        else:
            assert isinstance(results["records(validate=True)"], CorruptRecordError), cut


# -- (d) absurd lengths ---------------------------------------------------------------------------

INCOMPLETE = "incomplete"


@dataclass
class Absurd:
    name: str
    buf: bytes
    scan: object  # outcome of iter_batches(validate=True): None, INCOMPLETE or an error class
    decode: object  # outcome of decoding records / Arrow rows


# the defaults are bytes, made once and never changed
def _record(attributes=b"\x00", ts_delta=encode_varlong(0),  # noqa: B008
            offset_delta=encode_varint(0), key=encode_varint(-1),  # noqa: B008
            value=encode_varint(1) + b"v", headers=encode_varint(0), length=None):  # noqa: B008
    body = attributes + ts_delta + offset_delta + key + value + headers
    return (encode_varint(len(body)) if length is None else length) + body


def _raw_varint(value, size=None):
    """Unsigned varint bytes of ``value`` (no zigzag), optionally padded to ``size`` bytes."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value or (size is not None and len(out) + 1 < size):
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _header_only_v2(batch_length):
    out = bytearray(HEADER_SIZE)
    HEADER.pack_into(out, 0, 0, batch_length, -1, 2, 0, 0, 0, T0, T0, -1, -1, -1, 1)
    return bytes(out)


def _xerial(*blocks):
    framed = (piece for block in blocks for piece in (struct.pack(">i", len(block)), block))
    return b"".join([b"\x82SNAPPY\x00", struct.pack(">ii", 1, 1), *framed])


def _lz4_with_content_size(data, content_size):
    frame = bytearray(lz4.frame.compress(data, store_size=True, block_linked=False,
                                         block_size=lz4.frame.BLOCKSIZE_MAX64KB))
    struct.pack_into("<Q", frame, 6, content_size)
    frame[14] = (xxhash.xxh32_intdigest(bytes(frame[4:14])) >> 8) & 0xFF
    return bytes(frame)


def _zstd_with_content_size(content_size):
    # frame header: magic, descriptor (single segment, 8-byte content size), content size; then
    # one raw block of 5 bytes marked last.
    header = struct.pack("<IB", 0xFD2FB528, 0xE0) + struct.pack("<Q", content_size)
    block = struct.pack("<I", (5 << 3) | 1)[:3] + b"hello"
    return header + block


def _absurd_cases():
    one = _record()
    huge = 0x7FFFFFFF
    cases = [
        Absurd("v2 batchLength 0x7FFFFFFF", _header_only_v2(huge), INCOMPLETE, INCOMPLETE),
        Absurd("v2 batchLength -1", _header_only_v2(-1), CorruptRecordError, CorruptRecordError),
        Absurd("v2 batchLength -2**31", _header_only_v2(-(1 << 31)), CorruptRecordError,
               CorruptRecordError),
        Absurd("v2 batchLength 0", _header_only_v2(0), CorruptRecordError, CorruptRecordError),
        Absurd("v2 batchLength 48", _header_only_v2(48) + bytes(40), CorruptRecordError,
               CorruptRecordError),
        Absurd("legacy messageSize 0x7FFFFFFF",
               struct.pack(">qiIbb", 0, huge, 0, 1, 0) + bytes(40), INCOMPLETE, INCOMPLETE),
        Absurd("legacy messageSize -1", struct.pack(">qiIbb", 0, -1, 0, 1, 0) + bytes(40),
               CorruptRecordError, CorruptRecordError),
        Absurd("recordCount 2**31-1, one record", _v2_with_crc(one, record_count=huge),
               None, CorruptRecordError),
        Absurd("recordCount 2**31-1, gzip",
               _v2_with_crc(compress(GZIP, one), attributes=1, record_count=huge),
               None, CorruptRecordError),
        Absurd("recordCount 2**31-1, no records", _v2_with_crc(b"", record_count=huge),
               None, CorruptRecordError),
        Absurd("recordCount -2**31", _v2_with_crc(one, record_count=-(1 << 31)),
               CorruptRecordError, CorruptRecordError),
        Absurd("record length varint 0x7FFFFFFF",
               _v2_with_crc(_record(length=encode_varint(huge))), None, CorruptRecordError),
        Absurd("record length raw varint 2**32-1 (5 bytes)",
               _v2_with_crc(_record(length=_raw_varint(2**32 - 1))), None, CorruptRecordError),
        Absurd("record length -2", _v2_with_crc(_record(length=encode_varint(-2))), None,
               CorruptRecordError),
        Absurd("record length varint of 6 bytes", _v2_with_crc(_record(length=_raw_varint(12, 6))),
               None, CorruptRecordError),
        Absurd("record length varint over 32 bits",
               _v2_with_crc(_record(length=_raw_varint(2**33))),
               None, CorruptRecordError),
        Absurd("timestampDelta varlong of 11 bytes",
               _v2_with_crc(_record(ts_delta=_raw_varint(1, 11))), None, CorruptRecordError),
        Absurd("key length 0x7FFFFFFF", _v2_with_crc(_record(key=encode_varint(huge))), None,
               CorruptRecordError),
        Absurd("key length -2", _v2_with_crc(_record(key=encode_varint(-2))), None,
               CorruptRecordError),
        Absurd("key length -2**31", _v2_with_crc(_record(key=encode_varint(-(1 << 31)))), None,
               CorruptRecordError),
        Absurd("header count 0x7FFFFFFF", _v2_with_crc(_record(headers=encode_varint(huge))),
               None, CorruptRecordError),
        Absurd("header count -1", _v2_with_crc(_record(headers=encode_varint(-1))), None,
               CorruptRecordError),
        Absurd("header key length 0x7FFFFFFF",
               _v2_with_crc(_record(headers=encode_varint(1) + encode_varint(huge))), None,
               CorruptRecordError),
        Absurd("header key null",
               _v2_with_crc(_record(headers=encode_varint(1) + encode_varint(-1)
                                    + encode_varint(-1))), None, CorruptRecordError),
        Absurd("header value length 0x7FFFFFFF",
               _v2_with_crc(_record(headers=encode_varint(1) + encode_varint(1) + b"h"
                                    + encode_varint(huge))), None, CorruptRecordError),
        Absurd("header value length -2",
               _v2_with_crc(_record(headers=encode_varint(1) + encode_varint(1) + b"h"
                                    + encode_varint(-2))), None, CorruptRecordError),
        Absurd("v0 key length 0x7FFFFFFF", _legacy_with_lengths(0, huge, 1), CorruptRecordError,
               CorruptRecordError),
        Absurd("v1 value length 0x7FFFFFFF", _legacy_with_lengths(1, 1, huge),
               CorruptRecordError, CorruptRecordError),
        Absurd("v1 key length -5", _legacy_with_lengths(1, -5, 1), CorruptRecordError,
               CorruptRecordError),
        Absurd("v1 gzip wrapper, inner messageSize 0x7FFFFFFF",
               encode_message(0, 1, 1, T0, None, compress(
                   GZIP, struct.pack(">qiIbb", 0, huge, 0, 1, 0) + bytes(30), magic=1)),
               None, CorruptRecordError),
        Absurd("v1 gzip wrapper, inner messageSize -1",
               encode_message(0, 1, 1, T0, None, compress(
                   GZIP, struct.pack(">qiIbb", 0, -1, 0, 1, 0) + bytes(30), magic=1)),
               None, CorruptRecordError),
        Absurd("v1 gzip wrapper, null value", encode_message(0, 1, 1, T0, None, None),
               None, CorruptRecordError),
        Absurd("v1 gzip wrapper, empty inner set",
               encode_message(0, 1, 1, T0, None, compress(GZIP, b"", magic=1)),
               None, CorruptRecordError),
        Absurd("v0 nested compression",
               encode_message(0, 0, 1, -1, None, compress(
                   GZIP, encode_message(0, 0, 1, -1, None, compress(GZIP, b"x")), magic=0)),
               None, CorruptRecordError),
        Absurd("v1 zstd wrapper", encode_message(0, 1, 4, T0, None, b"\x28\xb5\x2f\xfd"),
               None, UnsupportedCompressionError),
        Absurd("v2 codec id 7", _v2_with_crc(one, attributes=7), UnsupportedCompressionError,
               UnsupportedCompressionError),
        Absurd("snappy raw block claiming 2**31 bytes",
               _v2_with_crc(_raw_varint(1 << 31) + b"\x00" * 8, attributes=2), None,
               RecordTooLargeError),
        Absurd("snappy raw block claiming 2**32-1 bytes",
               _v2_with_crc(_raw_varint(2**32 - 1) + b"\x00" * 8, attributes=2), None,
               RecordTooLargeError),
        Absurd("snappy xerial block claiming 2**31 bytes",
               _v2_with_crc(_xerial(_raw_varint(1 << 31) + b"\x00" * 8), attributes=2), None,
               RecordTooLargeError),
        Absurd("snappy xerial block length 0x7FFFFFFF",
               _v2_with_crc(_xerial(b"")[:-4] + struct.pack(">i", huge) + b"\x00" * 8,
                            attributes=2), None, CorruptRecordError),
        Absurd("snappy xerial block length -1",
               _v2_with_crc(_xerial(b"")[:-4] + struct.pack(">i", -1) + b"\x00" * 8,
                            attributes=2), None, CorruptRecordError),
        Absurd("snappy claim 2**31 in a v1 wrapper",
               encode_message(0, 1, 2, T0, None, _raw_varint(1 << 31) + b"\x00" * 8), None,
               RecordTooLargeError),
        Absurd("zstd frame declaring 2**40 bytes",
               _v2_with_crc(_zstd_with_content_size(1 << 40), attributes=4), None,
               RecordTooLargeError),
        Absurd("lz4 frame declaring 2**40 bytes",
               _v2_with_crc(_lz4_with_content_size(one, 1 << 40), attributes=3), None,
               CorruptRecordError),
    ]
    return cases


def _legacy_with_lengths(magic, key_length, value_length):
    """A CRC-valid v0/v1 message whose key and value length fields are ``key_length`` and
    ``value_length`` but whose body holds only a few bytes."""
    body = struct.pack(">bb", magic, 0) + (struct.pack(">q", T0) if magic == 1 else b"")
    body += struct.pack(">i", key_length) + b"kk" + struct.pack(">i", value_length) + b"vv"
    return struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body


ABSURD = _absurd_cases()


def _outcome(fn):
    error = assert_only_records_errors(fn)
    return None if error is None else type(error)


@pytest.mark.parametrize("case", ABSURD, ids=[c.name for c in ABSURD])
def test_absurd_lengths(case):
    started = time.monotonic()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    results = check_all_targets(case.buf, context=case.name)

    reader = BatchReader(case.buf, validate=True)
    if case.scan is INCOMPLETE:
        assert list(reader) == [] and reader.incomplete
        assert results["iter_batches(validate=True)"] is None
    else:
        got = results["iter_batches(validate=True)"]
        assert (None if got is None else type(got)) is case.scan, got
    for target in ("records(validate=False)", "records(validate=True)",
                   "arrow(validate=False)", "arrow(validate=True)"):
        got = results[target]
        if case.decode is INCOMPLETE:
            assert got is None, (target, got)
        elif target.endswith("(validate=True)") and case.scan not in (None, INCOMPLETE):
            assert type(got) is case.scan, (target, got)  # the scan fails first
        else:
            assert type(got) is case.decode, (target, got)
    if case.decode is INCOMPLETE:
        assert _arrow(case.buf, False).num_rows == 0
    assert time.monotonic() - started < 2, "absurd lengths must fail fast"
    # No big allocation (ru_maxrss is in KiB on Linux). Only a weak check in-process: the peak may
    # already be higher; test_absurd_lengths_under_address_space_cap is the strict one.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 100 * 1024


def test_batch_length_beyond_max_batch_size_is_corrupt():
    reader = BatchReader(_header_only_v2(0x7FFFFFFF), max_batch_size=1 << 20)
    with pytest.raises(CorruptRecordError):
        list(reader)


# -- regressions --------------------------------------------------------------------------------


def test_arrow_legacy_timestamp_overflow_is_a_records_error():
    buf = build_message_set([(b"k", b"v")], magic=1, timestamp=1 << 62)
    assert [r.timestamp for r in next(iter_batches(buf, validate=True))] == [1 << 62]
    assert_only_records_errors(lambda: _arrow(buf, True))


def test_negative_record_count_with_empty_records():
    buf = _v2_with_crc(b"", record_count=-1)
    results = check_all_targets(buf)
    assert isinstance(results["iter_batches(validate=True)"], CorruptRecordError)
    assert isinstance(results["arrow(validate=False)"], CorruptRecordError)


def _two_records_with_header_count(count):
    record = _record(headers=encode_varint(count))
    return _v2_with_crc(record + _record(offset_delta=encode_varint(1),
                                         headers=encode_varint(count)),
                        record_count=2, last_offset_delta=1)


def test_arrow_header_count_total_beyond_int32_is_corrupt():
    buf = _two_records_with_header_count(0x7FFFFFFF)
    assert isinstance(assert_only_records_errors(lambda: _records(buf, True)), CorruptRecordError)
    assert_only_records_errors(lambda: _arrow(buf, True))


# -- allocations, measured in child processes ------------------------------------------------------

_CHILD_CAP = textwrap.dedent("""
    import json, pickle, resource, sys
    from broker_lite.records import BatchReader, RecordsError
    from broker_lite.records.arrow.decode import batches_to_arrow
    from broker_lite.records import build_batch
    cases = pickle.load(open(sys.argv[1], "rb"))
    # warm up: lazy imports (pyarrow.compute) and allocator arenas, before the cap
    warm = build_batch([(b"k" * 20, b"v" * 20, [("h", b"x" * 20)])] * 3, timestamp=0)
    for validate in (False, True):
        batches_to_arrow(BatchReader(warm, validate=validate), topic="t", partition=0,
                         include_headers=True)
    vm = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (2 << 30), resource.RLIM_INFINITY))
    out = {}
    for name, buf in cases.items():
        results = []
        for validate in (False, True):
            for fn in (lambda: [list(b) for b in BatchReader(buf, validate=validate)],
                       lambda: batches_to_arrow(BatchReader(buf, validate=validate), topic="t",
                                                partition=0, include_headers=True)):
                try:
                    fn()
                    results.append(None)
                except RecordsError as exc:
                    results.append("RecordsError")
                except BaseException as exc:
                    results.append(f"{type(exc).__name__}: {exc}")
        out[name] = results
    print(json.dumps(out))
""")


def _run_child(code, *args, timeout=60, path="compiled"):
    """Run ``code`` in a child process on the codecs of ``path`` (the pure-Python ones forced by
    ``KPY_PURE_PYTHON``); return the JSON of its last line."""
    env = dict(os.environ, PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               KPY_PURE_PYTHON="1" if path == "python" else "0")
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO_ROOT, env=env)
    signal_note = f" (signal {-proc.returncode})" if proc.returncode < 0 else ""
    assert proc.returncode == 0, (
        f"child exited with {proc.returncode}{signal_note}: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


_CHILD_ARROW = textwrap.dedent("""
    import json, sys
    from broker_lite.records import BatchReader, RecordsError
    from broker_lite.records.arrow.decode import batches_to_arrow
    buf = open(sys.argv[1], "rb").read()
    out = []
    for validate in (True, False):
        for include_headers in (True, False):
            try:
                batches_to_arrow(BatchReader(buf, validate=validate), topic="t", partition=0,
                                 include_headers=include_headers)
                out.append(None)
            except RecordsError:
                out.append("RecordsError")
    print(json.dumps(out))
""")


@pytest.mark.parametrize("codecs", PATHS)
def test_arrow_value_length_overrun_is_corrupt_not_a_crash(tmp_path, codecs):
    buf = _v2_with_crc(_record(value=encode_varint(0x7FFFFFFF)))
    assert _scan(buf)  # CRC-valid
    assert isinstance(assert_only_records_errors(lambda: _records(buf, True)), CorruptRecordError)
    path = tmp_path / "batch"
    path.write_bytes(buf)
    assert _run_child(_CHILD_ARROW, str(path), path=codecs) == ["RecordsError"] * 4


@pytest.fixture(scope="module", params=PATHS)
def capped_outcomes(request, tmp_path_factory):
    """Every absurd case decoded in a child whose address space is capped at 2 GiB above what
    it uses after its imports: a decoder that allocates for a claimed size, even lazily (calloc,
    np.zeros), fails there with MemoryError. Once on each implementation of the codecs."""
    cases = {c.name: c.buf for c in ABSURD}
    path = tmp_path_factory.mktemp("capped") / "cases.pickle"
    path.write_bytes(pickle.dumps(cases))
    return _run_child(_CHILD_CAP, str(path), path=request.param)


def test_absurd_lengths_under_address_space_cap(capped_outcomes):
    escaped = {name: [r for r in results if r not in (None, "RecordsError")]
               for name, results in capped_outcomes.items()}
    assert {k: v for k, v in escaped.items() if v} == {}


def test_arrow_huge_header_count_allocates_nothing(capped_outcomes):
    # [records, Arrow] with validate=False, then with validate=True
    assert capped_outcomes["header count 0x7FFFFFFF"] == ["RecordsError"] * 4


# -- compression bombs ----------------------------------------------------------------------------

_BOMB_CACHE = {}


def _bomb(codec, megabytes):
    """``megabytes`` MiB of zeros compressed by ``codec``, one stream."""
    key = (codec, megabytes)
    if key not in _BOMB_CACHE:
        chunk = bytes(1 << 20)
        if codec is GZIP:
            c = zlib.compressobj(9, zlib.DEFLATED, 31)
            data = b"".join([c.compress(chunk) for _ in range(megabytes)] + [c.flush()])
        elif codec is ZSTD:
            c = zstandard.ZstdCompressor(level=3).compressobj()
            data = b"".join([c.compress(chunk) for _ in range(megabytes)] + [c.flush()])
        elif codec is LZ4:
            c = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                                             block_linked=False)
            data = c.begin() + b"".join(c.compress(chunk) for _ in range(megabytes)) + c.flush()
        else:
            data = _xerial(*[snappy.compress(bytes(32 * 1024))] * (megabytes * 32))
        _BOMB_CACHE[key] = data
    return _BOMB_CACHE[key]


def test_default_max_decompressed_bytes():
    assert DEFAULT_MAX_DECOMPRESSED_BYTES == 256 * 1024 * 1024


@pytest.mark.slow
@pytest.mark.parametrize("codec", [GZIP, ZSTD, LZ4, SNAPPY], ids=lambda c: c.kafka_name)
def test_bomb_over_the_limit_raises_record_too_large(codec):
    """300 MiB of zeros (over the 256 MiB default) from a few hundred KiB: the guard trips."""
    payload = _bomb(codec, 300)
    assert len(payload) < 20 << 20
    buf = _v2_with_crc(payload, attributes=int(codec))
    assert _scan(buf)  # the CRC is fine
    assert isinstance(assert_only_records_errors(lambda: _records(buf, True)), RecordTooLargeError)
    assert isinstance(assert_only_records_errors(lambda: _arrow(buf, True)), RecordTooLargeError)


def test_bomb_in_legacy_wrapper_raises_record_too_large():
    buf = encode_message(0, 1, int(GZIP), T0, None, _bomb(GZIP, 300))
    assert isinstance(assert_only_records_errors(lambda: _records(buf, True)), RecordTooLargeError)


# Peak RSS is read as VmHWM, reset just before decoding: ru_maxrss would not do in a child, as
# Linux carries the parent's peak across vfork + exec into it.
_CHILD_BOMB = textwrap.dedent("""
    import json, struct, sys
    import crc32c
    from broker_lite.records import BatchReader, RecordsError
    from broker_lite.records.record_batch import HEADER, HEADER_SIZE

    def status(field):
        with open("/proc/self/status") as f:
            return int(f.read().split(field + ":")[1].split()[0])  # KiB

    payload = open(sys.argv[1], "rb").read()
    out = bytearray(HEADER_SIZE + len(payload))
    HEADER.pack_into(out, 0, 0, len(out) - 12, -1, 2, 0, int(sys.argv[2]), 0, 0, 0, -1, -1, -1, 1)
    out[HEADER_SIZE:] = payload
    struct.pack_into(">I", out, 17, crc32c.crc32c(memoryview(out)[21:]))
    buf = bytes(out)
    del out, payload
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the peak to the current RSS
    except OSError:
        pass
    before = status("VmRSS")
    error = None
    try:
        for batch in BatchReader(buf, validate=True):
            list(batch)
    except RecordsError as exc:
        error = type(exc).__name__
    print(json.dumps({"error": error, "growth_kib": status("VmHWM") - before}))
""")

BOMB_SLACK_MIB = 64  # interpreter, modules and the compressed input

_BOMBS = [
    pytest.param(codec, mib, id=f"{codec.kafka_name}-{mib}MiB")
    for codec in (GZIP, LZ4, SNAPPY, ZSTD) for mib in (200, 300)
]


@pytest.mark.parametrize("codec,megabytes", _BOMBS)
def test_bomb_peak_memory(codec, megabytes, tmp_path):
    """Peak RSS growth while decoding a bomb of zeros, measured in a fresh process: under the
    limit it must decode (to a CorruptRecordError: zeros are no records), over it raise
    RecordTooLargeError; either way within the documented bound of about twice the output
    (the codec libraries' pieces plus the joined bytes), never more than ~2x the limit."""
    path = tmp_path / "bomb"
    path.write_bytes(_bomb(codec, megabytes))
    result = _run_child(_CHILD_BOMB, str(path), str(int(codec)))
    over_limit = (megabytes << 20) > DEFAULT_MAX_DECOMPRESSED_BYTES
    assert result["error"] == ("RecordTooLargeError" if over_limit else "CorruptRecordError")
    output_mib = min(megabytes, DEFAULT_MAX_DECOMPRESSED_BYTES >> 20)
    bound_mib = 2 * output_mib + BOMB_SLACK_MIB
    assert result["growth_kib"] < bound_mib * 1024, f"{result['growth_kib'] / 1024:.0f} MiB"
