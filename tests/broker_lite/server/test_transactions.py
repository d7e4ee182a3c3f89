"""Transactions end to end: real transactional producers (confluent-kafka, kafka-python) against
broker_lite's transaction coordinator, read back by read_committed and read_uncommitted
consumers; the markers in the logs; fencing, timeouts, several brokers, restarts; and the wire
answers of the transaction APIs."""

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.common.tiers import needs
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import (
    ControlRecordType,
    build_batch,
    decode_end_transaction_marker,
    iter_batches,
)
from broker_lite.server.testing import bootstrap, call, start_brokers, stop_brokers
from broker_lite.zk.testing import wait_until

READ_UNCOMMITTED, READ_COMMITTED = 0, 1
PROPERTIES = {
    "transaction.state.log.num.partitions": "3",
    "offsets.topic.num.partitions": "3",
    "group.initial.rebalance.delay.ms": "0",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
}


@pytest.fixture
@needs("broker", "zookeeper")
def txn_broker(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    yield brokers[0]
    stop_brokers(brokers)


# -- helpers ------------------------------------------------------------------------------------


def create_topics(servers: str, *topics: tuple[str, int], replication_factor: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    for future in admin.create_topics([NewTopic(name, partitions, replication_factor)
                                       for name, partitions in topics]).values():
        future.result(30)


def txn_producer(servers: str, transactional_id: str, **config) -> Producer:
    producer = Producer({"bootstrap.servers": servers, "transactional.id": transactional_id,
                         "linger.ms": 5, **config})
    producer.init_transactions(30)
    return producer


def consume(servers: str, partitions: list[tuple[str, int]], isolation: str, expected: int,
            settle_s: float = 1.0) -> list[bytes]:
    """The values of ``partitions`` from offset 0: at least ``expected`` of them, and whatever
    else arrives within ``settle_s`` after."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "reader",
                         "isolation.level": isolation, "enable.auto.commit": False})
    consumer.assign([TopicPartition(t, p, 0) for t, p in partitions])
    values: list[bytes] = []
    try:
        deadline = time.monotonic() + 20
        while len(values) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                values.append(message.value())
        settle = time.monotonic() + settle_s
        while time.monotonic() < settle:
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                values.append(message.value())
    finally:
        consumer.close()
    return values


def markers(broker, topic: str, partition: int) -> list[tuple[int, int, ControlRecordType]]:
    """(offset, producer id, type) of every marker in a partition's log."""
    log = broker.logs.get(topic, partition)
    region = log.read(log.log_start_offset, 1 << 24)
    found = []
    for batch in iter_batches(region.read() if region is not None else b""):
        if batch.is_control_batch:
            record = next(iter(batch))
            marker = decode_end_transaction_marker(record.key, record.value)
            found.append((batch.base_offset, batch.producer_id, marker.type))
    return found


def describe(port: int, transactional_id: str) -> dict:
    response = call(port, ApiKey.DESCRIBE_TRANSACTIONS, 0,
                    {"transactional_ids": [transactional_id]})
    return response["transaction_states"][0]


def coordinator_of(brokers, transactional_id: str):
    response = call(brokers[0].port, ApiKey.FIND_COORDINATOR, 3,
                    {"key": transactional_id, "key_type": 1})
    assert response["error_code"] == 0, response
    return next(b for b in brokers if b.broker_id == response["node_id"])


def last_stable_offset(port: int, topic: str, partition: int = 0) -> int:
    response = call(port, ApiKey.LIST_OFFSETS, 5, {
        "replica_id": -1, "isolation_level": READ_COMMITTED, "topics": [{
            "name": topic, "partitions": [{"partition_index": partition,
                                           "current_leader_epoch": -1, "timestamp": -1}]}]})
    result = response["topics"][0]["partitions"][0]
    assert result["error_code"] == 0, result
    return result["offset"]


def wait_for_state(port: int, transactional_id: str, state: str, timeout: float = 15) -> dict:
    return wait_until(lambda: (d := describe(port, transactional_id))["transaction_state"] == state
                      and d, timeout, f"{transactional_id} never reached {state}")


# -- confluent-kafka ----------------------------------------------------------------------------


def test_commit_and_abort_across_topics_and_partitions(txn_broker):
    servers = bootstrap(txn_broker)
    create_topics(servers, ("orders", 2), ("audit", 1))
    partitions = [("orders", 0), ("orders", 1), ("audit", 0)]
    producer = txn_producer(servers, "tx-commit")
    producer.begin_transaction()
    for i in range(12):
        topic, partition = partitions[i % 3]
        producer.produce(topic, value=b"committed-%d" % i, partition=partition)
    producer.commit_transaction(30)
    producer.begin_transaction()
    for i in range(6):
        topic, partition = partitions[i % 3]
        producer.produce(topic, value=b"aborted-%d" % i, partition=partition)
    producer.flush(30)
    producer.abort_transaction(30)

    committed = consume(servers, partitions, "read_committed", 12)
    assert sorted(committed) == sorted(b"committed-%d" % i for i in range(12))
    everything = consume(servers, partitions, "read_uncommitted", 18)
    assert sorted(everything) == sorted([b"committed-%d" % i for i in range(12)]
                                        + [b"aborted-%d" % i for i in range(6)])

    # each partition: 4 records, COMMIT, 2 records, ABORT - all of the transactional id's producer
    state = wait_for_state(txn_broker.port, "tx-commit", "CompleteAbort")
    for topic, partition in partitions:
        found = markers(txn_broker, topic, partition)
        assert [(offset, kind) for offset, _, kind in found] == [
            (4, ControlRecordType.COMMIT), (7, ControlRecordType.ABORT)]
        assert {pid for _, pid, _ in found} == {state["producer_id"]}
        assert last_stable_offset(txn_broker.port, topic, partition) == 8
    assert state["topics"] == [] and state["producer_epoch"] == 0


def test_a_second_producer_fences_the_first(txn_broker):
    servers = bootstrap(txn_broker)
    create_topics(servers, ("fenced", 1))
    first = txn_producer(servers, "tx-fence")
    first.begin_transaction()
    first.produce("fenced", value=b"from the first")
    first.flush(10)
    second = txn_producer(servers, "tx-fence")  # aborts the first's transaction
    assert describe(txn_broker.port, "tx-fence")["producer_epoch"] == 2  # fence + new instance
    with pytest.raises(KafkaException) as raised:
        first.commit_transaction(10)
    assert raised.value.args[0].fatal()
    second.begin_transaction()
    second.produce("fenced", value=b"from the second")
    second.commit_transaction(30)
    assert consume(servers, [("fenced", 0)], "read_committed", 1) == [b"from the second"]
    assert [kind for _, _, kind in markers(txn_broker, "fenced", 0)] == [
        ControlRecordType.ABORT, ControlRecordType.COMMIT]


def test_a_transaction_open_past_its_timeout_is_aborted(txn_broker):
    servers = bootstrap(txn_broker)
    create_topics(servers, ("slow", 1))
    producer = txn_producer(servers, "tx-slow", **{"transaction.timeout.ms": 5000})
    producer.begin_transaction()
    producer.produce("slow", value=b"never committed")
    producer.flush(10)
    assert last_stable_offset(txn_broker.port, "slow") == 0  # held by the open transaction
    state = wait_for_state(txn_broker.port, "tx-slow", "CompleteAbort", timeout=30)
    assert state["producer_epoch"] == 1  # fenced before the abort
    assert [(offset, kind) for offset, _, kind in markers(txn_broker, "slow", 0)] == [
        (1, ControlRecordType.ABORT)]
    assert last_stable_offset(txn_broker.port, "slow") == 2
    with pytest.raises(KafkaException):
        producer.commit_transaction(10)
    assert consume(servers, [("slow", 0)], "read_committed", 0) == []


def test_sending_offsets_commits_them_with_the_transaction(txn_broker):
    servers = bootstrap(txn_broker)
    create_topics(servers, ("in", 1), ("out", 1))
    source = Producer({"bootstrap.servers": servers})
    for i in range(10):
        source.produce("in", value=b"%d" % i)
    source.flush(10)
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "copier",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    consumer.assign([TopicPartition("in", 0, 0)])
    producer = txn_producer(servers, "tx-copier")

    def committed_offset() -> int:
        return consumer.committed([TopicPartition("in", 0)], 10)[0].offset

    for result, upto in (("commit", 4), ("abort", 7), ("commit", 10)):
        producer.begin_transaction()
        producer.send_offsets_to_transaction([TopicPartition("in", 0, upto)],
                                             consumer.consumer_group_metadata(), 30)
        producer.produce("out", value=b"%s %d" % (result.encode(), upto))
        getattr(producer, f"{result}_transaction")(30)
        if result == "commit":
            wait_until(lambda upto=upto: committed_offset() == upto, 10,
                       f"the offset {upto} never became visible")
        else:
            time.sleep(0.5)
            assert committed_offset() == 4  # the aborted commit of 7 never counts
    consumer.close()
    assert consume(servers, [("out", 0)], "read_committed", 2) == [b"commit 4", b"commit 10"]


def fetch_offset_stably(port: int, group: str, topic: str) -> tuple[int, int]:
    """OffsetFetch v8 with RequireStable: (error code, committed offset) of partition 0."""
    response = call(port, ApiKey.OFFSET_FETCH, 8, {"require_stable": True, "groups": [
        {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]}]})
    (partition,) = response["groups"][0]["topics"][0]["partitions"]
    return partition["error_code"], partition["committed_offset"]


def test_require_stable_waits_for_the_transaction_committing_an_offset(txn_broker):
    servers = bootstrap(txn_broker)
    create_topics(servers, ("in", 1))
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "stable",
                         "enable.auto.commit": False})
    producer = txn_producer(servers, "tx-stable")
    producer.begin_transaction()
    producer.send_offsets_to_transaction([TopicPartition("in", 0, 3)],
                                         consumer.consumer_group_metadata(), 30)
    assert fetch_offset_stably(txn_broker.port, "stable", "in") == (
        ErrorCode.UNSTABLE_OFFSET_COMMIT, -1)
    producer.commit_transaction(30)
    wait_until(lambda: fetch_offset_stably(txn_broker.port, "stable", "in") == (0, 3), 10,
               "the committed offset never became stable")
    consumer.close()


# -- several brokers, restarts ------------------------------------------------------------------


@pytest.mark.broker
@pytest.mark.zookeeper
def test_markers_reach_partitions_led_by_other_brokers(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 3, PROPERTIES)
    try:
        servers = bootstrap(brokers)
        create_topics(servers, ("spread", 6))
        producer = txn_producer(servers, "tx-spread")
        coordinator = coordinator_of(brokers, "tx-spread")
        others = {p: b for b in brokers if b is not coordinator
                  for p in range(6) if b.services.partitions.is_leader("spread", p)}
        assert others, "every partition is led by the coordinator"
        producer.begin_transaction()
        for p in range(6):
            producer.produce("spread", value=b"p%d" % p, partition=p)
        producer.commit_transaction(30)
        assert sorted(consume(servers, [("spread", p) for p in range(6)], "read_committed", 6)) \
            == sorted(b"p%d" % p for p in range(6))
        wait_for_state(coordinator.port, "tx-spread", "CompleteCommit")
        for partition, leader in others.items():
            assert [(o, k) for o, _, k in markers(leader, "spread", partition)] == [
                (1, ControlRecordType.COMMIT)]
    finally:
        stop_brokers(brokers)


@pytest.mark.broker
@pytest.mark.zookeeper
def test_the_coordinator_reloads_its_transactions_after_a_restart(zookeeper_connect, tmp_path):
    properties = {**PROPERTIES,
                  "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"}
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, properties)
    try:
        servers = bootstrap(brokers)
        create_topics(servers, ("durable", 1))
        done = txn_producer(servers, "tx-done")
        done.begin_transaction()
        done.produce("durable", value=b"committed before the restart")
        done.commit_transaction(30)
        wait_for_state(brokers[0].port, "tx-done", "CompleteCommit")
        # Long enough to outlast a restart on a busy machine, so it is still open when reloaded.
        left_open = txn_producer(servers, "tx-open", **{"transaction.timeout.ms": 30000})
        left_open.begin_transaction()
        left_open.produce("durable", value=b"open at the restart")
        left_open.flush(10)
        before = describe(brokers[0].port, "tx-open")
        stop_brokers(brokers)

        brokers = start_brokers(zookeeper_connect, tmp_path, 1, properties)
        port = brokers[0].port
        reloaded = wait_until(lambda: (d := describe(port, "tx-open"))["error_code"] == 0 and d,
                              25, "tx-open was not reloaded")
        assert reloaded["transaction_state"] == "Ongoing"
        assert (reloaded["producer_id"], reloaded["producer_epoch"], reloaded["topics"]) == (
            before["producer_id"], before["producer_epoch"], before["topics"])
        assert describe(port, "tx-done")["transaction_state"] == "CompleteCommit"
        wait_for_state(port, "tx-open", "CompleteAbort", timeout=60)  # timed out after all
        assert last_stable_offset(port, "durable") == 4
        assert consume(bootstrap(brokers), [("durable", 0)], "read_committed", 1) == [
            b"committed before the restart"]
    finally:
        stop_brokers(brokers)


@pytest.mark.broker
@pytest.mark.zookeeper
def test_an_open_transaction_can_be_committed_after_a_restart(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    try:
        servers = bootstrap(brokers)
        create_topics(servers, ("resumed", 1))
        producer = txn_producer(servers, "tx-resume")
        producer.begin_transaction()
        producer.produce("resumed", value=b"across the restart")
        producer.flush(10)
        port = brokers[0].port
        stop_brokers(brokers)
        brokers = start_brokers(zookeeper_connect, tmp_path, 1, {
            **PROPERTIES, "listeners": f"PLAINTEXT://127.0.0.1:{port}"})  # where clients look
        producer.commit_transaction(60)  # to the restarted coordinator, once it has loaded
        wait_for_state(brokers[0].port, "tx-resume", "CompleteCommit")
        assert consume(bootstrap(brokers), [("resumed", 0)], "read_committed", 1) == [
            b"across the restart"]
    finally:
        stop_brokers(brokers)


# -- kafka-python -------------------------------------------------------------------------------


def test_kafka_python_transactional_producer(txn_broker):
    from kafka import KafkaProducer

    servers = bootstrap(txn_broker)
    create_topics(servers, ("kp", 2))
    producer = KafkaProducer(bootstrap_servers=servers, transactional_id="tx-kafka-python")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for i in range(4):
            producer.send("kp", value=b"kept-%d" % i, partition=i % 2)
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send("kp", value=b"dropped", partition=0)
        producer.flush(30)  # written, then aborted (unsent batches would just be dropped)
        producer.abort_transaction()
    finally:
        producer.close()
    assert sorted(consume(servers, [("kp", 0), ("kp", 1)], "read_committed", 4)) == [
        b"kept-0", b"kept-1", b"kept-2", b"kept-3"]
    assert b"dropped" in consume(servers, [("kp", 0), ("kp", 1)], "read_uncommitted", 5)


# -- the wire -----------------------------------------------------------------------------------


def init_producer_id(port: int, transactional_id: str, timeout_ms: int = 60_000,
                     version: int = 4, **fields) -> dict:
    def attempt():
        response = call(port, ApiKey.INIT_PRODUCER_ID, version, {
            "transactional_id": transactional_id, "transaction_timeout_ms": timeout_ms,
            **fields})
        return response if response["error_code"] not in (
            ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR,
            ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.CONCURRENT_TRANSACTIONS) else None
    return wait_until(attempt, 15, "InitProducerId kept being refused")


def add_partitions(port: int, transactional_id: str, producer_id: int, epoch: int,
                   partitions: list[tuple[str, int]], version: int = 3) -> dict:
    response = call(port, ApiKey.ADD_PARTITIONS_TO_TXN, version, {
        "v3_and_below_transactional_id": transactional_id,
        "v3_and_below_producer_id": producer_id, "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": t, "partitions": [p for tt, p in partitions if tt == t]}
                                for t in dict.fromkeys(t for t, _ in partitions)]})
    return {(t["name"], r["partition_index"]): r["partition_error_code"]
            for t in response["results_by_topic_v3_and_below"] for r in t["results_by_partition"]}


def end_txn(port: int, transactional_id: str, producer_id: int, epoch: int, committed: bool,
            version: int = 3) -> int:
    return call(port, ApiKey.END_TXN, version, {
        "transactional_id": transactional_id, "producer_id": producer_id,
        "producer_epoch": epoch, "committed": committed})["error_code"]


def produce_transactional(port: int, transactional_id: str, topic: str, producer_id: int,
                          epoch: int, sequence: int = 0) -> int:
    batch = build_batch([(None, b"v")], producer_id=producer_id, producer_epoch=epoch,
                        base_sequence=sequence, is_transactional=True)
    response = call(port, ApiKey.PRODUCE, 9, {
        "transactional_id": transactional_id, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
    return response["responses"][0]["partition_responses"][0]["error_code"]


def test_wire_answers_of_the_transaction_apis(txn_broker):
    port = txn_broker.port
    create_topics(bootstrap(txn_broker), ("wire", 1), ("other", 1))
    assert init_producer_id(port, "tx-wire", timeout_ms=900_001)["error_code"] == \
        ErrorCode.INVALID_TRANSACTION_TIMEOUT
    first = init_producer_id(port, "tx-wire")
    pid, epoch = first["producer_id"], first["producer_epoch"]
    assert (first["error_code"], epoch) == (0, 0)

    assert end_txn(port, "tx-wire", pid, epoch, True) == ErrorCode.INVALID_TXN_STATE  # Empty
    assert add_partitions(port, "tx-wire", pid + 1, epoch, [("wire", 0)]) == {
        ("wire", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert add_partitions(port, "tx-wire", pid, epoch + 1, [("wire", 0)]) == {
        ("wire", 0): ErrorCode.PRODUCER_FENCED}
    assert add_partitions(port, "tx-wire", pid, epoch + 1, [("wire", 0)], version=1) == {
        ("wire", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    assert add_partitions(port, "tx-wire", pid, epoch, [("wire", 0), ("missing", 0)]) == {
        ("wire", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
        ("missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert add_partitions(port, "unknown-id", pid, epoch, [("wire", 0)]) == {
        ("wire", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert add_partitions(port, "tx-wire", pid, epoch, [("wire", 0)]) == {("wire", 0): 0}

    # a transactional batch for a partition outside the transaction is refused
    assert produce_transactional(port, "tx-wire", "other", pid, epoch) == \
        ErrorCode.INVALID_TXN_STATE
    assert produce_transactional(port, "tx-wire", "wire", pid, epoch) == 0

    listed = call(port, ApiKey.LIST_TRANSACTIONS, 1, {
        "state_filters": ["Ongoing", "Bogus"], "producer_id_filters": [], "duration_filter": -1})
    assert listed["unknown_state_filters"] == ["Bogus"]
    assert [(t["transactional_id"], t["producer_id"], t["transaction_state"])
            for t in listed["transaction_states"]] == [("tx-wire", pid, "Ongoing")]
    described = describe(port, "tx-wire")
    assert (described["transaction_state"], described["topics"]) == (
        "Ongoing", [{"topic": "wire", "partitions": [0]}])
    assert describe(port, "nobody")["error_code"] == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND

    assert end_txn(port, "tx-wire", pid, epoch, True) == 0
    wait_for_state(port, "tx-wire", "CompleteCommit")
    assert end_txn(port, "tx-wire", pid, epoch, True) == 0  # a retry of a completed commit
    assert end_txn(port, "tx-wire", pid, epoch, False) == ErrorCode.INVALID_TXN_STATE

    # a producer resuming with its id and epoch (KIP-360) keeps its id; a stale one is fenced
    resumed = init_producer_id(port, "tx-wire", producer_id=pid, producer_epoch=epoch)
    assert (resumed["error_code"], resumed["producer_id"], resumed["producer_epoch"]) == (
        0, pid, 1)
    assert init_producer_id(port, "tx-wire", producer_id=pid + 7, producer_epoch=0)[
        "error_code"] == ErrorCode.PRODUCER_FENCED


def test_write_txn_markers_to_a_partition_leader(txn_broker):
    port = txn_broker.port
    create_topics(bootstrap(txn_broker), ("marked", 1))
    producer_id = init_producer_id(port, "tx-marker")["producer_id"]
    assert add_partitions(port, "tx-marker", producer_id, 0, [("marked", 0)]) == {
        ("marked", 0): 0}
    assert produce_transactional(port, "tx-marker", "marked", producer_id, 0) == 0
    response = call(port, ApiKey.WRITE_TXN_MARKERS, 1, {"markers": [{
        "producer_id": producer_id, "producer_epoch": 0, "transaction_result": False,
        "coordinator_epoch": 99, "topics": [{"name": "marked", "partition_indexes": [0, 5]},
                                            {"name": "nowhere", "partition_indexes": [0]}]}]})
    errors = {(t["name"], p["partition_index"]): p["error_code"]
              for m in response["markers"] for t in m["topics"] for p in t["partitions"]}
    assert errors == {("marked", 0): 0, ("marked", 5): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                      ("nowhere", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert markers(txn_broker, "marked", 0) == [(1, producer_id, ControlRecordType.ABORT)]
    # a marker of an older coordinator epoch is refused
    stale = call(port, ApiKey.WRITE_TXN_MARKERS, 1, {"markers": [{
        "producer_id": producer_id, "producer_epoch": 0, "transaction_result": True,
        "coordinator_epoch": 3, "topics": [{"name": "marked", "partition_indexes": [0]}]}]})
    assert stale["markers"][0]["topics"][0]["partitions"][0]["error_code"] == \
        ErrorCode.TRANSACTION_COORDINATOR_FENCED


# -- exactly once across crashes ----------------------------------------------------------------


@pytest.mark.slow
def test_a_copier_killed_mid_transaction_loses_and_repeats_nothing(txn_broker):
    """Consume-transform-produce in a child process, SIGKILLed at random points and restarted:
    the output holds one copy of each input record, and the group's offset is the input's end."""
    servers = bootstrap(txn_broker)
    create_topics(servers, ("raw", 1), ("copied", 1))
    records = 150
    source = Producer({"bootstrap.servers": servers})
    for i in range(records):
        source.produce("raw", value=b"%d" % i)
    source.flush(10)
    script = Path(__file__).with_name("txn_copier.py")
    command = [sys.executable, str(script), servers, "raw", "copied", "copiers", "tx-copier",
               str(records)]
    chance = random.Random()
    kills = 0
    for _ in range(3):
        child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        time.sleep(chance.uniform(1.0, 3.0))
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
            kills += 1
        child.wait(10)
    assert kills, "the copier finished before any kill"
    final = subprocess.run(command, stdout=subprocess.PIPE, text=True, timeout=120)
    assert final.returncode == 0

    copies = consume(servers, [("copied", 0)], "read_committed", records)
    assert sorted(copies) == sorted(b"copy of %d" % i for i in range(records))
    reader = Consumer({"bootstrap.servers": servers, "group.id": "copiers"})
    assert reader.committed([TopicPartition("raw", 0)], 10)[0].offset == records
    reader.close()
