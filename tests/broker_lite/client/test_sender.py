"""The sender's delivery logic against scripted brokers: leader moves followed with the same
batch bytes, resends after lost answers, one batch per partition per request and requests under
max.request.size, retry limits, sequence resets after failures whose outcome is unknown, and the
errors of fenced producers."""

import pyarrow as pa
import pytest
from producer_checks import (
    ScriptedPartitions,
    batch_fields,
    init_producer_id,
    producer_for,
    rows,
    scripted_producer_broker,
)
from scripted_broker import CLOSE, SILENT, ScriptedBroker, sequence

from broker_lite.client import (
    ClientConfig,
    KafkaTimeoutError,
    NotLeaderError,
    OutOfOrderSequenceError,
    ProducerFencedError,
    TopicPartition,
)
from broker_lite.client.cluster.cluster import Cluster
from broker_lite.client.errors import InvalidProducerEpochError
from broker_lite.client.producer.sender import DeliverySettings, Sender
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import CompressionType, iter_batches

TOPIC = "events"


@pytest.fixture
def scripted():
    with scripted_producer_broker(TOPIC) as broker:
        yield broker


# -- requests --------------------------------------------------------------------------------------

def test_sequences_advance_per_partition_and_requests_carry_one_batch_per_partition(scripted):
    with producer_for(scripted, batch_size=100) as producer:
        written = producer.send_arrow(TOPIC, pa.record_batch({
            "value": [b"%d" % i for i in range(30)],
            "partition": pa.array([i % 2 for i in range(30)], pa.int32())}))
        assert written == {TopicPartition(TOPIC, 0): (0, 15), TopicPartition(TOPIC, 1): (0, 15)}
        assert producer.send_batch(TOPIC, 0, rows(4)) == (15, 4)
    requests = scripted.requests_for(ApiKey.PRODUCE)
    for body in requests:
        parts = [(t["name"], p["index"]) for t in body["topic_data"] for p in t["partition_data"]]
        assert len(parts) == len(set(parts))  # never two batches of one partition
        assert body["acks"] == -1 and body["transactional_id"] is None
    by_partition: dict[int, list] = {}
    for _, partition, data in scripted.partitions.received:
        by_partition.setdefault(partition, []).append(batch_fields(data))
    for fields in by_partition.values():
        assert len(fields) > 1
        assert {f[:2] for f in fields} == {(4000, 0)}
        expected = 0
        for _, _, base_sequence, count in fields:
            assert base_sequence == expected
            expected += count
    assert len(scripted.requests_for(ApiKey.INIT_PRODUCER_ID)) == 1


def test_requests_to_one_leader_stay_under_max_request_size(scripted):
    scripted.handlers[ApiKey.METADATA] = scripted.metadata({TOPIC: 6})
    big = pa.record_batch({"value": [b"x" * 700] * 6,
                           "partition": pa.array(range(6), pa.int32())})
    with producer_for(scripted, max_request_size=2000) as producer:
        assert len(producer.send_arrow(TOPIC, big)) == 6
    requests = scripted.requests_for(ApiKey.PRODUCE)
    sizes = [sum(len(p["records"]) for t in b["topic_data"] for p in t["partition_data"])
             for b in requests]
    assert len(requests) == 3 and all(size <= 2000 for size in sizes)


def test_a_leader_move_is_followed_with_the_same_batch(scripted):
    """The first leader answers NOT_LEADER_OR_FOLLOWER; the metadata then names another broker,
    which gets byte for byte the same batch (same producer id, epoch and sequence)."""
    with ScriptedBroker(node_id=2) as second:
        leader = {"node": 1}
        brokers = [(1, scripted.port), (2, second.port)]

        def metadata(header, body):
            return scripted.metadata({TOPIC: 1}, leader=leader["node"], brokers=brokers)(
                header, body)

        refusing = ScriptedPartitions()
        refusing.errors[(TOPIC, 0)] = [ErrorCode.NOT_LEADER_OR_FOLLOWER]

        def not_leader(header, body):
            leader["node"] = 2
            return refusing(header, body)

        scripted.handlers[ApiKey.METADATA] = second.handlers[ApiKey.METADATA] = metadata
        scripted.handlers[ApiKey.PRODUCE] = not_leader
        second.handlers[ApiKey.PRODUCE] = accepted = ScriptedPartitions()
        with producer_for(scripted) as producer:
            assert producer.send_batch(TOPIC, 0, rows(5)) == (0, 5)
        (first,) = scripted.requests_for(ApiKey.PRODUCE)
        assert bytes(first["topic_data"][0]["partition_data"][0]["records"]) == \
            accepted.received[0][2]
        assert len(scripted.requests_for(ApiKey.METADATA)) >= 2  # refreshed after the error


def test_lost_answers_resend_the_same_bytes(scripted):
    answers = sequence(CLOSE, CLOSE, scripted.partitions)
    scripted.handlers[ApiKey.PRODUCE] = answers
    with producer_for(scripted) as producer:
        assert producer.send_batch(TOPIC, 1, rows(3)) == (0, 3)
        producer_id = producer.producer_id
    sent = [bytes(b["topic_data"][0]["partition_data"][0]["records"])
            for b in scripted.requests_for(ApiKey.PRODUCE)]
    assert len(sent) == 3 and len(set(sent)) == 1
    assert producer_id == 4000


def test_retries_are_limited_by_the_retries_setting(scripted):
    scripted.partitions.errors[(TOPIC, 0)] = [ErrorCode.NOT_LEADER_OR_FOLLOWER] * 10
    with producer_for(scripted, retries=2) as producer:
        with pytest.raises(NotLeaderError, match=f"{TOPIC}-0"):
            producer.send_batch(TOPIC, 0, rows(1))
    assert len(scripted.requests_for(ApiKey.PRODUCE)) == 3


def test_after_an_unknown_outcome_the_next_call_starts_a_new_producer_id(scripted):
    """No answer before delivery.timeout.ms: the batch may or may not be written, so the
    sequences may no longer match the broker's; the next call gets a new producer id."""
    ids = iter([4000, 4001])
    scripted.handlers[ApiKey.INIT_PRODUCER_ID] = lambda h, b: init_producer_id(next(ids))
    silent = [True]
    scripted.handlers[ApiKey.PRODUCE] = lambda header, body: \
        SILENT if silent[0] else scripted.partitions(header, body)
    # The silence lasts the delivery timeout; the requests after it (a new connection's
    # handshake, InitProducerId, the send) have 1.5 s each, ample on a busy machine.
    with producer_for(scripted, delivery_timeout_ms=2000,
                      config={"request.timeout.ms": "1500"}) as producer:
        with pytest.raises(KafkaTimeoutError, match=f"delivery of 2 records to {TOPIC}-0"):
            producer.send_batch(TOPIC, 0, rows(2))
        assert producer.producer_id == -1
        silent[0] = False
        assert producer.send_batch(TOPIC, 0, rows(2)) == (0, 2)
        assert producer.producer_id == 4001
    (data,) = scripted.partitions.logs[(TOPIC, 0)]
    assert batch_fields(data) == (4001, 0, 0, 2)


def test_a_sequence_gap_resets_the_producer_id(scripted):
    ids = iter([4000, 4001])
    scripted.handlers[ApiKey.INIT_PRODUCER_ID] = lambda h, b: init_producer_id(next(ids))
    scripted.partitions.errors[(TOPIC, 2)] = [ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER]
    with producer_for(scripted) as producer:
        with pytest.raises(OutOfOrderSequenceError, match=f"{TOPIC}-2"):
            producer.send_batch(TOPIC, 2, rows(2))
        producer.send_batch(TOPIC, 2, rows(2))
        assert producer.producer_id == 4001


def test_a_stale_epoch_is_a_fenced_producer(scripted):
    scripted.partitions.errors[(TOPIC, 0)] = [ErrorCode.INVALID_PRODUCER_EPOCH]
    with producer_for(scripted) as producer:
        with pytest.raises(ProducerFencedError) as info:
            producer.send_batch(TOPIC, 0, rows(1))
    assert isinstance(info.value, InvalidProducerEpochError)


def test_init_producer_id_is_retried_until_a_broker_can_answer(scripted):
    scripted.handlers[ApiKey.INIT_PRODUCER_ID] = sequence(
        init_producer_id(-1, -1, ErrorCode.COORDINATOR_NOT_AVAILABLE), init_producer_id(77, 3))
    with producer_for(scripted) as producer:
        producer.send_batch(TOPIC, 0, rows(1))
        assert (producer.producer_id, producer.producer_epoch) == (77, 3)
    (data,) = scripted.partitions.logs[(TOPIC, 0)]
    assert batch_fields(data)[:2] == (77, 3)
    assert [b["transactional_id"] for b in scripted.requests_for(ApiKey.INIT_PRODUCER_ID)] == \
        [None, None]


def test_batches_in_flight_are_not_transactional_without_a_transactional_id(scripted):
    with producer_for(scripted, compression="gzip") as producer:
        producer.send_batch(TOPIC, 0, rows(3))
    (data,) = scripted.partitions.logs[(TOPIC, 0)]
    (batch,) = iter_batches(data)
    assert not batch.is_transactional and batch.compression.kafka_name == "gzip"


# -- the sender on its own ------------------------------------------------------------------------

def test_a_sender_over_a_cluster_numbers_batches_until_its_sequences_are_reset(scripted):
    """Without a producer in front: rows already split by partition, an idempotent producer id
    of its own, sequences per partition, and numbering from 0 again once reset (as after a new
    epoch)."""
    settings = DeliverySettings(
        acks=-1, compression=CompressionType.NONE, compression_level=None, batch_size=1 << 20,
        max_request_size=1 << 20, delivery_timeout_ms=2000, retries=3, idempotent=True,
        transaction_timeout_ms=60000)
    cluster = Cluster(ClientConfig({"bootstrap.servers": scripted.bootstrap}))
    try:
        sender = Sender(cluster, settings)
        assert (sender.producer_id, sender.producer_epoch) == (-1, -1)
        t0, t1 = TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)
        assert sender.send({t0: rows(3)}) == {t0: (0, 3)}
        assert sender.send({t0: rows(2), t1: rows(0)}) == {t0: (3, 2), t1: (-1, 0)}
        sender.reset_sequences()
        assert sender.send({t0: rows(1)}) == {t0: (5, 1)}
        assert not sender.sequences_in_doubt and sender.producer_id == 4000
    finally:
        cluster.close()
    assert [batch_fields(data) for data in scripted.partitions.logs[(TOPIC, 0)]] == \
        [(4000, 0, 0, 3), (4000, 0, 3, 2), (4000, 0, 0, 1)]
    assert len(scripted.requests_for(ApiKey.INIT_PRODUCER_ID)) == 1
