"""Benchmark: librdkafka's own performance tool, ``rdkafka_performance``, producing to and
consuming from broker_lite, against librdkafka's in-memory mock broker in the same run.

    python -m broker_lite.server.bench_rdkafka [--rdkafka-performance PATH] [--records 1000000]
        [--rounds 5] [--baseline SOURCE_DIR]

Each round produces ``--records`` records of 100 bytes to one partition of a new topic
(``batch.size=16384``, ``linger.ms=0``, ``acks=1``), then consumes them from the beginning,
with the C client driving everything, so the figures are about the broker. broker_lite runs as
its own process (``python -m broker_lite start``: embedded ZooKeeper, its log on disk). The
mock broker (``-X test.mock.num.brokers=1``) runs inside the producing process and ends with
it, so only producing is compared with it. ``--baseline`` starts a second broker_lite from
another source tree (a checkout of an earlier commit, ``git worktree add /tmp/base main``),
and both phases are compared with it too. Brokers take turns in an order that rotates each
round; the figures printed are medians over the rounds (records per second, as
rdkafka_performance reports them) and their ratios to broker_lite. So is the CPU time each
produce phase took, per million records: the broker process's (every thread, from /proc) and
rdkafka_performance's (with the mock broker, that process holds the broker too). On a machine
whose cores the broker and the client fill, the rates follow these CPU times.

``rdkafka_performance`` is librdkafka's ``examples/rdkafka_performance.c``. It is found at
``--rdkafka-performance``, else ``$KPY_RDKAFKA_PERFORMANCE``, else in the librdkafka build of
the conformance runner (``$KPY_CONFORMANCE_CACHE``, by default
``/tmp/kpy-librdkafka-4c3b017/librdkafka/examples``). To build it in a built librdkafka source
tree: ``make -C examples rdkafka_performance``, or
``cc -O2 -Isrc examples/rdkafka_performance.c src/librdkafka.a -llz4 -lzstd -lssl -lcrypto -lz
-lm -lpthread -ldl -lrt -o rdkafka_performance``.
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path

from broker_lite.client import KafkaClient

from .bench import BrokerLiteProcess

RECORD_BYTES = 100
PRODUCER_SETTINGS = ("batch.size=16384", "linger.ms=0")
DEFAULT_CACHE = "/tmp/kpy-librdkafka-4c3b017"
RUN_TIMEOUT_S = 600
PHASES = ("produce", "consume")
_PRODUCED = re.compile(r"(\d+) messages produced .* delivered .* in (\d+)ms: (\d+) msgs/s")
_CONSUMED = re.compile(r"(\d+) messages \(\d+ bytes\) consumed in (\d+)ms: (\d+) msgs/s")


class BenchmarkError(RuntimeError):
    """The benchmark cannot run (no rdkafka_performance) or a run failed."""


def find_rdkafka_performance(given: str | None) -> Path:
    cache = os.environ.get("KPY_CONFORMANCE_CACHE", DEFAULT_CACHE)
    candidates = [given, os.environ.get("KPY_RDKAFKA_PERFORMANCE"),
                  f"{cache}/librdkafka/examples/rdkafka_performance"]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return Path(candidate)
    raise BenchmarkError("rdkafka_performance not found (tried "
                         f"{', '.join(c for c in candidates if c)}); build it in a librdkafka "
                         "tree with `make -C examples rdkafka_performance` and pass "
                         "--rdkafka-performance PATH (see this module's docstring)")


def run_tool(binary: Path, arguments: list[str], pattern: re.Pattern) -> tuple[float, float]:
    """Run rdkafka_performance; the records per second it reports, and the CPU seconds it
    used."""
    before = _children_cpu_seconds()
    done = subprocess.run([str(binary), *arguments, "-q"], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)
    cpu = _children_cpu_seconds() - before
    match = pattern.search(done.stdout + done.stderr)
    if done.returncode != 0 or match is None:
        raise BenchmarkError(f"rdkafka_performance {' '.join(arguments)} failed "
                             f"({done.returncode}): {(done.stdout + done.stderr)[-2000:]}")
    return float(match.group(3)), cpu


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the children waited for so far
    return usage.ru_utime + usage.ru_stime


def produce_arguments(records: int) -> list[str]:
    settings = [arg for setting in PRODUCER_SETTINGS for arg in ("-X", setting)]
    return ["-P", "-p", "0", "-s", str(RECORD_BYTES), "-c", str(records), "-a", "1", *settings]


def create_topic(bootstrap: str, topic: str) -> None:
    with KafkaClient({"bootstrap.servers": bootstrap}) as client:
        client.admin.create_topics([(topic, 1, 1)])


def measure_broker(binary: Path, broker: BrokerLiteProcess, records: int) -> dict[str, float]:
    """Rates of both phases, and the CPU seconds per million records produced of the broker
    and of the client."""
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic)
    broker_cpu = broker.cpu_seconds()
    produced, client_cpu = run_tool(
        binary, [*produce_arguments(records), "-t", topic, "-b", broker.bootstrap], _PRODUCED)
    broker_cpu = broker.cpu_seconds() - broker_cpu
    consumed, _ = run_tool(binary, ["-C", "-t", topic, "-p", "0", "-b", broker.bootstrap, "-o",
                                    "beginning", "-c", str(records)], _CONSUMED)
    per_million = 1_000_000 / records
    return {"produce": produced, "consume": consumed,
            "broker CPU": broker_cpu * per_million, "client CPU": client_cpu * per_million}


def measure_mock(binary: Path, records: int) -> dict[str, float]:
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    produced, cpu = run_tool(binary, [*produce_arguments(records), "-t", topic,
                                      "-X", "test.mock.num.brokers=1"], _PRODUCED)
    return {"produce": produced, "client CPU": cpu * 1_000_000 / records}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rdkafka-performance", metavar="PATH",
                        help="the rdkafka_performance binary (see the module docstring)")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", metavar="SOURCE_DIR",
                        help="also measure broker_lite from this source tree (on PYTHONPATH)")
    args = parser.parse_args(argv)
    try:
        binary = find_rdkafka_performance(args.rdkafka_performance)
    except BenchmarkError as exc:
        print(f"bench_rdkafka: error: {exc}", file=sys.stderr)
        return 1
    print(f"rdkafka_performance: {args.records:,} records of {RECORD_BYTES} bytes to one "
          f"partition, acks=1, {', '.join(PRODUCER_SETTINGS)}; median of {args.rounds} rounds")
    with tempfile.TemporaryDirectory(prefix="kpy-bench-rdkafka-") as tmp:
        brokers = {"broker_lite": BrokerLiteProcess(Path(tmp) / "lite")}
        try:
            if args.baseline:
                brokers["baseline"] = BrokerLiteProcess(
                    Path(tmp) / "baseline",
                    env={**os.environ, "PYTHONPATH": str(Path(args.baseline).resolve())})
            ways: dict[str, Callable[[], dict[str, float]]] = {
                name: partial(measure_broker, binary, broker, args.records)
                for name, broker in brokers.items()}
            ways["mock"] = partial(measure_mock, binary, args.records)
            rounds: dict[str, list[dict]] = {name: [] for name in ways}
            names = list(ways)
            for number in range(args.rounds):
                order = names[number % len(names):] + names[:number % len(names)]
                for name in order:
                    rounds[name].append(ways[name]())
                print(f"round {number + 1}: " + "; ".join(
                    f"{name} " + " ".join(f"{phase} {rounds[name][-1][phase]:,.0f}"
                                          for phase in PHASES if phase in rounds[name][-1])
                    for name in names), flush=True)
        finally:
            for broker in brokers.values():
                broker.stop()
    medians = {name: {phase: statistics.median(r[phase] for r in results)
                      for phase in results[0]} for name, results in rounds.items()}
    lite = medians["broker_lite"]
    for phase in PHASES:
        peers = " | ".join(f"{name} {figures[phase]:>11,.0f} rec/s, ratio "
                           f"{lite[phase] / figures[phase]:.2f}"
                           for name, figures in medians.items()
                           if name != "broker_lite" and phase in figures)
        print(f"{phase:<8} broker_lite {lite[phase]:>11,.0f} rec/s "
              f"{lite[phase] * RECORD_BYTES / 1e6:>6.1f} MB/s | {peers}")
    print(f"CPU seconds per million records produced ({os.cpu_count()} cores): " + "; ".join(
        f"{name} " + ", ".join(f"{what.split()[0]} {figures[what]:.2f}"
                               for what in ("broker CPU", "client CPU") if what in figures)
        + (" (the mock broker in the client)" if name == "mock" else "")
        for name, figures in medians.items()))
    print("target: produce >= 0.9x the mock broker; consume >= the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
