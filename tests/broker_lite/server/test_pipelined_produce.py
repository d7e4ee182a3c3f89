"""A producer pipelining Produce requests on one connection: the requests read together are
answered together, each partition's records in one write, and each request gets the answer it
gets on its own, in order."""

import socket
import struct

import pytest

from broker_lite.log.segment import LogSegment
from broker_lite.protocol import ApiKey, encode_request, parse_response
from broker_lite.records import build_batch, iter_records
from broker_lite.server.testing import call, recv_exactly, start_brokers, stop_brokers
from broker_lite.zk.testing import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.zookeeper]

VERSION = 9
TOPIC = "pipelined"


@pytest.fixture
def broker(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path)
    response = call(brokers[0].port, ApiKey.CREATE_TOPICS, 5, {
        "topics": [{"name": TOPIC, "num_partitions": 1, "replication_factor": 1,
                    "assignments": [], "configs": []}], "timeout_ms": 10_000})
    assert response["topics"][0]["error_code"] == 0, response
    yield brokers[0]
    stop_brokers(brokers)


@pytest.fixture
def segment_writes(monkeypatch):
    """The number of batches of each segment write."""
    writes: list[int] = []
    original = LogSegment.append
    monkeypatch.setattr(LogSegment, "append", lambda self, chunks, batches: (
        writes.append(len(batches)), original(self, chunks, batches))[1])
    return writes


def batch(value: bytes) -> bytes:
    return build_batch([(None, value)], timestamp=1_700_000_000_000)


def corrupt(value: bytes) -> bytes:
    damaged = bytearray(batch(value))
    damaged[-1] ^= 0xFF  # covered by the CRC
    return bytes(damaged)


def produce(correlation_id: int, records: bytes, topic: str = TOPIC, acks: int = 1) -> bytes:
    return encode_request(ApiKey.PRODUCE, VERSION, correlation_id, "pipelining", {
        "transactional_id": None, "acks": acks, "timeout_ms": 10_000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}]})


def metadata(correlation_id: int) -> bytes:
    return encode_request(ApiKey.METADATA, 9, correlation_id, "pipelining", {
        "topics": [{"name": TOPIC}], "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False})


def exchange(broker, frames: list[bytes], answers: list[int]) -> list[tuple[int, dict]]:
    """Send ``frames`` in one write; read the responses, of the APIs ``answers`` lists."""
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
        sock.sendall(b"".join(frames))
        responses = []
        for api_key in answers:
            (size,) = struct.unpack(">i", recv_exactly(sock, 4))
            version = VERSION if api_key == ApiKey.PRODUCE else 9
            responses.append(parse_response(api_key, version, recv_exactly(sock, size)))
    return responses


def outcome(response: dict) -> tuple[int, int]:
    partition = response["responses"][0]["partition_responses"][0]
    return partition["error_code"], partition["base_offset"]


def values_in_log(broker) -> list[bytes]:
    log = broker.partitions.leader_partition(TOPIC, 0).log
    region = log.read(0, 1 << 20)
    return [record.value for record in iter_records(region.read())] if region else []


@pytest.mark.parametrize("acks", [1, -1])
def test_requests_read_together_are_written_at_once_and_answered_each_in_order(
        broker, segment_writes, acks):
    values = [b"v%d" % i for i in range(10)]
    frames = [produce(100 + i, corrupt(v) if i == 4 else batch(v), acks=acks)
              for i, v in enumerate(values)]
    frames[6] = produce(106, batch(values[6]), topic="no-such-topic", acks=acks)
    responses = exchange(broker, frames, [ApiKey.PRODUCE] * len(frames))
    assert [correlation_id for correlation_id, _ in responses] == list(range(100, 110))
    assert [outcome(body) for _, body in responses] == [
        (0, 0), (0, 1), (0, 2), (0, 3), (2, -1), (0, 4), (3, -1), (0, 5), (0, 6), (0, 7)]
    assert values_in_log(broker) == [v for i, v in enumerate(values) if i not in (4, 6)]
    assert sum(segment_writes) == 8
    assert len(segment_writes) < 8  # some were written together
    # recorded once the response is written, which the client may read first
    wait_until(lambda: broker.server.metrics.snapshot().get("Produce", {}).get("requests")
               == len(frames), timeout=10, message="each Produce request counted")
    produce_metrics = broker.server.metrics.snapshot()["Produce"]
    assert produce_metrics["requests"] == len(frames)


def test_a_request_of_another_api_ends_the_run_and_is_answered_in_its_place(broker):
    frames = [produce(1, batch(b"a")), produce(2, batch(b"b")), metadata(3),
              produce(4, batch(b"c")), produce(5, batch(b"d"))]
    responses = exchange(broker, frames, [ApiKey.PRODUCE, ApiKey.PRODUCE, ApiKey.METADATA,
                                          ApiKey.PRODUCE, ApiKey.PRODUCE])
    assert [correlation_id for correlation_id, _ in responses] == [1, 2, 3, 4, 5]
    assert responses[2][1]["topics"][0]["name"] == TOPIC
    assert [outcome(responses[i][1]) for i in (0, 1, 3, 4)] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert values_in_log(broker) == [b"a", b"b", b"c", b"d"]


def test_requests_with_other_acks_are_answered_in_their_own_runs(broker, segment_writes):
    frames = [produce(1, batch(b"a")), produce(2, batch(b"b")),
              produce(3, batch(b"c"), acks=-1), produce(4, batch(b"d"), acks=-1),
              produce(5, batch(b"e"))]
    responses = exchange(broker, frames, [ApiKey.PRODUCE] * 5)
    assert [(correlation_id, outcome(body)) for correlation_id, body in responses] == [
        (1, (0, 0)), (2, (0, 1)), (3, (0, 2)), (4, (0, 3)), (5, (0, 4))]
    assert segment_writes == [2, 2, 1]
    assert values_in_log(broker) == [b"a", b"b", b"c", b"d", b"e"]


def test_a_request_with_acks_0_is_not_answered_and_keeps_its_place(broker):
    """acks=0 has no answer to give with the others: it ends the run, and is written in its
    turn."""
    frames = [produce(1, batch(b"a")), produce(2, batch(b"b"), acks=0),
              produce(3, batch(b"c"))]
    responses = exchange(broker, frames, [ApiKey.PRODUCE, ApiKey.PRODUCE])
    assert [(correlation_id, outcome(body)) for correlation_id, body in responses] == [
        (1, (0, 0)), (3, (0, 2))]
    assert values_in_log(broker) == [b"a", b"b", b"c"]


def test_a_request_that_does_not_decode_still_closes_the_connection_after_the_run(broker):
    """The requests before it are answered; it closes the connection, as on its own."""
    truncated = produce(2, batch(b"b"))[:40]
    frames = [produce(1, batch(b"a")), struct.pack(">i", len(truncated) - 4) + truncated[4:]]
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
        sock.sendall(b"".join(frames))
        (size,) = struct.unpack(">i", recv_exactly(sock, 4))
        correlation_id, body = parse_response(ApiKey.PRODUCE, VERSION, recv_exactly(sock, size))
        assert (correlation_id, outcome(body)) == (1, (0, 0))
        assert sock.recv(1) == b""  # closed
    assert values_in_log(broker) == [b"a"]
