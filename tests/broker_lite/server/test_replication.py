"""Replication among brokers in this process, with real clients: every replica gets the records,
consumers read only below the high watermark, a follower that stops fetching leaves the ISR
after replica.lag.time.max.ms (and acks=all waits for that, or for it), min.insync.replicas
refuses acks=all writes, and a follower that comes back catches up and rejoins the ISR."""

import socket
import struct
import threading
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.common.tiers import needs
from broker_lite.protocol import ApiKey, ErrorCode, encode_request, parse_response
from broker_lite.records import build_batch
from broker_lite.server.broker import Broker
from broker_lite.server.testing import (
    bootstrap,
    call,
    recv_exactly,
    start_brokers,
    stop_brokers,
)
from broker_lite.zk.testing import join_all, wait_until

LAG_MS = 5000  # a follower starved of CPU this long on a loaded machine is still healthy


@pytest.fixture
@needs("broker", "zookeeper")
def cluster(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 3, {
        "replica.lag.time.max.ms": str(LAG_MS), "offsets.topic.replication.factor": "3",
        "offsets.topic.num.partitions": "3", "controlled.shutdown.retry.backoff.ms": "100"})
    yield brokers
    stop_brokers([b for b in brokers if b.server is not None])


def create(brokers, config: dict | None = None, assignment=((1, 2, 3),)) -> str:
    topic = f"replicated-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap(brokers), "log_level": 3})
    admin.create_topics([NewTopic(topic, num_partitions=len(assignment),
                                  replica_assignment=[list(a) for a in assignment],
                                  config=config or {})])[topic].result(30)
    replicas = assignment[0]
    wait_until(lambda: all(b.partitions.state(topic, 0) is not None and
                           len(b.partitions.state(topic, 0).isr) == len(replicas)
                           for b in brokers if b.broker_id in replicas),
               message="every replica in the ISR")
    return topic


def by_id(brokers, broker_id: int):
    return next(b for b in brokers if b.broker_id == broker_id)


def produce(brokers, topic: str, values, *, acks="all", timeout_ms=30000) -> list:
    """The delivery error of each value (None: acknowledged)."""
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap(brokers), "acks": acks,
                         "message.timeout.ms": timeout_ms, "request.timeout.ms": timeout_ms,
                         "retries": 0, "log_level": 0})
    for value in values:
        producer.produce(topic, value=value, partition=0,
                         on_delivery=lambda error, message: errors.append(error))
    producer.flush(timeout_ms / 1000 + 10)
    return errors


def high_watermark(brokers, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap(brokers), "group.id": "hw",
                         "log_level": 0})
    try:
        return consumer.get_watermark_offsets(KafkaPartition(topic, 0), timeout=10)[1]
    finally:
        consumer.close()


def test_every_replica_gets_the_records(cluster):
    topic = create(cluster)
    assert produce(cluster, topic, [b"v%d" % i for i in range(300)]) == [None] * 300
    wait_until(lambda: all(b.logs.get(topic, 0).log_end_offset == 300 and
                           b.logs.get(topic, 0).high_watermark == 300 for b in cluster),
               message="the followers copied the leader and know its high watermark")
    leader = cluster[0].partitions.state(topic, 0).leader
    data = {b.broker_id: b.logs.get(topic, 0).read(0, 1 << 20).read() for b in cluster}
    assert data[1] == data[2] == data[3]  # byte for byte, offsets and epochs included
    assert {b.broker_id: b.logs.get(topic, 0).leader_epochs.entries for b in cluster} == \
        {b: [(0, 0)] for b in (1, 2, 3)}
    assert by_id(cluster, leader).partitions.is_leader(topic, 0)


def test_deleted_records_are_gone_from_every_replica_when_the_answer_comes(cluster):
    from broker_lite.client import KafkaClient, TopicPartition
    from broker_lite.client.admin.records import delete_records

    topic = create(cluster)
    assert produce(cluster, topic, [b"v%d" % i for i in range(50)]) == [None] * 50
    with KafkaClient({"bootstrap.servers": bootstrap(cluster)}) as client:
        low = delete_records(client.admin.cluster, {TopicPartition(topic, 0): 30})
    assert list(low.values()) == [30]
    assert {b.logs.get(topic, 0).log_start_offset for b in cluster} == {30}


def test_consumers_stop_at_the_high_watermark_until_a_stuck_follower_leaves_the_isr(cluster):
    topic = create(cluster, {"min.insync.replicas": "2"})
    leader = by_id(cluster, cluster[0].partitions.state(topic, 0).leader)
    stuck = next(b for b in cluster if b is not leader)
    stuck.partitions.fetchers.shutdown()  # alive, registered, but no longer fetching
    started = time.monotonic()
    errors = produce(cluster, topic, [b"a", b"b"], acks="all")
    waited = time.monotonic() - started
    assert errors == [None, None]  # completed once the ISR shrank to the others
    assert waited >= LAG_MS / 1000 * 0.5, waited
    state = leader.partitions.state(topic, 0)
    assert stuck.broker_id not in state.isr and len(state.isr) == 2
    assert high_watermark(cluster, topic) == 2

    # acks=1 appends past the high watermark while the remaining follower is stopped too
    other = next(b for b in cluster if b not in (leader, stuck))
    other.partitions.fetchers.shutdown()
    assert produce(cluster, topic, [b"c"], acks=1) == [None]
    assert leader.logs.get(topic, 0).log_end_offset == 3
    assert high_watermark(cluster, topic) == 2  # not committed: no consumer reads it
    consumer = Consumer({"bootstrap.servers": bootstrap(cluster), "group.id": "below-hw",
                         "enable.partition.eof": True, "log_level": 0})
    consumer.assign([KafkaPartition(topic, 0, 0)])
    read, deadline = [], time.monotonic() + 10
    while time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error() and message.error().code() == KafkaError._PARTITION_EOF:
            break
        read.append(message.value())
    consumer.close()
    assert read == [b"a", b"b"]
    # once the ISR is the leader alone, min.insync.replicas=2 refuses acks=all writes
    wait_until(lambda: leader.partitions.state(topic, 0).isr == (leader.broker_id,),
               timeout=LAG_MS / 1000 * 5, message="the ISR shrinks to the leader")
    errors = produce(cluster, topic, [b"refused"], acks="all", timeout_ms=5000)
    assert errors[0] is not None and errors[0].code() == KafkaError.NOT_ENOUGH_REPLICAS
    assert high_watermark(cluster, topic) == 3  # the leader alone: committed now


def test_a_follower_that_comes_back_catches_up_and_rejoins_the_isr(cluster):
    topic = create(cluster)
    leader_id = cluster[0].partitions.state(topic, 0).leader
    follower = next(b for b in cluster if b.broker_id != leader_id)
    config = follower.config
    follower.stop()  # controlled: it leaves the ISR at once
    wait_until(lambda: follower.broker_id not in
               by_id(cluster, leader_id).partitions.state(topic, 0).isr)
    running = [b for b in cluster if b is not follower]
    assert produce(running, topic, [b"x%d" % i for i in range(200)]) == [None] * 200
    returned = Broker(config).start()
    cluster[cluster.index(follower)] = returned
    wait_until(lambda: returned.broker_id in
               by_id(cluster, leader_id).partitions.state(topic, 0).isr,
               timeout=30, message="the follower rejoins the ISR")
    wait_until(lambda: returned.logs.get(topic, 0).log_end_offset == 200)
    assert returned.logs.get(topic, 0).read(0, 1 << 20).read() == \
        by_id(cluster, leader_id).logs.get(topic, 0).read(0, 1 << 20).read()


def test_a_follower_3000_single_record_batches_behind_rejoins_the_isr(cluster):
    """The leader takes 3,000 one-record batches while a follower is down; back, the follower
    fetches them in large pieces (more batches than one write of its log takes) and rejoins
    the ISR within seconds."""
    topic = create(cluster, assignment=((1, 2),))
    follower = by_id(cluster, 2)
    config = follower.config
    follower.stop()
    wait_until(lambda: by_id(cluster, 1).partitions.state(topic, 0).isr == (1,))
    producer = Producer({"bootstrap.servers": bootstrap([by_id(cluster, 1)]), "acks": "1",
                         "linger.ms": 0, "batch.num.messages": 1, "log_level": 0})
    for i in range(3000):
        producer.produce(topic, value=b"%d" % i, partition=0)
        producer.flush(10)  # one request, so one batch, a record
    assert by_id(cluster, 1).logs.get(topic, 0).log_end_offset == 3000
    returned = Broker(config).start()
    cluster[cluster.index(follower)] = returned
    wait_until(lambda: 2 in by_id(cluster, 1).partitions.state(topic, 0).isr, timeout=30,
               message="the follower rejoins the ISR")
    assert returned.logs.get(topic, 0).read(0, 1 << 30).read() == \
        by_id(cluster, 1).logs.get(topic, 0).read(0, 1 << 30).read()


def test_group_commits_are_replicated_before_they_are_answered(cluster):
    """offsets.commit.required.acks=-1: a commit is answered once every replica of its
    __consumer_offsets partition has it, so the leader's high watermark has passed it."""
    topic = create(cluster)
    assert produce(cluster, topic, [b"a"]) == [None]
    consumer = Consumer({"bootstrap.servers": bootstrap(cluster), "group.id": "replicated",
                         "enable.auto.commit": False, "log_level": 0})
    consumer.assign([KafkaPartition(topic, 0, 0)])
    consumer.commit(offsets=[KafkaPartition(topic, 0, 1)], asynchronous=False)
    leaders = {p: by_id(cluster, cluster[0].partitions.state("__consumer_offsets", p).leader)
               for p in range(3)}
    logs = {p: leader.logs.get("__consumer_offsets", p) for p, leader in leaders.items()}
    consumer.close()
    assert sum(log.log_end_offset for log in logs.values()) >= 1
    assert all(log.high_watermark == log.log_end_offset for log in logs.values())
    assert {b.broker_id: sorted(p for t, p in b.logs.partitions() if t == "__consumer_offsets")
            for b in cluster} == {1: [0, 1, 2], 2: [0, 1, 2], 3: [0, 1, 2]}


# Followers whose fetches wait 10 s for data: a write answered after half of that waited for a
# follower's fetch to time out instead of waking it. (A partition a follower starts to replicate
# joins its next fetch, as in Kafka's fetcher threads: the first write to a new internal topic
# may wait for the fetch in flight to end, so the tests time the writes after the first.)
SLOW_FOLLOWERS = {"replica.fetch.wait.max.ms": "10000"}


@pytest.mark.broker
@pytest.mark.zookeeper
def test_a_group_commit_wakes_the_followers_instead_of_waiting_for_their_fetch_timeout(
        zookeeper_connect, tmp_path):
    """The coordinator's append wakes the followers' waiting fetches before it waits for the
    ISR, so a commit is answered in the time of one fetch round trip, not after
    replica.fetch.wait.max.ms."""
    brokers = start_brokers(zookeeper_connect, tmp_path, 3, {
        "offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "1",
        **SLOW_FOLLOWERS})
    try:
        topic = create(brokers)
        consumer = Consumer({"bootstrap.servers": bootstrap(brokers), "group.id": "woken",
                             "enable.auto.commit": False, "log_level": 0})
        consumer.assign([KafkaPartition(topic, 0, 0)])
        consumer.commit(offsets=[KafkaPartition(topic, 0, 0)], asynchronous=False)  # warm
        took = []
        for offset in range(1, 6):
            started = time.monotonic()
            consumer.commit(offsets=[KafkaPartition(topic, 0, offset)], asynchronous=False)
            took.append(time.monotonic() - started)
        consumer.close()
        assert max(took) < 5, f"commit round trips {took}"
    finally:
        stop_brokers(brokers)


@pytest.mark.broker
@pytest.mark.zookeeper
def test_transactions_wake_the_followers_of_their_log_and_of_their_markers(
        zookeeper_connect, tmp_path):
    """The transaction coordinator's writes and the markers (acks=all both) wake the
    followers too: a transaction of three replicated partitions commits in the time of a few
    fetch round trips."""
    brokers = start_brokers(zookeeper_connect, tmp_path, 3, {
        "transaction.state.log.replication.factor": "3",
        "transaction.state.log.num.partitions": "1", **SLOW_FOLLOWERS})
    try:
        topic = create(brokers)
        producer = Producer({"bootstrap.servers": bootstrap(brokers), "log_level": 0,
                             "transactional.id": "woken"})
        producer.init_transactions(30)
        took = []
        for round_ in range(3):
            started = time.monotonic()
            producer.begin_transaction()
            producer.produce(topic, value=b"%d" % round_, partition=0)
            producer.commit_transaction(30)
            took.append(time.monotonic() - started)
        assert max(took) < 5, f"transactions took {took}"
    finally:
        stop_brokers(brokers)


@pytest.fixture
@needs("broker", "zookeeper")
def racks(zookeeper_connect, tmp_path):
    """Three brokers in racks RACK1-3 that send consumers to a replica in their rack."""
    from broker_lite.server.testing import broker_config

    brokers = []
    try:
        for broker_id in (1, 2, 3):
            brokers.append(Broker(broker_config(zookeeper_connect, tmp_path / f"b{broker_id}",
                                                broker_id, {
                "broker.rack": f"RACK{broker_id}",
                "replica.selector.class":
                    "org.apache.kafka.common.replica.RackAwareReplicaSelector"})).start())
        yield brokers
    finally:
        stop_brokers(brokers)


def test_a_consumer_reads_from_the_follower_in_its_rack(racks):
    """KIP-392: the leader answers a consumer whose rack holds an in-sync follower with that
    follower as preferred_read_replica; librdkafka then fetches from it, up to its high
    watermark."""
    import json

    topic = create(racks)
    leader = racks[0].partitions.state(topic, 0).leader
    follower = next(b for b in (1, 2, 3) if b != leader)
    assert produce(racks, topic, [b"r%d" % i for i in range(2000)]) == [None] * 2000
    received_by = {}

    def statistics(text: str) -> None:
        for broker in json.loads(text)["brokers"].values():
            if broker["nodeid"] >= 0:
                received_by[broker["nodeid"]] = broker["rxbytes"]

    consumer = Consumer({"bootstrap.servers": bootstrap(racks), "group.id": "racked",
                         "client.rack": f"RACK{follower}", "statistics.interval.ms": 200,
                         "stats_cb": statistics, "enable.auto.commit": False,
                         "log_level": 0})
    consumer.assign([KafkaPartition(topic, 0, 0)])
    values, deadline = [], time.monotonic() + 30
    while len(values) < 2000 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
    received_by.clear()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not received_by:
        consumer.poll(0.2)  # statistics after the last fetch
    consumer.close()
    assert values == [b"r%d" % i for i in range(2000)]
    assert received_by[follower] > 20_000  # the records came from the follower
    assert received_by[follower] > 4 * received_by.get(leader, 0)


def test_markers_waiting_for_the_isr_hold_no_request_handler(cluster):
    """WriteTxnMarkers is answered once the ISR has the markers (Kafka writes them with
    acks=all); while it waits, in the purgatory, more of them than there are request handlers
    wait beside it and the broker still answers others at once."""
    topic = create(cluster)
    leader = stop_following(cluster, topic)

    def write_marker(producer_id: int) -> dict:
        return call(leader.port, ApiKey.WRITE_TXN_MARKERS, 1, {"markers": [{
            "producer_id": producer_id, "producer_epoch": 0, "transaction_result": False,
            "coordinator_epoch": 0, "topics": [{"name": topic, "partition_indexes": [0]}]}]},
            timeout_s=60)

    answers = answered_after_metadata(leader, topic, write_marker, lambda count: (
        leader.logs.get(topic, 0).log_end_offset == count))
    # answered once the ISR shrank to the leader, which has them all
    assert [[p["error_code"] for m in answer["markers"] for t in m["topics"]
             for p in t["partitions"]] for answer in answers] == [[ErrorCode.NONE]] * len(answers)
    assert leader.partitions.state(topic, 0).isr == (leader.broker_id,)


def test_deletions_waiting_for_the_followers_hold_no_request_handler(cluster):
    """DeleteRecords is answered once every live replica's log starts at the new offset, or
    after its timeout; it waits in the purgatory too."""
    topic = create(cluster)
    assert produce(cluster, topic, [b"v%d" % i for i in range(10)]) == [None] * 10
    leader = stop_following(cluster, topic)

    def delete_all(_: int) -> dict:
        return call(leader.port, ApiKey.DELETE_RECORDS, 2, {"topics": [{
            "name": topic, "partitions": [{"partition_index": 0, "offset": -1}]}],
            "timeout_ms": 3000}, timeout_s=60)

    answers = answered_after_metadata(leader, topic, delete_all, lambda count: (
        leader.services.purgatory.delete_records.delayed == count))
    assert leader.logs.get(topic, 0).log_start_offset == 10
    # the followers never fetch their new log start: each times out
    assert [[(p["error_code"], p["low_watermark"]) for t in answer["topics"]
             for p in t["partitions"]] for answer in answers] == \
        [[(ErrorCode.REQUEST_TIMED_OUT, -1)]] * len(answers)


def test_a_deletion_held_back_by_a_follower_that_dies_is_answered_when_it_is_gone(cluster):
    """The only replica whose log start holds a DeleteRecords back stops fetching, then its
    broker goes: nothing fetches any more, but the broker's leaving changes the cluster's
    metadata, and the deletion is checked again then: it is answered with the leader's log
    start (the low watermark counts live replicas only), long before its timeout."""
    leader_id, follower_id = 1, 2
    topic = create(cluster, assignment=((leader_id, follower_id),))
    leader, follower = by_id(cluster, leader_id), by_id(cluster, follower_id)
    assert produce(cluster, topic, [b"v%d" % i for i in range(10)]) == [None] * 10
    follower.partitions.fetchers.shutdown()

    answer: dict = {}
    deleting = threading.Thread(target=lambda: answer.update(call(
        leader.port, ApiKey.DELETE_RECORDS, 2, {"topics": [{
            "name": topic, "partitions": [{"partition_index": 0, "offset": 5}]}],
            "timeout_ms": 60000}, timeout_s=90)))
    started = time.monotonic()
    deleting.start()
    wait_until(lambda: leader.services.purgatory.delete_records.delayed == 1,
               message="the deletion waits for the follower")
    stop_brokers([follower])  # gone: not a live replica any more, and it will not fetch
    deleting.join(60)
    waited = time.monotonic() - started
    assert not deleting.is_alive(), "DeleteRecords still unanswered 60 s after the follower left"
    assert [(p["error_code"], p["low_watermark"]) for t in answer["topics"]
            for p in t["partitions"]] == [(ErrorCode.NONE, 5)]
    assert waited < 30, waited  # not the 60 s timeout


def stop_following(cluster, topic: str) -> Broker:
    """Stop the followers' fetches of ``topic`` (alive, registered, not fetching); its leader."""
    leader = by_id(cluster, cluster[0].partitions.state(topic, 0).leader)
    for follower in cluster:
        if follower is not leader:
            follower.partitions.fetchers.shutdown()
    return leader


def answered_after_metadata(leader: Broker, topic: str, send, sent) -> list[dict]:
    """Send more requests (``send(i)``, each on its own connection) than ``leader`` has request
    handlers; once ``sent(count)`` says the broker took them on, a Metadata request is answered
    before any of them. Their answers."""
    count = leader.services.config["num.io.threads"] + 2
    answers: dict[int, dict] = {}
    answered_at: dict[int, float] = {}

    def send_one(i: int) -> None:
        answers[i] = send(i + 1000)
        answered_at[i] = time.monotonic()

    senders = [threading.Thread(target=send_one, args=(i,)) for i in range(count)]
    for sender in senders:
        sender.start()
    wait_until(lambda: sent(count), message="every request taken on")
    metadata = call(leader.port, ApiKey.METADATA, 12, {"topics": [{"name": topic}],
                                                        "allow_auto_topic_creation": False})
    metadata_at = time.monotonic()
    assert metadata["topics"][0]["error_code"] == 0
    join_all(senders, 60, "Produce requests unanswered after 60 s")
    assert len(answers) == count
    assert metadata_at < min(answered_at.values())  # not queued behind the waiting requests
    return [answers[i] for i in range(count)]


def test_pipelined_acks_all_requests_wait_together_each_for_its_own_offsets(cluster):
    """A producer's pipelined acks=all requests, answered together: none before the ISR has
    its records, then each with its own offsets, in order; or, the followers still behind
    after the first request's timeout, each REQUEST_TIMED_OUT (its records stay in the
    leader's log, as one request's do)."""
    topic = create(cluster)
    leader = stop_following(cluster, topic)

    def pipelined(values: list[bytes], timeout_ms: int) -> list[tuple[int, dict]]:
        frames = [encode_request(ApiKey.PRODUCE, 9, 100 + i, "pipelining", {
            "transactional_id": None, "acks": -1, "timeout_ms": timeout_ms,
            "topic_data": [{"name": topic, "partition_data": [
                {"index": 0, "records": build_batch([(None, v)], timestamp=1)}]}]})
            for i, v in enumerate(values)]
        with socket.create_connection(("127.0.0.1", leader.port), timeout=60) as sock:
            sock.sendall(b"".join(frames))
            answers = []
            for _ in frames:
                (size,) = struct.unpack(">i", recv_exactly(sock, 4))
                answers.append(parse_response(ApiKey.PRODUCE, 9, recv_exactly(sock, size)))
        return answers

    def outcomes(answers) -> list[tuple[int, int, int]]:
        return [(correlation_id, partition["error_code"], partition["base_offset"])
                for correlation_id, body in answers
                for partition in body["responses"][0]["partition_responses"]]

    started = time.monotonic()
    timed_out = pipelined([b"a", b"b", b"c"], timeout_ms=1000)
    assert 0.9 <= time.monotonic() - started < LAG_MS / 1000
    assert outcomes(timed_out) == [(100 + i, ErrorCode.REQUEST_TIMED_OUT, i) for i in range(3)]

    started = time.monotonic()  # now the ISR shrinks to the leader, after replica.lag.time.max.ms
    answered = pipelined([b"d", b"e", b"f"], timeout_ms=LAG_MS * 6)
    assert time.monotonic() - started >= LAG_MS / 1000 * 0.5
    assert outcomes(answered) == [(100 + i, ErrorCode.NONE, 3 + i) for i in range(3)]
    assert leader.partitions.state(topic, 0).isr == (leader.broker_id,)
