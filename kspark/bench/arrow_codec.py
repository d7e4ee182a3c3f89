"""Benchmark: Kafka record batches <-> Arrow, against kafka-python's record codec as the peer.

    python -m kspark.bench.arrow_codec [--batches 40] [--repeat 7]

Batches of 5,000 records (10-byte keys, 100-byte values) are decoded into Arrow columns by kpy and
walked record by record by kafka-python's reader (``kafka.record.MemoryRecords``, CRC checked and
every field read, as its consumer does), in the same process, alternating, on one pinned core. The
same rows are encoded from Arrow columns by kpy and appended by kafka-python's batch builder.
Figures are medians over ``--repeat`` runs; ratios are kpy / kafka-python.
"""

import argparse
import os
import statistics
import time
from functools import partial

import numpy as np
import pyarrow as pa

from broker_lite.records import CompressionType, iter_batches
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


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def kpy_decode(buffer: bytes) -> int:
    return batches_to_arrow(iter_batches(buffer, validate=True), topic="bench",
                            partition=0).num_rows


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


def run(batches: int, repeat: int) -> list[dict]:
    rows = sample_rows(RECORDS_PER_BATCH)
    keys = rows.column("key").to_pylist()
    values = rows.column("value").to_pylist()
    total = batches * RECORDS_PER_BATCH
    results = []
    for codec in CODECS:
        one = arrow_to_batch(rows, compression=codec, timestamp=1_700_000_000_000)
        buffer = one * batches  # offsets repeat; both readers take them as they are
        assert kpy_decode(buffer) == kafka_python_decode(buffer) == total
        kpy_dec = median_seconds(partial(kpy_decode, buffer), repeat)
        peer_dec = median_seconds(partial(kafka_python_decode, buffer), max(3, repeat // 2))
        kpy_enc = median_seconds(
            lambda codec=codec: [arrow_to_batch(rows, compression=codec) for _ in range(batches)],
            repeat)
        peer_enc = median_seconds(
            lambda codec=codec: [kafka_python_encode(keys, values, codec) for _ in range(2)],
            max(3, repeat // 2)) * batches / 2
        results.append(dict(
            codec=codec.kafka_name,
            kpy_decode=total / kpy_dec, peer_decode=total / peer_dec,
            kpy_encode=total / kpy_enc, peer_encode=total / peer_enc,
        ))
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
    header = f"{'codec':<6} {'kpy decode':>12} {'kafka-python':>13} {'ratio':>6}   " \
             f"{'kpy encode':>12} {'kafka-python':>13} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for r in run(args.batches, args.repeat):
        print(f"{r['codec']:<6} {r['kpy_decode']:>12,.0f} {r['peer_decode']:>13,.0f} "
              f"{r['kpy_decode'] / r['peer_decode']:>5.1f}x   {r['kpy_encode']:>12,.0f} "
              f"{r['peer_encode']:>13,.0f} {r['kpy_encode'] / r['peer_encode']:>5.1f}x")
    print("targets: decode (none) >= 2,000,000 records/s and >= 5x kafka-python; "
          "encode >= 1,000,000 records/s")


if __name__ == "__main__":
    main()
