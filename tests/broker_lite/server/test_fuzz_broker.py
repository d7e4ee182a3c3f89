"""Hostile input over real sockets: the broker answers with the right error or closes that one
connection, never crashes, keeps its memory and threads bounded, and keeps serving a
well-behaved client running alongside."""

import logging
import random
import socket
import struct
import threading
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from broker_lite.common.tiers import needs
from broker_lite.config.broker import BrokerConfig
from broker_lite.protocol import ApiKey, ErrorCode, encode_request, parse_response
from broker_lite.records import build_batch
from broker_lite.records.record_batch import ATTRIBUTES_OFFSET, TRANSACTIONAL_FLAG
from broker_lite.server.broker import Broker


@pytest.fixture
@needs("broker", "zookeeper")
def broker(zookeeper_connect, tmp_path):
    config = BrokerConfig({
        "broker.id": "1", "zookeeper.connect": zookeeper_connect,
        "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(tmp_path / "logs"),
        "socket.request.max.bytes": str(1 << 20),
    })
    started = Broker(config).start()
    yield started
    started.stop()


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def exchange(port: int, frame: bytes, *, read: bool = True) -> bytes | None:
    """Send ``frame``; return the response payload, or None when the broker closed."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(frame)
        if not read:
            return None
        head = recv_up_to(sock, 4)
        if len(head) < 4:
            return None
        return recv_up_to(sock, struct.unpack(">i", head)[0])


def recv_up_to(sock: socket.socket, n: int) -> bytes:
    """Exactly ``n`` bytes, or fewer if the broker closes the connection first."""
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def produce_request(topic: str, records: bytes, version: int = 9) -> bytes:
    return encode_request(ApiKey.PRODUCE, version, 1, "fuzz", {
        "transactional_id": None, "acks": 1, "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}]})


def attacks(rng: random.Random, topic: str):
    """(description, frame, expectation) where expectation is 'closed', 'any', or an error code
    expected in the Produce response."""
    good_batch = build_batch([(b"k", b"v" * 50)], timestamp=1)
    kind = rng.randrange(8)
    if kind == 0:
        return "random payload", framed(rng.randbytes(rng.randrange(0, 300))), "any"
    if kind == 1:
        header = struct.pack(">hhi", rng.choice([0, 1, 3, 18, 19]), rng.randrange(0, 13), 1)
        return "header + garbage", framed(header + rng.randbytes(rng.randrange(0, 200))), "any"
    if kind == 2:
        frame = produce_request(topic, good_batch)
        return "truncated frame", frame[:rng.randrange(1, len(frame))], "closed-no-read"
    if kind == 3:
        return "huge size", struct.pack(">i", rng.choice([2**31 - 1, 1 << 21, -7])), "closed"
    if kind == 4:
        return "unknown api", framed(struct.pack(">hhih", 999, 0, 1, -1)), "closed"
    if kind == 5:
        return "unsupported version", \
            framed(struct.pack(">hhih", int(ApiKey.PRODUCE), 99, 1, -1)), "closed"
    if kind == 6:
        data = bytearray(good_batch)
        data[rng.randrange(21, len(data))] ^= 1 << rng.randrange(8)
        # A flip that marks the batch transactional is refused first, as Kafka's Produce does
        # (RequestUtils.hasTransactionalRecords reads the flag before any CRC check)
        expected = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED \
            if data[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_FLAG else ErrorCode.CORRUPT_MESSAGE
        return "corrupt batch", produce_request(topic, bytes(data)), expected
    data = good_batch[:rng.randrange(12, len(good_batch))]
    return "partial batch", produce_request(topic, data), ErrorCode.CORRUPT_MESSAGE


def test_hostile_clients_do_not_disturb_a_good_one(broker, caplog):
    # The broker logs a warning for each refused client; pytest would keep every one in this
    # process's memory, which the size check below would count as the broker's.
    caplog.set_level(logging.ERROR, logger="broker_lite")
    port = broker.port
    topic = "fuzzed"
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "log_level": 3})
    producer.produce(topic, partition=0, value=b"create")
    assert producer.flush(20) == 0
    del producer  # destroying a client closes its connections

    stop = threading.Event()
    good_errors: list = []
    good_sent = [0]

    def good_client():
        p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": "all", "log_level": 3})
        while not stop.is_set():
            p.produce("steady", partition=0, value=b"%d" % good_sent[0],
                      on_delivery=lambda err, msg: err and good_errors.append(err))
            good_sent[0] += 1
            p.poll(0.01)
        p.flush(20)

    thread = threading.Thread(target=good_client, daemon=True)
    thread.start()
    rng = random.Random(1234)
    rss_before = rss_kib()
    seen = {}
    attacks_done, deadline = 0, time.monotonic() + 180
    try:
        # attack until both enough attacks ran and the good client worked all along
        while (attacks_done < 600 or good_sent[0] < 200) and time.monotonic() < deadline:
            attacks_done += 1
            description, frame, expect = attacks(rng, topic)
            seen[description] = seen.get(description, 0) + 1
            response = exchange(port, frame, read=expect != "closed-no-read")
            if expect == "closed":
                assert response is None, description
            elif isinstance(expect, ErrorCode):
                assert response is not None, description
                _, body = parse_response(ApiKey.PRODUCE, 9, response)
                code = body["responses"][0]["partition_responses"][0]["error_code"]
                assert code == expect, (description, code)
    finally:
        stop.set()
        thread.join(60)
    rss_attacked = rss_kib()  # before the consumer below brings librdkafka's buffers in
    assert not thread.is_alive(), "the good client still producing 60 s after its stop"
    assert len(seen) == 8  # every kind of attack was tried
    assert good_errors == [] and good_sent[0] >= 200 and attacks_done >= 600

    # still serving: ApiVersions answers, even in a version it does not know (v0 fallback)
    reply = exchange(port, encode_request(ApiKey.API_VERSIONS, 3, 5, "after", {
        "client_software_name": "t", "client_software_version": "1"}))
    assert parse_response(ApiKey.API_VERSIONS, 3, reply)[1]["error_code"] == 0
    # a client newer than the broker: request header v2 (flexible: ends with empty tagged fields)
    reply = exchange(port, framed(struct.pack(">hhihb", int(ApiKey.API_VERSIONS), 99, 9, -1, 0)))
    correlation_id, body = parse_response(ApiKey.API_VERSIONS, 0, reply)
    assert correlation_id == 9 and body["error_code"] == ErrorCode.UNSUPPORTED_VERSION
    assert {k["api_key"] for k in body["api_keys"]} >= {0, 1, 2, 3, 18}

    # the good client's records are all there, in order
    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "check",
                         "enable.auto.commit": False, "log_level": 3})
    consumer.assign([TopicPartition("steady", 0, 0)])
    values, deadline = [], time.monotonic() + 30
    while len(values) < good_sent[0] and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
    consumer.close()
    assert values == [b"%d" % i for i in range(good_sent[0])]

    deadline = time.monotonic() + 10
    while broker.server.connection_count > 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert broker.server.connection_count == 0  # no connection (nor its thread) left behind
    assert rss_attacked - rss_before < 100 * 1024  # bounded: no growth with the attack count
