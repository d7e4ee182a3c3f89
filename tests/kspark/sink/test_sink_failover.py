"""An exactly-once kpy -> kpy streaming query on a replicated cluster of three broker processes
keeps running while, in turn, the leaders of a source partition, of a sink partition, of the
query's group coordinator (its consumer group and the sink's decision group, in
``__consumer_offsets``) and of its transaction coordinator (``__transaction_state``) are killed
with SIGKILL and started again (``kpy_cluster``), or cut off from ZooKeeper and the other
brokers and healed, and a sink partition's leader's disk fills (``kpy_faulty_cluster``); the
output holds exactly one copy of every input record."""

import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.sql import functions as F

from broker_lite.coordinator.common.partitioner import partition_for

from .test_sink_write import committed_rows

pytestmark = [pytest.mark.slow, pytest.mark.spark]

PARTITIONS = 3
INTERNAL_PARTITIONS = 5  # offsets.topic.num.partitions, transaction.state.log.num.partitions
ROLES = ("source leader", "sink leader", "group coordinator", "transaction coordinator")


def produce_input(servers: str, topic: str, start: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": servers, "acks": "all",
                         "enable.idempotence": True, "log_level": 0})
    for i in range(start, start + count):
        producer.produce(topic, key=f"k{i % 13}".encode(), value=f"record-{i}".encode())
    assert producer.flush(120) == 0


def kill_and_restart(cluster, topic: str, partition: int) -> int:
    """SIGKILL the partition's leader, wait for another to lead, start the dead one again and
    wait until it is back in sync; the broker killed."""
    leader = cluster.wait_for_leader(topic, partition)
    cluster.kill(leader)
    cluster.wait_for_leader(topic, partition, other_than=leader, timeout_s=90)
    cluster.start_broker(leader)
    cluster.wait_for_isr(topic, partition, {1, 2, 3}, timeout_s=120)
    return leader


def isolate_and_heal(cluster, topic: str, partition: int) -> int:
    """Cut the partition's leader off from ZooKeeper and the other brokers (its clients still
    reach it), wait for another to lead, heal, and wait until the old one is back in sync; the
    broker isolated."""
    leader = cluster.wait_for_leader(topic, partition)
    cluster.isolate(leader, from_=("zookeeper", "brokers"))
    cluster.wait_for_leader(topic, partition, other_than=leader, timeout_s=90)
    cluster.heal()
    cluster.wait_for_isr(topic, partition, {1, 2, 3}, timeout_s=120)
    return leader


def fill_and_free_disk(cluster, topic: str, partition: int) -> int:
    """Fill the partition leader's disk: its only log dir goes offline and it shuts down
    cleanly, handing leadership over; free the disk, start it again, and wait until it is back
    in sync; the broker whose disk filled."""
    leader = cluster.wait_for_leader(topic, partition)
    cluster.fill_disk(leader)
    assert cluster.broker(leader).process.wait(120) == 0
    cluster.wait_for_leader(topic, partition, other_than=leader, timeout_s=90)
    cluster.free_disk(leader)
    cluster.start_broker(leader)
    cluster.wait_for_isr(topic, partition, {1, 2, 3}, timeout_s=120)
    return leader


def run_query_through(cluster, spark, tmp_path, read_committed, process_all_available,
                      faults: list[tuple[str, str, Callable]]) -> None:
    """Run an exactly-once kpy -> kpy query on ``cluster`` while each of ``faults`` (a role:
    ``"source leader"``, ``"sink leader"``, ``"group coordinator"`` or ``"transaction
    coordinator"``, a name, and what takes that partition's leader out and back) happens in
    turn, input produced before and after each; then check that the output holds exactly one
    copy of every input record."""
    servers = cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": servers, "log_level": 3})
    source, target = (f"{name}-{uuid.uuid4().hex[:6]}" for name in ("in", "out"))
    for topic in (source, target):
        admin.create_topics([NewTopic(topic, PARTITIONS, 3, config={
            "min.insync.replicas": "2"})])[topic].result(30)
        for partition in range(PARTITIONS):
            cluster.wait_for_isr(topic, partition)
    group = f"eo-failover-{uuid.uuid4().hex[:6]}"
    produced = 0
    produce_input(servers, source, produced, 300)
    produced += 300

    query = (spark.readStream.format("kpy").option("kafka.bootstrap.servers", servers)
             .option("subscribe", source).option("startingOffsets", "earliest")
             .option("kafka.group.id", group).option("maxOffsetsPerTrigger", "200").load()
             .select("key", F.upper(F.col("value").cast("string")).alias("value"))
             .writeStream.format("kpy").option("kafka.bootstrap.servers", servers)
             .option("topic", target).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(processingTime="1 second").start())
    try:
        process_all_available(query)
        partitions = {
            "source leader": (source, 0),
            "sink leader": (target, 1),
            "group coordinator": ("__consumer_offsets",
                                  partition_for(group, INTERNAL_PARTITIONS)),
            "transaction coordinator": ("__transaction_state",
                                        partition_for(f"kpy-{query.id}-0", INTERNAL_PARTITIONS)),
        }
        done = []
        for role, name, take_out in faults:
            produce_input(servers, source, produced, 200)
            produced += 200
            broker = take_out(cluster, *partitions[role])
            done.append(f"{role} {name} (broker {broker})")
            assert query.isActive and query.exception() is None, (role, query.exception())
            produce_input(servers, source, produced, 100)
            produced += 100
            process_all_available(query)
        produce_input(servers, source, produced, 100)
        produced += 100
        process_all_available(query)
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    seen = committed_rows(read_committed(servers, target, produced, timeout_s=120))
    values = sorted(v for _, _, v, _ in seen)
    expected = sorted(f"RECORD-{i}".encode() for i in range(produced))
    print(f"\n{'; '.join(done)}; input records: {produced}, output records: {len(values)}, "
          f"distinct: {len(set(values))}")
    assert values == expected  # every input once: nothing lost, nothing doubled


def test_exactly_once_query_survives_the_leaders_of_everything_it_uses_being_killed(
        kpy_cluster, kpy_spark, tmp_path, read_committed, process_all_available):
    run_query_through(kpy_cluster, kpy_spark, tmp_path, read_committed, process_all_available,
                      [(role, "killed", kill_and_restart) for role in ROLES])


@pytest.mark.parametrize("kpy_faulty_cluster", [{"disk_bytes": 64 << 20}], indirect=True)
def test_exactly_once_query_keeps_one_copy_through_isolated_leaders_and_a_full_sink_disk(
        kpy_faulty_cluster, kpy_spark, tmp_path, read_committed, process_all_available):
    """The leaders of a source partition, a sink partition, the group coordinator and the
    transaction coordinator cut off in turn from ZooKeeper and the other brokers while the
    query's tasks still reach them, then the disk of a sink partition's leader filled."""
    run_query_through(kpy_faulty_cluster, kpy_spark, tmp_path, read_committed,
                      process_all_available,
                      [*((role, "isolated", isolate_and_heal) for role in ROLES),
                       ("sink leader", "on a full disk", fill_and_free_disk)])
