"""ListOffsets, sans I/O and against two scripted brokers: specs checked up front, one request
per leader, None for a timestamp past the last record, and only the partitions whose leader
moved asked again, at the new leader."""

import pytest
from scripted_broker import ScriptedBroker

from broker_lite.client import (
    EARLIEST,
    LATEST,
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClient,
    OffsetAndTimestamp,
    TopicPartition,
    UnsupportedVersionError,
)
from broker_lite.client.consumer.offsets import (
    check_spec,
    list_offsets_request,
    parse_list_offsets_response,
)
from broker_lite.client.errors import NotLeaderError
from broker_lite.protocol import ApiKey, ErrorCode

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def test_request_body():
    body = list_offsets_request({A1: (LATEST, 4), A0: (1234, -1), B0: (EARLIEST, 0)},
                                version=8, isolation_level=1, timeout_ms=900)
    assert (body["replica_id"], body["isolation_level"], body["timeout_ms"]) == (-1, 1, 900)
    assert [(t["name"], [(p["partition_index"], p["timestamp"], p["current_leader_epoch"])
                         for p in t["partitions"]]) for t in body["topics"]] == [
        ("a", [(0, 1234, -1), (1, LATEST, 4)]), ("b", [(0, EARLIEST, 0)])]


def test_read_committed_needs_version_2():
    with pytest.raises(UnsupportedVersionError, match="ListOffsets v2"):
        list_offsets_request({A0: (LATEST, -1)}, version=1, isolation_level=1, timeout_ms=1)
    assert list_offsets_request({A0: (LATEST, -1)}, version=1, isolation_level=0, timeout_ms=1)


def test_parse_response():
    body = {"topics": [{"name": "a", "partitions": [
        {"partition_index": 0, "error_code": 0, "timestamp": 1500, "offset": 42},
        {"partition_index": 1, "error_code": 0, "timestamp": -1, "offset": -1},
        {"partition_index": 7, "error_code": 0, "timestamp": -1, "offset": 1}]},
        {"name": "b", "partitions": [
            {"partition_index": 0, "error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER,
             "timestamp": -1, "offset": -1}]}]}
    got = parse_list_offsets_response(body, {A0, A1, B0, TopicPartition("c", 0)})
    assert got[A0] == OffsetAndTimestamp(42, 1500)
    assert got[A1] is None  # no record at or after the timestamp
    assert isinstance(got[B0], NotLeaderError)
    assert isinstance(got[TopicPartition("c", 0)], InvalidResponseError)
    assert TopicPartition("a", 7) not in got  # not asked for


@pytest.mark.parametrize("spec", [-3, -100, 1.5, "latest", None])
def test_bad_specs(spec):
    with pytest.raises(InvalidArgumentError, match="EARLIEST"):
        check_spec(A0, spec)


class TwoBrokers:
    """Two scripted brokers; ``leaders`` (partition -> node) decides the metadata, and each
    broker answers for the partitions it leads and NOT_LEADER_OR_FOLLOWER for the others."""

    def __init__(self):
        self.brokers = {1: ScriptedBroker(node_id=1), 2: ScriptedBroker(node_id=2)}
        self.leaders = {A0: 1, A1: 2, B0: 2}
        for node, broker in self.brokers.items():
            broker.handlers[ApiKey.METADATA] = self.metadata
            broker.handlers[ApiKey.LIST_OFFSETS] = self.list_offsets_at(node)

    def metadata(self, header, body):
        topics = {}
        for tp, node in self.leaders.items():
            topics.setdefault(tp.topic, []).append(
                {"error_code": 0, "partition_index": tp.partition, "leader_id": node,
                 "leader_epoch": 0, "replica_nodes": [1, 2], "isr_nodes": [1, 2]})
        return {"brokers": [{"node_id": n, "host": "127.0.0.1", "port": b.port}
                            for n, b in self.brokers.items()],
                "controller_id": 1, "topics": [{"error_code": 0, "name": name, "partitions": parts}
                                               for name, parts in topics.items()]}

    def list_offsets_at(self, node):
        def handle(header, body):
            return {"topics": [{"name": t["name"], "partitions": [
                {"partition_index": p["partition_index"],
                 "error_code": 0 if self.leaders[TopicPartition(t["name"], p["partition_index"])]
                 == node else ErrorCode.NOT_LEADER_OR_FOLLOWER,
                 "timestamp": -1, "offset": 100 * node + p["partition_index"]}
                for p in t["partitions"]]} for t in body["topics"]]}
        return handle

    def asked(self, node) -> list[set]:
        return [{TopicPartition(t["name"], p["partition_index"])
                 for t in body["topics"] for p in t["partitions"]}
                for body in self.brokers[node].requests_for(ApiKey.LIST_OFFSETS)]

    def close(self):
        for broker in self.brokers.values():
            broker.stop()


@pytest.fixture
def two():
    brokers = TwoBrokers()
    yield brokers
    brokers.close()


def test_one_request_per_leader(two):
    with KafkaClient({"bootstrap.servers": two.brokers[1].bootstrap}) as client:
        assert client.list_offsets({A0: LATEST, A1: LATEST, B0: EARLIEST}) == \
            {A0: 100, A1: 201, B0: 200}
    assert two.asked(1) == [{A0}] and two.asked(2) == [{A1, B0}]


def test_only_partitions_whose_leader_moved_are_asked_again(two):
    with KafkaClient({"bootstrap.servers": two.brokers[1].bootstrap,
                      "retry.backoff.ms": "5"}) as client:
        assert client.list_offsets({A0: LATEST, A1: LATEST}) == {A0: 100, A1: 201}
        two.leaders[A0] = 2  # moved: broker 1 now answers NOT_LEADER_OR_FOLLOWER for it
        assert client.list_offsets({A0: LATEST, B0: LATEST}) == {A0: 200, B0: 200}
    assert two.asked(1) == [{A0}, {A0}]  # asked once before the move and once after it
    assert two.asked(2) == [{A1}, {B0}, {A0}]  # B0 answered first; A0 retried at its new leader


def test_nothing_asked_nothing_sent():
    with KafkaClient({"bootstrap.servers": "127.0.0.1:9", "request.timeout.ms": "100"}) as client:
        assert client.list_offsets({}) == {}
        assert client.fetch({}) == {}
        assert client.committed("g", []) == {}
        client.commit("g", {})
