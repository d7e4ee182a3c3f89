"""Benchmark: Kafka record batches <-> Arrow, against kafka-python's record codec as the peer.

    python -m kspark.bench.arrow_codec [--batches 40] [--repeat 7]

Batches of 5,000 records (10-byte keys, 100-byte values) are decoded into Arrow columns by kpy and
walked record by record by kafka-python's reader (``kafka.record.MemoryRecords``, CRC checked and
every field read, as its consumer does), in the same process, alternating, on one pinned core. The
same rows are encoded from Arrow columns by kpy and appended by kafka-python's batch builder.
kpy is measured twice: with its compiled codecs (:mod:`broker_lite.records._native`), and with the
pure-Python ones (its fallback where no C compiler built them). Figures are medians over
``--repeat`` rounds in which the ways take turns, each timed run following a tenth of a second of
untimed ones of the same way (see :func:`median_seconds`); ratios are kpy / kafka-python and
compiled / pure Python.
"""

import argparse
import os
import statistics
import time
from functools import partial

import numpy as np
import pyarrow as pa

from broker_lite.records import CompressionType, _native, iter_batches
from broker_lite.records.arrow import batches_to_arrow
from broker_lite.records.arrow.encode import arrow_to_batch

RECORDS_PER_BATCH = 5_000
KEY_BYTES = 10
VALUE_BYTES = 100
CODECS = (CompressionType.NONE, CompressionType.LZ4, CompressionType.ZSTD)


def sample_rows(n: int, seed: int = 1) -> pa.Table:
    """Keys and values of half random, half repetitive bytes, so compression has work to do."""
    rng = np.random.default_rng(seed)
    def column(width):
        raw = rng.integers(0, 256, size=(n, width), dtype=np.uint8)
        raw[:, width // 2:] = ord("x")
        offsets = np.arange(n + 1, dtype=np.int32) * width
        return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets),
                                                      pa.py_buffer(raw.tobytes())])
    return pa.table({"key": column(KEY_BYTES), "value": column(VALUE_BYTES)})


#: Seconds of untimed runs a way makes in its turn before its timed run (see median_seconds).
WARM_SECONDS = 0.1


def median_seconds(ways: dict, repeat: int) -> dict:
    """The median seconds of each of ``ways`` ({name: (fn, runs)}), the ways taking turns so
    that a change in the machine's load falls on all of them alike.

    In its turn, a way runs untimed for :data:`WARM_SECONDS` (once at least), then once
    timed: as a reader decoding batch after batch runs, with its memory in use. Memory left
    untouched for a tenth of a second comes back slowly on a virtual machine, with no page
    fault the guest sees: copying a 24 MB numpy array into another, both long allocated,
    takes 2 ms, and 13 to 16 ms right after a 0.2 s sleep, back to 2 ms only after four
    copies. A way timed after one untimed run, following the others' turns, would time that
    (kpy's decode measured 19M records/s so, and 35M warmed for 0.05 s, the other ways'
    work in between either way)."""
    times: dict = {name: [] for name in ways}
    for round_ in range(repeat):
        for name, (fn, runs) in ways.items():
            if round_ < runs:
                warm_until = time.perf_counter() + WARM_SECONDS
                fn()
                while time.perf_counter() < warm_until:
                    fn()
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(seconds) for name, seconds in times.items()}


def kpy_decode(buffer: bytes) -> int:
    return batches_to_arrow(iter_batches(buffer, validate=True), topic="bench",
                            partition=0).num_rows


def encode_all(rows: pa.Table, codec: CompressionType, batches: int,
               peer=None, keys=None, values=None) -> list[bytes]:
    """``batches`` batches of ``rows`` by kpy, or by ``peer`` (kafka-python) from the same rows
    as lists of ``keys`` and ``values``."""
    if peer is not None:
        return [peer(keys, values, codec) for _ in range(batches)]
    return [arrow_to_batch(rows, compression=codec) for _ in range(batches)]


def kafka_python_decode(buffer: bytes) -> int:
    from kafka.record import MemoryRecords

    records = MemoryRecords(buffer)
    n = 0
    while (batch := records.next_batch()) is not None:
        if not batch.validate_crc():
            raise ValueError("kafka-python found a bad CRC")
        for record in batch:
            # each field read, as the codec under test decodes each
            record.offset, record.timestamp, record.key, record.value, record.headers  # noqa: B018
            n += 1
    return n


def kafka_python_encode(keys: list, values: list, codec: CompressionType) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=int(codec), is_transactional=False, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 30,
    )
    for offset, (key, value) in enumerate(zip(keys, values, strict=True)):
        builder.append(offset, timestamp=1_700_000_000_000, key=key, value=value, headers=[])
    return bytes(builder.build())


def on_codecs(compiled, fn):
    """``fn`` with kpy's record codecs set to ``compiled`` (None: the pure-Python ones)."""
    def run():
        previous, _native.codec = _native.codec, compiled
        try:
            return fn()
        finally:
            _native.codec = previous
    return run


def run(batches: int, repeat: int) -> list[dict]:
    rows = sample_rows(RECORDS_PER_BATCH)
    keys = rows.column("key").to_pylist()
    values = rows.column("value").to_pylist()
    total = batches * RECORDS_PER_BATCH
    compiled = _native.codec
    results = []
    for codec in CODECS:
        one = arrow_to_batch(rows, compression=codec, timestamp=1_700_000_000_000)
        buffer = one * batches  # offsets repeat; both readers take them as they are
        assert kpy_decode(buffer) == kafka_python_decode(buffer) == total
        peer_runs = max(3, repeat // 2)  # kafka-python is slow: fewer runs of it
        decode = partial(kpy_decode, buffer)
        encode = partial(encode_all, rows, codec, batches)
        seconds = median_seconds({
            "kpy_decode": (on_codecs(compiled, decode), repeat),
            "python_decode": (on_codecs(None, decode), repeat),
            "peer_decode": (partial(kafka_python_decode, buffer), peer_runs),
            "kpy_encode": (on_codecs(compiled, encode), repeat),
            "python_encode": (on_codecs(None, encode), repeat),
            # two batches' worth, scaled: kafka-python encodes record by record
            "peer_encode": (partial(encode_all, rows, codec, 2, kafka_python_encode, keys,
                                    values), peer_runs),
        }, repeat)
        seconds["peer_encode"] *= batches / 2
        result = {name: total / value for name, value in seconds.items()}
        result["codec"] = codec.kafka_name
        results.append(result)
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=40,
                        help="batches per run (5,000 records each)")
    parser.add_argument("--repeat", type=int, default=7,
                        help="runs per figure; the median is shown")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    print(f"{args.batches} batches x {RECORDS_PER_BATCH:,} records, {KEY_BYTES}-byte keys, "
          f"{VALUE_BYTES}-byte values, one core, median of {args.repeat} runs (records/s)")
    print(_native.describe())
    results = run(args.batches, args.repeat)
    for step in ("decode", "encode"):
        print(f"{step} {'codec':<6} {'kpy':>12} {'kpy Python':>12} {'ratio':>6}   "
              f"{'kafka-python':>13} {'ratio':>6}")
        for r in results:
            kpy, python, peer = r[f"kpy_{step}"], r[f"python_{step}"], r[f"peer_{step}"]
            print(f"{step} {r['codec']:<6} {kpy:>12,.0f} {python:>12,.0f} {kpy / python:>5.1f}x   "
                  f"{peer:>13,.0f} {kpy / peer:>5.1f}x")
    print("kpy: the codecs in use (above); kpy Python: the pure-Python codecs, in the same run")
    print("targets: decode (none) >= 20,000,000 records/s compiled, >= 2,000,000 on pure Python, "
          "and >= 5x kafka-python; encode >= 1,000,000 records/s")


if __name__ == "__main__":
    main()
