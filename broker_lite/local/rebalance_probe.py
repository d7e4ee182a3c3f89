"""What a consumer group's members live through, measured from outside: a producer writing to
every partition at a steady pace, consumers whose every record and assignment is timed, and a
member in a process of its own that can be killed. The consumer protocol tests and the
rebalance benchmark (:mod:`.bench_rebalance`) both measure with these.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Producer


def assigned(consumer: Consumer) -> set[tuple[str, int]]:
    return {(tp.topic, tp.partition) for tp in consumer.assignment()}


class SteadyProducer:
    """Produces one record to each of ``partitions`` partitions of ``topic`` every
    ``interval_s``, on a thread of its own, until the ``with`` block ends."""

    def __init__(self, servers: str, topic: str, partitions: int, interval_s: float = 0.05):
        self.producer = Producer({"bootstrap.servers": servers, "linger.ms": 0,
                                  "log_level": 3})
        self.topic, self.partitions, self.interval_s = topic, partitions, interval_s
        self.stopping = threading.Event()
        self.sent = 0
        self.thread = threading.Thread(target=self._run, name="steady-producer", daemon=True)

    def __enter__(self) -> SteadyProducer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(10)
        self.producer.flush(10)

    def _run(self) -> None:
        while not self.stopping.wait(self.interval_s):
            for p in range(self.partitions):
                self.producer.produce(self.topic, f"{self.sent}".encode(), partition=p)
            self.sent += 1
            self.producer.poll(0)


class Watched:
    """A consumer polled by the caller, remembering when it got records of each partition
    (monotonic time, offset) and every assignment it had."""

    def __init__(self, consumer: Consumer):
        self.consumer = consumer
        self.arrivals: dict[int, list[tuple[float, int]]] = {}
        self.assignments: list[set[tuple[str, int]]] = []

    def poll(self) -> None:
        record = self.consumer.poll(0.02)
        if record is not None and record.error() is None:
            partition, offset = record.partition(), record.offset()
            if partition is not None and offset is not None:
                self.arrivals.setdefault(partition, []).append((time.monotonic(), offset))
        self.assignments.append(assigned(self.consumer))

    def partitions(self) -> set[int]:
        return {p for _, p in assigned(self.consumer)}

    def max_gap_s(self, partition: int, since: float, until: float) -> float:
        """The longest time between ``since`` and ``until`` without a record of
        ``partition``."""
        times = [t for t, _ in self.arrivals.get(partition, []) if since <= t <= until]
        edges = [since, *times, until]
        return max(b - a for a, b in itertools.pairwise(edges))

    def first_after(self, partition: int, moment: float) -> float | None:
        return next((t for t, _ in self.arrivals.get(partition, []) if t > moment), None)


def poll_until(watched: list[Watched], done: Callable[[], object], timeout_s: float,
               message: str) -> None:
    """Poll the consumers in turn until ``done()``; AssertionError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s: {message}")
        for w in watched:
            w.poll()


class PolledApart:
    """Each consumer polled by a thread of its own while the ``with`` block runs (a poll waits
    in librdkafka without the GIL), so that the time a record arrives is when its consumer got
    it, not when a loop over all of them came round to it."""

    def __init__(self, watched: list[Watched]):
        self.watched = list(watched)
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []

    def add(self, w: Watched) -> None:
        self.watched.append(w)
        thread = threading.Thread(target=self._poll, args=(w,), daemon=True)
        self.threads.append(thread)
        thread.start()

    def _poll(self, w: Watched) -> None:
        while not self.stopping.is_set():
            w.poll()

    def __enter__(self) -> PolledApart:
        watched, self.watched = self.watched, []
        for w in watched:
            self.add(w)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(10)

    def wait_until(self, done: Callable[[], object], timeout_s: float, message: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout_s} s: {message}")
            time.sleep(0.01)


_MEMBER = textwrap.dedent("""
    import json, sys
    from confluent_kafka import Consumer
    consumer = Consumer(json.loads(sys.argv[1]))
    consumer.subscribe([sys.argv[2]])
    told = None
    while True:
        consumer.poll(0.05)
        now = sorted(tp.partition for tp in consumer.assignment())
        if now != told:
            told = now
            print(" ".join(map(str, now)), flush=True)
""")


class ChildMember:
    """A consumer in a process of its own (to be killed: no leave reaches the group)."""

    def __init__(self, settings: dict[str, Any], topic: str):
        self.process = subprocess.Popen([sys.executable, "-c", _MEMBER, json.dumps(settings),
                                         topic], stdout=subprocess.PIPE, text=True)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
