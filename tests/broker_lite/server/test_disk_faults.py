"""Full and failing disks under load (``kpy_faulty_cluster``): a broker whose only log directory
fills up, or starts failing writes with EIO, answers KAFKA_STORAGE_ERROR, takes the directory
offline and, with no directory left, shuts down cleanly, so leadership moves to the other
replicas; nothing acknowledged is lost, nothing half-written is left, and started again on a
working disk it rejoins the ISR. With two log directories, the other keeps serving."""

import json
import uuid
from pathlib import Path

import pytest
from cluster_support import SequenceProducer, check_acknowledged, create_topic, read_all
from kazoo.exceptions import NoNodeError

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import build_batch, iter_batches
from broker_lite.server.testing import call

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


def produce_raw(address: str, topic: str, value: bytes = b"v") -> int:
    """One acks=all Produce of one record to partition 0 on this broker, without a client's
    retries: its error code."""
    host, port = address.split(":")
    answer = call(int(port), ApiKey.PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 10_000,
        "topic_data": [{"name": topic, "partition_data": [
            {"index": 0, "records": build_batch([(b"k", value)], timestamp=1)}]}]}, host=host)
    return answer["responses"][0]["partition_responses"][0]["error_code"]


@pytest.mark.parametrize("kpy_faulty_cluster", [{"log_dirs": 2, "disk_bytes": DISK_BYTES}],
                         indirect=True)
@pytest.mark.parametrize("fault", [pytest.param("full", marks=pytest.mark.slow), "failing"])
def test_a_full_or_failing_log_dir_goes_offline_the_other_keeps_serving_and_leadership_moves(
        kpy_faulty_cluster, fault):
    """Broker 1 leads a partition in each of its two log dirs, broker 2 follows both. The
    first dir fills up, or its writes fail: the Produce that meets the error answers
    KAFKA_STORAGE_ERROR, and so does every later one (the dir is offline); the other dir keeps
    serving; the broker announces the failure in /log_dir_event_notification, as Kafka writes
    it, and the controller, once it read and deleted the notice, elects broker 2 for the
    offline replica's partition and takes broker 1 out of its ISR, where a client's writes then
    succeed. Freed or repaired and started again, broker 1 serves that dir again: it rejoins
    the ISR, its log there whole batches, nothing acknowledged lost."""
    cluster = kpy_faulty_cluster
    topics = [create_topic(cluster, f"dirs-{uuid.uuid4().hex[:6]}", assignment=[[1, 2]],
                           config={"min.insync.replicas": "1"}) for _ in range(2)]
    broker = cluster.broker(1)
    where = {t: next(i for i, d in enumerate(broker.log_dirs) if (d / f"{t}-0").exists())
             for t in topics}
    assert sorted(where.values()) == [0, 1]  # one partition in each dir
    failing = next(t for t in topics if where[t] == 0)
    serving = next(t for t in topics if where[t] == 1)
    client = cluster._client
    client.ensure_path("/log_dir_event_notification")
    announced: list[dict] = []

    @client.ChildrenWatch("/log_dir_event_notification")
    def _seen(children):  # the notice, before the controller deletes it
        for child in children:
            try:
                data = client.get(f"/log_dir_event_notification/{child}")[0]
            except NoNodeError:
                continue
            announced.append(json.loads(data))

    for topic in topics:
        assert produce_raw(broker.address, topic) == ErrorCode.NONE
    if fault == "full":
        cluster.fill_disk(1, log_dir=0)
    else:
        cluster.fail_disk(1, log_dir=0)
    # 64 KiB: more than the page a full tmpfs may still have room in
    assert produce_raw(broker.address, failing, b"w" * 65536) == ErrorCode.KAFKA_STORAGE_ERROR
    assert produce_raw(broker.address, failing) == ErrorCode.KAFKA_STORAGE_ERROR  # offline
    assert produce_raw(broker.address, serving) == ErrorCode.NONE
    cluster.wait_until(lambda: {"version": 1, "broker": 1, "event": 1} in announced,
                       what="the log dir event, as Kafka writes it")
    state = cluster.wait_until(
        lambda: (lambda s: s if s.leader == 2 else None)(cluster.partition_state(failing, 0)),
        what="the controller elects the other replica")
    assert state.isr == (2,)
    cluster.wait_until(lambda: client.get_children("/log_dir_event_notification") == [],
                       what="the controller deletes the notice")
    assert cluster.partition_state(serving, 0).leader == 1
    assert broker.running
    from confluent_kafka import Producer

    errors = {}
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                         "message.timeout.ms": 30000, "log_level": 0})
    for topic in topics:
        producer.produce(topic, b"x", on_delivery=lambda e, m: errors.setdefault(m.topic(), e))
    assert producer.flush(60) == 0
    assert errors == {failing: None, serving: None}
    assert cluster.partition_state(failing, 0).isr == (2,)  # broker 1 fetches nothing there
    assert cluster.stop_broker(1) == 0
    if fault == "full":
        cluster.free_disk(1, log_dir=0)
    else:
        cluster.repair_disk(1)
    cluster.start_broker(1)
    cluster.wait_for_isr(failing, 0, {1, 2}, timeout_s=120)
    whole_batches(broker.log_dirs[0], failing)
    assert read_all(cluster, failing) == [b"v", b"x"]  # the refused writes left nothing
    assert read_all(cluster, serving) == [b"v", b"v", b"x"]
