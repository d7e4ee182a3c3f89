"""Benchmark of the log: append throughput against a plain file write, and read latency by offset
as the log grows.

    python -m broker_lite.log.bench [--total-mb 512] [--repeat 5] [--lookups 2000] [--dir DIR]

Append. A valid v2 batch of about 1 MiB (1,000 records with 1 KiB values) and one of about
16 KiB (16 such records) are built once, uncompressed. One run appends one of them N times, N
times its size being ``--total-mb``, to a fresh :class:`Log` (segments of 1 GiB, Kafka's
default; ``flush.messages`` unlimited, so no fsync: Kafka's default too, which leaves writeback
to the OS). Every append is checked and given offsets as a producer's would be (the CRC is verified,
the header patched), so the same bytes can be appended again and again. The peer is a plain
Python loop writing the same bytes the same number of times to a file opened with
``open(path, "wb")``. Log and plain runs alternate, in the same process and directory; each
figure is the median over ``--repeat`` runs (MB = 10^6 bytes), and the ratio is log / plain.
Opening and closing the log or file are outside the timed part; files are removed after each run.

Read. A log with segments of 512 KiB is filled with the 16 KiB batch until it holds 1, 10, 50
and then 100 full segments. At each size, ``--lookups`` random offsets (uniform over the log)
are looked up twice: once timing ``Log.read(offset, 1 MiB)`` alone (the lookup: the segment found
by bisection over base offsets, the position in it from its offset index), once timing the
lookup and the reading of the returned region's bytes (up to the end of the segment). The median
and 99th percentile latencies of both are printed, with the ratio of the 100-segment median to
the 1-segment one. The lookup must stay flat as the log grows. The bytes read come from a working
set that grows with the log (one 512 KiB segment stays in the CPU caches, a hundred do not), so
lookup plus read also pays for memory, which the search itself does not.
"""

import argparse
import gc
import random
import shutil
import statistics
import struct
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from broker_lite.config.topic import LogConfig
from broker_lite.records import BatchReader, build_batch

from .log import Log

MB = 1_000_000
VALUE_BYTES = 1024
BATCHES = {"1 MiB": 1000, "16 KiB": 16}  # records of 1 KiB values per batch
APPEND_SEGMENT_BYTES = LogConfig().segment_bytes  # 1 GiB, Kafka's default
READ_SEGMENT_BYTES = 512 << 10
READ_MAX_BYTES = 1 << 20
READ_SEGMENT_COUNTS = (1, 10, 50, 100)
TOPIC_DIR = "bench-0"


def make_batch(records: int, seed: int = 0) -> bytes:
    """An uncompressed v2 batch of ``records`` records: 12-byte keys, 1 KiB values."""
    rng = random.Random(seed)
    return build_batch(
        [(b"key-%08d" % i, rng.randbytes(VALUE_BYTES)) for i in range(records)],
        timestamp=1_700_000_000_000,
    )


def append_config() -> LogConfig:
    return replace(LogConfig(), segment_bytes=APPEND_SEGMENT_BYTES)


def time_log_append(directory: Path, batch: bytes, count: int) -> float:
    """Seconds to append ``batch`` ``count`` times to a fresh log."""
    log = Log(directory / TOPIC_DIR, append_config())
    try:
        start = time.perf_counter()
        for _ in range(count):
            log.append(batch)
        elapsed = time.perf_counter() - start
        assert log.log_end_offset == count * next(iter(BatchReader(batch))).record_count
    finally:
        log.delete()  # closes without the fsync of close(), and removes the files
    return elapsed


def time_plain_write(directory: Path, batch: bytes, count: int) -> float:
    """Seconds to write ``batch`` ``count`` times to a new file with a plain loop."""
    path = directory / "plain.bin"
    try:
        with open(path, "wb") as f:
            start = time.perf_counter()
            for _ in range(count):  # the peer is this loop
                f.write(batch)
            f.flush()
            elapsed = time.perf_counter() - start
    finally:
        path.unlink(missing_ok=True)
    return elapsed


def bench_append(directory: Path, total_mb: float, repeat: int) -> list[dict]:
    results = []
    for name, records in BATCHES.items():
        batch = make_batch(records)
        count = max(1, round(total_mb * MB / len(batch)))
        log_times, plain_times = [], []
        for i in range(repeat):
            # Alternate, and alternate which goes first, so neither always meets a busier disk.
            runs = [(log_times, time_log_append), (plain_times, time_plain_write)]
            for times, run in runs if i % 2 == 0 else runs[::-1]:
                times.append(run(directory, batch, count))
        volume = len(batch) * count
        log_s, plain_s = statistics.median(log_times), statistics.median(plain_times)
        results.append({
            "name": name, "batch_bytes": len(batch), "count": count,
            "log_mb_s": volume / log_s / MB, "log_batches_s": count / log_s,
            "plain_mb_s": volume / plain_s / MB, "plain_batches_s": count / plain_s,
        })
    return results


def percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def bench_read(directory: Path, lookups: int, seed: int = 1) -> list[dict]:
    batch = make_batch(BATCHES["16 KiB"])
    per_segment = READ_SEGMENT_BYTES // len(batch)
    config = replace(LogConfig(), segment_bytes=READ_SEGMENT_BYTES)
    log = Log(directory / TOPIC_DIR, config)
    rng = random.Random(seed)
    results = []
    try:
        appended = 0
        for segments in READ_SEGMENT_COUNTS:
            while appended < segments * per_segment:
                log.append(batch)
                appended += 1
            assert len(log.segments) == segments, (len(log.segments), segments)
            offsets = [rng.randrange(log.log_end_offset) for _ in range(lookups)]
            lookups_us, totals_us = [], []
            gc.disable()
            try:
                for offset in offsets:
                    start = time.perf_counter_ns()
                    region = log.read(offset, READ_MAX_BYTES)
                    lookups_us.append((time.perf_counter_ns() - start) / 1000)
                    region.close()
                for offset in offsets:
                    start = time.perf_counter_ns()
                    data = log.read(offset, READ_MAX_BYTES).read()
                    totals_us.append((time.perf_counter_ns() - start) / 1000)
                    base, = struct.unpack_from(">q", data)
                    last_delta, = struct.unpack_from(">i", data, 23)
                    assert base <= offset <= base + last_delta, (offset, base)
            finally:
                gc.enable()
            lookups_us.sort()
            totals_us.sort()
            results.append({
                "segments": segments,
                "lookup_median_us": statistics.median(lookups_us),
                "lookup_p99_us": percentile(lookups_us, 0.99),
                "total_median_us": statistics.median(totals_us),
                "total_p99_us": percentile(totals_us, 0.99),
            })
    finally:
        log.delete()
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total-mb", type=float, default=512,
                        help="MB appended per run, for each batch size (default 512)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs per append figure; the median is shown (default 5)")
    parser.add_argument("--lookups", type=int, default=2000,
                        help="random reads per log size (default 2000)")
    parser.add_argument("--dir", type=Path, default=None,
                        help="where to write (default: a temporary directory, removed after)")
    args = parser.parse_args(argv)

    own_dir = args.dir is None
    directory = Path(tempfile.mkdtemp(prefix="kpy-log-bench-")) if own_dir else args.dir
    directory.mkdir(parents=True, exist_ok=True)
    try:
        print(f"log append vs plain file write: {args.total_mb:g} MB per run of uncompressed "
              f"batches of {VALUE_BYTES}-byte values, segments of {APPEND_SEGMENT_BYTES >> 20} "
              f"MiB, no fsync; median of {args.repeat} alternating runs; MB = 10^6 bytes; "
              f"in {directory}")
        for r in bench_append(directory, args.total_mb, args.repeat):
            print(f"append {r['name']:>6} batches ({r['batch_bytes']:,} bytes x {r['count']:,}): "
                  f"log {r['log_mb_s']:,.1f} MB/s {r['log_batches_s']:,.1f} batches/s | "
                  f"plain {r['plain_mb_s']:,.1f} MB/s {r['plain_batches_s']:,.1f} batches/s | "
                  f"ratio {r['log_mb_s'] / r['plain_mb_s']:.2f}")
        print(f"read by offset: Log.read(random offset, {READ_MAX_BYTES >> 20} MiB) and the "
              f"region's bytes, {args.lookups:,} lookups per size, segments of "
              f"{READ_SEGMENT_BYTES >> 10} KiB holding {BATCHES['16 KiB']}-record batches")
        reads = bench_read(directory, args.lookups)
        for r in reads:
            print(f"read {r['segments']:>3} segments: lookup median {r['lookup_median_us']:,.1f} "
                  f"us p99 {r['lookup_p99_us']:,.1f} us | lookup+read median "
                  f"{r['total_median_us']:,.1f} us p99 {r['total_p99_us']:,.1f} us")
        first, last = reads[0], reads[-1]
        print(f"read latency ratio, {last['segments']} / {first['segments']} segments (median): "
              f"lookup {last['lookup_median_us'] / first['lookup_median_us']:.2f} | "
              f"lookup+read {last['total_median_us'] / first['total_median_us']:.2f}")
        print("targets: append >= 500 MB/s of 1 MiB batches and >= 0.7 of the plain write; "
              "lookup latency flat as the log grows (100 / 1 segments about 1)")
    finally:
        if own_dir:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
