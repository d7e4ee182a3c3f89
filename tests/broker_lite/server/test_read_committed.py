"""The read side of transactions on a real broker: Fetch and ListOffsets by isolation level,
DescribeProducers, read_committed consumers of confluent-kafka and kafka-python, and restarts.

Transactional batches are built by hand and produced with a producer id from InitProducerId;
the COMMIT and ABORT markers are appended to the partition log the way the transaction
coordinator appends them (``origin=AppendOrigin.COORDINATOR``)."""

import shutil
import time

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from broker_lite.log.producer_state import AppendOrigin
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.protocol.enums import IsolationLevel
from broker_lite.records import (
    ControlRecordType,
    EndTransactionMarker,
    build_batch,
    build_control_batch,
    iter_batches,
)
from broker_lite.server.testing import bootstrap, call, start_brokers, stop_brokers
from broker_lite.zk.testing import wait_until

READ_UNCOMMITTED, READ_COMMITTED = IsolationLevel.READ_UNCOMMITTED, IsolationLevel.READ_COMMITTED
COMMIT, ABORT = ControlRecordType.COMMIT, ControlRecordType.ABORT
NOW = int(time.time() * 1000)


# -- requests -----------------------------------------------------------------------------------

def create_topic(port: int, topic: str) -> None:
    response = call(port, ApiKey.CREATE_TOPICS, 5, {
        "topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1,
                    "assignments": [], "configs": []}], "timeout_ms": 10_000})
    assert response["topics"][0]["error_code"] == 0, response


def new_producer_id(port: int) -> int:
    response = call(port, ApiKey.INIT_PRODUCER_ID, 4, {
        "transactional_id": None, "transaction_timeout_ms": 60_000})
    assert response["error_code"] == 0, response
    return response["producer_id"]


def produce(port: int, topic: str, records: bytes, transactional_id: str | None = None) -> int:
    response = call(port, ApiKey.PRODUCE, 9, {
        "transactional_id": transactional_id, "acks": -1, "timeout_ms": 10_000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}]})
    partition = response["responses"][0]["partition_responses"][0]
    assert partition["error_code"] == 0, partition
    return partition["base_offset"]


def fetch(port: int, topic: str, isolation_level: int, offset: int = 0,
          max_bytes: int = 1 << 20) -> dict:
    response = call(port, ApiKey.FETCH, 11, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": max_bytes,
        "isolation_level": isolation_level, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "fetch_offset": offset,
             "log_start_offset": -1, "partition_max_bytes": max_bytes}]}],
        "forgotten_topics_data": [], "rack_id": ""})
    return response["responses"][0]["partitions"][0]


def data_offsets(partition: dict) -> list[int]:
    """Offsets of the data records a response carries (markers left out)."""
    batches = iter_batches(bytes(partition["records"] or b""))
    return [r.offset for b in batches if not b.is_control_batch for r in b]


def list_offset(port: int, topic: str, isolation_level: int, timestamp: int = -1,
                version: int = 5) -> tuple[int, int]:
    response = call(port, ApiKey.LIST_OFFSETS, version, {
        "replica_id": -1, "isolation_level": isolation_level, "topics": [{
            "name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                           "timestamp": timestamp}]}]})
    partition = response["topics"][0]["partitions"][0]
    assert partition["error_code"] == 0, partition
    return partition["offset"], partition["timestamp"]


def describe_producers(port: int, topic: str, partitions=(0,)) -> list[dict]:
    response = call(port, ApiKey.DESCRIBE_PRODUCERS, 0, {
        "topics": [{"name": topic, "partition_indexes": list(partitions)}]})
    return response["topics"][0]["partitions"]


# -- writing transactions -------------------------------------------------------------------------

class Transactions:
    """Writes to partition 0 of ``topic`` as transactional producers and their coordinator."""

    def __init__(self, broker, topic: str):
        self.broker, self.topic = broker, topic
        self.sequences: dict[int, int] = {}

    def producer(self) -> int:
        producer_id = new_producer_id(self.broker.port)
        self.sequences[producer_id] = 0
        return producer_id

    def send(self, producer_id: int, *values: bytes) -> int:
        seq = self.sequences[producer_id]
        self.sequences[producer_id] = seq + len(values)
        batch = build_batch([(b"key", v) for v in values], timestamp=NOW,
                            producer_id=producer_id, producer_epoch=0, base_sequence=seq,
                            is_transactional=True)
        return produce(self.broker.port, self.topic, batch, f"txn-{producer_id}")

    def plain(self, *values: bytes) -> int:
        return produce(self.broker.port, self.topic,
                       build_batch([(b"key", v) for v in values], timestamp=NOW))

    def end(self, producer_id: int, kind: ControlRecordType) -> int:
        services = self.broker.services
        marker = build_control_batch(EndTransactionMarker(kind, 0), producer_id=producer_id,
                                     producer_epoch=0, timestamp=NOW)
        epoch = services.partitions.state(self.topic, 0).leader_epoch
        appended = self.broker.logs.get(self.topic, 0).append(
            marker, partition_leader_epoch=epoch, origin=AppendOrigin.COORDINATOR)
        services.purgatory.notify_appended()
        return appended.first_offset


COMMITTED_VALUES = [b"before", b"p2-a", b"p2-b", b"after"]
ALL_VALUES = [b"before", b"p1-a", b"p2-a", b"p1-b", b"p2-b", b"after"]


def write_interleaved(broker, topic: str) -> tuple[int, int]:
    """P1's transaction aborted, P2's committed, interleaved, between plain records::

        0 before   1 p1-a   2 p2-a   3 p1-b   4 ABORT p1   5 p2-b   6 COMMIT p2   7 after
    """
    create_topic(broker.port, topic)
    txns = Transactions(broker, topic)
    p1, p2 = txns.producer(), txns.producer()
    assert txns.plain(b"before") == 0
    assert txns.send(p1, b"p1-a") == 1
    assert txns.send(p2, b"p2-a") == 2
    assert txns.send(p1, b"p1-b") == 3
    assert txns.end(p1, ABORT) == 4
    assert txns.send(p2, b"p2-b") == 5
    assert txns.end(p2, COMMIT) == 6
    assert txns.plain(b"after") == 7
    return p1, p2


# -- the wire -------------------------------------------------------------------------------------

def test_read_committed_stops_at_the_lso_while_a_transaction_is_open(broker):
    port, topic = broker.port, "rc-open"
    create_topic(port, topic)
    txns = Transactions(broker, topic)
    producer_id = txns.producer()
    txns.plain(b"a", b"b")                         # 0-1
    txns.send(producer_id, b"t1", b"t2")           # 2-3, open
    committed = fetch(port, topic, READ_COMMITTED)
    assert committed["error_code"] == 0
    assert (committed["high_watermark"], committed["last_stable_offset"]) == (4, 2)
    assert data_offsets(committed) == [0, 1]
    assert committed["aborted_transactions"] == []
    assert data_offsets(fetch(port, topic, READ_COMMITTED, offset=2)) == []
    uncommitted = fetch(port, topic, READ_UNCOMMITTED)
    assert data_offsets(uncommitted) == [0, 1, 2, 3]
    assert (uncommitted["last_stable_offset"], uncommitted["aborted_transactions"]) == (2, None)

    txns.plain(b"c")                               # 4: still behind the open transaction
    assert data_offsets(fetch(port, topic, READ_COMMITTED)) == [0, 1]
    assert txns.end(producer_id, COMMIT) == 5
    committed = fetch(port, topic, READ_COMMITTED)
    assert (committed["high_watermark"], committed["last_stable_offset"]) == (6, 6)
    assert data_offsets(committed) == [0, 1, 2, 3, 4]
    assert committed["aborted_transactions"] == []


def test_read_committed_lists_the_aborted_transactions(broker):
    p1, _ = write_interleaved(broker, "rc-aborted")
    committed = fetch(broker.port, "rc-aborted", READ_COMMITTED)
    assert committed["aborted_transactions"] == [{"producer_id": p1, "first_offset": 1}]
    assert committed["last_stable_offset"] == committed["high_watermark"] == 8
    assert data_offsets(committed) == [0, 1, 2, 3, 5, 7]  # the consumer drops 1 and 3
    uncommitted = fetch(broker.port, "rc-aborted", READ_UNCOMMITTED)
    assert uncommitted["aborted_transactions"] is None
    assert data_offsets(uncommitted) == [0, 1, 2, 3, 5, 7]
    # from past the aborted transaction there is nothing to drop
    assert fetch(broker.port, "rc-aborted", READ_COMMITTED, offset=5)["aborted_transactions"] \
        == []


def test_list_offsets_by_isolation_level(broker):
    port, topic = broker.port, "rc-offsets"
    create_topic(port, topic)
    txns = Transactions(broker, topic)
    producer_id = txns.producer()
    txns.plain(b"a")                               # 0
    txns.send(producer_id, b"t")                   # 1, open
    txns.plain(b"b")                               # 2
    assert list_offset(port, topic, READ_UNCOMMITTED) == (3, -1)
    assert list_offset(port, topic, READ_COMMITTED) == (1, -1)
    assert list_offset(port, topic, READ_COMMITTED, version=2) == (1, -1)
    assert list_offset(port, topic, READ_UNCOMMITTED, version=1)[0] == 3  # no isolation level
    # by time: the first record at or after NOW is offset 0, then none below the LSO
    assert list_offset(port, topic, READ_COMMITTED, timestamp=NOW) == (0, NOW)
    late = build_batch([(b"key", b"late")], timestamp=NOW + 1000)
    txns.end(producer_id, ABORT)                   # 3
    txns.send(producer_id, b"t2")                  # 4, open again (same producer, new txn)
    produce(port, topic, late)                     # 5
    assert list_offset(port, topic, READ_UNCOMMITTED, timestamp=NOW + 1000) == (5, NOW + 1000)
    assert list_offset(port, topic, READ_COMMITTED, timestamp=NOW + 1000) == (-1, -1)
    assert list_offset(port, topic, READ_COMMITTED, timestamp=-3) == (-1, -1)  # max timestamp
    assert list_offset(port, topic, READ_UNCOMMITTED, timestamp=-3) == (5, NOW + 1000)
    assert list_offset(port, topic, READ_COMMITTED, timestamp=-2) == (0, -1)
    txns.end(producer_id, COMMIT)                  # 6
    assert list_offset(port, topic, READ_COMMITTED) == list_offset(port, topic, 0) == (7, -1)
    assert list_offset(port, topic, READ_COMMITTED, timestamp=NOW + 1000) == (5, NOW + 1000)


def test_describe_producers_shows_open_transactions(broker):
    port, topic = broker.port, "rc-producers"
    create_topic(port, topic)
    txns = Transactions(broker, topic)
    p1, p2 = txns.producer(), txns.producer()
    txns.send(p1, b"a", b"b")                      # 0-1
    txns.send(p2, b"c")                            # 2
    txns.end(p1, COMMIT)                           # 3
    (partition,) = describe_producers(port, topic)
    assert (partition["error_code"], partition["error_message"]) == (0, None)
    producers = {p["producer_id"]: p for p in partition["active_producers"]}
    assert producers[p1] == {"producer_id": p1, "producer_epoch": 0, "last_sequence": 1,
                             "last_timestamp": NOW, "coordinator_epoch": 0,
                             "current_txn_start_offset": -1}
    assert producers[p2] == {"producer_id": p2, "producer_epoch": 0, "last_sequence": 0,
                             "last_timestamp": NOW, "coordinator_epoch": -1,
                             "current_txn_start_offset": 2}
    missing = describe_producers(port, topic, partitions=(0, 7))[1]
    assert missing["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert missing["error_message"] and missing["active_producers"] == []
    (unknown,) = describe_producers(port, "no-such-topic")
    assert unknown["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_kafka_python_admin_describes_producers(broker):
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as KTopicPartition

    p1, p2 = write_interleaved(broker, "rc-admin")
    txns = Transactions(broker, "rc-admin")
    txns.sequences[p1] = 2
    txns.send(p1, b"again")                        # 8: a new transaction of p1
    admin = KafkaAdminClient(bootstrap_servers=bootstrap(broker))
    try:
        described = admin.describe_producers([KTopicPartition("rc-admin", 0)])
    finally:
        admin.close()
    producers = {p.producer_id: p for p in
                 described[KTopicPartition("rc-admin", 0)].active_producers}
    assert set(producers) == {p1, p2}
    assert producers[p1].current_transaction_start_offset == 8
    assert producers[p2].current_transaction_start_offset == -1
    assert producers[p1].last_sequence == 2


# -- real consumers -------------------------------------------------------------------------------

def confluent_values(broker, topic: str, isolation: str) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap(broker), "group.id": f"rc-{isolation}",
                         "isolation.level": isolation, "enable.auto.commit": False,
                         "enable.partition.eof": True, "log_level": 3})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        values, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                assert message.error().code() == KafkaError._PARTITION_EOF, message.error()
                return values
            values.append(message.value())
        raise AssertionError(f"no end of partition reached; got {values}")
    finally:
        consumer.close()


@pytest.mark.parametrize("isolation,expected", [("read_committed", COMMITTED_VALUES),
                                                ("read_uncommitted", ALL_VALUES)])
def test_confluent_consumer_by_isolation_level(broker, isolation, expected):
    write_interleaved(broker, "rc-confluent")
    assert confluent_values(broker, "rc-confluent", isolation) == expected


def test_confluent_read_committed_consumer_waits_for_the_commit(broker):
    topic = "rc-waits"
    create_topic(broker.port, topic)
    txns = Transactions(broker, topic)
    producer_id = txns.producer()
    txns.plain(b"first")
    txns.send(producer_id, b"pending")
    txns.plain(b"later")
    assert confluent_values(broker, topic, "read_committed") == [b"first"]
    txns.end(producer_id, COMMIT)
    assert confluent_values(broker, topic, "read_committed") == [b"first", b"pending", b"later"]


def kafka_python_values(broker, topic: str, isolation: str) -> list[bytes]:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap(broker), group_id=None,
                             enable_auto_commit=False, isolation_level=isolation)
    try:
        partition = KTopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek(partition, 0)
        # Up to the end this isolation level sees (the last stable offset under
        # read_committed), however long the client takes to start.
        end = consumer.end_offsets([partition])[partition]
        values, deadline = [], time.monotonic() + 60
        while consumer.position(partition, timeout_ms=30_000) < end:
            assert time.monotonic() < deadline, f"stuck before offset {end}; got {values}"
            for records in consumer.poll(timeout_ms=500).values():
                values.extend(message.value for message in records)
        return values
    finally:
        consumer.close()


@pytest.mark.parametrize("isolation,expected", [("read_committed", COMMITTED_VALUES),
                                                ("read_uncommitted", ALL_VALUES)])
def test_kafka_python_consumer_by_isolation_level(broker, isolation, expected):
    write_interleaved(broker, "rc-kafka-python")
    assert kafka_python_values(broker, "rc-kafka-python", isolation) == expected


# -- restarts -------------------------------------------------------------------------------------

def observed(port: int, topic: str) -> tuple:
    committed = fetch(port, topic, READ_COMMITTED)
    producers = describe_producers(port, topic)[0]["active_producers"]
    return (committed["last_stable_offset"], committed["high_watermark"],
            committed["aborted_transactions"], data_offsets(committed),
            list_offset(port, topic, READ_COMMITTED),
            sorted((p["producer_id"], p["current_txn_start_offset"]) for p in producers))


def wait_served(port: int, topic: str) -> None:
    wait_until(lambda: fetch(port, topic, READ_UNCOMMITTED)["error_code"] == 0, 30,
               f"{topic} is served again")


@pytest.mark.broker
@pytest.mark.zookeeper
@pytest.mark.parametrize("clean", [True, False], ids=["clean", "unclean"])
def test_transactions_survive_a_restart(zookeeper_connect, tmp_path, clean):
    topic = "rc-restart"
    brokers = start_brokers(zookeeper_connect, tmp_path / "first")
    try:
        broker = brokers[0]
        p1, p2 = write_interleaved(broker, topic)
        txns = Transactions(broker, topic)
        txns.sequences.update({p1: 2, p2: 2})
        txns.send(p2, b"open")                     # 8: left open across the restart
        txns.plain(b"tail")                        # 9
        before = observed(broker.port, topic)
        assert before[:3] == (8, 10, [{"producer_id": p1, "first_offset": 1}])
        assert (p2, 8) in before[5]
        log_root = tmp_path / "first"
        if not clean:
            # The files as a killed broker leaves them: copied while it runs.
            shutil.copytree(tmp_path / "first", tmp_path / "crashed")
            log_root = tmp_path / "crashed"
    finally:
        stop_brokers(brokers)
    assert (log_root / "b1" / ".kafka_cleanshutdown").exists() == clean
    brokers = start_brokers(zookeeper_connect, log_root)
    try:
        broker = brokers[0]
        wait_served(broker.port, topic)
        assert observed(broker.port, topic) == before
        Transactions(broker, topic).end(p2, ABORT)  # 10
        after = fetch(broker.port, topic, READ_COMMITTED)
        assert after["last_stable_offset"] == 11
        assert after["aborted_transactions"] == [{"producer_id": p1, "first_offset": 1},
                                                 {"producer_id": p2, "first_offset": 8}]
    finally:
        stop_brokers(brokers)
