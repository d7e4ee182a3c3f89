"""Benchmark: what replication costs producers. Produce throughput with ``acks=all`` to topics
with three replicas on a three-broker local cluster, against ``acks=1`` to topics with one
replica on the same cluster, in the same run.

    python -m broker_lite.local.bench_replication [--records 200000] [--record-size 100]
        [--partitions 3] [--rounds 5]

The cluster is :class:`broker_lite.local.cluster.LocalCluster`: three broker processes sharing
an embedded ZooKeeper, on this machine. Each round produces ``--records`` records of
``--record-size`` bytes with confluent-kafka (librdkafka: ``linger.ms=5``, the default
``batch.size``, no compression, idempotence off, so that both sides send the same way) to a new
topic of each kind, ``--partitions`` partitions led by the brokers in turn: ``acks=all``
replicated three ways with ``min.insync.replicas=2``, and ``acks=1`` with one replica. The two
take turns in an order that alternates each round; the figures printed are the medians over the
rounds, in records per second and MB/s, and their ratio (target: acks=all with three replicas at
least 0.5x acks=1 with one).

An acknowledged acks=all record is in the log of every in-sync replica, so each record crosses
the machine three times (to the leader, then to each follower's fetch) and is written to three
logs, and the producer waits for the slowest follower's next fetch.
"""

import argparse
import statistics
import time
import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.local.cluster import LocalCluster

TARGET_RATIO = 0.5


def create_topic(cluster: LocalCluster, replicas: int, partitions: int) -> str:
    """A topic whose partition ``p`` is led by broker ``p % 3 + 1``."""
    name = f"bench-rf{replicas}-{uuid.uuid4().hex[:8]}"
    assignment = [[(p + r) % 3 + 1 for r in range(replicas)] for p in range(partitions)]
    config = {"min.insync.replicas": "2"} if replicas > 1 else {}
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 3})
    admin.create_topics([NewTopic(name, num_partitions=partitions,
                                  replica_assignment=assignment,
                                  config=config)])[name].result(60)
    for partition in range(partitions):
        cluster.wait_for_isr(name, partition)
    return name


def produce(cluster: LocalCluster, topic: str, acks: str, records: int, value: bytes,
            partitions: int) -> float:
    """Seconds to produce ``records`` records and have every one acknowledged."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": acks,
                         "linger.ms": 5, "enable.idempotence": False,
                         "queue.buffering.max.messages": 1_000_000, "log_level": 3})
    producer.list_topics(topic, timeout=30)
    failed = []

    def delivered(error, _message) -> None:
        if error is not None:
            failed.append(error)

    start = time.perf_counter()
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value=value, partition=i % partitions,
                                 on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.01)
        if i % 1000 == 0:
            producer.poll(0)
    remaining = producer.flush(300)
    elapsed = time.perf_counter() - start
    if remaining or failed:
        raise RuntimeError(f"{remaining} records unacknowledged, {len(failed)} failed "
                           f"({failed[:1]}) producing to {topic} with acks={acks}")
    return elapsed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    value = b"x" * args.record_size
    megabytes = args.records * args.record_size / 1e6
    print(f"{args.records:,} records of {args.record_size} bytes, {args.partitions} partitions, "
          f"{args.rounds} rounds, a 3-broker local cluster", flush=True)
    ways = {"acks=all, 3 replicas": ("all", 3), "acks=1, 1 replica": ("1", 1)}
    rates: dict[str, list[float]] = {name: [] for name in ways}
    with LocalCluster(brokers=3) as cluster:
        for round_number in range(args.rounds):
            order = list(ways) if round_number % 2 == 0 else list(reversed(ways))
            for name in order:
                acks, replicas = ways[name]
                topic = create_topic(cluster, replicas, args.partitions)
                seconds = produce(cluster, topic, acks, args.records, value, args.partitions)
                rates[name].append(args.records / seconds)
                print(f"round {round_number + 1}: {name:<20} {args.records / seconds:>10,.0f} "
                      f"records/s  {megabytes / seconds:>6.1f} MB/s", flush=True)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, median in medians.items():
        print(f"median {name:<20} {median:>10,.0f} records/s  "
              f"{median * args.record_size / 1e6:>6.1f} MB/s")
    ratio = medians["acks=all, 3 replicas"] / medians["acks=1, 1 replica"]
    print(f"ratio acks=all with 3 replicas / acks=1 with 1 replica: {ratio:.2f}x "
          f"(target >= {TARGET_RATIO}x: {'met' if ratio >= TARGET_RATIO else 'NOT met'})")


if __name__ == "__main__":
    main()
