"""Idempotent producers against a real broker_lite: confluent-kafka and kafka-python with
idempotence on, connections cut under them, brokers restarted cleanly and killed, InitProducerId
across a cluster, and bad producer fields on the wire."""

import logging
import random
import signal
import threading
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from tcp_proxy import TcpProxy, pump, shut

from broker_lite.common.tiers import needs
from broker_lite.local.cluster import BrokerProcess
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import RecordBatchBuilder, build_batch, iter_batches
from broker_lite.server.testing import bootstrap, call, start_brokers, stop_brokers
from broker_lite.zk.producer_ids import PRODUCER_ID_BLOCK_SIZE
from broker_lite.zk.testing import wait_until


def create_topic(port: int, topic: str, partitions: int = 1) -> None:
    response = call(port, ApiKey.CREATE_TOPICS, 5, {
        "topics": [{"name": topic, "num_partitions": partitions, "replication_factor": 1,
                    "assignments": [], "configs": []}], "timeout_ms": 10_000})
    assert response["topics"][0]["error_code"] == 0, response


def init_producer_id(port: int, version: int = 4, **fields) -> dict:
    body = {"transactional_id": None, "transaction_timeout_ms": 60_000, **fields}
    return call(port, ApiKey.INIT_PRODUCER_ID, version, body)


def produce(port: int, topic: str, records: bytes, partition: int = 0, version: int = 9) -> dict:
    response = call(port, ApiKey.PRODUCE, version, {
        "transactional_id": None, "acks": -1, "timeout_ms": 10_000,
        "topic_data": [{"name": topic, "partition_data": [
            {"index": partition, "records": records}]}]})
    return response["responses"][0]["partition_responses"][0]


def log_end_offset(port: int, topic: str, partition: int = 0) -> int:
    response = call(port, ApiKey.LIST_OFFSETS, 5, {
        "replica_id": -1, "isolation_level": 0, "topics": [{"name": topic, "partitions": [
            {"partition_index": partition, "current_leader_epoch": -1, "timestamp": -1}]}]})
    return response["topics"][0]["partitions"][0]["offset"]


def fetch_batches(port: int, topic: str, partition: int = 0) -> list:
    response = call(port, ApiKey.FETCH, 11, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 64 << 20,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [
            {"partition": partition, "current_leader_epoch": -1, "fetch_offset": 0,
             "log_start_offset": -1, "partition_max_bytes": 64 << 20}]}],
        "forgotten_topics_data": [], "rack_id": ""})
    data = response["responses"][0]["partitions"][0]
    assert data["error_code"] == 0, data
    return list(iter_batches(bytes(data["records"] or b"")))


def idempotent_batch(producer_id: int, seq: int, count: int, epoch: int = 0,
                     tag: str = "r") -> bytes:
    return build_batch([(None, f"{tag}-{seq + i}".encode()) for i in range(count)],
                       producer_id=producer_id, producer_epoch=epoch, base_sequence=seq)


def consume_partition(broker, topic: str, partition: int, count: int,
                      timeout_s: float = 60) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap(broker), "group.id": "idempotence",
                         "enable.auto.commit": False, "log_level": 3})
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        values, deadline = [], time.monotonic() + timeout_s
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None:
                assert message.error() is None, message.error()
                values.append(message.value())
        # anything past the expected count would be a duplicate
        extra = consumer.poll(1.0)
        assert extra is None or extra.error() is not None, extra.value()
        return values
    finally:
        consumer.close()


# -- confluent-kafka (librdkafka) -----------------------------------------------------------------

class CuttingProxy(TcpProxy):
    """A proxy that cuts the connection carrying its responses each time another ``budget``
    bytes of them went through, halfway into a response: the request was handled, but its
    answer never arrives, so the client sends it again."""

    def __init__(self, budget=(600, 1500), seed=7):
        super().__init__()
        self.budget, self.rng = budget, random.Random(seed)
        self.cutting = True
        self.cuts = 0
        self._left = self.rng.randint(*budget)
        self._lock = threading.Lock()

    def relay(self, client, broker):
        threading.Thread(target=pump, args=(client, broker), daemon=True).start()
        threading.Thread(target=self._responses, args=(broker, client), daemon=True).start()

    def _responses(self, source, sink):
        try:
            while data := source.recv(65536):
                cut = False
                if self.cutting:
                    with self._lock:
                        if len(data) >= self._left:
                            data, cut = data[:self._left], True
                            self._left = self.rng.randint(*self.budget)
                            self.cuts += 1
                        else:
                            self._left -= len(data)
                sink.sendall(data)
                if cut:
                    break
        except OSError:
            pass
        shut(source, sink)


def produce_through_failures(servers: str, topic, partitions, total, cutter) -> list:
    """Produce ``total`` values idempotently while ``cutter(delivered)`` runs in a thread;
    return librdkafka's delivery errors."""
    producer = Producer({
        "bootstrap.servers": servers, "enable.idempotence": True, "acks": "all",
        "linger.ms": 2, "batch.num.messages": 100, "reconnect.backoff.ms": 10,
        "reconnect.backoff.max.ms": 100, "message.timeout.ms": 120_000, "log_level": 0,
    })
    errors, delivered, stop = [], [0], threading.Event()

    def on_delivery(err, msg):
        delivered[0] += 1
        if err is not None:
            errors.append(err)

    thread = threading.Thread(target=cutter, args=(delivered, stop), daemon=True)
    thread.start()
    deadline = time.monotonic() + 300
    try:
        for i in range(total):
            while True:
                try:
                    producer.produce(topic, partition=i % partitions, value=b"%d" % i,
                                     on_delivery=on_delivery)
                    break
                except BufferError:
                    assert time.monotonic() < deadline, \
                        f"the producer's queue still full after 300 s, at value {i} of {total}"
                    producer.poll(0.05)
            producer.poll(0)
        assert producer.flush(120) == 0
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive(), "the connection cutter still running 30 s after its stop"
    return errors


@pytest.mark.broker
@pytest.mark.zookeeper
@pytest.mark.parametrize("cut_by", ["proxy", "broker"])
def test_confluent_idempotent_producer_survives_cut_connections(zookeeper_connect, tmp_path,
                                                               caplog, cut_by):
    """20,000 values over three partitions while connections are cut again and again, by a proxy
    halfway into responses, or by the broker itself (``drop_connections``, at any point, often
    while a request is being handled): librdkafka sends again what it saw no answer for, the
    broker answers retries of batches it already wrote with their offsets, and every value is
    there once, in order."""
    topic, partitions, total = "cuts", 3, 20_000
    proxy = CuttingProxy()
    properties = {"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy.port}"} \
        if cut_by == "proxy" else {}
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, properties)
    broker = brokers[0]
    proxy.start(broker.port)
    drops = []

    def written() -> int:
        return sum(broker.logs.get(topic, p).log_end_offset for p in range(partitions))

    def broker_cuts(delivered, stop):
        # Each cut waits for some progress, so the client is never kept from connecting.
        last = 0
        while not stop.wait(0.005):
            if written() - last >= 200:
                last = written()
                drops.append(broker.server.drop_connections())

    def no_cuts(delivered, stop):
        stop.wait()

    try:
        create_topic(broker.port, topic, partitions)
        with caplog.at_level(logging.DEBUG, logger="broker_lite.log.log"):
            errors = produce_through_failures(
                f"127.0.0.1:{proxy.port if cut_by == 'proxy' else broker.port}", topic,
                partitions, total,
                broker_cuts if cut_by == "broker" else no_cuts)
        proxy.cutting = False
        assert errors == []
        retries = [r for r in caplog.records if "a retried batch" in r.getMessage()]
        if cut_by == "proxy":
            assert proxy.cuts > 5 and retries  # answers were lost, and batches sent again
        else:
            assert sum(drops) > 5

        for p in range(partitions):
            expected = [b"%d" % i for i in range(p, total, partitions)]
            assert consume_partition(broker, topic, p, len(expected)) == expected
            assert log_end_offset(broker.port, topic, p) == len(expected)
        assert all(b.producer_id >= 0 for b in fetch_batches(broker.port, topic, 0))
    finally:
        stop_brokers(brokers)
        proxy.close()


# -- restarts -------------------------------------------------------------------------------------

@pytest.fixture
@needs("broker", "zookeeper")
def broker_process(tmp_path, zookeeper_connect):
    """A broker run by the real command line, so that it can be killed with SIGKILL."""
    process = BrokerProcess(1, tmp_path, {
        "zookeeper.connect": zookeeper_connect, "zookeeper.session.timeout.ms": "6000",
        "num.partitions": "1", "log.flush.interval.messages": "1"})
    yield process
    process.kill()


@pytest.mark.parametrize("shutdown", [signal.SIGTERM, signal.SIGKILL], ids=["clean", "killed"])
def test_a_restarted_broker_still_recognises_a_retry(broker_process, shutdown):
    """After a clean shutdown the producer state comes from the snapshot at the log end, which
    keeps each producer's last batch; after SIGKILL (no snapshot) it is read back from the log,
    which restores the last five. Either way a retry writes nothing."""
    port = broker_process.start().port
    topic = "restart"
    create_topic(port, topic)
    granted = init_producer_id(port)
    assert granted["error_code"] == 0
    producer_id = granted["producer_id"]
    first, second = idempotent_batch(producer_id, 0, 3), idempotent_batch(producer_id, 3, 2)
    assert produce(port, topic, first)["base_offset"] == 0
    assert produce(port, topic, second)["base_offset"] == 3

    broker_process.stop() if shutdown == signal.SIGTERM else broker_process.kill()
    broker_process.start()
    wait_until(lambda: log_end_offset(port, topic) == 5, 30, "the partition is served again")

    again = produce(port, topic, second)
    assert (again["error_code"], again["base_offset"]) == (0, 3)
    first_again = produce(port, topic, first)
    if shutdown == signal.SIGTERM:  # only the last batch is in a snapshot, as in Kafka
        assert first_again["error_code"] == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    else:
        assert (first_again["error_code"], first_again["base_offset"]) == (0, 0)
    assert log_end_offset(port, topic) == 5
    gap = produce(port, topic, idempotent_batch(producer_id, 6, 1))
    assert gap["error_code"] == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(port, topic, idempotent_batch(producer_id, 5, 1))["base_offset"] == 5
    values = [r.value for b in fetch_batches(port, topic) for r in b]
    assert values == [b"r-%d" % i for i in range(6)]
    assert broker_process.stop() == 0


# -- InitProducerId -------------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(6))
def test_init_producer_id_in_every_version(broker, version):
    ids = [init_producer_id(broker.port, version) for _ in range(3)]
    assert [r["error_code"] for r in ids] == [0, 0, 0]
    assert [r["producer_epoch"] for r in ids] == [0, 0, 0]
    assert len({r["producer_id"] for r in ids}) == 3


def test_a_producer_asking_to_resume_gets_a_new_id(broker):
    """Without a transactional id, Kafka 3.x answers KIP-360's resume request with a new id."""
    first = init_producer_id(broker.port, 4)
    resumed = init_producer_id(broker.port, 4, producer_id=first["producer_id"],
                               producer_epoch=first["producer_epoch"])
    assert resumed["error_code"] == 0
    assert (resumed["producer_id"], resumed["producer_epoch"]) != (first["producer_id"], 0)
    assert resumed["producer_epoch"] == 0


INIT_ERRORS = [
    ("producer id without epoch", {"producer_id": 5, "producer_epoch": -1},
     ErrorCode.INVALID_REQUEST),
    ("epoch without producer id", {"producer_id": -1, "producer_epoch": 2},
     ErrorCode.INVALID_REQUEST),
    ("empty transactional id", {"transactional_id": ""}, ErrorCode.INVALID_REQUEST),
    ("transactional id", {"transactional_id": "txn-1"}, ErrorCode.COORDINATOR_NOT_AVAILABLE),
]


@pytest.mark.parametrize("fields,error", [c[1:] for c in INIT_ERRORS],
                         ids=[c[0] for c in INIT_ERRORS])
def test_init_producer_id_errors(broker, fields, error):
    response = init_producer_id(broker.port, 4, **fields)
    assert (response["error_code"], response["producer_id"], response["producer_epoch"]) == (
        error, -1, -1)
    assert init_producer_id(broker.port)["error_code"] == 0  # and the broker keeps serving


@pytest.mark.broker
@pytest.mark.zookeeper
def test_producer_ids_are_unique_across_brokers_and_restarts(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 2)
    try:
        by_broker = {b.broker_id: [init_producer_id(b.port)["producer_id"] for _ in range(5)]
                     for b in brokers}
        blocks = {i: {pid // PRODUCER_ID_BLOCK_SIZE for pid in ids}
                  for i, ids in by_broker.items()}
        assert all(len(b) == 1 for b in blocks.values())  # consecutive ids from one block each
        assert blocks[1].isdisjoint(blocks[2])
        for ids in by_broker.values():
            assert ids == sorted(ids) and len(set(ids)) == 5
        highest = max(max(ids) for ids in by_broker.values())

        stop_brokers(brokers[:1])
        brokers[0] = start_brokers(zookeeper_connect, tmp_path, 1)[0]
        after = init_producer_id(brokers[0].port)["producer_id"]
        assert after // PRODUCER_ID_BLOCK_SIZE > highest // PRODUCER_ID_BLOCK_SIZE  # a new block
    finally:
        stop_brokers(brokers)


def test_a_used_up_block_is_followed_by_a_new_one(broker):
    manager = broker.services.producer_ids
    manager.block_size = 3
    manager.block = None
    ids = [init_producer_id(broker.port)["producer_id"] for _ in range(7)]
    assert len(set(ids)) == 7 and ids == sorted(ids)
    assert manager.block.block_end - manager.block.block_start == 2


# -- kafka-python ---------------------------------------------------------------------------------

def test_kafka_python_idempotent_producer(broker):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KTopicPartition

    topic, count = "kp-idempotent", 500
    producer = KafkaProducer(bootstrap_servers=bootstrap(broker), enable_idempotence=True,
                             acks="all", linger_ms=5, batch_size=2048)
    futures = [producer.send(topic, value=b"%d" % i, partition=0) for i in range(count)]
    producer.flush(30)
    assert [f.get(timeout=30).offset for f in futures] == list(range(count))
    producer.close()

    batches = fetch_batches(broker.port, topic)
    assert len(batches) > 1
    assert len({b.producer_id for b in batches}) == 1 and batches[0].producer_id >= 0
    assert [b.base_sequence for b in batches] == [b.base_offset for b in batches]

    consumer = KafkaConsumer(bootstrap_servers=bootstrap(broker), group_id=None,
                             enable_auto_commit=False, consumer_timeout_ms=10_000)
    partition = KTopicPartition(topic, 0)
    consumer.assign([partition])
    consumer.seek(partition, 0)
    values = []
    for message in consumer:
        values.append(message.value)
        if len(values) == count:
            break
    consumer.close()
    assert values == [b"%d" % i for i in range(count)]


# -- bad producer fields on the wire --------------------------------------------------------------

def not_a_marker(producer_id: int) -> bytes:
    """A control batch whose record is no transaction marker."""
    builder = RecordBatchBuilder(producer_id=producer_id, producer_epoch=0,
                                 is_transactional=True, is_control_batch=True)
    builder.append(b"?", key=b"\x00")
    return builder.build()


def test_producer_state_errors_on_the_wire(broker):
    port, topic = broker.port, "bad-producers"
    create_topic(port, topic)
    pid = init_producer_id(port)["producer_id"]
    assert produce(port, topic, idempotent_batch(pid, 0, 2))["error_code"] == 0
    cases = [
        (idempotent_batch(pid, -3, 1), ErrorCode.INVALID_RECORD),
        (idempotent_batch(pid, 5, 1), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),
        (idempotent_batch(pid, 0, 1), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),  # overlaps
        (idempotent_batch(pid, 2, 1, epoch=-1), ErrorCode.INVALID_PRODUCER_EPOCH),
        (idempotent_batch(pid, 2, 1, epoch=1), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),
        (idempotent_batch(pid + 1, -1, 1), ErrorCode.INVALID_RECORD),
        (idempotent_batch(pid + 1, 0, 1, epoch=-7), ErrorCode.INVALID_PRODUCER_EPOCH),
    ]
    for records, error in cases:
        response = produce(port, topic, records)
        assert (response["error_code"], response["base_offset"]) == (error, -1), records
        assert response["error_message"]
    # Transactional records without a transactional id are refused before anything else, with
    # Kafka's error (KafkaApis.handleProduceRequest) and no message of their own; a control
    # batch that is no marker is the log's to refuse (tests/broker_lite/log)
    response = produce(port, topic, not_a_marker(pid))
    assert (response["error_code"], response["base_offset"]) == \
        (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)
    assert log_end_offset(port, topic) == 2
    assert produce(port, topic, idempotent_batch(pid, 0, 2))["base_offset"] == 0  # duplicate
    assert produce(port, topic, idempotent_batch(pid, 2, 1))["base_offset"] == 2
    assert produce(port, topic, idempotent_batch(pid, 0, 1, epoch=1))["base_offset"] == 3
    assert produce(port, topic, idempotent_batch(pid, 3, 1))["error_code"] == \
        ErrorCode.INVALID_PRODUCER_EPOCH  # epoch 0 is fenced now
    assert log_end_offset(port, topic) == 4

