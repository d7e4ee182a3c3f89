"""The sender against a real broker_lite (real sockets, real ZooKeeper), read back by
confluent-kafka with CRC checks: large inputs cut into batches under the limits, records too
large, batches the broker refuses as too large sent again in halves, and idempotent delivery
while the broker drops connections or a proxy cuts answers halfway."""

import logging
import random
import socket
import struct
import threading

import numpy as np
import pyarrow as pa
import pytest
from producer_checks import consume, raw_batches, unique
from tcp_proxy import TcpProxy, shut

from broker_lite.client import (
    KafkaClient,
    Producer,
    RecordTooLargeError,
    TopicPartition,
    partitions_for_keys,
)
from broker_lite.server.testing import (
    bootstrap,
    recv_exactly,
    start_brokers,
    stop_brokers,
)


@pytest.fixture
def client(broker):
    with KafkaClient({"bootstrap.servers": bootstrap(broker), "request.timeout.ms": "15000",
                      "retry.backoff.ms": "20"}) as client:
        yield client


# -- sizes -----------------------------------------------------------------------------------------

def test_large_input_is_cut_into_batches_under_the_limits(broker, client):
    topic = unique("large")
    client.admin.create_topics([(topic, 1, 1)])
    n = 6000
    rows = pa.record_batch({"value": pa.array([bytes([i % 251]) * 1000 for i in range(n)])})
    with Producer(client) as producer:  # batch.size and max.request.size: 1 MiB
        assert producer.send_batch(topic, 0, rows) == (0, n)
    batches = raw_batches(client, TopicPartition(topic, 0))
    assert len(batches) >= 6
    assert all(b.size_in_bytes <= 1 << 20 for b in batches)
    assert sum(b.record_count for b in batches) == n
    assert max(b.size_in_bytes for b in batches) > 900_000  # full batches, not tiny ones
    assert [m.value()[:1] for m in consume(bootstrap(broker), topic, 0, n)] == \
        [bytes([i % 251]) for i in range(n)]


def test_a_record_over_max_request_size_is_refused_before_sending(client):
    topic = unique("too-large")
    client.admin.create_topics([(topic, 1, 1)])
    rows = pa.record_batch({"value": [b"small", b"x" * 2000, b"small"]})
    with Producer(client, max_request_size=1500) as producer:
        with pytest.raises(RecordTooLargeError, match=r"row 1 .* is 20\d\d bytes when serialized, "
                                                      r"larger than max.request.size \(1500\)"):
            producer.send_batch(topic, 0, rows)
        assert producer.send_batch(topic, 0, rows.slice(0, 1)) == (0, 1)  # still usable
    assert client.list_offsets({TopicPartition(topic, 0): -1}) == {TopicPartition(topic, 0): 1}


def test_batches_the_broker_finds_too_large_are_halved(broker, client):
    """The topic takes batches of at most 20,000 bytes (max.message.bytes): batches of the
    default 1 MiB are refused with MESSAGE_TOO_LARGE and sent again in halves; a single record
    over the topic's limit is a RecordTooLargeError naming its size."""
    topic = unique("small-max")
    client.admin.create_topics([(topic, 1, 1, {"max.message.bytes": "20000"})])
    rows = pa.record_batch({"value": [b"%05d" % i + b"y" * 995 for i in range(200)]})
    with Producer(client) as producer:
        assert producer.send_batch(topic, 0, rows) == (0, 200)
        with pytest.raises(RecordTooLargeError, match=r"MESSAGE_TOO_LARGE \(10\) for .*-0: "
                                                      r"the broker refuses a 3\d{4}-byte batch"):
            producer.send_batch(topic, 0, pa.record_batch({"value": [b"z" * 30_000]}))
        assert producer.send_batch(topic, 0, rows.slice(0, 3)) == (200, 3)  # in sequence still
    batches = raw_batches(client, TopicPartition(topic, 0))
    assert all(b.size_in_bytes <= 20_000 for b in batches)
    assert [m.value()[:5] for m in consume(bootstrap(broker), topic, 0, 203)] == \
        [b"%05d" % i for i in range(200)] + [b"%05d" % i for i in range(3)]


# -- idempotence under failures -------------------------------------------------------------------

class ProduceAnswerCutter(TcpProxy):
    """A proxy that lets every request through and cuts the connection halfway into some of
    the answers to Produce requests (every ``every``-th, give or take): the batches were
    written, their answers never arrive, and the producer must send them again. Requests are
    matched with answers by their order on the connection."""

    def __init__(self, every=(2, 6), seed=11):
        super().__init__()
        self.every, self.rng = every, random.Random(seed)
        self.cutting = True
        self.cuts = 0
        self._countdown = self.rng.randint(*every)
        self._lock = threading.Lock()

    def relay(self, client, broker):
        api_keys: list[int] = []  # of the requests not answered yet, in order
        threading.Thread(target=self._requests, args=(client, broker, api_keys),
                         daemon=True).start()
        threading.Thread(target=self._answers, args=(broker, client, api_keys),
                         daemon=True).start()

    def _requests(self, source, sink, api_keys):
        try:
            while True:
                frame = _read_frame(source)
                api_keys.append(struct.unpack_from(">h", frame, 4)[0])
                sink.sendall(frame)
        except (OSError, ConnectionError):
            shut(source, sink)

    def _answers(self, source, sink, api_keys):
        try:
            while True:
                frame = _read_frame(source)
                api_key = api_keys.pop(0)
                if api_key == 0 and self._cut_now():  # a Produce answer
                    sink.sendall(frame[:len(frame) // 2])
                    break
                sink.sendall(frame)
        except (OSError, ConnectionError, IndexError):
            pass
        shut(source, sink)

    def _cut_now(self) -> bool:
        with self._lock:
            if not self.cutting:
                return False
            self._countdown -= 1
            if self._countdown > 0:
                return False
            self._countdown = self.rng.randint(*self.every)
            self.cuts += 1
            return True


def _read_frame(sock: socket.socket) -> bytes:
    size = recv_exactly(sock, 4)
    return size + recv_exactly(sock, struct.unpack(">i", size)[0])


def produce_in_calls(producer: Producer, topic: str, calls: int, per_call: int) -> None:
    for call in range(calls):
        start = call * per_call
        rows = pa.record_batch({
            "key": pa.array([b"key-%d" % (i % 97) for i in range(start, start + per_call)]),
            "value": pa.array([b"%d" % i for i in range(start, start + per_call)])})
        written = producer.send_arrow(topic, rows)
        assert sum(count for _, count in written.values()) == per_call


def check_exactly_once_in_order(servers: str, topic: str, partitions: int, total: int) -> None:
    keys = pa.array([b"key-%d" % (i % 97) for i in range(total)])
    where = partitions_for_keys(keys, partitions)
    for p in range(partitions):
        expected = [b"%d" % i for i in np.flatnonzero(where == p)]
        assert [m.value() for m in consume(servers, topic, p, len(expected))] == expected


@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_idempotent_delivery_while_the_broker_drops_connections(broker, client, codec):
    """Connections are dropped by the broker over and over while 40 calls of 500 rows go to
    three partitions: lost requests and lost answers are sent again with the same sequence
    numbers, and every value arrives once, in order."""
    topic, partitions, calls, per_call = unique("drops"), 3, 40, 500
    client.admin.create_topics([(topic, partitions, 1)])
    stop, drops = threading.Event(), []

    def written() -> int:
        return sum(broker.logs.get(topic, p).log_end_offset for p in range(partitions))

    def dropper():
        # each drop waits for some progress, so that the producer is never kept from it
        last = 0
        while not stop.wait(0.002):
            if written() - last >= 150:
                last = written()
                drops.append(broker.server.drop_connections())

    producer = Producer({"bootstrap.servers": bootstrap(broker), "retry.backoff.ms": "5",
                         "retry.backoff.max.ms": "50"}, compression=codec, batch_size=2000)
    thread = threading.Thread(target=dropper, daemon=True)
    thread.start()
    try:
        produce_in_calls(producer, topic, calls, per_call)
        producer_id = producer.producer_id
    finally:
        stop.set()
        thread.join(30)
        producer.close()
    assert not thread.is_alive(), "the connection dropper still running 30 s after its stop"
    assert sum(drops) > 10  # connections were cut under the producer
    check_exactly_once_in_order(bootstrap(broker), topic, partitions, calls * per_call)
    assert producer_id >= 0


@pytest.mark.broker
@pytest.mark.zookeeper
def test_answers_lost_halfway_are_deduplicated_by_the_broker(zookeeper_connect, tmp_path,
                                                             caplog):
    """A proxy cuts the broker's answers halfway, after the batches were written: the producer
    sends them again, the broker answers them as duplicates with their first offsets, and
    nothing is written twice."""
    proxy = ProduceAnswerCutter()
    brokers = start_brokers(zookeeper_connect, tmp_path, 1,
                            {"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy.port}"})
    proxy.start(brokers[0].port)
    topic, partitions, calls, per_call = unique("lost-answers"), 3, 30, 300
    servers = f"127.0.0.1:{proxy.port}"
    try:
        with KafkaClient({"bootstrap.servers": servers}) as admin:
            admin.admin.create_topics([(topic, partitions, 1)])
        with caplog.at_level(logging.DEBUG, logger="broker_lite.log.log"):
            with Producer({"bootstrap.servers": servers, "retry.backoff.ms": "5"},
                          batch_size=1500) as producer:
                produce_in_calls(producer, topic, calls, per_call)
        proxy.cutting = False
        assert proxy.cuts > 10
        check_exactly_once_in_order(servers, topic, partitions, calls * per_call)
        assert [r for r in caplog.records if "a retried batch" in r.getMessage()]
    finally:
        stop_brokers(brokers)
        proxy.close()
