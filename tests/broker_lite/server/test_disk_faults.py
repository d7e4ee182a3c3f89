"""Full and failing disks under load (``kpy_faulty_cluster``): a broker whose only log directory
fills up, or starts failing writes with EIO, answers KAFKA_STORAGE_ERROR, takes the directory
offline and, with no directory left, shuts down cleanly, so leadership moves to the other
replicas; nothing acknowledged is lost, nothing half-written is left, and started again on a
working disk it rejoins the ISR. With two log directories, the other keeps serving."""

import json
import uuid
from pathlib import Path

import pytest
from cluster_support import SequenceProducer, check_acknowledged, create_topic

from broker_lite.records import iter_batches

DISK_BYTES = 64 << 20


def whole_batches(log_dir: Path, topic: str) -> None:
    """Every segment of the topic's partition 0 in ``log_dir`` is whole batches, to its last
    byte: nothing half-written."""
    for segment in sorted((log_dir / f"{topic}-0").glob("*.log")):
        data = segment.read_bytes()
        end = max((b.position + b.size_in_bytes for b in iter_batches(data, validate=True)),
                  default=0)
        assert end == len(data), f"{segment}: {len(data) - end} bytes past the last whole batch"


@pytest.mark.slow
@pytest.mark.parametrize("kpy_faulty_cluster", [{"disk_bytes": DISK_BYTES}], indirect=True)
@pytest.mark.parametrize("fault", ["full", "failing"])
def test_a_leader_whose_disk_fills_or_fails_moves_leadership_and_loses_nothing(
        kpy_faulty_cluster, fault):
    cluster = kpy_faulty_cluster
    topic = create_topic(cluster, f"disk-{uuid.uuid4().hex[:6]}",
                         config={"min.insync.replicas": "2"})
    leader = cluster.leader(topic, 0)
    process = cluster.broker(leader)
    with SequenceProducer(cluster.bootstrap_servers, topic) as writer:
        writer.wait_for_acks(200)
        if fault == "full":
            cluster.fill_disk(leader)
        else:
            cluster.fail_disk(leader)
        assert process.process.wait(120) == 0  # every dir offline: a clean shutdown
        cluster.wait_for_leader(topic, 0, other_than=leader)
        writer.wait_for_acks(len(writer.acknowledged) + 200)  # the new leader takes writes
        whole_batches(process.log_dirs[0], topic)
        if fault == "full":
            cluster.free_disk(leader)
        else:
            cluster.repair_disk(leader)
        cluster.start_broker(leader)
        cluster.wait_for_isr(topic, 0, {1, 2, 3}, timeout_s=120)
        writer.finish()
    read = check_acknowledged(cluster, topic, writer)
    assert read == list(range(len(read)))
    events = cluster._client.get_children("/log_dir_event_notification")
    data = [json.loads(cluster._client.get(f"/log_dir_event_notification/{e}")[0])
            for e in events]
    assert {"version": 1, "broker": leader, "event": 1} in data or not events  # read and
    # deleted by a controller that handles them; else left as Kafka writes them


@pytest.mark.parametrize("kpy_faulty_cluster", [{"log_dirs": 2}], indirect=True)
def test_a_failing_log_dir_goes_offline_and_the_other_keeps_serving(kpy_faulty_cluster):
    cluster = kpy_faulty_cluster
    topics = [create_topic(cluster, f"dirs-{uuid.uuid4().hex[:6]}", replication_factor=1,
                           assignment=[[1]]) for _ in range(2)]
    broker = cluster.broker(1)
    where = {t: next(i for i, d in enumerate(broker.log_dirs) if (d / f"{t}-0").exists())
             for t in topics}
    assert sorted(where.values()) == [0, 1]  # one partition in each dir
    failing = next(t for t in topics if where[t] == 0)
    serving = next(t for t in topics if where[t] == 1)
    cluster.fail_disk(1, log_dir=0)
    from confluent_kafka import Producer

    errors = {}
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                         "message.timeout.ms": 10000, "log_level": 0})
    for topic in topics:
        producer.produce(topic, b"x", on_delivery=lambda e, m: errors.setdefault(m.topic(), e))
    producer.flush(30)
    assert errors[serving] is None
    assert errors[failing] is not None and "KAFKA_STORAGE_ERROR" in errors[failing].name()
    assert broker.running
    event = cluster._client.get_children("/log_dir_event_notification")
    assert event, "the failure is announced to the controller"
    data = json.loads(cluster._client.get(f"/log_dir_event_notification/{event[0]}")[0])
    assert data == {"version": 1, "broker": 1, "event": 1}
