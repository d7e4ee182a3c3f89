"""Benchmark: what a rebalance costs the members of a consumer group, under the classic
protocol (eager: ``range``; cooperative: ``cooperative-sticky``) and the consumer protocol of
KIP-848 (``group.protocol=consumer``), measured in the same run on the same broker.

    python -m broker_lite.local.bench_rebalance [--partitions 6] [--session-timeout-ms 6000]
        [--rounds 1]

Two figures per protocol, with a producer writing a record to every partition each 20 ms:

- **crash to takeover**: three members share the partitions; one, in a process of its own, is
  killed (SIGKILL, so no leave reaches the group); the time from the kill until a surviving
  member has consumed a record of every partition the dead one had. Each protocol waits out the
  same session timeout (``session.timeout.ms`` for classic members,
  ``group.consumer.session.timeout.ms`` for the consumer protocol), so what differs is the
  rebalance after it;
- **join pause**: two members share the partitions and a third joins; the longest time either
  of the two goes without a record of a partition it holds before and after the join (the
  partitions it keeps): the stop-the-world pause of an eager rebalance, which incremental
  protocols avoid. The production interval (20 ms) is the floor.

The broker is ``broker-lite start`` in a process of its own, with an embedded ZooKeeper
(heartbeats every 500 ms: ``heartbeat.interval.ms`` and
``group.consumer.heartbeat.interval.ms``). The figures
printed are medians over ``--rounds`` rounds, with the ratio of each classic figure to the
consumer protocol's.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from typing import Any

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

from .rebalance_probe import ChildMember, PolledApart, SteadyProducer, Watched

PROTOCOLS: dict[str, dict[str, Any]] = {
    "classic eager": {"group.protocol": "classic", "partition.assignment.strategy": "range"},
    "classic cooperative": {"group.protocol": "classic",
                            "partition.assignment.strategy": "cooperative-sticky"},
    "consumer (KIP-848)": {"group.protocol": "consumer"},
}
HEARTBEAT_INTERVAL_MS = 500
PRODUCE_INTERVAL_S = 0.02


def member_settings(servers: str, group: str, protocol: str,
                    session_timeout_ms: int) -> dict[str, Any]:
    settings = {"bootstrap.servers": servers, "group.id": group, "log_level": 3,
                "auto.offset.reset": "latest", **PROTOCOLS[protocol]}
    if settings["group.protocol"] == "classic":  # the broker decides these under KIP-848
        settings.update({"session.timeout.ms": session_timeout_ms,
                         "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS})
    return settings


def split(members: list[Watched], partitions: int, children: int = 0) -> bool:
    """Every member has its share (the in-process ones at least one partition each)."""
    counts = [len(m.partitions()) for m in members]
    return all(counts) and sum(counts) == partitions * len(members) // (
        len(members) + children)


def crash_to_takeover(servers: str, topic: str, partitions: int, protocol: str,
                      session_timeout_ms: int) -> float:
    """Seconds from a member's SIGKILL until the survivors consumed each of its partitions."""
    group = f"bench-crash-{uuid.uuid4().hex[:8]}"
    settings = member_settings(servers, group, protocol, session_timeout_ms)
    survivors = [Watched(Consumer(settings)) for _ in range(2)]
    child = ChildMember(settings, topic)
    try:
        with SteadyProducer(servers, topic, partitions, PRODUCE_INTERVAL_S), \
                PolledApart(survivors) as polled:
            for s in survivors:
                s.consumer.subscribe([topic])
            polled.wait_until(lambda: split(survivors, partitions, children=1), 120,
                              "three members split the partitions")
            time.sleep(1)
            orphaned = set(range(partitions)) - set().union(*(s.partitions()
                                                              for s in survivors))
            child.kill()
            killed = time.monotonic()

            def taken_over() -> bool:
                return all(any(s.first_after(p, killed) for s in survivors) for p in orphaned)

            polled.wait_until(taken_over, 120, f"{protocol}: partitions {orphaned} taken over")
            return max(min(t for s in survivors if (t := s.first_after(p, killed)) is not None)
                       for p in orphaned) - killed
    finally:
        child.kill()
        for s in survivors:
            s.consumer.close()


def join_pause(servers: str, topic: str, partitions: int, protocol: str,
               session_timeout_ms: int) -> float:
    """The longest silence, during a third member's join, of a partition that one of the two
    members had before the join and still has after it."""
    group = f"bench-join-{uuid.uuid4().hex[:8]}"
    settings = member_settings(servers, group, protocol, session_timeout_ms)
    members = [Watched(Consumer(settings)) for _ in range(2)]
    joiner = None
    try:
        with SteadyProducer(servers, topic, partitions, PRODUCE_INTERVAL_S), \
                PolledApart(members) as polled:
            for m in members:
                m.consumer.subscribe([topic])
            polled.wait_until(lambda: split(members, partitions), 120,
                              "two members split the partitions")
            time.sleep(1)
            before = [m.partitions() for m in members]
            joiner = Watched(Consumer(settings))
            joined = time.monotonic()
            joiner.consumer.subscribe([topic])
            polled.add(joiner)
            everyone = [*members, joiner]
            polled.wait_until(lambda: split(everyone, partitions), 120,
                              "the third member gets its share")
            time.sleep(1)
            end = time.monotonic()
            return max(m.max_gap_s(p, joined, end) for m, had in zip(members, before,
                                                                     strict=True)
                       for p in had & m.partitions())
    finally:
        for m in members + ([joiner] if joiner else []):
            m.consumer.close()


@contextlib.contextmanager
def broker_process(properties: dict[str, str]) -> Iterator[str]:
    """``broker-lite start`` in a process of its own (its embedded ZooKeeper, a temporary data
    directory), so that the clients measured here do not share an interpreter with it; its
    ``host:port``."""
    with tempfile.TemporaryDirectory(prefix="kpy-bench-rebalance-") as directory:
        overrides = {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": directory,
                     **properties}
        process = subprocess.Popen(
            [sys.executable, "-m", "broker_lite", "start", "--log-level", "WARNING",
             *(arg for name, value in overrides.items()
               for arg in ("--override", f"{name}={value}"))],
            stdout=subprocess.PIPE, text=True)
        try:
            assert process.stdout is not None
            for line in process.stdout:
                if "listening on" in line:
                    yield line.split("listening on ")[1].split()[0]
                    break
            else:
                raise RuntimeError("the broker exited before it listened")
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(60)


def run(partitions: int, session_timeout_ms: int, rounds: int) -> dict[str, dict[str, float]]:
    properties = {
        "group.initial.rebalance.delay.ms": "0",
        "group.min.session.timeout.ms": str(min(session_timeout_ms, 6000)),
        "group.consumer.min.session.timeout.ms": str(session_timeout_ms),
        "group.consumer.session.timeout.ms": str(session_timeout_ms),
        "group.consumer.max.session.timeout.ms": str(max(session_timeout_ms, 60000)),
        "group.consumer.min.heartbeat.interval.ms": str(HEARTBEAT_INTERVAL_MS),
        "group.consumer.heartbeat.interval.ms": str(HEARTBEAT_INTERVAL_MS),
        "offsets.topic.num.partitions": "3",
    }
    results: dict[str, dict[str, list[float]]] = {p: {"crash": [], "join": []}
                                                  for p in PROTOCOLS}
    with broker_process(properties) as servers:
        topic = "bench-rebalance"
        admin = AdminClient({"bootstrap.servers": servers, "log_level": 3})
        admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(60)
        for round_ in range(rounds):
            order = list(PROTOCOLS) if round_ % 2 == 0 else list(reversed(PROTOCOLS))
            for protocol in order:
                results[protocol]["crash"].append(crash_to_takeover(
                    servers, topic, partitions, protocol, session_timeout_ms))
                results[protocol]["join"].append(join_pause(
                    servers, topic, partitions, protocol, session_timeout_ms))
                print(f"round {round_ + 1}: {protocol}: crash to takeover "
                      f"{results[protocol]['crash'][-1]:.2f} s, join pause "
                      f"{results[protocol]['join'][-1]:.2f} s", flush=True)
    return {p: {k: statistics.median(v) for k, v in figures.items()}
            for p, figures in results.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--session-timeout-ms", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    medians = run(args.partitions, args.session_timeout_ms, args.rounds)
    consumer = medians["consumer (KIP-848)"]
    print(f"\n{args.partitions} partitions, session timeout {args.session_timeout_ms} ms, "
          f"heartbeats every {HEARTBEAT_INTERVAL_MS} ms, a record per partition every "
          f"{PRODUCE_INTERVAL_S * 1000:.0f} ms; medians of {args.rounds} round(s)")
    print(f"{'protocol':<22}{'crash to takeover':>20}{'x consumer':>12}"
          f"{'join pause':>14}{'x consumer':>12}")
    for protocol, figures in medians.items():
        print(f"{protocol:<22}{figures['crash']:>18.2f} s"
              f"{figures['crash'] / consumer['crash']:>11.2f}x"
              f"{figures['join']:>12.2f} s{figures['join'] / consumer['join']:>11.2f}x")


if __name__ == "__main__":
    main()
