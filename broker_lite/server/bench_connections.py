"""Benchmark: many idle connections to one broker, and a well-behaved client beside them.

    python -m broker_lite.server.bench_connections [--connections 10000] [--requests 1000]
        [--baseline SOURCE_DIR]

broker_lite runs as its own process (``python -m broker_lite start``, embedded ZooKeeper).
The benchmark opens ``--connections`` TCP connections to it that never send anything, waits
until the broker holds them all, then times ``--requests`` Metadata round trips of a
confluent-kafka client (``list_topics``, on its established connection). It reports the
broker process's threads and resident memory before and after the connections (from
``/proc``), the memory each connection costs, and the round trip's median and 99th percentile.
``--baseline`` measures a broker_lite from another source tree the same way, after the first.
Both processes raise their open-files limit to the hard limit (each connection is a file
descriptor on both sides); the hard limit must allow ``--connections`` plus a few hundred.
"""

import argparse
import os
import resource
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Producer

from .bench import BrokerLiteProcess
from .network.socket_server import raise_open_files_limit

ACCEPT_TIMEOUT_S = 600
# The idle connections are opened by one thread as fast as it can, faster than the broker's
# acceptor takes them: with Kafka's backlog of 50 the kernel then drops the connection requests
# beyond it, each retried a second later, and opening 10,000 connections takes minutes. A longer
# backlog leaves what is measured (idle connections held) as it is.
BACKLOG = 4096


def process_status(pid: int) -> tuple[int, int]:
    """(threads, resident bytes) of process ``pid``, from /proc."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    return int(fields["Threads"][0]), int(fields["VmRSS"][0]) * 1024


def open_idle_connections(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        sockets.append(socket.create_connection(("127.0.0.1", port), timeout=60))
    return sockets


def wait_for_connections(pid: int, count: int, before: int) -> None:
    """Wait until the broker holds ``count`` more sockets than it did (its open files)."""
    deadline = time.monotonic() + ACCEPT_TIMEOUT_S
    while len(os.listdir(f"/proc/{pid}/fd")) < before + count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the broker did not accept {count} connections")
        time.sleep(0.2)


def metadata_round_trips(producer: Producer, requests: int) -> list[float]:
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        producer.list_topics(timeout=30)
        times.append(time.perf_counter() - started)
    return times


def measure(broker: BrokerLiteProcess, connections: int, requests: int) -> dict:
    pid = broker.process.pid
    port = int(broker.bootstrap.rsplit(":", 1)[1])
    # One client throughout: its connections are counted in the broker's open files before the
    # idle ones are opened, and stay open.
    producer = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    metadata_round_trips(producer, 10)  # connected; ZooKeeper reads cached by the OS, ...
    threads_before, rss_before = process_status(pid)
    files_before = len(os.listdir(f"/proc/{pid}/fd"))
    sockets = open_idle_connections(port, connections)
    try:
        wait_for_connections(pid, connections, files_before)
        time.sleep(1)
        threads_after, rss_after = process_status(pid)
        times = sorted(metadata_round_trips(producer, requests))
    finally:
        for sock in sockets:
            sock.close()
    return {"threads": (threads_before, threads_after), "rss": (rss_before, rss_after),
            "p50_ms": statistics.median(times) * 1000,
            "p99_ms": times[min(int(0.99 * len(times)), len(times) - 1)] * 1000}


def report(name: str, connections: int, requests: int, figures: dict) -> None:
    (threads_before, threads_after), (rss_before, rss_after) = figures["threads"], figures["rss"]
    per_connection = (rss_after - rss_before) / connections
    print(f"{name}: {connections:,} idle connections: threads {threads_before} -> "
          f"{threads_after}; resident memory {rss_before / 1e6:.1f} -> {rss_after / 1e6:.1f} MB "
          f"({per_connection / 1024:+.1f} KiB per connection); Metadata round trip "
          f"(confluent-kafka, {requests:,} requests) p50 {figures['p50_ms']:.2f} ms, "
          f"p99 {figures['p99_ms']:.2f} ms", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--baseline", metavar="SOURCE_DIR",
                        help="also measure broker_lite from this source tree (on PYTHONPATH)")
    args = parser.parse_args(argv)
    raise_open_files_limit()
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if limit != resource.RLIM_INFINITY and limit < args.connections + 200:
        print(f"bench_connections: error: the open-files limit is {limit}, too low for "
              f"{args.connections:,} connections", file=sys.stderr)
        return 1
    brokers: dict[str, dict[str, str]] = {"broker_lite": {}}
    if args.baseline:
        brokers["baseline"] = {"PYTHONPATH": str(Path(args.baseline).resolve())}
    for name, extra_env in brokers.items():
        with tempfile.TemporaryDirectory(prefix="kpy-bench-connections-") as tmp:
            broker = BrokerLiteProcess(Path(tmp), {"socket.listen.backlog.size": str(BACKLOG)},
                                       env={**os.environ, **extra_env})
            try:
                report(name, args.connections, args.requests,
                       measure(broker, args.connections, args.requests))
            finally:
                broker.stop()
    print("target: threads below 64, Metadata p50 under 5 ms and p99 under 20 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
