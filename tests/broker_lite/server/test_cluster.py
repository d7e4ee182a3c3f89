"""Three broker_lite brokers sharing one ZooKeeper form a cluster: the controller spreads the
partitions, Metadata names their leaders, clients produce and consume across all three, and a
broker that does not lead a partition answers NOT_LEADER_OR_FOLLOWER."""

import socket
import struct
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from broker_lite.common.tiers import needs
from broker_lite.protocol import ApiKey, ErrorCode, encode_request, parse_response
from broker_lite.records import build_batch
from broker_lite.server.testing import (
    bootstrap,
    recv_exactly,
    start_brokers,
    stop_brokers,
)
from broker_lite.zk.testing import wait_until

PARTITIONS = 6


@pytest.fixture
@needs("broker", "zookeeper")
def cluster(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 3, {"num.partitions": str(PARTITIONS)})
    yield brokers
    stop_brokers(brokers)


def leaders(brokers, topic: str) -> dict[int, int]:
    """Partition -> leader, for the partitions whose elected leader already serves them (ZooKeeper
    shows an election before the leader's own watch has taken the partition on)."""
    by_id = {b.broker_id: b for b in brokers}
    partitions = brokers[0].services.cluster.partitions(topic) or []
    return {p.partition: p.state.leader for p in partitions
            if p.state and p.state.leader in by_id
            and by_id[p.state.leader].services.partitions.is_leader(topic, p.partition)}


def test_partitions_spread_and_clients_use_every_broker(cluster):
    topic = f"spread-{uuid.uuid4().hex[:6]}"
    producer = Producer({"bootstrap.servers": bootstrap(cluster), "acks": "all",
                         "linger.ms": 5, "log_level": 3})
    values = {p: [b"p%d-%d" % (p, i) for i in range(40)] for p in range(PARTITIONS)}
    producer.list_topics(topic, timeout=10)  # auto-creates it
    wait_until(lambda: len(leaders(cluster, topic)) == PARTITIONS, message="all leaders")
    assert set(leaders(cluster, topic).values()) == {1, 2, 3}
    for p, batch in values.items():
        for value in batch:
            producer.produce(topic, partition=p, value=value)
    assert producer.flush(30) == 0

    consumer = Consumer({"bootstrap.servers": bootstrap(cluster), "group.id": "spread",
                         "enable.auto.commit": False, "log_level": 3})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    got = {p: [] for p in range(PARTITIONS)}
    deadline = time.monotonic() + 30
    try:
        while sum(map(len, got.values())) < 40 * PARTITIONS and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got[message.partition()].append(message.value())
    finally:
        consumer.close()
    assert got == values
    for broker in cluster:  # each broker holds exactly the partitions it leads
        held = {p for t, p in broker.logs.partitions() if t == topic}
        assert held == {p for p, leader in leaders(cluster, topic).items()
                        if leader == broker.broker_id}


def test_a_broker_that_does_not_lead_answers_not_leader(cluster, kafka_call):
    request = kafka_call
    topic = f"routing-{uuid.uuid4().hex[:6]}"
    metadata = request(cluster[0].port, ApiKey.METADATA, 12,
                       {"topics": [{"name": topic}], "allow_auto_topic_creation": True})
    assert metadata["topics"][0]["error_code"] in (ErrorCode.LEADER_NOT_AVAILABLE, 0)
    wait_until(lambda: len(leaders(cluster, topic)) == PARTITIONS, message="all leaders")
    metadata = request(cluster[0].port, ApiKey.METADATA, 12, {"topics": [{"name": topic}]})
    ports = {b["node_id"]: b["port"] for b in metadata["brokers"]}
    assert sorted(ports) == [1, 2, 3]
    partition = metadata["topics"][0]["partitions"][0]
    leader = partition["leader_id"]
    other = next(node for node in ports if node != leader)
    produce = {"transactional_id": None, "acks": 1, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [
            {"index": partition["partition_index"],
             "records": build_batch([(b"k", b"v")], timestamp=1)}]}]}
    wrong = request(ports[other], ApiKey.PRODUCE, 9, produce)
    assert wrong["responses"][0]["partition_responses"][0]["error_code"] == \
        ErrorCode.NOT_LEADER_OR_FOLLOWER
    right = request(ports[leader], ApiKey.PRODUCE, 9, produce)
    assert right["responses"][0]["partition_responses"][0]["error_code"] == 0


def test_an_acks_0_produce_that_fails_closes_its_connection(cluster, kafka_call):
    """acks=0 has no response to carry an error: as Kafka, the broker drops the connection, so
    the client refreshes its metadata; a produce that succeeds leaves the connection open."""
    topic = f"silent-{uuid.uuid4().hex[:6]}"
    kafka_call(cluster[0].port, ApiKey.METADATA, 12, {"topics": [{"name": topic}]})
    wait_until(lambda: len(leaders(cluster, topic)) == PARTITIONS, message="all leaders")
    leader = leaders(cluster, topic)[0]
    ports = {b.broker_id: b.port for b in cluster}
    other = next(node for node in ports if node != leader)
    produce = {"transactional_id": None, "acks": 0, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [
            {"index": 0, "records": build_batch([(b"k", b"v")], timestamp=1)}]}]}
    versions = encode_request(ApiKey.API_VERSIONS, 0, 2, "kpy-tests", {})

    with socket.create_connection(("127.0.0.1", ports[leader]), timeout=10) as sock:
        sock.sendall(encode_request(ApiKey.PRODUCE, 9, 1, "kpy-tests", produce))
        sock.sendall(versions)  # answered: the produce kept the connection
        (size,) = struct.unpack(">i", recv_exactly(sock, 4))
        assert parse_response(ApiKey.API_VERSIONS, 0, recv_exactly(sock, size))[0] == 2
    leading = next(b for b in cluster if b.broker_id == leader)
    wait_until(lambda: leading.logs.get(topic, 0).log_end_offset == 1,
               message="the leader appended the acks=0 batch")

    with socket.create_connection(("127.0.0.1", ports[other]), timeout=10) as sock:
        sock.sendall(encode_request(ApiKey.PRODUCE, 9, 1, "kpy-tests", produce))
        sock.sendall(versions)
        try:
            answer = sock.recv(4)
        except ConnectionResetError:  # closed with the ApiVersions still unread
            answer = b""
        assert answer == b""  # closed, the ApiVersions unanswered


def test_a_config_change_made_on_one_broker_reaches_the_logs_of_the_others(cluster, kafka_call):
    topic = f"conf-{uuid.uuid4().hex[:6]}"
    kafka_call(cluster[0].port, ApiKey.METADATA, 12, {"topics": [{"name": topic}]})
    wait_until(lambda: len(leaders(cluster, topic)) == PARTITIONS, message="all leaders")
    response = kafka_call(cluster[0].port, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        "resources": [{"resource_type": 2, "resource_name": topic, "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "12345"}]}],
        "validate_only": False})
    assert response["responses"][0]["error_code"] == 0
    holders = [b for b in cluster if any(t == topic for t, _ in b.logs.partitions())]
    assert len(holders) == 3
    wait_until(lambda: all(b.logs.get(t, p).config.retention_ms == 12345
                           for b in holders for t, p in b.logs.partitions() if t == topic),
               message="every broker applied the override")
