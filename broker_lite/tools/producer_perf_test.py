"""``broker-lite producer-perf-test``: measure producing, as ``kafka-producer-perf-test.sh``.

    broker-lite producer-perf-test --topic perf --num-records 100000 --record-size 100 \\
        --throughput -1 --producer-props bootstrap.servers=127.0.0.1:9092 acks=all

Sends ``--num-records`` records without keys, each the same ``--record-size`` bytes of random
capital letters (Kafka's payload) or a random line of ``--payload-file``, through
``KafkaClient.producer().send_arrow`` in chunks (the kspark producer sends whole Arrow inputs,
not one record at a time); ``--throughput`` caps the records per second (-1: no cap). Every 5 s,
and at the end, it prints Kafka's lines::

    N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency.
    N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency, P ms 50th, \\
P ms 95th, P ms 99th, P ms 99.9th.

A record's latency runs from the moment its chunk is handed to the producer until the broker
acknowledged the chunk (whole milliseconds, as Kafka measures them). With ``--transactional-id``
the records are written in transactions committed every ``--transaction-duration-ms``.
A progress bar shows on stderr when it is a terminal.
"""

import argparse
import random
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from broker_lite.client import KafkaClientError

from . import properties
from .common import DEFAULT_TIMEOUT_MS, ToolError, kafka_client, progress

NAME = "producer-perf-test"
HELP = "measure producing throughput and latency (kafka-producer-perf-test)"

REPORTING_INTERVAL_MS = 5000
DEFAULT_TRANSACTIONAL_ID = "performance-producer-default-transactional-id"
DEFAULT_TRANSACTION_DURATION_MS = 3000
CHUNK_BYTES = 1 << 20  # records handed to the producer at once, at most
CHUNKS_PER_SECOND = 20  # under a throughput cap: small chunks, so the cap holds within a second
MB = 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", required=True, help="the topic to produce to")
    parser.add_argument("--num-records", type=int, required=True, metavar="N",
                        help="how many records to send")
    payload = parser.add_mutually_exclusive_group(required=True)
    payload.add_argument("--record-size", type=int, metavar="BYTES",
                         help="the size of each record")
    payload.add_argument("--payload-file", metavar="PATH",
                         help="send random payloads from this UTF-8 file, one per delimited part")
    parser.add_argument("--payload-delimiter", default="\\n", metavar="TEXT",
                        help="what separates the payloads of --payload-file (default \\n)")
    parser.add_argument("--throughput", type=int, required=True, metavar="RECORDS_PER_SEC",
                        help="the most records per second to send; -1 for no limit")
    parser.add_argument("--producer-props", nargs="+", type=properties.key_value,
                        metavar="KEY=VALUE",
                        help="producer settings, with Kafka's names (bootstrap.servers=..., "
                             "acks=..., compression.type=..., batch.size=...)")
    parser.add_argument("--producer.config", dest="producer_config", metavar="PATH",
                        help="a properties file of producer settings")
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT",
                        help="the broker(s) to connect to (or bootstrap.servers in the "
                             "producer settings)")
    parser.add_argument("--transactional-id", metavar="ID",
                        help="write in transactions, with this transactional id")
    parser.add_argument("--transaction-duration-ms", type=int, metavar="MS",
                        help="commit a transaction after this long (default "
                             f"{DEFAULT_TRANSACTION_DURATION_MS} when transactional)")
    parser.set_defaults(usage_error=parser.error)


def run(args: argparse.Namespace) -> int:
    if args.num_records <= 0:
        args.usage_error(f"--num-records must be > 0, got {args.num_records}")
    if args.record_size is not None and args.record_size < 0:
        args.usage_error(f"--record-size must be >= 0, got {args.record_size}")
    if args.throughput == 0 or args.throughput < -1:
        args.usage_error(f"--throughput must be > 0, or -1 for no limit, got {args.throughput}")
    settings = properties.merged(args.producer_config, "--producer.config", args.producer_props)
    bootstrap = args.bootstrap_server or settings.pop("bootstrap.servers", None)
    if bootstrap is None:
        args.usage_error("--bootstrap-server, or bootstrap.servers in --producer-props or "
                         "--producer.config, is required")
    settings.pop("bootstrap.servers", None)
    settings.pop("key.serializer", None)
    settings.pop("value.serializer", None)
    transactional = args.transactional_id is not None or \
        (args.transaction_duration_ms or 0) > 0
    if transactional:
        settings["transactional.id"] = args.transactional_id or DEFAULT_TRANSACTIONAL_ID
    payloads = _payloads(args)
    with kafka_client(properties.client_args(bootstrap, settings, DEFAULT_TIMEOUT_MS)) as client:
        try:
            with client.producer() as producer:
                stats = _produce(producer, args, payloads, transactional)
        except KafkaClientError as exc:
            raise ToolError(f"producing to {args.topic} failed: {exc}") from exc
    stats.print_total()
    return 0


def _payloads(args: argparse.Namespace) -> pa.Array:
    """The payloads to pick from: Kafka's one random-letters payload, or the file's parts."""
    if args.record_size is not None:
        rng = random.Random(0)
        return pa.array([bytes(rng.randrange(26) + 65 for _ in range(args.record_size))],
                        pa.binary())
    try:
        with open(args.payload_file, encoding="utf-8") as payload:
            text = payload.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"cannot read --payload-file {args.payload_file}: {exc}") from None
    delimiter = "\n" if args.payload_delimiter == "\\n" else args.payload_delimiter
    parts = [p for p in text.split(delimiter) if p]
    if not parts:
        raise ToolError(f"--payload-file {args.payload_file} holds no payload")
    print(f"Reading payloads from: {args.payload_file}")
    print(f"Number of messages read: {len(parts)}")
    return pa.array([p.encode() for p in parts], pa.binary())


def _produce(producer, args: argparse.Namespace, payloads: pa.Array,
             transactional: bool) -> "Stats":
    average_size = max(1, int(np.mean(pc.binary_length(payloads).to_numpy())))
    chunk = max(1, CHUNK_BYTES // average_size)
    if args.throughput > 0:
        chunk = min(chunk, max(1, args.throughput // CHUNKS_PER_SECOND))
    rng = np.random.default_rng(0)
    stats = Stats(args.num_records)
    duration_s = (args.transaction_duration_ms or DEFAULT_TRANSACTION_DURATION_MS) / 1000
    if transactional:
        producer.init_transactions()
    in_transaction, transaction_start = False, 0.0
    sent = 0
    with progress(args.num_records, "Producing") as bar:
        while sent < args.num_records:
            n = min(chunk, args.num_records - sent)
            if len(payloads) == 1:
                values = pa.repeat(payloads[0], n)
            else:
                values = payloads.take(pa.array(rng.integers(0, len(payloads), n)))
            rows = pa.table({"value": values})
            if transactional and not in_transaction:
                producer.begin_transaction()
                in_transaction, transaction_start = True, time.monotonic()
            started = time.monotonic()
            producer.send_arrow(args.topic, rows)
            latency_ms = int((time.monotonic() - started) * 1000)
            stats.record(n, pc.sum(pc.binary_length(values)).as_py() or 0, latency_ms)
            sent += n
            bar.update(n)
            if in_transaction and time.monotonic() - transaction_start >= duration_s:
                producer.commit_transaction()
                in_transaction = False
            if args.throughput > 0:  # sleep until the cap allows what was sent
                ahead = stats.start + sent / args.throughput - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
        if in_transaction:
            producer.commit_transaction()
    return stats


@dataclass
class Stats:
    """Counts and latencies of the records sent, overall and in the current 5 s window."""

    num_records: int
    start: float = field(default_factory=time.monotonic)
    count: int = 0
    bytes: int = 0
    total_latency: int = 0  # ms, summed over records
    max_latency: int = 0
    latencies: list[tuple[int, int]] = field(default_factory=list)  # (latency ms, records)
    window_start: float = field(default_factory=time.monotonic)
    window_count: int = 0
    window_bytes: int = 0
    window_total_latency: int = 0
    window_max_latency: int = 0

    def record(self, records: int, size: int, latency_ms: int) -> None:
        self.count += records
        self.bytes += size
        self.total_latency += latency_ms * records
        self.max_latency = max(self.max_latency, latency_ms)
        self.latencies.append((latency_ms, records))
        self.window_count += records
        self.window_bytes += size
        self.window_total_latency += latency_ms * records
        self.window_max_latency = max(self.window_max_latency, latency_ms)
        if (time.monotonic() - self.window_start) * 1000 >= REPORTING_INTERVAL_MS:
            self.print_window()
            self.window_start = time.monotonic()
            self.window_count = self.window_bytes = 0
            self.window_total_latency = self.window_max_latency = 0

    def print_window(self) -> None:
        elapsed_ms = max((time.monotonic() - self.window_start) * 1000, 1)
        # Kafka's own line, in its printf format
        print("%d records sent, %.1f records/sec (%.2f MB/sec), "  # noqa: UP031
              "%.1f ms avg latency, %.1f ms max latency." % (
                  self.window_count, 1000 * self.window_count / elapsed_ms,
                  1000 * self.window_bytes / elapsed_ms / MB,
                  self.window_total_latency / max(self.window_count, 1),
                  self.window_max_latency), flush=True)

    def print_total(self) -> None:
        elapsed_ms = max((time.monotonic() - self.start) * 1000, 1)
        p50, p95, p99, p999 = self.percentiles(0.5, 0.95, 0.99, 0.999)
        # Kafka's own line, in its printf format
        print("%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, "  # noqa: UP031
              "%.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th." % (
                  self.count, 1000 * self.count / elapsed_ms, 1000 * self.bytes / elapsed_ms / MB,
                  self.total_latency / max(self.count, 1), self.max_latency,
                  p50, p95, p99, p999), flush=True)
        sys.stdout.flush()

    def percentiles(self, *shares: float) -> list[int]:
        """The latency of the record at ``int(share * count)`` in latency order, as Kafka
        picks its percentiles.

        >>> stats = Stats(10)
        >>> for latency in (5, 1, 9): stats.record(2, 0, latency)
        >>> stats.record(4, 0, 3)
        >>> stats.percentiles(0.0, 0.5, 0.99)
        [1, 3, 9]
        """
        if not self.latencies:
            return [0] * len(shares)
        ordered = sorted(self.latencies)
        values = np.array([latency for latency, _ in ordered])
        ends = np.cumsum([records for _, records in ordered])  # records up to each group
        return [int(values[np.searchsorted(ends, int(share * ends[-1]), side="right")])
                for share in shares]
